"""Search users from untrusted request parameters, safely."""


def search_users(conn, filters=None, sort="id", direction="asc", limit=50):
    raise NotImplementedError
