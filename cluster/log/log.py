"""One partition's log: a directory `<topic>-<partition>` of segments (Kafka's `Log`, 2.8).

    orders-0/
        00000000000000000000.log         record batches as appended, back to back
        00000000000000000000.index       offset → position, sparse   (index.py)
        00000000000000000000.timeindex   timestamp → offset, sparse
        00000000000000004711.log         the active segment: appends go here
        ...
        leader-epoch-checkpoint          epoch → start offset        (checkpoints.py)

Offsets: the log start offset (first readable) ≤ the high watermark (replicated to the ISR, set by the
replica manager) ≤ the log end offset (LEO: the next offset to write). The recovery point is the offset
below which everything is fsynced; after a crash only the segments from the one holding it are checked.

Appends store record batches exactly as received. `append_as_leader` gives them offsets from the LEO and
the leader's epoch by patching the two header fields that lie outside the CRC, in a private copy of the
request's bytes; `append_as_follower` writes the leader's bytes untouched. Both check every batch's CRC
first and drop a trailing batch cut short (Kafka trims it too).

Retention (Kafka's `deleteOldSegments`): whole segments go from the oldest while `retention.ms` (by
their largest timestamp) or `retention.bytes` (by the log's size) is exceeded, or while they lie wholly
below the log start offset, never past the high watermark; the log start offset moves up to the first
remaining segment. The segment being appended to is never deleted while active: when every segment
has expired, the log first rolls a new empty one, and then deletes the expired ones, as Kafka does, so an
idle topic's data does expire.

Compaction (log_cleaner.py) reads a `cleaner_snapshot` of the segments without the lock and swaps the
cleaned ones in with `replace_segments` under it (segment_swap.py: `.cleaned` -> `.swap` -> live, completed
or undone by loading after a crash); truncation, renaming and closing change the log's generation, which
voids a cleaning begun before.

Errors: OffsetOutOfRangeError (read outside [log start, LEO]), MessageTooLargeError (a leader's batch above
`max.message.bytes`), RecordListTooLargeError (an append above `segment.bytes`), CorruptMessageError (a
malformed batch or bad CRC), InvalidRecordError (a batch with a negative last offset delta),
UnexpectedAppendOffsetError / OffsetsOutOfOrderError (followers), LogDirFailureError for any I/O error: the
log then refuses every further operation (it may hold a half-done change; restart recovery repairs it).

Thread-safe: one lock per log serializes appends, reads, truncation, retention and flushes, so a flush
holds off appends to the same partition while it fsyncs.
"""

from __future__ import annotations

import bisect
import logging
import os
import re
import shutil
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import NamedTuple, cast

from kafkaops.cluster.common.errors import (
    CorruptMessageError,
    InvalidRecordError,
    LogDirFailureError,
    LogError,
    MalformedCheckpointError,
    MessageTooLargeError,
    OffsetOutOfRangeError,
    OffsetsOutOfOrderError,
    RecordListTooLargeError,
    UnexpectedAppendOffsetError,
)
from kafkaops.cluster.protocol.records import PATCHED_PREFIX, BatchHeader, iter_batches, patched_prefix
from kafkaops.cluster.protocol.types import Buffer

from .checkpoints import (
    LEADER_EPOCH_CHECKPOINT,
    EpochEntry,
    format_epochs,
    fsync_path,
    parse_epochs,
    read_checkpoint,
    write_checkpoint,
)
from .config import LogConfig
from .epoch_cache import LeaderEpochCache
from .file_records import FileRecords
from .segment import INDEX_SUFFIX, LOG_SUFFIX, TIME_INDEX_SUFFIX, AppendedBatch, LogSegment, TimestampOffset
from .segment_swap import (
    CLEANED_FILE_SUFFIX,
    DELETED_FILE_SUFFIX,
    SWAP_FILE_SUFFIX,
    LogSnapshot,
    SegmentSnapshot,
    change_suffixes,
    delete_segment_files,
    recover_interrupted_swaps,
)

log = logging.getLogger(__name__)

DELETE_DIR_SUFFIX = "-delete"
FUTURE_DIR_SUFFIX = "-future"
_FUTURE_DIR = re.compile(r"(\S+)-(\S+)\.(\S+)-future")  # Kafka's FutureDirPattern


def log_dir_name(topic: str, partition: int) -> str:
    return f"{topic}-{partition}"


def future_log_dir_name(topic: str, partition: int) -> str:
    """Kafka's `logFutureDirName`: `<topic>-<partition>.<unique id>-future`, where a replica being moved to
    another log dir grows until it replaces the current one."""
    return f"{log_dir_name(topic, partition)}.{uuid.uuid4().hex}{FUTURE_DIR_SUFFIX}"


def delete_log_dir_name(topic: str, partition: int) -> str:
    """Kafka's `logDeleteDirName`: `<topic>-<partition>.<unique id>-delete`, what a log's directory is renamed
    to before it is removed (a start-up finds such a name and removes it: `remove_log_dir`)."""
    return f"{log_dir_name(topic, partition)}.{uuid.uuid4().hex}{DELETE_DIR_SUFFIX}"


def parse_future_log_dir_name(name: str) -> tuple[str, int] | None:
    """(topic, partition) of a future log's directory name, or None if it is not one."""
    if _FUTURE_DIR.fullmatch(name) is None:
        return None
    return parse_log_dir_name(name[: name.rindex(".")])


def parse_log_dir_name(name: str) -> tuple[str, int] | None:
    """(topic, partition) of a partition directory's name, or None if it is not one (Kafka's
    `parseTopicPartitionName`: the partition follows the last '-')."""
    topic, dash, partition = name.rpartition("-")
    if not topic or not dash or not partition.isascii() or not partition.isdigit():
        return None
    return topic, int(partition)


@dataclass(frozen=True, slots=True)
class LogAppendInfo:
    """What an append did: offsets -1 when the records held no whole batch (nothing was written)."""

    first_offset: int
    last_offset: int
    max_timestamp: int
    offset_of_max_timestamp: int
    batch_count: int
    valid_bytes: int
    log_start_offset: int


@dataclass(frozen=True, slots=True)
class LogReadResult:
    """Whole batches as stored, and the log's offsets when they were read."""

    records: bytes
    log_start_offset: int
    log_end_offset: int
    high_watermark: int


@dataclass(frozen=True, slots=True)
class FileReadResult:
    """`LogReadResult` with the batches left in their file (b"" for none)."""

    records: FileRecords | bytes
    log_start_offset: int
    log_end_offset: int
    high_watermark: int


class SegmentSummary(NamedTuple):
    """What retention looks at in a segment."""

    base_offset: int
    size: int
    largest_timestamp: int


def segments_to_delete(
    segments: Sequence[SegmentSummary],
    *,
    config: LogConfig,
    now_ms: int,
    log_start_offset: int,
    high_watermark: int,
    log_end_offset: int,
) -> int:
    """How many of the oldest segments retention deletes (Kafka 2.8 `Log.deleteOldSegments`).

    Three passes, each over what the previous left: by `retention.ms`, by `retention.bytes` (only with
    `cleanup.policy` delete), then segments wholly below the log start offset. A pass stops at the first
    segment that is not deletable, that reaches past the high watermark, or that is the last and empty.
    """
    deleted = 0

    def take(predicate: Callable[[SegmentSummary, SegmentSummary | None], bool]) -> None:
        nonlocal deleted
        while deleted < len(segments):
            segment = segments[deleted]
            following = segments[deleted + 1] if deleted + 1 < len(segments) else None
            upper_bound = following.base_offset if following is not None else log_end_offset
            if high_watermark < upper_bound or not predicate(segment, following):
                return
            if following is None and segment.size == 0:
                return
            deleted += 1

    if config.delete_enabled and config.retention_ms >= 0:
        take(lambda segment, _: now_ms - segment.largest_timestamp > config.retention_ms)
    if config.delete_enabled and config.retention_bytes >= 0:
        excess = sum(segment.size for segment in segments[deleted:]) - config.retention_bytes

        def over_size(segment: SegmentSummary, _: SegmentSummary | None) -> bool:
            nonlocal excess
            if excess - segment.size < 0:
                return False
            excess -= segment.size
            return True

        if excess >= 0:
            take(over_size)
    take(lambda _, following: following is not None and following.base_offset <= log_start_offset)
    return deleted


class Log:
    """A partition log, opened (and recovered if need be) by the constructor.

    `log_start_offset`, `recovery_point` and `high_watermark` come from the log dir's checkpoints (0 when
    absent); `had_clean_shutdown` skips recovery (the log dir's clean-shutdown marker). `clock` returns
    seconds, as `time.time`. `on_dir_failure` hears about the first I/O error (the LogManager then takes
    the whole dir offline). Raises LogDirFailureError if the directory cannot be read or written.
    """

    def __init__(
        self,
        directory: Path,
        config: LogConfig,
        *,
        log_start_offset: int = 0,
        recovery_point: int = 0,
        high_watermark: int = 0,
        had_clean_shutdown: bool = False,
        clock: Callable[[], float] = time.time,
        on_dir_failure: Callable[[LogDirFailureError], None] | None = None,
    ) -> None:
        parsed = parse_log_dir_name(directory.name) or parse_future_log_dir_name(directory.name)
        if parsed is None:
            raise ValueError(f"{directory} is not named <topic>-<partition> or <topic>-<partition>.<id>-future")
        self.topic, self.partition = parsed
        self.directory = directory
        self.parent_dir = directory.parent  # its log dir (Kafka's parentDir), compared for every log, often
        self.config = config
        self._clock = clock
        self._on_dir_failure = on_dir_failure
        self._lock = threading.Lock()
        self._failure: LogDirFailureError | None = None
        self._closed = False
        self._segments: list[LogSegment] = []
        self._epochs = LeaderEpochCache()
        self._epochs_unwritten = False  # an epoch opened at the log end: written before its first record
        self._log_end_offset = self._log_start_offset = self._recovery_point = self._high_watermark = 0
        # The log cleaner's view: a change of generation voids a cleaning begun before it; truncations
        # below its checkpoint make it clean those offsets again.
        self._generation = 0
        self._truncated_to: int | None = None
        try:
            with self._io("load"):
                self._load(log_start_offset, recovery_point, high_watermark, had_clean_shutdown)
        except BaseException:
            for segment in self._segments:
                segment.close_handles()
            raise

    @property
    def name(self) -> str:
        return log_dir_name(self.topic, self.partition)

    def __repr__(self) -> str:
        return (
            f"Log({self.name}, start={self._log_start_offset}, hw={self._high_watermark}, "
            f"leo={self._log_end_offset}, segments={len(self._segments)})"
        )

    # --- state -----------------------------------------------------------------------------------------

    @property
    def log_start_offset(self) -> int:
        return self._log_start_offset

    @property
    def log_end_offset(self) -> int:
        return self._log_end_offset

    @property
    def high_watermark(self) -> int:
        return self._high_watermark

    @property
    def recovery_point(self) -> int:
        return self._recovery_point

    @property
    def size_in_bytes(self) -> int:
        with self._lock:
            return sum(segment.size for segment in self._segments)

    @property
    def segment_base_offsets(self) -> list[int]:
        with self._lock:
            return [segment.base_offset for segment in self._segments]

    @property
    def first_segment_base_offset(self) -> int:
        with self._lock:
            return self._segments[0].base_offset

    @property
    def active_segment_base_offset(self) -> int:
        with self._lock:
            return self._segments[-1].base_offset

    @property
    def latest_epoch(self) -> int | None:
        with self._lock:
            return self._epochs.latest_epoch

    @property
    def epoch_entries(self) -> list[EpochEntry]:
        with self._lock:
            return self._epochs.entries

    @property
    def offline(self) -> bool:
        return self._failure is not None

    @property
    def is_future(self) -> bool:
        """Whether this is a future log: a copy growing in another log dir, to replace the current one."""
        return self.directory.name.endswith(FUTURE_DIR_SUFFIX)

    # --- loading and recovery --------------------------------------------------------------------------

    def _new_segment(self, base_offset: int) -> LogSegment:
        return LogSegment.create(
            self.directory,
            base_offset,
            index_interval_bytes=self.config.index_interval_bytes,
            index_bytes=self.config.segment_index_bytes,
            now_ms=self._now_ms(),
        )

    def _load(self, log_start_offset: int, recovery_point: int, high_watermark: int, clean: bool) -> None:
        try:
            self.directory.mkdir(parents=True)
            made_now = True
        except FileExistsError:
            made_now = False
        # A directory made just now holds nothing to finish, clean up or read (a broker given thousands of
        # new replicas makes thousands of them, and listing each twice cost a third of making the log).
        bases: list[int] = []
        epochs_lost = False
        if not made_now:
            recover_interrupted_swaps(self.directory)
            bases = self._remove_leftovers()
            try:
                self._epochs = LeaderEpochCache(parse_epochs(read_checkpoint(self._epoch_path), str(self._epoch_path)))
            except (MalformedCheckpointError, ValueError) as exc:
                log.warning("Rebuilding the leader epoch cache of %s from its batches: %s", self.name, exc)
                epochs_lost = True
        epochs_on_disk = self._epochs.entries

        broken: set[int] = set()
        for base in bases:
            segment, needs_recovery = LogSegment.open(
                self.directory,
                base,
                index_interval_bytes=self.config.index_interval_bytes,
                index_bytes=self.config.segment_index_bytes,
                now_ms=self._now_ms(),
            )
            self._segments.append(segment)
            if needs_recovery:
                broken.add(base)
        # A log without segments on disk is new: its empty segment has nothing to recover or flush (a
        # broker given thousands of new replicas would otherwise fsync each one).
        new_log = not self._segments
        if new_log:
            self._segments.append(self._new_segment(log_start_offset))

        recovered = [] if new_log else self._recover(recovery_point if not clean else None, broken)
        try:
            self._log_end_offset = self._segments[-1].next_offset()
        except CorruptMessageError as exc:
            # The marker said clean, the active segment's tail says otherwise: believe the data.
            log.warning("%s: the active segment's tail does not frame (%s); recovering it", self.name, exc)
            self._segments[-1].recover(self._epochs)
            recovered.append(self._segments[-1])
            self._log_end_offset = self._segments[-1].next_offset()
        self._log_start_offset = max(log_start_offset, self._segments[0].base_offset)
        if self._log_end_offset < self._log_start_offset:
            log.warning(
                "%s: log end offset %d is below the log start offset %d; starting the log afresh there",
                self.name,
                self._log_end_offset,
                self._log_start_offset,
            )
            for segment in reversed(self._segments):
                segment.delete()
            self._segments = [self._new_segment(self._log_start_offset)]
            self._log_end_offset = self._log_start_offset
        for segment in recovered:
            if segment in self._segments:
                segment.flush()
        if recovered:
            fsync_path(self.directory)
        # Everything below the LEO is on disk now: fsynced before a clean shutdown, or just recovered.
        self._recovery_point = self._log_end_offset
        self._high_watermark = min(max(high_watermark, self._log_start_offset), self._log_end_offset)

        if epochs_lost:
            self._rebuild_epochs()
        self._epochs.truncate_from_end(self._log_end_offset)
        self._epochs.truncate_from_start(self._log_start_offset)
        if epochs_lost or self._epochs.entries != epochs_on_disk:
            self._write_epochs()

    def _remove_leftovers(self) -> list[int]:
        """The base offsets of the segments, after removing what an interrupted operation left: a
        checkpoint's temp file, indexes whose log is gone. Unknown files are left alone."""
        bases: list[int] = []
        indexes: list[tuple[int, Path]] = []
        for path in self.directory.iterdir():
            stem, suffix = path.stem, path.suffix
            if path.name.endswith(".tmp"):
                path.unlink()
            elif len(stem) == 20 and stem.isdigit() and suffix == LOG_SUFFIX:
                bases.append(int(stem))
            elif len(stem) == 20 and stem.isdigit() and suffix in (INDEX_SUFFIX, TIME_INDEX_SUFFIX):
                indexes.append((int(stem), path))
        for base, path in indexes:
            if base not in bases:
                log.warning("Deleting index %s: its segment is gone", path)
                path.unlink()
        return sorted(bases)

    def _recover(self, recovery_point: int | None, broken: set[int]) -> list[LogSegment]:
        """Recover the segments whose indexes failed their checks, and after an unclean shutdown
        (`recovery_point` not None) every segment from the one holding the recovery point; a torn or
        corrupt batch in one of the latter also deletes every later segment (Kafka's `recoverLog`).
        Returns the segments recovered."""
        recovered: list[LogSegment] = []
        for i, segment in enumerate(self._segments):
            following = self._segments[i + 1].base_offset if i + 1 < len(self._segments) else None
            unflushed = recovery_point is not None and (following is None or following > recovery_point)
            if not unflushed and segment.base_offset not in broken:
                continue
            truncated = segment.recover(self._epochs, following)
            recovered.append(segment)
            if truncated and unflushed and following is not None:
                for later in reversed(self._segments[i + 1 :]):
                    log.warning("Deleting %s: it follows a truncated segment", later.log_path)
                    later.delete()
                del self._segments[i + 1 :]
                break
        return recovered

    def _rebuild_epochs(self) -> None:
        """Refill the epoch cache from the batches' own partition leader epochs."""
        self._epochs = LeaderEpochCache()
        for segment in self._segments:
            try:
                for _, header in segment.headers():
                    epoch = header.partition_leader_epoch
                    if epoch >= 0 and (self._epochs.latest_epoch is None or epoch > self._epochs.latest_epoch):
                        self._epochs.assign(epoch, header.base_offset)
            except CorruptMessageError as exc:
                # Damage below the recovery point, which loading does not scan for: the epochs read so far
                # stand, the next segment carries on.
                log.warning("%s: cannot read all epochs of segment %d: %s", self.name, segment.base_offset, exc)

    # --- plumbing --------------------------------------------------------------------------------------

    @property
    def _epoch_path(self) -> Path:
        return self.directory / LEADER_EPOCH_CHECKPOINT

    def _write_epochs(self) -> None:
        # Kafka fsyncs this file at every change. A log without data has no offsets for its epochs to
        # describe, so losing the change in a power cut costs nothing; its fsyncs made a leader-epoch bump
        # of thousands of empty partitions (a reassignment starting) take seconds.
        write_checkpoint(
            self._epoch_path,
            format_epochs(self._epochs.entries),
            durable=self._log_end_offset > self._log_start_offset,
        )
        self._epochs_unwritten = False

    def _now_ms(self) -> int:
        return int(self._clock() * 1000)

    def _io(self, action: str) -> _IoGuard:
        """Refuse work once closed or failed; turn an OSError into this log's LogDirFailureError."""
        return _IoGuard(self, action)

    def _fail(self, action: str, exc: OSError) -> LogDirFailureError:
        self._failure = LogDirFailureError(str(self.parent_dir), f"{action} of {self.name} failed: {exc}")
        if self._on_dir_failure is not None:
            self._on_dir_failure(self._failure)
        return self._failure

    def mark_offline(self, failure: LogDirFailureError) -> None:
        """Refuse every further operation: another log in the same dir hit `failure`. Takes no lock, so
        that a failing log can mark its neighbours while holding its own."""
        if self._failure is None:
            self._failure = failure

    # --- appending -------------------------------------------------------------------------------------

    def append_as_leader(self, records: Buffer, leader_epoch: int) -> LogAppendInfo:
        """Append a producer's batches with offsets from the LEO and `leader_epoch`, which also opens that
        epoch in the epoch cache at the first offset if it is new. The caller's buffer is not modified.

        Raises CorruptMessageError, InvalidRecordError, MessageTooLargeError, RecordListTooLargeError,
        LogDirFailureError (see the module docstring)."""
        view = memoryview(records)
        headers = [batch.header for batch in iter_batches(view, allow_truncated_tail=True)]
        for header in headers:
            if header.size > self.config.max_message_bytes:
                raise MessageTooLargeError(
                    f"The record batch of {header.size} bytes is larger than max.message.bytes "
                    f"{self.config.max_message_bytes} of {self.name}"
                )
            if header.last_offset_delta < 0:
                raise InvalidRecordError(f"record batch with last offset delta {header.last_offset_delta}")
        with self._lock, self._io("append"):
            if not headers:
                return self._nothing_appended()
            offset = first_offset = self._log_end_offset
            batches: list[AppendedBatch] = []
            # Each batch goes to the file as its patched prefix (the leader's offsets and epoch) and the rest
            # of the received bytes, unmoved: one pwritev, no copy of the request's buffer.
            pieces: list[Buffer] = []
            position = 0
            for header in headers:
                pieces.append(patched_prefix(header, base_offset=offset, partition_leader_epoch=leader_epoch))
                pieces.append(view[position + PATCHED_PREFIX : position + header.size])
                batches.append((offset + header.last_offset_delta, header.max_timestamp, header.size))
                position += header.size
                offset += header.last_offset_delta + 1
            epoch_starts = [(leader_epoch, first_offset)] if leader_epoch >= 0 else []
            return self._append(pieces, position, batches, first_offset, epoch_starts)

    def append_as_follower(self, records: Buffer) -> LogAppendInfo:
        """Append the leader's batches byte for byte; their partition leader epochs feed the epoch cache.

        Raises UnexpectedAppendOffsetError if they start below the LEO (gaps above it are allowed, as in
        Kafka), OffsetsOutOfOrderError if they overlap each other, CorruptMessageError,
        RecordListTooLargeError, LogDirFailureError."""
        view = memoryview(records)
        headers = [batch.header for batch in iter_batches(view, allow_truncated_tail=True)]
        expected: int | None = None
        for header in headers:
            if header.last_offset_delta < 0 or (expected is not None and header.base_offset < expected):
                raise OffsetsOutOfOrderError(
                    f"Out of order offsets found in append to {self.name}: batch {header.base_offset}.."
                    f"{header.last_offset} after offset {expected}"
                )
            expected = header.next_offset
        with self._lock, self._io("append"):
            if not headers:
                return self._nothing_appended()
            first_offset = headers[0].base_offset
            if first_offset < self._log_end_offset:
                raise UnexpectedAppendOffsetError(
                    f"Unexpected offset in append to {self.name}. First offset {first_offset} is less than the "
                    f"next offset {self._log_end_offset}.",
                    first_offset,
                    self._log_end_offset,
                )
            size = sum(header.size for header in headers)
            batches = [(header.last_offset, header.max_timestamp, header.size) for header in headers]
            # Where the epoch changes: a fetch's batches mostly share one, and each assignment is a call.
            epoch_starts = []
            previous_epoch = None
            for header in headers:
                if header.partition_leader_epoch >= 0 and header.partition_leader_epoch != previous_epoch:
                    epoch_starts.append((header.partition_leader_epoch, header.base_offset))
                previous_epoch = header.partition_leader_epoch
            return self._append([view[:size]], size, batches, first_offset, epoch_starts)

    def _nothing_appended(self) -> LogAppendInfo:
        return LogAppendInfo(-1, -1, -1, -1, 0, 0, self._log_start_offset)

    def _append(
        self,
        pieces: Sequence[Buffer],
        size: int,
        batches: list[AppendedBatch],
        first_offset: int,
        epoch_starts: list[tuple[int, int]],
    ) -> LogAppendInfo:
        """Append `size` bytes, `pieces` back to back: the `batches`."""
        if size > self.config.segment_bytes:
            raise RecordListTooLargeError(
                f"Message batch size is {size} bytes in append to partition {self.name} which exceeds the "
                f"maximum configured segment size of {self.config.segment_bytes}."
            )
        max_timestamp, offset_of_max_timestamp = -1, first_offset
        for batch_last_offset, batch_max_timestamp, _ in batches:
            if batch_max_timestamp > max_timestamp:
                max_timestamp, offset_of_max_timestamp = batch_max_timestamp, batch_last_offset
        last_offset = batches[-1][0]
        segment = self._segments[-1]
        if segment.should_roll(
            append_size=size,
            max_timestamp=max_timestamp,
            max_offset=last_offset,
            now_ms=self._now_ms(),
            segment_bytes=self.config.segment_bytes,
            segment_ms=self.config.segment_ms,
        ):
            segment = self._roll(max(self._log_end_offset, first_offset))
        # The epoch cache first, as Kafka: a crash before the data lands leaves an entry at or past the
        # LEO, which loading drops again.
        # A list, not a generator: every batch's epoch is assigned, not only up to the first change.
        if any([self._epochs.assign(epoch, start) for epoch, start in epoch_starts]) or self._epochs_unwritten:
            self._write_epochs()
        segment.append(pieces, size, batches)
        self._log_end_offset = last_offset + 1
        return LogAppendInfo(
            first_offset,
            last_offset,
            max_timestamp,
            offset_of_max_timestamp,
            len(batches),
            size,
            self._log_start_offset,
        )

    def _roll(self, base_offset: int) -> LogSegment:
        """Start a new active segment at `base_offset`; an empty active segment is replaced instead."""
        active = self._segments[-1]
        if active.size == 0:
            if active.base_offset == base_offset:
                return active
            self._segments.pop()
            active.delete()
        else:
            active.on_become_inactive()
        segment = self._new_segment(base_offset)
        self._segments.append(segment)
        return segment

    def assign_epoch_start_offset(self, epoch: int, start_offset: int) -> None:
        """Open `epoch` at `start_offset` (a new leader, at its LEO: Kafka's `maybeAssignEpochStartOffset`)."""
        with self._lock, self._io("epoch assignment"):
            below_end = self._epochs.count_starting_before(self._log_end_offset)
            if not self._epochs.assign(epoch, start_offset):
                return
            if start_offset >= self._log_end_offset and len(self._epochs) - 1 >= below_end:
                # Loading drops every entry at or past the log end (Kafka's truncateFromEnd): the new one, and
                # any it replaced (an epoch that got no record, as when one leadership change follows another),
                # so the file needs writing only once a record follows, if no entry below the end went: the
                # first append writes it. Kafka writes it now, and a leadership move of 10,000 partitions spent
                # seconds replacing their checkpoint files (each a new inode: see `write_checkpoint`).
                self._epochs_unwritten = True
            else:
                self._write_epochs()

    def end_offset_for_epoch(self, epoch: int) -> tuple[int, int]:
        """(epoch, end offset) as OffsetForLeaderEpoch answers (LeaderEpochCache.end_offset_for)."""
        with self._lock:
            return self._epochs.end_offset_for(epoch, self._log_end_offset)

    # --- reading ---------------------------------------------------------------------------------------

    def read(
        self, fetch_offset: int, max_bytes: int, max_offset: int | None = None, *, min_one_batch: bool = True
    ) -> LogReadResult:
        """Whole batches from the one holding `fetch_offset`, from a single segment, up to `max_bytes` (but
        at least one batch with `min_one_batch`, as Kafka returns to the first partition of a fetch) and
        only batches wholly below `max_offset` (the high watermark, for consumers).

        Raises OffsetOutOfRangeError below the log start offset or above the LEO; the LEO itself reads
        empty."""
        records, result = self._read(fetch_offset, max_bytes, max_offset, min_one_batch, LogSegment.read)
        return LogReadResult(cast(bytes, records), *result)  # LogSegment.read makes bytes only

    def read_file_records(
        self, fetch_offset: int, max_bytes: int, max_offset: int | None = None, *, min_one_batch: bool = True
    ) -> FileReadResult:
        """`read`, the batches left in their file (a `FileRecords` slice for the network layer to send
        with sendfile; b"" when there are none). Raises as `read`."""
        records, result = self._read(fetch_offset, max_bytes, max_offset, min_one_batch, LogSegment.read_file_records)
        return FileReadResult(records, *result)

    def _read(
        self,
        fetch_offset: int,
        max_bytes: int,
        max_offset: int | None,
        min_one_batch: bool,
        read: Callable[[LogSegment, int, int, int | None, bool], FileRecords | bytes | None],
    ) -> tuple[FileRecords | bytes, tuple[int, int, int]]:
        with self._lock, self._io("read"):
            records: FileRecords | bytes = b""
            if fetch_offset < self._log_start_offset or fetch_offset > self._log_end_offset:
                raise OffsetOutOfRangeError(
                    f"Received request for offset {fetch_offset} for partition {self.name}, but we only have "
                    f"log segments in the range {self._log_start_offset} to {self._log_end_offset}."
                )
            if fetch_offset < self._log_end_offset:
                first = self._segment_index(fetch_offset)
                for segment in self._segments[first:]:
                    data = read(segment, fetch_offset, max_bytes, max_offset, min_one_batch)
                    if data is not None:
                        records = data
                        break
            return records, (self._log_start_offset, self._log_end_offset, self._high_watermark)

    def batch_headers(self, start_offset: int = 0) -> list[BatchHeader]:
        """The headers of every batch from the segment holding `start_offset` on (the broker rebuilds its
        idempotent producers' state from them, as Kafka does from the log when it has no snapshot)."""
        with self._lock, self._io("header scan"):
            headers: list[BatchHeader] = []
            for segment in self._segments[self._segment_index(start_offset) :]:
                headers.extend(header for _, header in segment.headers())
            return headers

    def _segment_index(self, offset: int) -> int:
        """The index of the segment that would hold `offset` (the last with base offset ≤ it; 0 if none)."""
        return max(0, bisect.bisect_right(self._segments, offset, key=lambda segment: segment.base_offset) - 1)

    def offset_for_timestamp(self, timestamp: int) -> TimestampOffset | None:
        """The first record at or after the log start whose timestamp is ≥ `timestamp` (ListOffsets with
        a timestamp). Kafka searches only the first segment whose largest timestamp reaches it and answers
        none when the log start has passed that segment's matches; this goes on to the next segments."""
        with self._lock, self._io("timestamp lookup"):
            for segment in self._segments[self._segment_index(self._log_start_offset) :]:
                if segment.largest_timestamp() >= timestamp:
                    found = segment.find_offset_by_timestamp(timestamp, self._log_start_offset)
                    if found is not None:
                        return found
            return None

    # --- offsets ---------------------------------------------------------------------------------------

    def update_high_watermark(self, offset: int) -> int:
        """Raise the high watermark to `offset`, capped at the LEO; it never moves back here (only
        truncation lowers it). Returns the high watermark."""
        with self._lock:
            self._high_watermark = max(self._high_watermark, min(offset, self._log_end_offset))
            return self._high_watermark

    def maybe_increment_log_start_offset(self, offset: int) -> bool:
        """Raise the log start offset (a follower following its leader's); data below it becomes
        unreadable now and its segments go at the next retention run. Raises OffsetOutOfRangeError above
        the high watermark, as Kafka. Returns whether it moved."""
        with self._lock, self._io("log start offset increment"):
            if offset > self._high_watermark:
                raise OffsetOutOfRangeError(
                    f"Cannot increment the log start offset to {offset} of partition {self.name} since it is "
                    f"larger than the high watermark {self._high_watermark}"
                )
            return self._increment_log_start_offset(offset)

    def _increment_log_start_offset(self, offset: int) -> bool:
        if offset <= self._log_start_offset:
            return False
        self._log_start_offset = offset
        self._high_watermark = max(self._high_watermark, offset)
        if self._epochs.truncate_from_start(offset):
            self._write_epochs()
        return True

    # --- truncation ------------------------------------------------------------------------------------

    def truncate_to(self, offset: int) -> bool:
        """Remove every batch holding an offset ≥ `offset` (a follower diverging from its new leader).
        A batch straddling `offset` goes whole and the LEO becomes its base offset, so the next fetch
        brings it back whole. The HW, recovery point and log start follow the LEO down; epochs starting at
        or after it are dropped. Returns False if `offset` is not below the LEO (nothing to do)."""
        if offset < 0:
            raise ValueError(f"Cannot truncate {self.name} to a negative offset ({offset})")
        with self._lock, self._io("truncation"):
            if offset >= self._log_end_offset:
                return False
            self._note_truncation(offset)
            if self._segments[0].base_offset > offset:
                self._truncate_fully(offset)
                return True
            keep = self._segment_index(offset) + 1
            for segment in reversed(self._segments[keep:]):
                segment.delete()
            del self._segments[keep:]
            cut_at = self._segments[-1].truncate_to(offset, self._now_ms())
            end = offset if cut_at is None else min(offset, cut_at)
            self._log_end_offset = end
            self._recovery_point = min(self._recovery_point, end)
            self._log_start_offset = min(self._log_start_offset, end)
            self._high_watermark = min(self._high_watermark, end)
            if self._epochs.truncate_from_end(end):
                self._write_epochs()
            return True

    def truncate_fully_and_start_at(self, offset: int) -> None:
        """Delete every segment and start empty at `offset` (a follower that fell below its leader's log
        start): log start, LEO, HW and recovery point all become `offset`; the epoch cache is emptied."""
        if offset < 0:
            raise ValueError(f"Cannot start {self.name} at a negative offset ({offset})")
        with self._lock, self._io("truncation"):
            self._truncate_fully(offset)

    def _truncate_fully(self, offset: int) -> None:
        self._note_truncation(0)
        for segment in reversed(self._segments):
            segment.delete()
        self._segments = [self._new_segment(offset)]
        self._log_start_offset = self._log_end_offset = self._high_watermark = self._recovery_point = offset
        self._epochs.clear()
        self._write_epochs()

    # --- retention, flush, config, lifecycle -----------------------------------------------------------

    def delete_old_segments(self) -> int:
        """Apply retention (see `segments_to_delete`); returns the number of segments deleted."""
        with self._lock, self._io("retention"):
            summaries = [
                SegmentSummary(segment.base_offset, segment.size, segment.largest_timestamp())
                for segment in self._segments
            ]
            count = segments_to_delete(
                summaries,
                config=self.config,
                now_ms=self._now_ms(),
                log_start_offset=self._log_start_offset,
                high_watermark=self._high_watermark,
                log_end_offset=self._log_end_offset,
            )
            if count == 0:
                return 0
            if count == len(self._segments):
                self._roll(self._log_end_offset)
            doomed = self._segments[:count]
            del self._segments[:count]
            self._increment_log_start_offset(self._segments[0].base_offset)
            for segment in doomed:
                log.info("Deleting segment %s of %s (retention)", segment.base_offset, self.name)
                segment.delete()
            return count

    def flush(self, offset: int | None = None) -> None:
        """fsync every segment with data below `offset` (default: the LEO) and not yet flushed, then move
        the recovery point up to it."""
        with self._lock, self._io("flush"):
            target = self._log_end_offset if offset is None else min(offset, self._log_end_offset)
            if target <= self._recovery_point:
                return
            for i, segment in enumerate(self._segments):
                following = self._segments[i + 1].base_offset if i + 1 < len(self._segments) else None
                if segment.base_offset < target and (following is None or following > self._recovery_point):
                    segment.flush()
            fsync_path(self.directory)
            self._recovery_point = target

    def update_config(self, config: LogConfig) -> None:
        """Apply new topic configs now: the next append, roll and retention run use them (the active
        segment's index interval and index size too)."""
        with self._lock:
            self.config = config
            active = self._segments[-1]
            active.index_interval_bytes = config.index_interval_bytes
            active.offset_index.max_entries = config.segment_index_bytes // active.offset_index.entry_size
            active.time_index.max_entries = config.segment_index_bytes // active.time_index.entry_size

    def close(self) -> None:
        """Release the files; cleanly (each segment's max timestamp into its time index) unless the log
        failed. Flush first for a clean shutdown: LogManager.shutdown does. Closing twice does nothing."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._generation += 1
            try:
                for segment in self._segments:
                    if self._failure is None:
                        segment.close()
                    else:
                        segment.close_handles()
            except OSError as exc:
                raise self._fail("close", exc) from exc

    def rename_dir(self, name: str) -> Path:
        """Rename the partition directory within its log dir (Kafka's `renameDir`: a future log becoming
        the current one, a replaced log making way for deletion); the open files stay open. Returns the
        new directory."""
        with self._lock, self._io("rename"):
            renamed = self.directory.with_name(name)
            self._generation += 1
            os.rename(self.directory, renamed)
            fsync_path(self.parent_dir)
            self.directory = renamed
            for segment in self._segments:
                segment.update_parent_dir(renamed)
            return renamed

    def delete(self) -> None:
        """Delete the whole partition directory: renamed to `<topic>-<partition>.<id>-delete` first, so a
        crash half way leaves a name the LogManager deletes on start rather than a damaged log. Raises
        LogDirFailureError."""
        self.finish_deletion(self.rename_for_deletion())

    def rename_for_deletion(self) -> Path:
        """`delete`'s first half: the log closed and its directory renamed for deletion, the rename not
        yet durable (`finish_deletion` makes it so). Returns the renamed directory. Raises
        LogDirFailureError."""
        with self._lock, self._io("deletion"):
            for segment in self._segments:
                segment.close_handles()
            self._closed = True
            self._generation += 1
            doomed = self.directory.with_name(delete_log_dir_name(self.topic, self.partition))
            os.rename(self.directory, doomed)
            return doomed

    def finish_deletion(self, doomed: Path, *, parent_synced: bool = False) -> None:
        """`delete`'s second half: the rename made durable, unless the caller has fsynced the parent dir
        after renaming several logs (the LogManager deleting thousands: an fsync per rename was 125 us of
        the 140 each took on this machine's disk), then the renamed directory removed. Raises
        LogDirFailureError."""
        try:
            if not parent_synced:
                fsync_path(self.parent_dir)
            remove_log_dir(doomed)
        except OSError as exc:
            raise self._fail("deletion", exc) from exc

    # --- the log cleaner's access ----------------------------------------------------------------------

    def _note_truncation(self, offset: int) -> None:
        self._generation += 1
        self._truncated_to = offset if self._truncated_to is None else min(self._truncated_to, offset)

    @property
    def cleaner_generation(self) -> int:
        """Changes with every truncation, rename or close (see `cleaner_snapshot`)."""
        return self._generation

    def take_truncation_point(self) -> int | None:
        """The lowest offset the log was truncated to since the last call (None: not truncated): the
        cleaner's checkpoint must not stay above it (Kafka's `maybeTruncateCheckpoint`)."""
        with self._lock:
            offset, self._truncated_to = self._truncated_to, None
            return offset

    def cleaner_snapshot(self) -> LogSnapshot:
        """The segments and offsets as they are now, for the cleaner to read without this log's lock: the
        bytes below each non-active segment's size do not change until a truncation, which changes the
        generation."""
        with self._lock, self._io("cleaner snapshot"):
            segments = tuple(
                SegmentSnapshot(
                    segment.base_offset,
                    segment.size,
                    segment.log_path,
                    os.stat(segment.log_path).st_mtime_ns // 1_000_000,
                    segment.largest_timestamp(),
                    len(segment.offset_index) * segment.offset_index.entry_size,
                    len(segment.time_index) * segment.time_index.entry_size,
                )
                for segment in self._segments
            )
            return LogSnapshot(
                self.topic,
                self.partition,
                self.directory,
                segments,
                self._log_start_offset,
                self._log_end_offset,
                self._generation,
                self.config,
            )

    def replace_segments(self, cleaned_base: int, old_bases: Sequence[int], generation: int) -> bool:
        """Swap the `.cleaned` segment at `cleaned_base` in for the segments `old_bases` (Kafka's
        `replaceSegments`; the steps and their crash safety are in segment_swap.py). Old segments that are
        gone already (retention) are skipped. Returns False, changing nothing, if the log changed generation
        since the cleaner's snapshot or an old segment became active; the caller then deletes its files."""
        with self._lock, self._io("segment replacement"):
            if generation != self._generation:
                return False
            by_base = {segment.base_offset: i for i, segment in enumerate(self._segments)}
            present = sorted(base for base in old_bases if base in by_base)
            if not present or by_base[present[-1]] == len(self._segments) - 1:
                return False
            if any(by_base[base] != by_base[present[0]] + i for i, base in enumerate(present)):
                return False
            change_suffixes(self.directory, cleaned_base, CLEANED_FILE_SUFFIX, SWAP_FILE_SUFFIX)
            first = by_base[present[0]]
            doomed = self._segments[first : first + len(present)]
            for segment in doomed:
                segment.close_handles()
                change_suffixes(self.directory, segment.base_offset, "", DELETED_FILE_SUFFIX)
            for segment in doomed:
                delete_segment_files(self.directory, segment.base_offset, DELETED_FILE_SUFFIX)
            change_suffixes(self.directory, cleaned_base, SWAP_FILE_SUFFIX, "")
            fsync_path(self.directory)
            replacement, broken = LogSegment.open(
                self.directory,
                cleaned_base,
                index_interval_bytes=self.config.index_interval_bytes,
                index_bytes=self.config.segment_index_bytes,
                now_ms=self._now_ms(),
            )
            if broken:
                replacement.recover(LeaderEpochCache())
            replacement.on_become_inactive()
            self._segments[first : first + len(present)] = [replacement]
            return True


class _IoGuard:
    """`with log._io(action):` (a class, not @contextmanager: it runs on every append and read)."""

    __slots__ = ("_log", "_action")

    def __init__(self, log: Log, action: str) -> None:
        self._log = log
        self._action = action

    def __enter__(self) -> None:
        log = self._log
        if log._failure is not None:
            raise LogDirFailureError(log._failure.log_dir, f"{log.name} is offline after an earlier error")
        if log._closed:
            raise LogError(f"The log of {log.name} is closed")

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        if isinstance(exc, OSError):
            raise self._log._fail(self._action, exc) from exc


def remove_log_dir(path: str | os.PathLike[str]) -> None:
    """Remove a partition directory: its files, then itself. A log's directory holds files only, so one
    listing and an unlink each do what `shutil.rmtree` does with its descriptor walk and checks, at half
    the cost (a broker deletes thousands at once when a reassignment moves its replicas away); anything
    else found in it goes through rmtree. Raises OSError."""
    with os.scandir(path) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path)
            else:
                os.unlink(entry.path)
    os.rmdir(path)
