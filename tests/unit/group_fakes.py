"""Fakes for the group coordinator's unit tests: a manual clock with timers, and the GroupMetadataManager
interface kept in memory."""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Coroutine
from typing import Any

from kafkaops.cluster.common import errors


class ManualTimer:
    def __init__(self) -> None:
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class ManualScheduler:
    """Time moves only with `advance`; due timers fire in deadline order."""

    def __init__(self, start_ms: int = 1_000_000) -> None:
        self.time_ms = start_ms
        self._timers: list[tuple[int, int, ManualTimer, Callable[[], None]]] = []
        self._sequence = itertools.count()

    def now_ms(self) -> int:
        return self.time_ms

    def schedule(self, delay_ms: int, callback: Callable[[], None]) -> ManualTimer:
        timer = ManualTimer()
        heapq.heappush(self._timers, (self.time_ms + max(delay_ms, 0), next(self._sequence), timer, callback))
        return timer

    def advance(self, ms: int) -> None:
        target = self.time_ms + ms
        while self._timers and self._timers[0][0] <= target:
            due, _, timer, callback = heapq.heappop(self._timers)
            self.time_ms = due
            if not timer.cancelled:
                callback()
        self.time_ms = target

    def pending(self) -> int:
        return sum(1 for _, _, timer, _ in self._timers if not timer.cancelled)


class FakeGroupManager:
    """Every group local; stores what it is given; `store_error` fails the next stores."""

    def __init__(self) -> None:
        self.stored: list[tuple[str, dict[str, Any]]] = []
        self.deleted: list[str] = []
        self.offsets: dict[str, dict[Any, Any]] = {}
        self.store_error = errors.NONE
        self.loading: set[str] = set()
        self.foreign: set[str] = set()
        self.hold = False
        self.held: list[Coroutine[Any, Any, None]] = []

    def partition_for(self, group_id: str) -> int:
        return 0

    def is_group_local(self, group_id: str) -> bool:
        return group_id not in self.foreign

    def is_group_loading(self, group_id: str) -> bool:
        return group_id in self.loading

    async def store_group(self, group_id: str, value: dict[str, Any]) -> int:
        self.stored.append((group_id, value))
        return self.store_error

    async def delete_group(self, group_id: str) -> None:
        self.deleted.append(group_id)

    def get_offsets(self, group_id: str, partitions: Any) -> Any:
        return self.offsets.get(group_id, {})

    def current_groups(self) -> list[str]:
        return sorted(self.offsets)

    def group_not_exists(self, group_id: str) -> bool:
        return self.is_group_local(group_id) and group_id not in self.offsets

    def spawn(self, coroutine: Coroutine[Any, Any, None]) -> None:
        """Run a storage coroutine at once (the fake's awaits never suspend), or hold it until `release`."""
        if self.hold:
            self.held.append(coroutine)
        else:
            run_now(coroutine)

    def release(self) -> None:
        held, self.held = self.held, []
        for coroutine in held:
            run_now(coroutine)


def run_now(coroutine: Coroutine[Any, Any, Any]) -> Any:
    try:
        coroutine.send(None)
    except StopIteration as stop:
        return stop.value
    raise AssertionError("the coroutine suspended")
