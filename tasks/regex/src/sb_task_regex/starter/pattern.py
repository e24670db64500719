"""A regular expression that matches exactly one JSON string literal."""

PATTERN = None  # replace with your pattern: a str
