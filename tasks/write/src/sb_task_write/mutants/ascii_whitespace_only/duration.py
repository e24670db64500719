"""Parse compact duration strings such as "1h30m" into whole seconds."""
import re
import string

_UNIT_SECONDS = {"d": 86400, "h": 3600, "m": 60, "s": 1}
_DURATION = re.compile(r"(?:([0-9]+)d)?(?:([0-9]+)h)?(?:([0-9]+)m)?(?:([0-9]+)s)?")


def parse_duration(text: str) -> int:
    """Return the number of seconds that `text` denotes; raise ValueError if it is malformed."""
    if not isinstance(text, str):
        raise TypeError("text must be a str")
    match = _DURATION.fullmatch(text.strip(string.whitespace))
    if match is None or not any(match.groups()):
        raise ValueError(f"malformed duration: {text!r}")
    return sum(int(value) * _UNIT_SECONDS[unit]
               for value, unit in zip(match.groups(), "dhms") if value is not None)
