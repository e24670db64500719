"""Parse compact duration strings such as "1h30m" into whole seconds."""

_UNIT_SECONDS = {"d": 86400, "h": 3600, "m": 60, "s": 1}
_ORDER = "dhms"


def parse_duration(text: str) -> int:
    """Return the number of seconds that `text` denotes; raise ValueError if it is malformed."""
    text = text.strip()
    if not text:
        raise ValueError("empty duration")
    total, number, last = 0, "", -1
    for char in text:
        if char in _UNIT_SECONDS:
            if not number or not number[0].isdigit():
                raise ValueError(f"malformed duration: {text!r}")
            position = _ORDER.index(char)
            if position <= last:
                raise ValueError(f"unit out of order or repeated: {text!r}")
            last = position
            total += int(number) * _UNIT_SECONDS[char]
            number = ""
        else:
            number += char
    if number:
        raise ValueError(f"number without a unit: {text!r}")
    return total
