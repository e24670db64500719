"""Keyset pagination over products, most expensive first."""


def fetch_page(conn, limit, cursor=None):
    raise NotImplementedError
