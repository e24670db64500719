"""A regular expression that matches exactly one JSON string literal."""

PATTERN = r'"(?:[^"\\\x00-\x1f]|\\["' + r"'" + r'\\/bfnrt]|\\u[0-9A-Fa-f]{4})*"'
