"""The output contract of the format task, parsed strictly."""
import json
import pathlib

import jsonschema

SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "additionalProperties": False,
    "required": ["title", "component", "severity", "affected_versions", "regression", "steps"],
    "properties": {
        "title": {"type": "string", "minLength": 1, "maxLength": 80},
        "component": {"enum": ["api", "auth", "billing", "frontend", "storage"]},
        "severity": {"enum": ["low", "medium", "high", "critical"]},
        "affected_versions": {
            "type": "array", "minItems": 1, "uniqueItems": True,
            "items": {"type": "string", "pattern": "^[0-9]+\\.[0-9]+\\.[0-9]+$"},
        },
        "regression": {"type": "boolean"},
        "steps": {"type": "array", "minItems": 1, "items": {"type": "string", "minLength": 1}},
    },
}


def _no_duplicate_keys(pairs):
    keys = [key for key, _ in pairs]
    duplicated = sorted({key for key in keys if keys.count(key) > 1})
    if duplicated:
        raise ValueError(f"duplicate keys: {duplicated}")
    return dict(pairs)


def _no_constants(name):
    raise ValueError(f"{name} is not valid JSON")


def reply_text() -> str:
    path = pathlib.Path.cwd() / "reply.md"
    return path.read_text(encoding="utf-8") if path.exists() else ""


def parse_strictly(text: str):
    """The whole text, less surrounding whitespace, must be one JSON object: no fences, no
    words, no second value, no duplicate keys, no NaN/Infinity. Failures are assertions."""
    assert text.strip(), "reply.md is empty"
    assert not text.startswith("\ufeff"), "reply.md starts with a byte-order mark"
    try:
        value = json.loads(text.strip(), object_pairs_hook=_no_duplicate_keys,
                           parse_constant=_no_constants)
    except ValueError as exc:
        raise AssertionError(f"reply.md is not exactly one JSON value: {exc}") from None
    assert isinstance(value, dict), f"reply.md holds a JSON {type(value).__name__}, not an object"
    return value


def record():
    """The parsed, schema-valid record (assertion on any contract breach)."""
    value = parse_strictly(reply_text())
    errors = sorted(jsonschema.Draft202012Validator(SCHEMA).iter_errors(value), key=str)
    assert not errors, "schema violations: " + "; ".join(e.message for e in errors)
    return value
