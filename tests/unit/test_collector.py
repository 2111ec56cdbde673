"""collector_paused: the process's cyclic collector off while any thread's block runs, back on after the
last one (the controller's event thread and the broker's event loop pause it at the same time).
full_collections_on_a_timer: a broker's full collections from a timer only."""

from __future__ import annotations

import gc
import threading
import weakref
from collections.abc import Iterator

import pytest

from kafkaops.cluster.common import collector
from kafkaops.cluster.common.collector import collector_paused, full_collections_on_a_timer


@pytest.fixture(autouse=True)
def _collector_restored() -> Iterator[None]:
    enabled = gc.isenabled()
    yield
    if enabled:
        gc.enable()
    else:
        gc.disable()


def test_off_inside_on_after() -> None:
    gc.enable()
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_left_off_if_it_was_off() -> None:
    gc.disable()
    with collector_paused():
        pass
    assert not gc.isenabled()


def test_on_again_after_an_error() -> None:
    gc.enable()
    with pytest.raises(RuntimeError), collector_paused():
        raise RuntimeError("boom")
    assert gc.isenabled()


def test_blocks_of_two_threads_overlapping_either_way_leave_it_on() -> None:
    """Thread A enters, B enters, A leaves first: the collector stays off until B leaves, then comes on
    (a per-block save and restore turned it on under B, or left it off for good)."""
    gc.enable()
    a_in, b_in, a_out = threading.Event(), threading.Event(), threading.Event()
    seen: dict[str, bool] = {}

    def thread_a() -> None:
        with collector_paused():
            a_in.set()
            b_in.wait(5)
        a_out.set()

    def thread_b() -> None:
        a_in.wait(5)
        with collector_paused():
            b_in.set()
            a_out.wait(5)
            seen["b after a left"] = gc.isenabled()

    threads = [threading.Thread(target=thread_a), threading.Thread(target=thread_b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert seen == {"b after a left": False}
    assert gc.isenabled()


def test_many_threads_at_once_leave_it_on() -> None:
    gc.enable()
    barrier = threading.Barrier(8)

    def work() -> None:
        with collector_paused():
            barrier.wait(5)  # all eight inside at once
        for _ in range(200):
            with collector_paused():
                pass

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert gc.isenabled()


class _Node:
    """An object in a reference cycle with itself: only the cyclic collector frees it."""

    def __init__(self) -> None:
        self.itself = self


def _old_cycle() -> threading.Event:
    """A garbage cycle in the oldest generation (young collections cannot free it); the event is set when
    it is freed."""
    freed = threading.Event()
    node = _Node()
    weakref.finalize(node, freed.set)
    gc.collect(1)  # still referenced here: it moves up into the oldest generation
    del node
    return freed


def test_full_collections_come_from_the_timer_not_from_the_young_ones() -> None:
    gc.enable()
    threshold = gc.get_threshold()
    stop = full_collections_on_a_timer(interval_s=0.05)
    try:
        assert gc.get_threshold()[2] > 10**6  # the interpreter starts none by itself
        with collector_paused():  # the timer holds off during a paused burst
            freed = _old_cycle()
            for _ in range(threshold[2] + 1):
                gc.collect(1)  # each young collection counts toward the oldest generation's threshold
            assert not freed.wait(0.3)
        assert freed.wait(5)  # the timer's next round, the burst over
    finally:
        stop()
    assert gc.get_threshold() == threshold


def test_a_big_bursts_survivors_are_frozen_until_the_timers_next_round() -> None:
    gc.enable()
    gc.collect()
    with collector_paused():  # no timer: nothing is frozen
        kept = [{"partition": i} for i in range(collector.FREEZE_AFTER_OBJECTS * 2)]
    assert gc.get_freeze_count() == 0
    stop = full_collections_on_a_timer(interval_s=0.3)
    try:
        with collector_paused():
            kept += [{"partition": i} for i in range(collector.FREEZE_AFTER_OBJECTS * 2)]
            node = _Node()
            freed = threading.Event()
            weakref.finalize(node, freed.set)
            del node  # a garbage cycle made in the burst: frozen with the survivors
        assert gc.get_freeze_count() >= collector.FREEZE_AFTER_OBJECTS * 2
        gc.collect()  # frozen objects are out of every collection...
        assert not freed.is_set()
        assert freed.wait(5)  # ...until the timer unfreezes them and collects
        with collector_paused():  # a small burst is left to the young collections
            kept += [{"partition": i} for i in range(10)]
        assert gc.get_freeze_count() == 0
    finally:
        stop()
    assert gc.get_freeze_count() == 0
    del kept
