"""Probe: calls clean_tags in the worker with live sets and lists, so that what a proxy call
cannot see (the caller's own set being changed, the returned list being the caller's list or
an earlier result) is observed where it happens. It holds no expected value: it reports what
each call returned and what the caller's objects looked like afterwards."""
from tags import clean_tags


def run(steps, initial_sets):
    """steps: [{"tags": [...], "exclude": name or None, "keyword": bool}]; initial_sets:
    {name: [tags]}. Each named set is created once and reused by every step naming it."""
    sets = {name: set(items) for name, items in initial_sets.items()}
    results, observations = [], []
    for step in steps:
        tags = list(step["tags"])
        name = step.get("exclude")
        if name is None:
            got = clean_tags(tags=tags) if step.get("keyword") else clean_tags(tags)
        elif step.get("keyword"):
            got = clean_tags(tags=tags, exclude=sets[name])
        else:
            got = clean_tags(tags, sets[name])
        observations.append({
            "type": type(got).__name__,
            "result": list(got) if isinstance(got, list) else None,
            "is_the_tags_argument": got is tags,
            "is_an_earlier_result": any(got is earlier for earlier in results),
            "sets_after": {key: sorted(value) for key, value in sets.items()},
        })
        results.append(got)
    return observations
