"""Which leader epoch wrote which offsets: Kafka's `LeaderEpochFileCache`, as pure logic.

Source: apache/kafka 2.8 `core/src/main/scala/kafka/server/epoch/LeaderEpochFileCache.scala`; its test
`LeaderEpochFileCacheTest.scala` is ported case by case in `tests/unit/test_log_epoch_cache.py`.

The cache maps epoch → the first offset written in it, both strictly ascending. It answers
OffsetForLeaderEpoch (`end_offset_for`), which a new follower uses to find where its log diverges from
the leader's (kafka-protocol.md §8, §13). The log feeds it: the leader's epoch at its log end offset when
it becomes leader, every appended batch's partition leader epoch, and truncations at both ends.

Every mutator returns whether the entries changed, where Kafka's would rewrite the checkpoint file
(`flush()`); the owning `Log` then writes `leader-epoch-checkpoint`. Not thread-safe: the log calls it
under its own lock.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable

from .checkpoints import EpochEntry

UNDEFINED_EPOCH = -1
UNDEFINED_EPOCH_OFFSET = -1


class LeaderEpochCache:
    def __init__(self, entries: Iterable[EpochEntry] = ()) -> None:
        """A cache holding `entries` (a checkpoint's, in file order) as `assign` would leave them."""
        self._entries: list[EpochEntry] = []
        for epoch, start_offset in entries:
            self.assign(epoch, start_offset)

    @property
    def entries(self) -> list[EpochEntry]:
        return list(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def count_starting_before(self, offset: int) -> int:
        """How many entries start below `offset` (a prefix: start offsets only grow)."""
        count = len(self._entries)
        while count and self._entries[count - 1].start_offset >= offset:
            count -= 1
        return count

    @property
    def latest_entry(self) -> EpochEntry | None:
        return self._entries[-1] if self._entries else None

    @property
    def latest_epoch(self) -> int | None:
        """The current epoch: the latest one that has messages assigned to it."""
        return self._entries[-1].epoch if self._entries else None

    def assign(self, epoch: int, start_offset: int) -> bool:
        """Record that `epoch` starts at `start_offset`.

        An epoch already latest keeps its start offset unless the new one is smaller. Entries that would
        break monotonicity (an epoch ≥ the new one, or a start offset ≥ the new one) are dropped from the
        end first, so the latest assignment wins. Raises ValueError for a negative epoch or offset.
        """
        if epoch < 0 or start_offset < 0:
            raise ValueError(f"Received invalid partition leader epoch entry EpochEntry({epoch}, {start_offset})")
        return self._assign(EpochEntry(epoch, start_offset))

    def _assign(self, entry: EpochEntry) -> bool:
        latest = self.latest_entry
        if latest is not None and entry.epoch == latest.epoch and entry.start_offset >= latest.start_offset:
            return False
        # maybeTruncateNonMonotonicEntries
        while self._entries and (
            self._entries[-1].epoch >= entry.epoch or self._entries[-1].start_offset >= entry.start_offset
        ):
            self._entries.pop()
        self._entries.append(entry)
        return True

    def end_offset_for(self, requested_epoch: int, log_end_offset: int) -> tuple[int, int]:
        """(epoch, end offset) for OffsetForLeaderEpoch: the largest cached epoch ≤ the requested one, and
        where it ended, i.e. the start offset of the next cached epoch, or the log end offset when the
        latest epoch is asked for.

        UNDEFINED_EPOCH asked, or an epoch above every cached one → (-1, -1). An epoch below every cached
        one → (the requested epoch, the first cached start offset): the data before it is gone, and the
        follower should replicate from there.
        """
        if requested_epoch == UNDEFINED_EPOCH:
            return UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
        if self.latest_epoch == requested_epoch:
            return requested_epoch, log_end_offset
        epochs = [entry.epoch for entry in self._entries]
        higher = bisect.bisect_right(epochs, requested_epoch)
        if higher == len(epochs):
            return UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
        if higher == 0:
            return requested_epoch, self._entries[0].start_offset
        return self._entries[higher - 1].epoch, self._entries[higher].start_offset

    def truncate_from_end(self, end_offset: int) -> bool:
        """Drop the entries that start at or after `end_offset` (the log was truncated to it). A negative
        offset (UNDEFINED_EPOCH_OFFSET) changes nothing."""
        if end_offset < 0 or not self._entries or self._entries[-1].start_offset < end_offset:
            return False
        while self._entries and self._entries[-1].start_offset >= end_offset:
            self._entries.pop()
        return True

    def truncate_from_start(self, start_offset: int) -> bool:
        """Drop the entries before `start_offset` (the new log start offset), keeping the last of them with
        its start moved up to `start_offset`: truncate_from_start(6) keeps an entry that starts at 6."""
        removed = 0
        while removed < len(self._entries) and self._entries[removed].start_offset <= start_offset:
            removed += 1
        if removed == 0:
            return False
        first = EpochEntry(self._entries[removed - 1].epoch, start_offset)
        self._entries[:removed] = [first]
        return True

    def clear(self) -> bool:
        """Drop every entry (Kafka's clearAndFlush: the checkpoint is rewritten even when already empty)."""
        self._entries.clear()
        return True
