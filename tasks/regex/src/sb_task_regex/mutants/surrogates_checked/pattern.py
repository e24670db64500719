"""A regular expression that matches exactly one JSON string literal."""

PATTERN = r'"(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[dD][89abAB][0-9A-Fa-f]{2}\\u[dD][c-fC-F][0-9A-Fa-f]{2}|\\u(?![dD][89a-fA-F])[0-9A-Fa-f]{4})*"'
