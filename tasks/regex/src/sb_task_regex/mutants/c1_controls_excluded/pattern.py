"""A regular expression that matches exactly one JSON string literal."""

PATTERN = r'"(?:[^"\\\x00-\x1f\x7f-\x9f]|\\["\\/bfnrt]|\\u[0-9A-Fa-f]{4})*"'
