"""Kafka's `DelayedFetch`: a fetch that found less than `min_bytes`, parked until there is enough to say or
`max_wait_ms` has passed (kafka-protocol.md §6).

It completes at once when a read finds `min_bytes`, an error, or no partition to fetch. Otherwise it
is watched under its partitions in the replica manager's fetch purgatory, which checks a partition
after each append, high-watermark move and leadership change; each check marks the read stale, and
the fetch reads again on the loop's next turn, once for every check of that turn (a produce to a
hundred partitions a follower fetches triggers one re-read, not a hundred).

At expiry, a consumer's fetch reads once more. A follower's fetch that nothing woke since its last
read answers with that read: no append, HW move or leadership change happened since, so the answers
stand (an idle follower's fetch of thousands of partitions is read once per round, not twice).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from kafkaops.cluster.broker.delayed_operation import DelayedOperation
from kafkaops.cluster.broker.requests import FetchPartition
from kafkaops.cluster.broker.responses import FetchPartitionResult
from kafkaops.cluster.zk.values import TopicPartition


@dataclass(frozen=True, slots=True)
class FetchRead:
    """One read of a fetch's partitions (Kafka's `readFromLocalLog`): the answers, their record bytes,
    and whether any partition answered an error."""

    answers: list[FetchPartitionResult]
    total_bytes: int
    any_error: bool


class DelayedFetch(DelayedOperation[TopicPartition, list[FetchPartitionResult]]):
    """`fetching` are the partitions the fetch watches (for a follower's session, all the session's);
    `read()` reads them (or those of them with something to say)."""

    def __init__(
        self,
        max_wait_ms: int,
        min_bytes: int,
        from_follower: bool,
        fetching: Sequence[FetchPartition],
        read: Callable[[], FetchRead],
    ) -> None:
        super().__init__(max_wait_ms)
        self._min_bytes = min_bytes
        self._from_follower = from_follower
        self._fetching = fetching
        self._read = read
        self._last = FetchRead([], 0, False)
        self._stale = True
        """Whether something may have changed since the last read (a check woke the fetch)."""

    def watch_keys(self) -> Iterable[TopicPartition]:
        return (p.tp for p in self._fetching)

    def try_complete(self, key: TopicPartition | None) -> bool:
        if key is None:
            return self._read_and_maybe_complete()
        if not self._stale:
            self._stale = True
            asyncio.get_running_loop().call_soon(self._reread)
        return False

    def _reread(self) -> None:
        if not self.is_completed:
            self._read_and_maybe_complete()

    def _read_and_maybe_complete(self) -> bool:
        self._stale = False
        last = self._last = self._read()
        if (
            last.total_bytes >= self._min_bytes
            or last.any_error
            or not self._fetching
            or asyncio.get_running_loop().time() >= self.deadline
        ):
            return self.force_complete()
        return False

    def on_complete(self) -> list[FetchPartitionResult]:
        if self.expired and (self._stale or not self._from_follower):
            self._last = self._read()
        return self._last.answers
