"""Parse compact duration strings such as "1h30m" into whole seconds."""


def parse_duration(text: str) -> int:
    """Return the number of seconds that `text` denotes; raise ValueError if it is malformed."""
    raise NotImplementedError
