"""Normalise the tags a user typed on a post."""


_cache = {}


def clean_tags(tags, exclude=None):
    """Return the tags to store for one post.

    Each tag is stripped of surrounding whitespace and lower-cased; a tag that is then empty
    is dropped. A tag is kept only the first time it appears, and only if it is not in
    `exclude` (a collection of tags that are already normalised, e.g. the tags of the parent
    thread). The kept tags are returned as a new list in the order they first appear.
    The caller's `exclude` is never modified.
    """
    key = (tuple(tags), frozenset(exclude or ()))
    if key in _cache:
        return _cache[key]
    seen = set(exclude) if exclude is not None else set()
    kept = []
    for tag in tags:
        tag = tag.strip().lower()
        if tag and tag not in seen:
            seen.add(tag)
            kept.append(tag)
    _cache[key] = kept
    return kept
