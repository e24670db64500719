import random
from collections import Counter as Tally

from counters import Counters

from _harness import YieldingStore, run_threads

N_THREADS = 50
OPS_PER_THREAD = 20
KEYS = ["a", "b", "c"]


def test_single_thread_semantics():
    store = YieldingStore()
    c = Counters(store)
    assert c.get("x") == 0
    assert c.add("x", 5) == 5
    assert c.add("x", -7) == -2
    assert c.take("x") == -2
    assert c.get("x") == 0
    c.add("y", 10)
    c.move("y", "z", 4)
    assert c.snapshot(["y", "z", "x"]) == {"y": 6, "z": 4, "x": 0}
    assert c.take("never") == 0
    assert {k: store.data.get(k, 0) for k in "xyz"} == {"x": 0, "y": 6, "z": 4}


def _add_plan(seed):
    rng = random.Random(seed)
    return [
        [(rng.choice(KEYS), rng.randrange(-5, 10)) for _ in range(OPS_PER_THREAD)]
        for _ in range(N_THREADS)
    ]


def test_concurrent_adds_are_exact():
    plan = _add_plan(0)
    store = YieldingStore()
    c = Counters(store)

    def worker(ops):
        for key, amount in ops:
            c.add(key, amount)

    run_threads([lambda ops=ops: worker(ops) for ops in plan])
    expected = Tally()
    for ops in plan:  # the independent answer: a plain sum
        for key, amount in ops:
            expected[key] += amount
    assert {k: c.get(k) for k in KEYS} == {k: expected[k] for k in KEYS}
    assert {k: store.data.get(k, 0) for k in KEYS} == {k: expected[k] for k in KEYS}


def test_add_returns_each_value_exactly_once():
    """add(key, 1) as a ticket dispenser: every number handed out once."""
    c = Counters(YieldingStore())
    tickets = []

    def worker():
        for _ in range(OPS_PER_THREAD):
            tickets.append(c.add("ticket", 1))

    run_threads([worker] * N_THREADS)
    assert sorted(tickets) == list(range(1, N_THREADS * OPS_PER_THREAD + 1))


def test_take_loses_no_increment():
    store = YieldingStore()
    c = Counters(store)
    taken = []

    def adder():
        for _ in range(OPS_PER_THREAD):
            c.add("events", 1)

    def taker():
        for _ in range(OPS_PER_THREAD):
            taken.append(c.take("events"))

    run_threads([adder] * 40 + [taker] * 10)
    assert sum(taken) + c.get("events") == 40 * OPS_PER_THREAD
    assert all(t >= 0 for t in taken)


def _move_plan(seed, n_threads):
    rng = random.Random(seed)
    return [
        [tuple(rng.sample(KEYS + ["d"], 2)) + (rng.randrange(1, 20),) for _ in range(OPS_PER_THREAD)]
        for _ in range(n_threads)
    ]


def test_move_is_atomic_to_snapshots():
    keys = KEYS + ["d"]
    store = YieldingStore()
    c = Counters(store)
    for k in keys:
        c.add(k, 1000)
    plan = _move_plan(1, 40)
    totals = []

    def mover(ops):
        for src, dst, amount in ops:
            c.move(src, dst, amount)

    def watcher():
        for _ in range(OPS_PER_THREAD):
            totals.append(sum(c.snapshot(keys).values()))

    run_threads([lambda ops=ops: mover(ops) for ops in plan] + [watcher] * 10)
    assert totals and all(t == 4000 for t in totals), Tally(totals)
    expected = {k: 1000 for k in keys}
    for ops in plan:
        for src, dst, amount in ops:
            expected[src] -= amount
            expected[dst] += amount
    assert c.snapshot(keys) == expected
    assert {k: store.data[k] for k in keys} == expected


def test_mixed_operations_account_for_every_unit():
    """Adds, moves, takes and reads at once; nothing created or destroyed."""
    store = YieldingStore()
    c = Counters(store)
    rng = random.Random(2)
    plans = []
    for _ in range(N_THREADS):
        ops = []
        for _ in range(OPS_PER_THREAD):
            kind = rng.choice(["add", "move", "take", "get"])
            src, dst = rng.sample(KEYS, 2)
            ops.append((kind, src, dst, rng.randrange(1, 9)))
        plans.append(ops)
    taken = []

    def worker(ops):
        for kind, src, dst, amount in ops:
            if kind == "add":
                c.add(src, amount)
            elif kind == "move":
                c.move(src, dst, amount)
            elif kind == "take":
                taken.append(c.take(src))
            else:
                c.get(src)

    run_threads([lambda ops=ops: worker(ops) for ops in plans])
    added = sum(a for ops in plans for kind, _, _, a in ops if kind == "add")
    assert sum(taken) + sum(c.snapshot(KEYS).values()) == added
