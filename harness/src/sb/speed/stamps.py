"""The kernel's receive time of a read, on the `perf_counter_ns` clock.

Linux stamps each received packet (SO_TIMESTAMPNS) on the wall clock, CLOCK_REALTIME, which
time daemons adjust: chrony slews it by up to 8% (its default maxslewrate) while it
corrects an offset, and a freshly booted machine often has one to correct. Converting with
an offset between the two clocks taken once drifts by that rate (a CI machine measured 14 ms
of TTFT error and 1.4% of inter-token latency error that way, a second into a run). So
each stamp is converted through the packet's age, taken on the wall clock at the moment of
the read: the age is short (the time the packet waited for this read), and a slewed clock
moves it by the slew rate of that short time only.
"""

from __future__ import annotations

import socket
import struct

SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)     # Linux
_SOL_SOCKET = socket.SOL_SOCKET
_timespec = struct.Struct("qq").unpack_from


def kernel_stamp(ancillary, read_ns: int, read_wall_ns: int) -> int:
    """When the read's bytes arrived, on the clock of `read_ns` (`perf_counter_ns` at the read,
    taken with `read_wall_ns`, `time.time_ns()`); `read_ns` itself where the kernel gave no stamp."""
    for level, kind, payload in ancillary:
        if level == _SOL_SOCKET and kind == SO_TIMESTAMPNS and len(payload) >= 16:
            seconds, nanoseconds = _timespec(payload)
            return read_ns - max(0, read_wall_ns - (seconds * 1_000_000_000 + nanoseconds))
    return read_ns
