"""The cyclic garbage collector paused over one burst of per-partition work.

A controller event or a LeaderAndIsr about 10,000 partitions allocates hundreds of thousands of objects
that outlive the burst (new states, request bodies, log lines). With the collector on, they set off
young and full collections in the middle of it, each full one walking the whole heap of a process that
holds every partition's state (0.3-1.5 s at 10,000 partitions on this machine, more as the heap grows:
the burst's cost grew faster than its work). Paused, reference counting still frees as usual and the
collector sees the burst's survivors once, after it, with the same thresholds.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """The collector off for the block (nested blocks keep it off until the outermost one ends)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
