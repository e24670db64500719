"""Parse compact duration strings such as "1h30m" into whole seconds."""
import datetime
import re

_DURATION = re.compile(r"(?:([0-9]+)d)?(?:([0-9]+)h)?(?:([0-9]+)m)?(?:([0-9]+)s)?")


def parse_duration(text: str) -> int:
    """Return the number of seconds that `text` denotes; raise ValueError if it is malformed."""
    match = _DURATION.fullmatch(text.strip())
    if match is None or not any(match.groups()):
        raise ValueError(f"malformed duration: {text!r}")
    d, h, m, s = (int(g or 0) for g in match.groups())
    return datetime.timedelta(days=d, hours=h, minutes=m, seconds=s).total_seconds()
