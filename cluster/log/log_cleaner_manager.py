"""Which log the cleaner works on next, and how far each log is clean (Kafka 2.8's `LogCleanerManager`).

A compacted log is a clean head, already compacted, then a dirty tail:

    log start        first dirty offset (checkpoint)   first uncleanable offset        LEO
    |---- clean -----|-------- cleanable -------------|--- uncleanable (active ...) ---|

The first dirty offset is the `cleaner-offset-checkpoint` entry (the log start offset when there is none,
or when it lies outside [log start, LEO]). Cleaning stops before the active segment and before the first
dirty segment holding a record newer than `min.compaction.lag.ms`. The log with the largest dirty ratio
(cleanable bytes / (clean + cleanable bytes)) above its `min.cleanable.dirty.ratio` is cleaned first; a log
whose oldest dirty batch is older than `max.compaction.lag.ms` is cleanable at any ratio.

    <log dir>/cleaner-offset-checkpoint     version 0, count, `<topic> <partition> <first dirty offset>`

The decisions (`cleanable_offsets`, `max_compaction_delay`, `LogToClean`, `choose_filthiest`) are pure
functions over snapshots; `LogCleanerManager` holds the checkpoints and the set of logs in progress.
Thread-safe: one lock over both.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from kafkaops.cluster.common.errors import MalformedCheckpointError

from .checkpoints import format_offsets, parse_offsets, read_checkpoint, write_checkpoint
from .segment_swap import LogSnapshot, SegmentSnapshot

log = logging.getLogger(__name__)

CLEANER_OFFSET_CHECKPOINT = "cleaner-offset-checkpoint"

TopicPartition = tuple[str, int]


@dataclass(frozen=True, slots=True)
class OffsetsToClean:
    first_dirty_offset: int
    first_uncleanable_dirty_offset: int
    force_update_checkpoint: bool = False


def cleanable_offsets(snapshot: LogSnapshot, last_clean_offset: int | None, now_ms: int) -> OffsetsToClean:
    """Kafka's `cleanableOffsets`: [first dirty, first uncleanable) of a log (no transactions here, so no
    first unstable offset bounds it)."""
    log_start = snapshot.log_start_offset
    checkpoint = log_start if last_clean_offset is None else last_clean_offset
    force = False
    if checkpoint < log_start:
        if "delete" not in snapshot.config.cleanup_policy:
            log.warning(
                "Resetting first dirty offset of %s-%d to log start offset %d since the checkpointed offset %d "
                "is invalid.",
                snapshot.topic,
                snapshot.partition,
                log_start,
                checkpoint,
            )
        checkpoint, force = log_start, True
    elif checkpoint > snapshot.log_end_offset:
        log.warning(
            "The last checkpoint dirty offset for partition %s-%d is %d, which is larger than the log end offset "
            "%d. Resetting to the log start offset %d.",
            snapshot.topic,
            snapshot.partition,
            checkpoint,
            snapshot.log_end_offset,
            log_start,
        )
        checkpoint, force = log_start, True
    uncleanable = snapshot.active.base_offset
    lag = max(snapshot.config.min_compaction_lag_ms, 0)
    if lag > 0:
        for segment in _non_active_from(snapshot.segments, checkpoint):
            if segment.largest_timestamp > now_ms - lag:
                uncleanable = min(uncleanable, segment.base_offset)
                break
    return OffsetsToClean(checkpoint, max(checkpoint, uncleanable), force)


def _non_active_from(segments: Sequence[SegmentSnapshot], offset: int) -> list[SegmentSnapshot]:
    """Kafka's `nonActiveLogSegmentsFrom`: the segments holding `offset` and after, the active one excluded."""
    return [s for i, s in enumerate(segments[:-1]) if segments[i + 1].base_offset > offset]


def segments_between(segments: Sequence[SegmentSnapshot], start: int, end: int) -> list[SegmentSnapshot]:
    """Kafka's `logSegments(from, to)`: the segments that may hold offsets in [start, end)."""
    chosen = []
    for i, segment in enumerate(segments):
        following = segments[i + 1].base_offset if i + 1 < len(segments) else None
        if segment.base_offset < end and (following is None or following > start):
            chosen.append(segment)
    return chosen


def max_compaction_delay(
    snapshot: LogSnapshot, first_dirty_offset: int, now_ms: int, first_batch_timestamps: Mapping[int, int]
) -> int:
    """Kafka's `maxCompactionDelay`: how long past `max.compaction.lag.ms` the oldest dirty batch is (0: not
    past). `first_batch_timestamps` maps a segment's base offset to its first batch's max timestamp."""
    stamps = [
        first_batch_timestamps[s.base_offset]
        for s in _non_active_from(snapshot.segments, first_dirty_offset)
        if first_batch_timestamps.get(s.base_offset, -1) > 0
    ]
    earliest = min(stamps, default=None)
    clean_until = now_ms - max(snapshot.config.max_compaction_lag_ms, 0)
    return clean_until - earliest if earliest is not None and earliest < clean_until else 0


@dataclass(frozen=True, slots=True)
class LogToClean:
    """A log and its cleanable range (Kafka's `LogToClean`), with its sizes and dirty ratio."""

    snapshot: LogSnapshot
    first_dirty_offset: int
    uncleanable_offset: int
    need_compaction_now: bool = False

    @property
    def topic_partition(self) -> TopicPartition:
        return (self.snapshot.topic, self.snapshot.partition)

    @property
    def clean_bytes(self) -> int:
        return sum(s.size for s in segments_between(self.snapshot.segments, -1, self.first_dirty_offset))

    @property
    def first_uncleanable_offset(self) -> int:
        """The base offset of the first segment that may not be cleaned (`calculateCleanableBytes`)."""
        following = _non_active_from(self.snapshot.segments, self.uncleanable_offset)
        return following[0].base_offset if following else self.snapshot.active.base_offset

    @property
    def cleanable_bytes(self) -> int:
        end = self.first_uncleanable_offset
        return sum(s.size for s in segments_between(self.snapshot.segments, min(self.first_dirty_offset, end), end))

    @property
    def total_bytes(self) -> int:
        return self.clean_bytes + self.cleanable_bytes

    @property
    def cleanable_ratio(self) -> float:
        total = self.total_bytes
        return self.cleanable_bytes / total if total else 0.0


def choose_filthiest(candidates: Iterable[LogToClean]) -> LogToClean | None:
    """The log to clean (Kafka's `grabFilthiestCompactedLog` minus its bookkeeping): among the non-empty
    logs that are past `max.compaction.lag.ms` with bytes to clean, or above `min.cleanable.dirty.ratio`,
    the one with the largest dirty ratio (the first of equals)."""
    best: LogToClean | None = None
    for candidate in candidates:
        if candidate.total_bytes <= 0:
            continue
        ratio = candidate.cleanable_ratio
        if not (
            (candidate.need_compaction_now and candidate.cleanable_bytes > 0)
            or ratio > candidate.snapshot.config.min_cleanable_dirty_ratio
        ):
            continue
        if best is None or ratio > best.cleanable_ratio:
            best = candidate
    return best


class LogCleanerManager:
    """The cleaner checkpoints of every log dir and the logs being cleaned. `on_checkpoint_failure(dir,
    error)` hears of a checkpoint that cannot be written (the LogManager takes the dir offline)."""

    def __init__(self, on_checkpoint_failure: Callable[[Path, OSError], None] | None = None) -> None:
        self._lock = threading.Lock()
        self._in_progress: set[TopicPartition] = set()
        self._on_checkpoint_failure = on_checkpoint_failure

    def all_cleaner_checkpoints(self, directories: Iterable[Path]) -> dict[TopicPartition, int]:
        offsets: dict[TopicPartition, int] = {}
        for directory in directories:
            offsets.update(self.read_checkpoint(directory))
        return offsets

    @staticmethod
    def read_checkpoint(directory: Path) -> dict[TopicPartition, int]:
        path = directory / CLEANER_OFFSET_CHECKPOINT
        try:
            return parse_offsets(read_checkpoint(path), str(path))
        except MalformedCheckpointError as exc:
            log.warning("Ignoring %s (cleaning starts from the log starts): %s", path, exc)
            return {}
        except OSError as exc:
            log.warning("Cannot read %s: %s", path, exc)
            return {}

    def update_checkpoints(
        self,
        directory: Path,
        live: Iterable[TopicPartition],
        update: tuple[TopicPartition, int] | None = None,
    ) -> None:
        """Rewrite the dir's checkpoint keeping the entries of `live` partitions, with one entry set
        (Kafka's `updateCheckpoints`)."""
        keep = set(live)
        with self._lock:
            current = {tp: offset for tp, offset in self.read_checkpoint(directory).items() if tp in keep}
            if update is not None:
                current[update[0]] = update[1]
            try:
                write_checkpoint(directory / CLEANER_OFFSET_CHECKPOINT, format_offsets(current))
            except OSError as exc:
                log.error("Failed to write %s in %s: %s", CLEANER_OFFSET_CHECKPOINT, directory, exc)
                if self._on_checkpoint_failure is not None:
                    self._on_checkpoint_failure(directory, exc)

    def try_begin(self, tp: TopicPartition) -> bool:
        """Mark `tp` in progress; False if it already is."""
        with self._lock:
            if tp in self._in_progress:
                return False
            self._in_progress.add(tp)
            return True

    def done(self, tp: TopicPartition) -> None:
        with self._lock:
            self._in_progress.discard(tp)

    def in_progress(self, tp: TopicPartition) -> bool:
        with self._lock:
            return tp in self._in_progress
