"""Runs in the solution's process: files, threads and processes the tests need live.

The judge cannot see the worker's files, so database paths are made here. Threads and
child processes that deliver webhooks also run here, next to the solution, and every
function returns plain observations (outcomes, on which thread fulfil ran, errors as
text). No expected value and no oracle lives in this file: the tests decide what is right.

The record of fulfilments is not kept here. Every function takes `judge_fulfil`, the
judge's recording fake (a wire handle: the worker can only call it), and every fulfil
the solution makes reaches it before that fulfil returns: on threads the fulfil the
solution is handed makes the judge call first thing; in a child process, which is not on
the wire, fulfil writes the call down a pipe and blocks until this process has made the
judge call and answered. So a fulfilment, once made, is in the judge's record, and nothing the
solution does afterwards in this process or a child (deleting entries, rebinding
lists) changes what the verdict reads.
"""

import json
import os
import random
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

import webhooks
from webhooks import WebhookHandler

HANG_GUARD_S = 60  # a child process or thread still running after this long is stuck


_made = []


def _scratch_root():
    """A memory-backed folder when there is one (the sandbox mounts a fresh /dev/shm):
    a commit there costs about a millisecond instead of a disk flush, so the tests stay
    fast without changing anything the solution may do."""
    shm = "/dev/shm"
    return shm if os.path.isdir(shm) and os.access(shm, os.W_OK) else None


def new_db_path():
    """A path in a fresh folder of the worker's scratch space; the file does not exist."""
    folder = tempfile.mkdtemp(prefix="sb-payments-", dir=_scratch_root())
    _made.append(folder)
    return os.path.join(folder, "payments.db")


def cleanup():
    """Remove every folder new_db_path made (the worker exits without running atexit)."""
    import shutil
    while _made:
        shutil.rmtree(_made.pop(), ignore_errors=True)


def make_empty_file(path):
    """A zero-byte file at `path`, as a deployment script's `touch` leaves it."""
    with open(path, "wb"):
        pass


def make_foreign_table(path, rows):
    """The application's own table in the database file, before any handler opens it."""
    conn = sqlite3.connect(path)
    try:
        conn.execute("CREATE TABLE orders (order_id TEXT PRIMARY KEY, total INTEGER NOT NULL)")
        conn.executemany("INSERT INTO orders VALUES (?, ?)", [tuple(r) for r in rows])
        conn.commit()
    finally:
        conn.close()


def read_foreign_table(path):
    conn = sqlite3.connect(path)
    try:
        return [list(r) for r in conn.execute("SELECT order_id, total FROM orders ORDER BY order_id")]
    finally:
        conn.close()


def _describe(exc):
    return f"{type(exc).__name__}: {exc}"


class _Fulfil:
    """The fulfil the solution is handed on threads: it makes the judge's recording call
    first (the shipment, recorded in the judge before anything else happens), then notes
    the calling thread and sleeps a seeded, jittered time.

    The judge call and the sleep are the window a wrong implementation races through:
    while one delivery sits in fulfilment, every other released thread runs (a wire
    round trip and a sleep both free the GIL). The thread note is this process's word,
    used only for "fulfil runs on the caller's thread"; the judge counts fulfilments
    from its own record."""

    def __init__(self, judge_fulfil, pause_s, seed):
        self._judge_fulfil = judge_fulfil
        self._threads = []
        self._pause_s = pause_s
        self._rng = random.Random(seed)
        self._lock = threading.Lock()

    def __call__(self, payment_id, amount):
        self._judge_fulfil(payment_id, amount)
        with self._lock:
            self._threads.append(threading.get_ident())
            pause = self._pause_s * (0.5 + self._rng.random())
        time.sleep(pause)


def run_threads(db_path, plans, shared, judge_fulfil, pause_s, seed, status_readers=0, status_ids=()):
    """One real thread per plan; a plan is a list of rounds, a round a list of events.

    Before every round all delivering threads meet at a barrier, so each round's
    deliveries start together. `shared`: one handler for all threads, else one handler
    per thread (as several processes would). `status_readers` extra threads call
    `status` on `status_ids` until the deliveries end. Returns, per thread, the
    [event id, outcome] of each delivery (outcome "error: ..." when handle raised), for
    each fulfil call whether it ran on a delivering thread (the calls themselves are in
    the judge's record), and status errors."""
    fulfil = _Fulfil(judge_fulfil, pause_s, seed)
    n = len(plans)
    handlers = [WebhookHandler(db_path, fulfil)] * n if shared else [WebhookHandler(db_path, fulfil)
                                                                       for _ in range(n)]
    rounds = max(len(p) for p in plans)
    barrier = threading.Barrier(n)
    results = [[] for _ in range(n)]
    idents = [None] * n
    failures = []
    done = threading.Event()
    status_errors, status_seen = [], []

    def deliver(i):
        idents[i] = threading.get_ident()
        try:
            for r in range(rounds):
                barrier.wait(HANG_GUARD_S)
                for evt in (plans[i][r] if r < len(plans[i]) else []):
                    try:
                        results[i].append([evt["id"], handlers[i].handle(dict(evt))])
                    except Exception as exc:  # reported to the judge as text
                        results[i].append([evt["id"], "error: " + _describe(exc)])
        except BaseException as exc:  # a broken barrier, say
            failures.append(_describe(exc))

    def read_status():
        reader = WebhookHandler(db_path, fulfil) if not shared else handlers[0]
        while not done.is_set():
            for pid in status_ids:
                try:
                    status_seen.append(reader.status(pid))
                except Exception as exc:
                    status_errors.append(_describe(exc))
            time.sleep(0.001)

    threads = [threading.Thread(target=deliver, args=(i,), daemon=True) for i in range(n)]
    readers = [threading.Thread(target=read_status, daemon=True) for _ in range(status_readers)]
    for t in readers + threads:
        t.start()
    for t in threads:
        t.join(HANG_GUARD_S)
    done.set()
    for t in readers:
        t.join(HANG_GUARD_S)
    stuck = sum(t.is_alive() for t in threads + readers)
    by_ident = {ident: i for i, ident in enumerate(idents)}
    on_caller = [ident in by_ident for ident in fulfil._threads]
    return {"results": results, "on_caller": on_caller, "failures": failures, "stuck": stuck,
            "status_errors": status_errors[:5], "status_reads": len(status_seen),
            "status_values": sorted({str(v) for v in status_seen})}


def fulfil_thread_and_timing(db_path, evt, judge_fulfil):
    """Deliver one event from a fresh thread; report on which thread fulfil ran and
    whether it had already run when handle returned (fulfil also makes the judge's
    recording call, so the judge has its own record of it)."""
    seen = {}
    calls = []

    def fulfil(payment_id, amount):
        judge_fulfil(payment_id, amount)
        calls.append([payment_id, amount])
        seen["fulfil_thread"] = threading.get_ident()

    def body():
        seen["caller_thread"] = threading.get_ident()
        handler = WebhookHandler(db_path, fulfil)
        seen["outcome"] = handler.handle(dict(evt))
        seen["calls_at_return"] = [list(c) for c in calls]

    t = threading.Thread(target=body, daemon=True)
    t.start()
    t.join(HANG_GUARD_S)
    time.sleep(0.05)  # a fulfilment left running in the background shows up by now
    return {"outcome": seen.get("outcome"), "calls_at_return": seen.get("calls_at_return"),
            "calls_later": [list(c) for c in calls],
            "same_thread": "fulfil_thread" in seen and seen["fulfil_thread"] == seen.get("caller_thread")}


def run_during_slow_fulfil(db_path, slow_evt, during, judge_fulfil):
    """Deliver `slow_evt` on a thread of its own, on its own handler, and as soon as its
    fulfil has begun, start one more thread per entry of `during` together: each entry
    is [kind, which, arg], kind "handle" (arg an event) or "status" (arg a payment id),
    which "own" (a new handler on the file, as another process would have) or "shared"
    (the slow delivery's own handler instance). The fulfil the solution is handed makes
    the judge's recording call (which the test makes slow, in the judge); the threads
    start before that call is made, so they run while it lasts.

    Returns the slow delivery's outcome, per entry its outcome or status ("error: ..."
    when the call raised), and per entry whether the call began before the slow
    delivery's handle returned."""
    began = threading.Event()
    slow_returned = threading.Event()

    def fulfil(payment_id, amount):
        began.set()
        judge_fulfil(payment_id, amount)

    slow_handler = WebhookHandler(db_path, fulfil)
    handlers = [slow_handler if which == "shared" else WebhookHandler(db_path, fulfil)
                for _, which, _ in during]
    slow_out = {}
    results = [None] * len(during)
    overlapped = [None] * len(during)
    failures = []

    def deliver_slow():
        try:
            slow_out["outcome"] = slow_handler.handle(dict(slow_evt))
        except Exception as exc:
            slow_out["outcome"] = "error: " + _describe(exc)
        finally:
            slow_returned.set()

    def call(i):
        kind, _, arg = during[i]
        overlapped[i] = not slow_returned.is_set()
        try:
            if kind == "handle":
                results[i] = handlers[i].handle(dict(arg))
            else:
                results[i] = handlers[i].status(arg)
        except Exception as exc:
            results[i] = "error: " + _describe(exc)

    slow = threading.Thread(target=deliver_slow, daemon=True)
    slow.start()
    deadline = time.monotonic() + HANG_GUARD_S
    while not began.wait(0.005):  # until fulfil begins, or the delivery ends without it
        if slow_returned.is_set() or time.monotonic() > deadline:
            failures.append("the slow delivery ended or hung without calling fulfil")
            break
    others = [threading.Thread(target=call, args=(i,), daemon=True) for i in range(len(during))]
    for t in others:
        t.start()
    for t in [slow] + others:
        t.join(HANG_GUARD_S)
    stuck = sum(t.is_alive() for t in [slow] + others)
    return {"slow": slow_out.get("outcome"), "results": results, "overlapped": overlapped,
            "failures": failures, "stuck": stuck}


# A child process: its own interpreter importing the solution from the solution's folder,
# one handler on the shared database file, and a fulfil that relays each call to this
# process and blocks until the judge has recorded it. The relay's two pipe ends are taken
# before the solution is imported. The parent releases every child's round at once (a
# line on each stdin), so the children's deliveries overlap the way two worker processes
# of a web service do.
_CHILD = r"""
import json, os, random, sys, time
sys.path.insert(0, sys.argv[1])
_call_fd, _answer_fd = int(sys.argv[2]), int(sys.argv[3])
_write, _read = os.write, os.read
spec = json.loads(sys.stdin.readline())
rng = random.Random(spec["seed"])
def fulfil(payment_id, amount):
    _write(_call_fd, (json.dumps([payment_id, amount]) + "\n").encode())
    answer = b""
    while not answer.endswith(b"\n"):
        chunk = _read(_answer_fd, 4096)
        if not chunk:
            raise RuntimeError("the fulfilment relay went away")
        answer += chunk
    if answer != b"ok\n":
        raise RuntimeError(answer.decode(errors="replace").strip())
    time.sleep(spec["pause_s"] * (0.5 + rng.random()))
from webhooks import WebhookHandler
handler = WebhookHandler(spec["db_path"], fulfil)
results = []
for events in spec["rounds"]:
    print("ready", flush=True)
    if sys.stdin.readline().strip() != "go":
        break
    for evt in events:
        try:
            results.append([evt["id"], handler.handle(evt)])
        except Exception as exc:
            results.append([evt["id"], "error: %s: %s" % (type(exc).__name__, exc)])
print(json.dumps({"results": results}), flush=True)
"""


def _relay(call_r, answer_w, judge_fulfil, problems):
    """Serve one child's fulfil calls: each is made on the judge's recording fake, and
    only then is the child told it returned (or that it raised)."""
    with os.fdopen(call_r, "rb") as calls, os.fdopen(answer_w, "wb", buffering=0) as answers:
        for line in calls:
            try:
                payment_id, amount = json.loads(line)
                judge_fulfil(payment_id, amount)
                answer = "ok"
            except Exception as exc:  # the fake's failure is the child's fulfil raising
                answer = "error: " + _describe(exc).replace("\n", " ")
            try:
                answers.write((answer + "\n").encode())
            except OSError as exc:
                problems.append(f"a child stopped waiting for its fulfilment: {exc}")
                return


def run_processes(db_path, plans, judge_fulfil, pause_s, seed):
    """One child process per plan (a list of rounds of events), rounds released together.

    Returns, per process, its [event id, outcome] list, plus any problem starting or
    talking to a child as text. Every fulfil call of every child is made on
    `judge_fulfil` (see _relay)."""
    solution_dir = os.path.dirname(os.path.abspath(webhooks.__file__))
    rounds = max(len(p) for p in plans)
    children, relays, problems = [], [], []
    for i, plan in enumerate(plans):
        spec = {"db_path": db_path, "pause_s": pause_s, "seed": seed * 1000 + i,
                "rounds": [plan[r] if r < len(plan) else [] for r in range(rounds)]}
        call_r, call_w = os.pipe()
        answer_r, answer_w = os.pipe()
        try:
            child = subprocess.Popen([sys.executable, "-s", "-B", "-c", _CHILD, solution_dir,
                                      str(call_w), str(answer_r)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, cwd=solution_dir, pass_fds=(call_w, answer_r))
        finally:
            os.close(call_w)
            os.close(answer_r)
        relay = threading.Thread(target=_relay, args=(call_r, answer_w, judge_fulfil, problems), daemon=True)
        relay.start()
        relays.append(relay)
        child.stdin.write(json.dumps(spec) + "\n")
        child.stdin.flush()
        children.append(child)
    try:
        for _ in range(rounds):
            for child in children:
                line = child.stdout.readline().strip()
                if line != "ready":
                    problems.append(f"a child said {line!r} instead of ready")
            for child in children:  # released back to back: microseconds apart
                try:
                    child.stdin.write("go\n")
                    child.stdin.flush()
                except OSError as exc:  # the child died; its stderr is reported below
                    problems.append(f"a child stopped listening: {exc}")
        outputs = []
        for child in children:
            out, err = child.communicate(timeout=HANG_GUARD_S)
            lines = [ln for ln in out.splitlines() if ln.strip()]
            try:
                outputs.append(json.loads(lines[-1]))
            except (IndexError, ValueError):
                problems.append(f"child exited {child.returncode} without a report: {err[-800:]}")
                outputs.append({"results": []})
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()
                child.wait()
    for relay in relays:  # a child's exit closes its end of the pipe: the relay ends
        relay.join(HANG_GUARD_S)
        if relay.is_alive():
            problems.append("a fulfilment relay is still running after its child exited")
    return {"results": [o["results"] for o in outputs], "problems": problems}
