"""A regular expression that matches exactly one JSON string literal."""

PATTERN = r'"(?:[^"\\\x00-\x1f\u2028\u2029]|\\["\\/bfnrt]|\\u[0-9A-Fa-f]{4})*"'
