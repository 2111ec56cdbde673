"""Delayed operations (Kafka's `DelayedOperation` and `DelayedOperationPurgatory`).

A request that cannot be answered yet (a produce with acks=all waiting for the ISR, a fetch waiting for
`min_bytes`) becomes an operation parked in a purgatory:

* try-complete: the operation says whether it can complete now (`try_complete`) and, if so, completes
  itself with `force_complete`;
* watch keys: `try_complete_else_watch` tries once, then watches the operation under its keys
  (partitions, topics, ...); whoever changes what operations wait for calls `check_and_complete(key)`
  (after an append, a high-watermark move, a leadership change, a metadata update...);
* expiry: an operation not completed within its timeout is completed by its timer, then told
  `on_expiration`;
* completion once: `force_complete` runs `on_complete` exactly once, whichever of a check, the timer or
  the caller gets there first; the handler that parked the operation awaits its result (`result()`).

Threads: Kafka's purgatory is shared by request handler threads, hence its locks, its timing wheel and
its reaper thread. Ours lives on the broker's event loop and is called from it only (a caller on another
thread hops onto the loop with `loop.call_soon_threadsafe`), so it has no locks and its timers are the
loop's own (`call_later`); a completed operation leaves its watch lists at once instead of at the
reaper's next purge.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Hashable, Iterable
from typing import Any, Generic, TypeVar

K = TypeVar("K", bound=Hashable)
T = TypeVar("T")


class DelayedOperation(ABC, Generic[K, T]):
    """An operation that completes when its condition holds or its timeout expires, whichever is first.

    Subclasses implement `watch_keys`, `try_complete` and `on_complete` (which returns the operation's
    result), and may implement `on_expiration`. Created on the event loop.
    """

    def __init__(self, timeout_ms: int) -> None:
        loop = asyncio.get_running_loop()
        self.deadline = loop.time() + max(timeout_ms, 0) / 1000
        """When it expires, in the loop's clock (`loop.time()`), counted from its creation."""
        self.expired = False
        """Whether the timer completed it (set before `on_complete` runs)."""
        self._completed = False
        self._result: asyncio.Future[T] = loop.create_future()
        self._timer: asyncio.TimerHandle | None = None
        self._purgatory: DelayedOperationPurgatory[K] | None = None

    @property
    def is_completed(self) -> bool:
        return self._completed

    @abstractmethod
    def watch_keys(self) -> Iterable[K]:
        """The keys it is watched under. Iterated once when it is watched and once when it completes, so a
        generator over the operation's own state will do (no list per operation on a hot path)."""

    @abstractmethod
    def try_complete(self, key: K | None) -> bool:
        """Check the condition; if it holds, return `self.force_complete()`, else False.

        `key` is the key being checked, or None for the first try (before it is watched): an operation
        over many keys may then look at the one that changed only, where Kafka's re-checks them all."""

    @abstractmethod
    def on_complete(self) -> T:
        """The operation's result, computed once, when it completes for whatever reason."""

    def on_expiration(self) -> None:
        """Called after `on_complete` when the timeout completed the operation."""

    def force_complete(self) -> bool:
        """Complete it now unless it already is; returns whether this call completed it. Its timer is
        cancelled and it leaves every watch list; an exception of `on_complete` becomes its result's."""
        if not self._finish():
            return False
        if self._result.done():
            return True  # its awaiting handler was cancelled meanwhile: nobody wants the result
        try:
            result = self.on_complete()
        except Exception as error:  # noqa: BLE001 - handed to the awaiting handler, which raises it
            self._result.set_exception(error)
        else:
            self._result.set_result(result)
        return True

    def run(self) -> None:
        """The timer's task (Kafka's `run`): complete the operation as expired, unless something did."""
        if self._completed:
            return
        self.expired = True
        if self.force_complete():
            self.on_expiration()

    async def result(self) -> T:
        """The result of `on_complete`, once the operation completed. Cancelling the caller (its connection
        closed, the broker stops) abandons the operation: it leaves its purgatory without completing."""
        try:
            return await self._result
        except asyncio.CancelledError:
            self._finish()
            raise

    def _finish(self) -> bool:
        """Mark it completed, stop its timer, take it off its watch lists; False if it already was."""
        if self._completed:
            return False
        self._completed = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._purgatory is not None:
            self._purgatory.unwatch(self)
        return True


class DelayedOperationPurgatory(Generic[K]):
    """Operations waiting under keys; one purgatory per kind of operation (Kafka's "Produce", "Fetch",
    ...). Used on the event loop only."""

    def __init__(self, name: str) -> None:
        self.name = name
        # insertion-ordered (dicts as ordered sets): operations are tried in the order they were parked
        self._watchers: dict[K, dict[DelayedOperation[K, Any], None]] = {}
        self._delayed: dict[DelayedOperation[K, Any], None] = {}

    def __repr__(self) -> str:
        return f"DelayedOperationPurgatory({self.name}, {len(self._delayed)} delayed)"

    def try_complete_else_watch(self, operation: DelayedOperation[K, Any]) -> bool:
        """Try to complete `operation`; if it cannot complete yet, watch it under its keys and start its
        timer. Returns whether it completed at once."""
        if operation.try_complete(None):
            return True
        watchers = self._watchers
        for key in operation.watch_keys():
            found = watchers.get(key)
            if found is None:
                found = watchers[key] = {}
            found[operation] = None
        operation._purgatory = self
        self._delayed[operation] = None
        operation._timer = asyncio.get_running_loop().call_at(operation.deadline, operation.run)
        return False

    def check_and_complete(self, key: K) -> int:
        """Try every operation watching `key`; returns how many completed. A key left without watchers
        is dropped (a deleted partition's, say)."""
        watching = self._watchers.get(key)
        if watching is None:
            return 0
        completed = 0
        if watching:
            for operation in list(watching):  # a completion edits the watch list
                if not operation.is_completed and operation.try_complete(key):
                    completed += 1
        if not watching and self._watchers.get(key) is watching:
            del self._watchers[key]
        return completed

    def unwatch(self, operation: DelayedOperation[K, Any]) -> None:
        """Take a completed operation off its keys' watch lists (called by `force_complete`)."""
        watchers = self._watchers
        for key in operation.watch_keys():
            found = watchers.get(key)
            if found is not None:
                found.pop(operation, None)
        self._delayed.pop(operation, None)
        operation._purgatory = None

    def watched_keys(self) -> list[K]:
        """Keys with at least one operation watching them."""
        return [key for key, watching in self._watchers.items() if watching]

    def watched(self) -> int:
        """Watch-list entries (Kafka's `watched`): an operation counts once per key."""
        return sum(len(watching) for watching in self._watchers.values())

    def delayed(self) -> int:
        """Operations parked and not completed yet (Kafka's `numDelayed`)."""
        return len(self._delayed)

    def shutdown(self) -> None:
        """Stop every timer; operations still parked never complete (their handlers are cancelled with
        their connections), as Kafka's purgatory shuts its reaper down and drops them."""
        for operation in self._delayed:
            if operation._timer is not None:
                operation._timer.cancel()
                operation._timer = None
