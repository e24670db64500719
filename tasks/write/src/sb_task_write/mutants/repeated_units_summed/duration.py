"""Parse compact duration strings such as "1h30m" into whole seconds."""
import re

_UNIT_SECONDS = {"d": 86400, "h": 3600, "m": 60, "s": 1}


def parse_duration(text: str) -> int:
    """Return the number of seconds that `text` denotes; raise ValueError if it is malformed."""
    text = text.strip()
    if not re.fullmatch(r"(?:[0-9]+[dhms])+", text):
        raise ValueError(f"malformed duration: {text!r}")
    return sum(int(value) * _UNIT_SECONDS[unit] for value, unit in re.findall(r"([0-9]+)([dhms])", text))
