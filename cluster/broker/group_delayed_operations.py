"""The group coordinator's delayed operations (Kafka 2.8's `DelayedJoin`, `InitialDelayedJoin`,
`DelayedHeartbeat`) on an injected `Scheduler`.

Kafka parks them in two purgatories keyed by group and by member. The coordinator here keeps at most one
delayed join per group and one heartbeat expectation per member, so a dict of each stands for the watch
lists; what Kafka's `checkAndComplete` does for them is `DelayedJoin.try_complete` and replacing (or
cancelling) a member's `DelayedHeartbeat`. Time comes from the scheduler (the event loop's timers in the
broker, a manual clock in tests), not from `DelayedOperationPurgatory`'s loop clock, so that every expiry
can be driven by a test.

Threads: the broker's event loop (the scheduler's callbacks run there).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Protocol

from kafkaops.cluster.broker.group_metadata import GroupMetadata


class Timer(Protocol):
    def cancel(self) -> None:
        """Stop it; a cancelled timer never calls back."""


class Scheduler(Protocol):
    """Wall-clock milliseconds and one-shot timers."""

    def now_ms(self) -> int:
        """Now, in ms since the epoch (the groups' state timestamps)."""

    def schedule(self, delay_ms: int, callback: Callable[[], None]) -> Timer:
        """Call `callback` once, `delay_ms` from now, unless cancelled."""


class LoopScheduler:
    """The broker's: timers of the running event loop, `time.time` for timestamps."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock

    def now_ms(self) -> int:
        return int(self._clock() * 1000)

    def schedule(self, delay_ms: int, callback: Callable[[], None]) -> Timer:
        return asyncio.get_running_loop().call_later(max(delay_ms, 0) / 1000, callback)


class JoinCompleter(Protocol):
    """What a delayed join asks of the coordinator."""

    def try_complete_join(self, group: GroupMetadata) -> bool:
        """Whether every member (and pending member) has joined."""

    def on_complete_join(self, group: GroupMetadata) -> None:
        """End the join phase: drop who did not rejoin, start the next generation, answer the joins."""

    def watch_join(self, operation: DelayedJoin) -> None:
        """Try `operation` once, else make it the group's delayed join (Kafka's `tryCompleteElseWatch`)."""


class DelayedJoin:
    """Kafka's `DelayedJoin`: the join phase of a rebalance, completed when every member has rejoined or
    when the rebalance timeout (the largest of its members') expires."""

    def __init__(self, coordinator: JoinCompleter, group: GroupMetadata, timeout_ms: int) -> None:
        self.coordinator = coordinator
        self.group = group
        self.timeout_ms = timeout_ms
        self.completed = False
        self._timer: Timer | None = None

    def start(self, scheduler: Scheduler) -> None:
        self._timer = scheduler.schedule(self.timeout_ms, self._expire)

    def try_complete(self) -> bool:
        return self.coordinator.try_complete_join(self.group) and self.force_complete()

    def force_complete(self) -> bool:
        """Complete it now unless it already is; whether this call did."""
        if self.completed:
            return False
        self.completed = True
        self.cancel()
        self.on_complete()
        return True

    def cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def on_complete(self) -> None:
        self.coordinator.on_complete_join(self.group)

    def _expire(self) -> None:
        self._timer = None
        self.force_complete()


class InitialDelayedJoin(DelayedJoin):
    """Kafka's `InitialDelayedJoin`: the first rebalance of an Empty group waits
    `group.initial.rebalance.delay.ms`, again as long as new members keep coming, up to the rebalance
    timeout, so that a group whose consumers start together settles in one generation."""

    def __init__(
        self,
        coordinator: JoinCompleter,
        group: GroupMetadata,
        configured_rebalance_delay_ms: int,
        delay_ms: int,
        remaining_ms: int,
    ) -> None:
        super().__init__(coordinator, group, delay_ms)
        self.configured_rebalance_delay_ms = configured_rebalance_delay_ms
        self.remaining_ms = remaining_ms

    def try_complete(self) -> bool:
        return False

    def on_complete(self) -> None:
        group = self.group
        if group.new_member_added and self.remaining_ms != 0:
            group.new_member_added = False
            delay = min(self.configured_rebalance_delay_ms, self.remaining_ms)
            remaining = max(self.remaining_ms - self.timeout_ms, 0)
            self.coordinator.watch_join(
                InitialDelayedJoin(self.coordinator, group, self.configured_rebalance_delay_ms, delay, remaining)
            )
        else:
            super().on_complete()


class DelayedHeartbeat:
    """Kafka's `DelayedHeartbeat`: a member's session, expiring unless a heartbeat (or a join, a sync, a
    commit) replaces it first. `is_pending`: the session of a member id handed out with MEMBER_ID_REQUIRED
    and not used yet."""

    def __init__(
        self, group: GroupMetadata, member_id: str, is_pending: bool, on_expire: Callable[[DelayedHeartbeat], None]
    ) -> None:
        self.group = group
        self.member_id = member_id
        self.is_pending = is_pending
        self._on_expire = on_expire
        self._timer: Timer | None = None

    def start(self, scheduler: Scheduler, timeout_ms: int) -> None:
        self._timer = scheduler.schedule(timeout_ms, self._expire)

    def cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _expire(self) -> None:
        self._timer = None
        self._on_expire(self)
