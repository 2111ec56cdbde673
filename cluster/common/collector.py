"""The cyclic garbage collector paused over one burst of per-partition work, and a broker's full
collections on a timer (`full_collections_on_a_timer`, at the end).

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
from collections.abc import Callable, Iterator

_lock = threading.Lock()
_depth = 0
_was_enabled = False
_timer_running = False
"""Whether `full_collections_on_a_timer` runs in this process: only then may a burst's survivors be frozen."""
FREEZE_AFTER_OBJECTS = 10_000
"""A burst that leaves more new objects than this has them frozen when it ends (see `collector_paused`)."""


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """The collector off for the block, whichever threads hold such blocks at once (it comes back on when
    the last one ends, if it was on when the first began).

    In a process whose full collections come from the timer, a burst that leaves more than
    FREEZE_AFTER_OBJECTS new objects has them frozen as it ends (`gc.freeze`, a constant-time move out of
    the generations): otherwise the first young collection after it walks them all, and the next
    middle one again (30-150 ms after a LeaderAndIsr of 10,000 partitions), to find what is almost all
    long-lived state. The timer unfreezes them before its next full collection, which finds their garbage
    cycles, if any, as it would have found them anyway."""
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
                if _timer_running and gc.get_count()[0] > FREEZE_AFTER_OBJECTS:
                    gc.freeze()
                gc.enable()


FULL_COLLECTION_INTERVAL_S = 30.0
"""How often a broker process may walk its whole heap (see `full_collections_on_a_timer`)."""
_NEVER = 2**30
"""A third threshold no count reaches: the interpreter never starts a full collection by itself."""


def full_collections_on_a_timer(interval_s: float = FULL_COLLECTION_INTERVAL_S) -> Callable[[], None]:
    """A broker process's full collections at most once per `interval_s`, from a daemon thread, and only
    when the interpreter would have wanted one (its oldest generation's count past the threshold it had);
    young collections stay automatic. Returns a function that stops the timer, unfreezes what bursts froze and
    restores the threshold.

    Why: a broker's heap holds every partition's objects (~400,000 tracked at 10,000 partitions), and every
    request about thousands of partitions (an UpdateMetadata, a LeaderAndIsr, a fetch round) leaves tens of
    thousands of new long-lived objects, which the interpreter's rule (a full collection once a quarter of
    the heap is new) turns into one full collection every second or two, each a walk of the whole heap:
    measured in a reassignment of 10,000 partitions, 6-7 full collections per broker in 14 s, 0.4-1.4 s of
    wall time each on the loaded two cores, more than half of each broker's busy time. What they find is
    cyclic garbage, which is rare here (reference counting frees the rest at once), so finding it within
    `interval_s` is enough.
    """
    global _timer_running
    threshold0, threshold1, threshold2 = gc.get_threshold()
    gc.set_threshold(threshold0, threshold1, _NEVER)
    stopped = threading.Event()

    def run() -> None:
        while not stopped.wait(interval_s):
            # not during a paused burst (`collector_paused`), whose point is to keep full collections out of it
            with _lock:
                due = gc.isenabled() and (gc.get_count()[2] > threshold2 or gc.get_freeze_count() > 0)
                if due:
                    gc.unfreeze()  # what bursts froze is looked at again, with everything else
            if due:
                gc.collect()

    _timer_running = True
    threading.Thread(target=run, name="full-gc-timer", daemon=True).start()

    def stop() -> None:
        global _timer_running
        stopped.set()
        with _lock:
            _timer_running = False
            gc.unfreeze()
        gc.set_threshold(threshold0, threshold1, threshold2)

    return stop
