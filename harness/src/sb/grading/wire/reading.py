"""Who reads the wire. Until a side starts its reader thread, a thread waiting for a message
reads the wire itself, so the message reaches it without a hand-over between threads (on a
machine whose other cores sit idle, each hand-over costs tens of microseconds, and a call
from the judge crossed one on each side). The judge starts its reader only when it hands the
worker an object, because until then every message the worker may send answers a judge
thread that is waiting for it; the worker starts its reader at once (peer.py). The main
thread never reads once a Python signal handler is set: a handler may raise anywhere in it,
also between a read and keeping what it read (Peer.watch_signal_handlers).

Only the thread holding the role reads, and only while it waits. A thread that wants it and
finds it held queues up as a candidate and sleeps on its inbox, where the reader puts what
arrives for it; the holder hands the role on when it stops, by naming the next candidate the
holder and putting `ROLE` in its inbox (a hint to look again). Once the reader thread holds
the role it keeps it, and every waiting thread sleeps on its inbox."""

import collections
import threading


ROLE = ("role", None)  # put in a candidate's inbox: the role may be yours now
READER = "reader"  # the holder once the reader thread has taken the role


class ReadRole:
    def __init__(self):
        self.lock = threading.Lock()
        self.free = threading.Condition(self.lock)  # the reader thread waits here for the role
        self.holder = None
        self.candidates = collections.deque()
        self.closed = False

    def take(self, inbox):
        """True when the role is this thread's now; otherwise it is a candidate."""
        with self.lock:
            if self.holder is None or self.holder is inbox:
                self.holder = inbox
                return True
            if self.holder is not READER and inbox not in self.candidates:
                self.candidates.append(inbox)
            return False

    def release(self, inbox):
        """This thread stops reading, or stops waiting to: the role goes to the next candidate."""
        with self.lock:
            if self.holder is inbox:
                if self.candidates:
                    self.holder = self.candidates.popleft()
                    self.holder.put(ROLE)
                else:
                    self.holder = None
                    self.free.notify()
            else:
                try:
                    self.candidates.remove(inbox)
                except ValueError:
                    pass

    def keep(self):
        """For the reader thread: wait until no waiting thread reads, then hold the role for
        good. False once the wire is closed."""
        with self.lock:
            while self.holder is not None and not self.closed:
                self.free.wait()
            if not self.closed:
                self.holder = READER
            return not self.closed

    def close(self):
        with self.lock:
            self.closed = True
            self.free.notify_all()
