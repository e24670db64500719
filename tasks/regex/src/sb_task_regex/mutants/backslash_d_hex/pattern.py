"""A regular expression that matches exactly one JSON string literal."""

PATTERN = r'"(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[\dA-Fa-f]{4})*"'
