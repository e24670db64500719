"""A regular expression that matches exactly one JSON string literal."""

PATTERN = r'(?i)"(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-f]{4})*"'
