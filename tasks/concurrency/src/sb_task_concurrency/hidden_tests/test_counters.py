"""Counters over a get/set store, exact under 50 real threads.

Everything the verdict reads lives here, in the judge. The store stays here (its
contents are the judge's own record; the solution is handed only its get and set, as a
facade). The threads are here too: each of the 50 test threads calls the solution
through the proxy, and the wire gives every judge thread a thread of its own in the
solution's process, so the 50 calls run concurrently there on real threads, and each
store call they make comes back to the judge thread that asked. What every call
returned, its type and the store's final contents are observed here; every expectation
(plain sums, conservation of units) is computed here.

One test (test_threads_meeting_a_new_key_lose_no_add) also drives threads from a probe
in the solution's process (_probe_first_use), for races whose window holds no store
call (state made on a key's first use by an unguarded check-then-set): the judge's
delays cannot widen such a window, and the judge's threads cannot start calls together
closely enough to enter it (their calls reach the worker one frame at a time).
Measured on a lazily made per-key lock: rounds released by a barrier in the judge lost
no add in 70, 40 of them with the worker's switch interval set to 1 us; released by a
barrier in the worker with that switch interval, about one round in 20 did. So the
probe releases its threads together on a barrier and pauses them, now and then,
between bytecodes of the solution's code. It only widens windows and holds no expected
value: the store stays here and what it holds is checked here. A solution that
switches the probe's tracer off (sys.settrace) loses only that widening: every other
test is as it was, with nothing in the solution's process.

Near certain for a wrong answer: every store call is a round trip to the judge, and the
judge sleeps inside every get (both before and after it reads) and every set, for a
jittered time drawn from a seeded generator per test thread. A store call blocks the
solution's thread on the wire whatever it does to its own interpreter (its tracer, its
switch interval, its preemption), so its other threads run while the reply is delayed,
and every unguarded read-modify-write of the store, every gap between two lock holds
that contains a store call, is entered by other threads' calls on practically every
operation; each test runs hundreds of operations. Measured on the hand mutants: every
one fails every run.
In the probe's test each of 20 rounds loses an add for such a solution with
probability about 3/4 (measured: 76 of 100 rounds with the check and the set on two
lines, 81 of 100 with both on one line), so all 20 miss with probability about 1e-12.
False-failure probability for a right answer: 0. A correct implementation is exact
under every interleaving (Python may switch threads between any two bytecodes, which is
all the probe's pauses do), none of the assertions depends on timing, and the only time
bound is the deadlock detector (10 s without a single completed operation, or in the
probe's test without a single store call, where a correct run makes one every few
milliseconds).
"""
import random
import threading
import time
from collections import Counter as Tally

from sb.judge import facade, probe

from counters import Counters

FIRST_USE = probe("_probe_first_use.py")

N_THREADS = 50
OPS = 6  # per thread: 300 operations a test, each racing on nearly every step
KEYS = ["a", "b", "c"]

# How long the judge holds each store call (seconds), drawn per call from a generator
# seeded per test and per thread: mostly short, one call in ten medium, one in ten long.
# The values are not a tolerance: no assertion depends on them. They only widen the race
# windows (the medium pause is about ten wire round trips when idle, so other threads'
# calls land at every offset inside a read-modify-write), and the long one matters for
# gaps that sit just outside a lock (a read-back after releasing it): it outlasts the
# next lock holder's whole get and set (a few round trips, under 2 ms even loaded), so
# that holder's write lands inside such a gap; with equal pauses it never would. Kept
# small enough that a correct (serialised) run of 300 operations takes about a second.
STORE_PAUSES_S = (0.00001,) * 8 + (0.0005, 0.005)
# A deadlock detector, not a timing check: a correct run completes an operation every
# few milliseconds even on a loaded machine (each is a handful of round trips of about
# 2 ms at worst), so ten seconds without any completed operation while threads are still
# running means they are stuck.
STALL_S = 10.0


class DictStore:
    """The store for single-thread tests: it stays in the judge, and the solution is
    handed only its `handed` facade."""

    def __init__(self, initial=None):
        self.data = dict(initial or {})
        self.calls = 0
        # Judge threads serve the solution's calls at once, and the deadlock watch reads it.
        self._counting = threading.Lock()
        # get and set, the prompt's two operations, and nothing else: the store handed over
        # as itself would show the solution the test's record (`data`, `calls`)
        self.handed = facade(self, "get", "set")

    def _count(self):
        with self._counting:
            self.calls += 1

    def get(self, key):
        self._count()
        return self.data.get(key, 0)

    def set(self, key, value):
        self._count()
        self.data[key] = value


class JitteredStore(DictStore):
    """The store for the threaded tests, in the judge: every get and set from the
    solution is served on the judge thread whose call made it, and sleeps there (get
    both before and after it reads, set before it writes) for a seeded, jittered time.
    The sleeps happen in this process, so nothing the solution does in its own can
    shorten them."""

    def __init__(self, initial=None, seed=0):
        super().__init__(initial)
        self._seed = seed
        self._local = threading.local()
        # The judge's record of every write, in the order applied: (seq, key, value).
        # `seq` is a step of this store's own clock, so a write can be placed before or
        # after the moment a call's answer reached the judge (`now`).
        self.writes = []
        self._clock = 0
        self._record = threading.Lock()

    def now(self):
        with self._record:
            return self._clock

    def bind(self, index):
        """Called by test thread `index` before it starts: its own seeded generator."""
        self._local.rng = random.Random(f"store/{self._seed}/{index}")

    def _pause(self):
        rng = getattr(self._local, "rng", None)
        if rng is None:  # a call served on a thread that never bound (none should)
            rng = self._local.rng = random.Random(f"store/{self._seed}/unbound")
        time.sleep(rng.choice(STORE_PAUSES_S))

    def get(self, key):
        self._pause()
        value = super().get(key)
        self._pause()
        return value

    def set(self, key, value):
        self._pause()
        with self._record:
            super().set(key, value)
            self._clock += 1
            self.writes.append((self._clock, key, value))


def _type_name(value):
    if type(value) is dict:
        return "dict:" + ",".join(sorted({type(v).__name__ for v in value.values()}))
    return type(value).__name__


def _call(c, op):
    kind = op[0]
    if kind == "add":
        return c.add(op[1], op[2])
    if kind == "get":
        return c.get(op[1])
    if kind == "take":
        return c.take(op[1])
    if kind == "move":
        return c.move(op[1], op[2], op[3])
    if kind == "snapshot":
        return c.snapshot(list(op[1]))
    raise ValueError(f"unknown operation {kind!r}")


def drive(plans, initial=None, seed=0):
    """Run each plan on its own judge thread, all released together, over one Counters
    on one JitteredStore. Returns results[i][j], what operation j of thread i returned
    (or "error: ..."), the type name of each returned value, the store's final contents,
    every write the store received (in the order applied) and the store's clock when
    each call's answer arrived, and how many threads stopped making progress."""
    store = JitteredStore(initial, seed)
    c = Counters(store.handed)
    n = len(plans)
    barrier = threading.Barrier(n)
    results = [[] for _ in range(n)]
    returned_at = [[] for _ in range(n)]  # the store's clock when each answer arrived here
    types = set()
    failures = []
    progress = [0]

    def body(i):
        try:
            store.bind(i)
            barrier.wait()
            for op in plans[i]:
                try:
                    value = _call(c, op)
                except Exception as exc:  # reported; the test fails on it
                    value = f"error: {type(exc).__name__}: {exc}"
                returned_at[i].append(store.now())
                types.add(_type_name(value))
                results[i].append(value)
                progress[0] += 1
        except BaseException as exc:
            failures.append(f"{type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=body, args=(i,), name=f"counters-{i}", daemon=True) for i in range(n)]
    for t in threads:
        t.start()
    stuck = watch(threads, lambda: progress[0])
    return {"results": [list(per) for per in results], "returned_at": [list(per) for per in returned_at],
            "types": sorted(types), "store": dict(store.data), "writes": list(store.writes),
            "failures": list(failures), "stuck": stuck}


def watch(threads, progress):
    """Wait for the threads; give up after STALL_S without `progress()` changing.
    Returns how many threads are still running (stuck)."""
    last, last_change = None, time.monotonic()
    while any(t.is_alive() for t in threads):
        time.sleep(0.02)
        now = progress()
        if now != last:
            last, last_change = now, time.monotonic()
        elif time.monotonic() - last_change > STALL_S:
            break
    return sum(t.is_alive() for t in threads)


def run(plans, initial=None, seed=0):
    seen = drive(plans, initial, seed)
    assert seen["failures"] == [], seen["failures"]
    assert seen["stuck"] == 0, f"{seen['stuck']} threads made no progress for 10 s: deadlocked"
    errors = [r for per in seen["results"] for r in per if isinstance(r, str)]
    assert errors == [], f"{len(errors)} calls raised, first: {errors[0]}"
    assert set(seen["types"]) <= {"int", "NoneType", "dict:int", "dict:"}, seen["types"]
    assert all(type(v) is int for v in seen["store"].values()), seen["store"]
    return seen


# ---------------------------------------------------------------- one thread


def test_single_thread_semantics():
    store = DictStore()
    c = Counters(store.handed)
    assert c.get("x") == 0
    assert c.add("x", 5) == 5
    assert c.add("x", -7) == -2
    assert c.take("x") == -2
    assert c.get("x") == 0
    c.add("y", 10)
    assert c.move("y", "z", 4) is None
    assert c.snapshot(["y", "z", "x"]) == {"y": 6, "z": 4, "x": 0}
    assert c.snapshot([]) == {}
    assert c.take("never") == 0
    assert {k: store.data.get(k, 0) for k in "xyz"} == {"x": 0, "y": 6, "z": 4}
    for value in (c.add("x", 3), c.get("x"), c.take("x")):
        assert type(value) is int


def test_counters_start_from_what_the_store_already_holds():
    """The store is the only place values live: values written before this Counters
    existed (by an earlier run of the service) are the counters' values."""
    store = DictStore({"a": 40, "b": -3, "c": 7})
    c = Counters(store.handed)
    assert c.get("a") == 40
    assert c.add("a", 2) == 42
    assert c.snapshot(["c", "b", "a"]) == {"c": 7, "b": -3, "a": 42}
    c.move("c", "b", 5)
    assert c.take("b") == 2
    assert store.data == {"a": 42, "b": 0, "c": 2}


def test_the_store_holds_every_value_once_a_method_returns():
    store = DictStore({"k": 1})
    c = Counters(store.handed)
    expected = {"k": 1}
    steps = [("add", "k", 4), ("add", "j", -2), ("move", "k", "j", 3), ("take", "k"),
             ("add", "k", 9), ("move", "j", "m", 1), ("take", "j")]
    for op in steps:
        if op[0] == "add":
            c.add(op[1], op[2])
            expected[op[1]] = expected.get(op[1], 0) + op[2]
        elif op[0] == "move":
            c.move(op[1], op[2], op[3])
            expected[op[1]] = expected.get(op[1], 0) - op[3]
            expected[op[2]] = expected.get(op[2], 0) + op[3]
        else:
            c.take(op[1])
            expected[op[1]] = 0
        assert {k: store.data.get(k, 0) for k in expected} == expected, op


# ---------------------------------------------------------------- many threads


def _add_plan(seed, n_threads, ops):
    rng = random.Random(seed)
    return [[("add", rng.choice(KEYS), rng.randrange(-5, 10)) for _ in range(ops)] for _ in range(n_threads)]


def test_concurrent_adds_are_exact():
    plans = _add_plan(0, N_THREADS, OPS)
    seen = run(plans, seed=1)
    expected = Tally()
    for ops in plans:  # the independent answer: a plain sum
        for _, key, amount in ops:
            expected[key] += amount
    assert {k: seen["store"].get(k, 0) for k in KEYS} == {k: expected[k] for k in KEYS}


N_TOGETHER = 8  # threads per round in the probe's test
ROUNDS = 20  # rounds, each on a key no call has used before


def test_threads_meeting_a_new_key_lose_no_add():
    """Each round, threads released together in the solution's process (the probe's)
    add 1 to a key no call has used before: whatever the solution makes on a key's first
    use, two threads meeting it at once must not each get their own (two locks for one
    key let both read the same value, and an add is lost)."""
    store = DictStore()
    c = Counters(store.handed)
    keys = [f"fresh-{r}" for r in range(ROUNDS)]
    answer = {}

    def body():
        try:
            answer["seen"] = FIRST_USE.add_together(c, keys, N_TOGETHER, 7)
        except Exception as exc:  # reported; the test fails on it
            answer["error"] = f"{type(exc).__name__}: {exc}"

    driver = threading.Thread(target=body, name="first-use-driver", daemon=True)
    driver.start()
    # Progress is the judge's own count of store calls, made on the judge's threads.
    assert watch([driver], lambda: store.calls) == 0, "no store call for 10 s: deadlocked"
    assert "error" not in answer, answer["error"]
    seen = answer["seen"]
    assert seen["failures"] == [], seen["failures"]
    results = seen["results"]
    errors = [r for per in results for r in per if isinstance(r, str)]
    assert errors == [], f"{len(errors)} calls failed, first: {errors[0]}"
    assert store.data == {key: N_TOGETHER for key in keys}  # N adds of 1 to a fresh key
    assert [len(per) for per in results] == [ROUNDS] * N_TOGETHER
    for r in range(ROUNDS):  # each add returns the value right after its own addition
        assert sorted(per[r] for per in results) == list(range(1, N_TOGETHER + 1)), keys[r]


def test_add_returns_each_value_exactly_once():
    """add(key, 1) as a ticket dispenser: every number handed out once, and each add
    returns the value right after its own addition."""
    plans = [[("add", "ticket", 1)] * OPS for _ in range(N_THREADS)]
    seen = run(plans, seed=2)
    tickets = [t for per in seen["results"] for t in per]
    assert sorted(tickets) == list(range(1, N_THREADS * OPS + 1))
    for per in seen["results"]:  # one thread's tickets only grow
        assert per == sorted(per)
    # Once add returned v, the store holds the current value, which here only grows: no
    # write applied after that answer reached the judge may put back less than v (a
    # stale write still in flight from another thread would). Sound for any right
    # answer: its writes after that moment hold values the counter had after v.
    writes = seen["writes"]
    assert all(key == "ticket" for _, key, _ in writes), writes[:5]
    least_after = [None] * (len(writes) + 1)  # least value written by writes[j:]
    for j in range(len(writes) - 1, -1, -1):
        value = writes[j][2]
        least_after[j] = value if least_after[j + 1] is None else min(value, least_after[j + 1])
    for per, at in zip(seen["results"], seen["returned_at"]):
        for ticket, clock in zip(per, at):
            later = least_after[clock]  # writes[clock:] have seq > clock
            assert later is None or later >= ticket, \
                f"add returned {ticket}, then the store was set back to {later}"


def test_take_loses_no_increment():
    plans = [[("add", "events", 1)] * OPS for _ in range(40)] + [[("take", "events")] * OPS for _ in range(10)]
    seen = run(plans, initial={"events": 5}, seed=3)
    taken = [t for per in seen["results"][40:] for t in per]
    assert all(t >= 0 for t in taken)
    assert sum(taken) + seen["store"]["events"] == 5 + 40 * OPS


def _move_ops(rng, keys, n):
    return [tuple(["move"] + rng.sample(keys, 2) + [rng.randrange(1, 20)]) for _ in range(n)]


def test_move_is_atomic_to_snapshots():
    """Snapshots (keys in a different order each time) see every move whole."""
    keys = KEYS + ["d"]
    initial = {"a": 1000, "b": 1000, "c": 1000, "d": 1000}
    rng = random.Random(4)
    movers = [_move_ops(rng, keys, OPS) for _ in range(40)]
    watchers = [[("snapshot", rng.sample(keys, 4)) for _ in range(OPS)] for _ in range(10)]
    seen = run(movers + watchers, initial=initial, seed=4)
    snapshots = [s for per in seen["results"][40:] for s in per]
    assert len(snapshots) == 10 * OPS
    for snap, (_, keys_asked) in zip(snapshots, [op for w in watchers for op in w]):
        assert sorted(snap) == sorted(keys_asked)
    totals = Tally(sum(s.values()) for s in snapshots)
    assert set(totals) == {4000}, totals
    expected = dict(initial)
    for ops in movers:
        for _, src, dst, amount in ops:
            expected[src] -= amount
            expected[dst] += amount
    assert seen["store"] == expected


def test_opposite_moves_and_unsorted_snapshots_never_deadlock():
    """Threads move a->b while others move b->a, and snapshot in any key order."""
    rng = random.Random(5)
    plans = []
    for i in range(N_THREADS):
        if i % 5 == 4:
            plans.append([("snapshot", rng.sample(KEYS, 3)) for _ in range(OPS)])
        else:
            src, dst = [("a", "b"), ("b", "a"), ("b", "c"), ("c", "a")][i % 4]
            plans.append([("move", src, dst, 1)] * OPS)
    seen = run(plans, initial={"a": 0, "b": 0, "c": 0}, seed=5)
    expected = Tally()
    for ops in plans:
        for op in ops:
            if op[0] == "move":
                expected[op[1]] -= 1
                expected[op[2]] += 1
    assert seen["store"] == {k: expected[k] for k in KEYS}
    for per in seen["results"]:
        for snap in per:
            if isinstance(snap, dict):
                assert sum(snap.values()) == 0, snap


def test_mixed_operations_account_for_every_unit():
    """Adds, moves, takes, gets and snapshots at once, over values already in the
    store: nothing created or destroyed."""
    initial = {"a": 50, "b": 60, "c": 70}
    rng = random.Random(6)
    plans = []
    for _ in range(N_THREADS):
        ops = []
        for _ in range(OPS):
            kind = rng.choice(["add", "move", "take", "get", "snapshot"])
            src, dst = rng.sample(KEYS, 2)
            amount = rng.randrange(1, 9)
            ops.append({"add": ("add", src, amount), "move": ("move", src, dst, amount),
                        "take": ("take", src), "get": ("get", src),
                        "snapshot": ("snapshot", rng.sample(KEYS, 3))}[kind])
        plans.append(ops)
    seen = run(plans, initial=initial, seed=6)
    added = sum(op[2] for ops in plans for op in ops if op[0] == "add")
    taken = sum(r for ops, per in zip(plans, seen["results"]) for op, r in zip(ops, per) if op[0] == "take")
    assert taken + sum(seen["store"].get(k, 0) for k in KEYS) == sum(initial.values()) + added
    for ops, per in zip(plans, seen["results"]):
        for op, r in zip(ops, per):
            if op[0] == "snapshot":
                assert sorted(r) == sorted(op[1])


# ---------------------------------------------------------------- races held open


# How the judge holds one store call of the held operation open while a competing
# operation runs: first it waits up to HOLD_S for the competitor's first store call; once
# that has come, it waits for the competitor to return (up to FINISH_S). Neither is a
# tolerance and no assertion reads them. A right answer keeps the competitor out (it
# waits on a lock and makes no store call until the held operation is done), so it costs
# HOLD_S per held call. A wrong answer lets the competitor in: its first store call comes
# after one call into the worker and one back (each a wire round trip, at worst tens of
# milliseconds under load, so HOLD_S is ten times that), and the whole competitor then
# runs before the held call is served: the race is opened by construction, not by chance.
HOLD_S = 1.0
FINISH_S = 10.0


class HeldStore(DictStore):
    """The store for races held open: before serving each store call made for the held
    operation (the judge thread `held`), the store starts one competing operation on
    another judge thread and waits as above. So a competitor the solution lets in runs,
    whole, at every step of the held operation: before each of its reads and writes."""

    def __init__(self, initial, compete):
        super().__init__(initial)
        self._compete = compete  # called on a fresh thread: one competing operation
        self.held = None
        self.competitors = []
        self.competitor_results = []
        self.errors = []

    def _hold(self):
        me = threading.current_thread()
        entered = getattr(me, "sb_entered", None)
        if entered is not None:
            entered.set()  # a competitor's store call: it got in
        if me is not self.held:
            return
        entered, done = threading.Event(), threading.Event()

        def body():
            try:
                self.competitor_results.append(self._compete())
            except Exception as exc:  # reported; the test fails on it
                self.errors.append(f"{type(exc).__name__}: {exc}")
            finally:
                done.set()

        t = threading.Thread(target=body, daemon=True)
        t.sb_entered = entered
        self.competitors.append(t)
        t.start()
        if entered.wait(HOLD_S):
            done.wait(FINISH_S)

    def get(self, key):
        self._hold()
        return super().get(key)

    def set(self, key, value):
        self._hold()
        super().set(key, value)


def held_race(initial, held_op, competing_op):
    """Run `held_op(c)` on one judge thread, with `competing_op(c)` run whole before each
    of its store calls. Returns what the held operation returned, what each competitor
    returned, and the store's final contents."""
    box = {}
    store = HeldStore(initial, lambda: competing_op(box["c"]))
    c = box["c"] = Counters(store.handed)
    answer = {}

    def body():
        try:
            answer["value"] = held_op(c)
        except Exception as exc:  # reported; the test fails on it
            answer["error"] = f"{type(exc).__name__}: {exc}"

    held = threading.Thread(target=body, daemon=True)
    store.held = held
    held.start()
    assert watch([held], lambda: store.calls) == 0, "no store call for 10 s: deadlocked"
    assert watch(list(store.competitors), lambda: store.calls) == 0, "no store call for 10 s: deadlocked"
    assert "error" not in answer, answer["error"]
    assert store.errors == [], store.errors
    assert store.competitors, "the held operation made no store call"
    return answer["value"], list(store.competitor_results), dict(store.data)


def test_add_held_open_loses_no_concurrent_add():
    """An add held before each of its store calls while another add runs whole."""
    value, others, data = held_race({"k": 10}, lambda c: c.add("k", 1), lambda c: c.add("k", 100))
    n = len(others)
    assert data["k"] == 10 + 1 + 100 * n
    # Each add returns the value right after its own addition: the held add's is one of
    # the values the sequence of n + 1 additions passes through, and no two agree.
    assert len({value, *others}) == n + 1
    assert value in {10 + 1 + 100 * j for j in range(n + 1)}, (value, others)


def test_take_held_open_loses_no_concurrent_add():
    value, others, data = held_race({"k": 7}, lambda c: c.take("k"), lambda c: c.add("k", 1))
    assert value + data["k"] == 7 + len(others), (value, others, data)


def test_move_held_open_is_whole_to_a_snapshot():
    value, snaps, data = held_race({"a": 50, "b": 50}, lambda c: c.move("a", "b", 5),
                                   lambda c: c.snapshot(["b", "a"]))
    assert data == {"a": 45, "b": 55}
    assert [sum(s.values()) for s in snaps] == [100] * len(snaps), snaps


def test_snapshot_held_open_sees_no_move_half_done():
    value, _, data = held_race({"a": 50, "b": 50}, lambda c: c.snapshot(["a", "b"]),
                               lambda c: c.move("a", "b", 5))
    assert sorted(value) == ["a", "b"] and sum(value.values()) == 100, value
    assert sum(data.values()) == 100
