"""The cyclic garbage collector paused over one burst of per-partition work.

A controller event or a LeaderAndIsr about 10,000 partitions allocates hundreds of thousands of objects
that outlive the burst (new states, request bodies, log lines). With the collector on, they set off
young and full collections in the middle of it, each full one walking the whole heap of a process that
holds every partition's state (0.3-1.5 s at 10,000 partitions on this machine, more as the heap grows:
the burst's cost grew faster than its work). Paused, reference counting still frees as usual and the
collector sees the burst's survivors once, after it, with the same thresholds.

The collector's switch is the process's, and a broker pauses it from two threads: the controller's event
thread and the broker's event loop (LeaderAndIsr, StopReplica). So the pauses are counted under a lock:
the collector goes off at the first and back on at the last, and only if it was on before the first. A
save-and-restore per block would not do: a block entered while another thread's is on saves "off", and
a switch between its check and its `gc.disable()` can leave the collector off for good.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

_lock = threading.Lock()
_depth = 0
_was_enabled = False


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """The collector off for the block, whichever threads hold such blocks at once (it comes back on when
    the last one ends, if it was on when the first began)."""
    global _depth, _was_enabled
    with _lock:
        if _depth == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _was_enabled:
                gc.enable()
