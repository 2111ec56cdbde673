"""Log compaction (Kafka 2.8's `LogCleaner`): keep only the latest record of each key.

For `cleanup.policy=compact` (and `compact,delete`, which also applies retention) a background thread picks
the filthiest log (log_cleaner_manager.py), then:

1. builds an offset map (offset_map.py), key hash -> latest offset, over the dirty section
   [first dirty offset, first uncleanable offset), stopping early when the map is full;
2. rewrites the log from its start up to the last offset mapped, in groups of segments that fit in one
   segment (`segment.bytes`, `segment.index.bytes`, offsets within INT32 of the base), into a `.cleaned`
   segment per group, which `Log.replace_segments` swaps in (segment_swap.py). A record is kept if it has a
   key, no later offset for its key is in the map, and it has a value or is a tombstone still within
   `delete.retention.ms`. A batch keeps its base offset, last offset delta,
   producer fields and leader epoch, its records their offsets (Kafka's `MemoryRecords.filterTo`); a batch
   with nothing kept is dropped, unless it is its producer's last batch in the log, which stays as an empty
   header so the producer's sequence survives. Control batches (transaction markers) are kept as they are:
   kafkaops has no transactions;
3. records the new first dirty offset in `cleaner-offset-checkpoint`.

The active segment is never cleaned. Appends, fetches and retention go on meanwhile: the cleaner reads the
segments through descriptors of its own, from a snapshot taken under the log's lock, and holds the lock only
for the swap, which it abandons if the log was truncated, renamed or closed since (its generation changed).

Tombstones are timed as Kafka 3.1 times them (KIP-534): the first cleaning that keeps a tombstone stamps
its batch with a delete horizon, now + `delete.retention.ms` (attribute bit 6, in the base timestamp field;
record timestamps read the same), and the first cleaning after that horizon drops it. Kafka 2.8 compared
segment modification times instead, and a tombstone whose segment kept being merged with newer ones could
survive forever (KAFKA-8522).

Deliberate differences: batches compressed with snappy or lz4 are read (pure Python, slowly) and rewritten
uncompressed when some of their records go (gzip batches stay gzip); zstd batches are kept whole and their
keys are not mapped. The offset map's memory per entry is Python's, its entry bound Kafka's.

Threads: `LogCleaner` runs `log.cleaner.threads` daemon threads; `clean_once` is one round of one, for tests.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from kafkaops.cluster.common.errors import CorruptMessageError, KafkaOpsError, LogError
from kafkaops.cluster.protocol.compression import lz4_decompress, snappy_decompress
from kafkaops.cluster.protocol.records import (
    HEADER_SIZE,
    LOG_OVERHEAD,
    Batch,
    Compression,
    Record,
    batch_body,
    build_batch_from_spans,
    build_empty_batch,
    build_retained_batch,
    iter_batches,
    iter_records,
    read_header,
    scan_records,
)

from .cleaner_config import CleanerConfig
from .index import OffsetIndex, TimeIndex
from .log import Log
from .log_cleaner_manager import (
    LogCleanerManager,
    LogToClean,
    TopicPartition,
    choose_filthiest,
    cleanable_offsets,
    max_compaction_delay,
    segments_between,
)
from .offset_map import OffsetMap
from .segment import INDEX_SUFFIX, INT32_MAX, LOG_SUFFIX, TIME_INDEX_SUFFIX, AppendedBatch, LogSegment
from .segment_swap import CLEANED_FILE_SUFFIX, LogSnapshot, SegmentSnapshot, delete_segment_files, segment_path

log = logging.getLogger(__name__)

_REWRITABLE = (Compression.NONE, Compression.GZIP)


class CleaningAbortedError(KafkaOpsError):
    """The log changed under the cleaner (truncated, renamed, deleted) or the cleaner is stopping."""


# --- what is kept (pure) ----------------------------------------------------------------------------------


def readable_body(batch: Batch) -> bytes | None:
    """The batch's records' bytes, decompressed; None when its codec cannot be read here (zstd)."""
    codec = batch.header.compression
    if codec in _REWRITABLE:
        return batch_body(batch)
    if codec == Compression.SNAPPY:
        return snappy_decompress(batch.data[HEADER_SIZE:])
    if codec == Compression.LZ4:
        return lz4_decompress(batch.data[HEADER_SIZE:])
    return None


def _decoded(batch: Batch, body: bytes) -> list[Record]:
    plain = batch.header.replace(attributes=batch.header.attributes & ~0x07)
    return list(iter_records(Batch(plain, memoryview(bytes(batch.data[:HEADER_SIZE]) + body))))


def should_retain_record(
    offset: int, key: bytes | None, has_value: bool, offset_map: OffsetMap, retain_deletes: bool
) -> bool:
    """Kafka's `shouldRetainRecord`: past the mapped range, or keyed, the latest for its key, and a value
    or a tombstone still within its retention."""
    if offset > offset_map.latest_offset:
        return True
    if key is None:
        return False
    return offset >= offset_map.get(key) and (has_value or retain_deletes)


def filter_batch(
    batch: Batch,
    offset_map: OffsetMap,
    producer_last_offsets: Mapping[int, int],
    *,
    now_ms: int,
    delete_retention_ms: int,
) -> bytes | memoryview | None:
    """What of `batch` goes into the cleaned segment: its own bytes, a rebuilt batch (its kept records'
    bytes copied; re-encoded and stamped with a delete horizon if it keeps a tombstone and had none), an
    empty header for a producer's last batch, or None."""
    header = batch.header
    if header.is_control:
        return batch.data
    body = readable_body(batch)
    if body is None:
        return batch.data
    spans = scan_records(body, header.records_count)
    horizon = header.delete_horizon_ms
    retain_deletes = horizon is None or now_ms < horizon
    base = header.base_offset
    retained = [
        span
        for span in spans
        if should_retain_record(base + span.offset_delta, span.key, span.has_value, offset_map, retain_deletes)
    ]
    if not retained:
        if header.producer_id >= 0 and producer_last_offsets.get(header.producer_id) == header.last_offset:
            return build_empty_batch(header)
        return None
    stamp = horizon is None and not all(span.has_value for span in retained)
    if len(retained) == len(spans) and not stamp:
        return batch.data
    codec = header.compression if header.compression in _REWRITABLE else Compression.NONE
    if not stamp:
        return build_batch_from_spans(header, body, retained, codec)
    kept = {base + span.offset_delta for span in retained}
    records = [record for record in _decoded(batch, body) if record.offset in kept]
    return build_retained_batch(header, records, codec, now_ms + delete_retention_ms)


def group_segments_by_size(
    segments: Sequence[SegmentSnapshot], max_size: int, max_index_size: int, first_uncleanable_offset: int
) -> list[list[SegmentSnapshot]]:
    """Kafka's `groupSegmentsBySize`: consecutive segments whose data and indexes fit in one segment and
    whose offsets stay within INT32 of the group's base."""
    groups: list[list[SegmentSnapshot]] = []
    i = 0
    while i < len(segments):
        group = [segments[i]]
        log_size, index_size, time_index_size = group[0].size, group[0].offset_index_bytes, group[0].time_index_bytes
        i += 1
        while i < len(segments):
            candidate = segments[i]
            last_offset = segments[i + 1].base_offset - 1 if i + 1 < len(segments) else first_uncleanable_offset - 1
            if not (
                log_size + candidate.size <= max_size
                and index_size + candidate.offset_index_bytes <= max_index_size
                and time_index_size + candidate.time_index_bytes <= max_index_size
                and (candidate.size == 0 or last_offset - group[0].base_offset <= INT32_MAX)
            ):
                break
            group.append(candidate)
            log_size += candidate.size
            index_size += candidate.offset_index_bytes
            time_index_size += candidate.time_index_bytes
            i += 1
        groups.append(group)
    return groups


# --- reading segments through the cleaner's own descriptors ---------------------------------------------


def read_batches(path: Path, size: int, buffer_size: int, max_batch_size: int) -> Iterator[Batch]:
    """The batches of the first `size` bytes of a segment file, read `buffer_size` bytes at a time (grown
    for a larger batch, up to `max_batch_size`). Raises CorruptMessageError, OSError."""
    fd = os.open(path, os.O_RDONLY)
    try:
        position = 0
        chunk_size = max(buffer_size, HEADER_SIZE)
        while position < size:
            data = os.pread(fd, min(chunk_size, size - position), position)
            if not data:
                raise CorruptMessageError(f"{path} ends at byte {position}, before {size}")
            consumed = 0
            for batch in iter_batches(data, allow_truncated_tail=True):
                yield batch
                consumed += batch.header.size
            if consumed == 0:
                needed = int.from_bytes(data[8:12], "big", signed=True) + LOG_OVERHEAD if len(data) >= 12 else 0
                if needed <= len(data) or needed > max(max_batch_size, chunk_size) + LOG_OVERHEAD:
                    raise CorruptMessageError(f"batch of {needed} bytes at byte {position} of {path}")
                chunk_size = needed
            position += consumed
    finally:
        os.close(fd)


def first_batch_timestamp(segment: SegmentSnapshot) -> int:
    """The first batch's max timestamp (-1 for an empty segment): `max.compaction.lag.ms` counts from it."""
    if segment.size < HEADER_SIZE:
        return -1
    with open(segment.log_path, "rb") as file:
        return read_header(file.read(HEADER_SIZE)).max_timestamp


# --- one cleaning -----------------------------------------------------------------------------------------


@dataclass(slots=True)
class CleanerStats:
    bytes_read: int = 0
    bytes_written: int = 0
    messages_read: int = 0
    map_messages_read: int = 0
    map_bytes_read: int = 0
    started: float = dataclasses.field(default_factory=time.monotonic)

    @property
    def elapsed_s(self) -> float:
        return time.monotonic() - self.started


class Throttler:
    """Holds a thread back to `rate` bytes per second (Kafka's `Throttler`, without its metrics)."""

    def __init__(self, rate: float, sleep: Callable[[float], None] = time.sleep) -> None:
        self.rate = rate
        self._sleep = sleep
        self._start = time.monotonic()
        self._bytes = 0

    def maybe_throttle(self, count: int) -> None:
        if self.rate == float("inf"):
            return
        self._bytes += count
        elapsed = time.monotonic() - self._start
        wanted = self._bytes / self.rate
        if wanted > elapsed:
            self._sleep(wanted - elapsed)
        if elapsed > 1:
            self._start, self._bytes = time.monotonic(), 0


class Cleaner:
    """Cleans one log at a time (Kafka's `Cleaner`); one per cleaner thread, with its offset map."""

    def __init__(
        self,
        config: CleanerConfig,
        *,
        clock: Callable[[], float] = time.time,
        stopping: Callable[[], bool] = lambda: False,
    ) -> None:
        self.config = config
        self.offset_map = OffsetMap(config.offset_map_memory, config.hash_algorithm)
        self.max_desired_map_size = int(self.offset_map.slots * config.dedupe_buffer_load_factor)
        if self.max_desired_map_size < 1:
            raise ValueError(
                "offset map is too small to fit in even a single message, so log cleaning will never make "
                "progress. You can increase log.cleaner.dedupe.buffer.size or decrease log.cleaner.threads"
            )
        self._clock = clock
        self._stopping = stopping
        # Kafka splits log.cleaner.io.buffer.size between the threads, then between reading and writing.
        self._buffer_size = max(config.io_buffer_size // max(config.num_threads, 1) // 2, HEADER_SIZE)
        self.throttler = Throttler(config.max_io_bytes_per_second)

    def _check_done(self) -> None:
        if self._stopping():
            raise CleaningAbortedError("the cleaner is shutting down")

    def _batches(self, segment: SegmentSnapshot, stats: CleanerStats, *, for_map: bool = False) -> Iterator[Batch]:
        for batch in read_batches(segment.log_path, segment.size, self._buffer_size, self.config.max_message_size):
            self._check_done()  # a broker shutting down does not wait for a whole segment
            if for_map:
                stats.map_bytes_read += batch.header.size
            else:
                stats.bytes_read += batch.header.size
            self.throttler.maybe_throttle(batch.header.size)
            yield batch

    def clean(self, log_: Log, cleanable: LogToClean) -> tuple[int, CleanerStats]:
        """Clean the log's range; returns the next first dirty offset. Raises CleaningAbortedError,
        CorruptMessageError, LogError, OSError."""
        snapshot = cleanable.snapshot
        stats = CleanerStats()
        now_ms = int(self._clock() * 1000)
        upper = cleanable.first_uncleanable_offset
        self.build_offset_map(snapshot, cleanable.first_dirty_offset, upper, stats)
        # Up to the last offset mapped; a dirty section holding no batch at all is clean up to its end.
        end_offset = self.offset_map.latest_offset + 1 if self.offset_map.latest_offset >= 0 else upper
        end_offset = max(end_offset, cleanable.first_dirty_offset)
        producers = self.producer_last_offsets(snapshot)
        groups = group_segments_by_size(
            segments_between(snapshot.segments, 0, end_offset),
            snapshot.config.segment_bytes,
            snapshot.config.segment_index_bytes,
            upper,
        )
        for group in groups:
            self._check_done()
            self.clean_segments(log_, snapshot, group, now_ms, producers, stats)
        return end_offset, stats

    def build_offset_map(self, snapshot: LogSnapshot, start: int, end: int, stats: CleanerStats) -> None:
        """Kafka's `buildOffsetMap`: every keyed record in [start, end), until the map is as full as its load
        factor allows (the cleaning then stops at the last offset mapped)."""
        offset_map = self.offset_map
        offset_map.clear()
        limit = self.max_desired_map_size
        for segment in segments_between(snapshot.segments, start, end):
            if segment is snapshot.active:
                break
            self._check_done()
            for batch in self._batches(segment, stats, for_map=True):
                header = batch.header
                body = None if header.is_control else readable_body(batch)
                if body is not None:
                    base = header.base_offset
                    for span in scan_records(body, header.records_count):
                        stats.map_messages_read += 1
                        key = span.key
                        if key is not None and base + span.offset_delta >= start:
                            if len(offset_map) >= limit:
                                return
                            offset_map.put(key, base + span.offset_delta)
                if header.last_offset >= start:
                    offset_map.update_latest_offset(header.last_offset)

    def producer_last_offsets(self, snapshot: LogSnapshot) -> dict[int, int]:
        """The last offset of each producer id's last batch in the log (the active segment up to the
        snapshot): those batches must outlive their records (Kafka's `lastRecordsOfActiveProducers`)."""
        last: dict[int, int] = {}
        for segment in snapshot.segments:
            fd = os.open(segment.log_path, os.O_RDONLY)
            try:
                position = 0
                while position + HEADER_SIZE <= segment.size:
                    header = read_header(os.pread(fd, HEADER_SIZE, position))
                    if header.producer_id >= 0:
                        last[header.producer_id] = header.last_offset
                    position += header.size
            finally:
                os.close(fd)
        return last

    def clean_segments(
        self,
        log_: Log,
        snapshot: LogSnapshot,
        group: Sequence[SegmentSnapshot],
        now_ms: int,
        producers: Mapping[int, int],
        stats: CleanerStats,
    ) -> None:
        """Kafka's `cleanSegments`: the group's survivors into one `.cleaned` segment, swapped in."""
        directory = snapshot.directory
        base = group[0].base_offset
        cleaned = _create_cleaned_segment(snapshot, base, self._clock)
        try:
            pending: list[bytes | memoryview] = []
            batches: list[AppendedBatch] = []
            pending_size = 0
            retention = snapshot.config.delete_retention_ms
            for segment in group:
                for batch in self._batches(segment, stats):
                    stats.messages_read += batch.header.records_count
                    kept = filter_batch(batch, self.offset_map, producers, now_ms=now_ms, delete_retention_ms=retention)
                    if kept is None:
                        continue
                    header = read_header(kept) if kept is not batch.data else batch.header
                    pending.append(kept)
                    batches.append((header.last_offset, header.max_timestamp, len(kept)))
                    pending_size += len(kept)
                    if pending_size >= self._buffer_size:
                        self._write(cleaned, pending, batches, stats)
                        pending, batches, pending_size = [], [], 0
                self._check_done()
            if pending:
                self._write(cleaned, pending, batches, stats)
            cleaned.on_become_inactive()
            cleaned.flush()
            cleaned.close_handles()
            modified_ns = group[-1].last_modified_ms * 1_000_000
            os.utime(cleaned.log_path, ns=(modified_ns, modified_ns))
        except BaseException:
            cleaned.close_handles()
            delete_segment_files(directory, base, CLEANED_FILE_SUFFIX)
            raise
        log.info(
            "Swapping in cleaned segment %d for segment(s) %s in log %s-%d",
            base,
            [segment.base_offset for segment in group],
            snapshot.topic,
            snapshot.partition,
        )
        try:
            swapped = log_.replace_segments(base, [segment.base_offset for segment in group], snapshot.generation)
        except BaseException:
            delete_segment_files(directory, base, CLEANED_FILE_SUFFIX)
            raise
        if not swapped:
            delete_segment_files(directory, base, CLEANED_FILE_SUFFIX)
            raise CleaningAbortedError(f"{snapshot.topic}-{snapshot.partition} changed while it was being cleaned")

    def _write(
        self, cleaned: LogSegment, pending: list[bytes | memoryview], batches: list[AppendedBatch], stats: CleanerStats
    ) -> None:
        size = sum(map(len, pending))
        cleaned.append(pending, size, batches)  # one pwritev of the kept batches where they were read
        stats.bytes_written += size
        self.throttler.maybe_throttle(size)


def _create_cleaned_segment(snapshot: LogSnapshot, base: int, clock: Callable[[], float]) -> LogSegment:
    """Kafka's `createNewCleanedSegment`: `<base>.log.cleaned` and its indexes, emptied if left over."""
    directory, config = snapshot.directory, snapshot.config
    delete_segment_files(directory, base, CLEANED_FILE_SUFFIX)
    log_path = segment_path(directory, base, LOG_SUFFIX, CLEANED_FILE_SUFFIX)
    os.close(os.open(log_path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644))
    offset_index = OffsetIndex(
        segment_path(directory, base, INDEX_SUFFIX, CLEANED_FILE_SUFFIX), base, config.segment_index_bytes // 8
    )
    time_index = TimeIndex(
        segment_path(directory, base, TIME_INDEX_SUFFIX, CLEANED_FILE_SUFFIX), base, config.segment_index_bytes // 12
    )
    offset_index.reset()
    time_index.reset()
    segment = LogSegment(
        directory,
        base,
        0,
        offset_index,
        time_index,
        index_interval_bytes=config.index_interval_bytes,
        created_ms=int(clock() * 1000),
    )
    segment.log_path = log_path
    return segment


# --- the background threads -------------------------------------------------------------------------------


class LogCleaner:
    """The cleaner threads of a broker (Kafka's `LogCleaner`). `current_logs` returns the LogManager's
    current logs (future logs are not cleaned); `on_dir_failure(dir, error)` takes a dir offline after an
    I/O error that is not a race with the log changing."""

    def __init__(
        self,
        config: CleanerConfig,
        current_logs: Callable[[], Mapping[TopicPartition, Log]],
        *,
        clock: Callable[[], float] = time.time,
        on_dir_failure: Callable[[Path, OSError], None] | None = None,
    ) -> None:
        self.config = config
        self._current_logs = current_logs
        self._clock = clock
        self._on_dir_failure = on_dir_failure
        self.manager = LogCleanerManager(on_checkpoint_failure=on_dir_failure)
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._uncleanable: set[TopicPartition] = set()
        self._cleaners = [
            Cleaner(config, clock=clock, stopping=self._stop.is_set) for _ in range(max(config.num_threads, 1))
        ]

    def startup(self) -> None:
        for index in range(self.config.num_threads):
            thread = threading.Thread(
                target=self._run, args=(self._cleaners[index],), name=f"kafka-log-cleaner-thread-{index}", daemon=True
            )
            self._threads.append(thread)
            thread.start()

    def shutdown(self) -> None:
        """Stop the threads; a cleaning in progress is abandoned (its `.cleaned` files deleted)."""
        self._stop.set()
        for thread in self._threads:
            thread.join(60)
        self._threads.clear()

    def _run(self, cleaner: Cleaner) -> None:
        while not self._stop.is_set():
            try:
                cleaned = self.clean_once(cleaner)
            except Exception:  # noqa: BLE001 - the thread must outlive one bad round
                log.exception("The log cleaner's round failed")
                cleaned = False
            if not cleaned:
                self._stop.wait(self.config.backoff_ms / 1000)

    def _now_ms(self) -> int:
        return int(self._clock() * 1000)

    def _compacted_logs(self) -> dict[TopicPartition, Log]:
        return {
            tp: entry
            for tp, entry in self._current_logs().items()
            if entry.config.compact and not entry.offline and tp not in self._uncleanable
        }

    def clean_once(self, cleaner: Cleaner | None = None) -> bool:
        """One round (Kafka's `cleanFilthiestLog`): clean the filthiest log if one qualifies, then apply
        retention to the compacted logs. Returns whether a log was cleaned."""
        cleaner = cleaner if cleaner is not None else self._cleaners[0]
        chosen = self.grab_filthiest_compacted_log()
        cleaned = False
        if chosen is not None:
            entry, cleanable = chosen
            try:
                self._clean_log(cleaner, entry, cleanable)
                cleaned = True
            finally:
                self.manager.done(cleanable.topic_partition)
        for tp, entry in self._compacted_logs().items():
            if self.manager.try_begin(tp):
                try:
                    entry.delete_old_segments()
                except LogError:
                    pass
                finally:
                    self.manager.done(tp)
        return cleaned

    def grab_filthiest_compacted_log(self) -> tuple[Log, LogToClean] | None:
        """The filthiest compacted log, marked in progress (Kafka's `grabFilthiestCompactedLog`)."""
        now = self._now_ms()
        logs = self._compacted_logs()
        checkpoints = self.manager.all_cleaner_checkpoints({entry.parent_dir for entry in logs.values()})
        candidates: dict[TopicPartition, tuple[Log, LogToClean]] = {}
        for tp, entry in logs.items():
            if self.manager.in_progress(tp):
                continue
            try:
                snapshot = entry.cleaner_snapshot()
                checkpoint = checkpoints.get(tp)
                truncated = entry.take_truncation_point()
                if truncated is not None and checkpoint is not None and checkpoint > truncated:
                    checkpoint = truncated
                    self._update_checkpoint(entry, truncated)
                offsets = cleanable_offsets(snapshot, checkpoint, now)
                if offsets.force_update_checkpoint:
                    self._update_checkpoint(entry, offsets.first_dirty_offset)
                delay = 0
                if snapshot.config.max_compaction_lag_ms < 2**63 - 1:
                    stamps = {
                        s.base_offset: first_batch_timestamp(s)
                        for s in segments_between(snapshot.segments[:-1], offsets.first_dirty_offset, 2**63 - 1)
                    }
                    delay = max_compaction_delay(snapshot, offsets.first_dirty_offset, now, stamps)
            except (LogError, OSError, CorruptMessageError) as exc:
                log.debug("Not cleaning %s-%d now: %s", tp[0], tp[1], exc)
                continue
            candidates[tp] = (
                entry,
                LogToClean(snapshot, offsets.first_dirty_offset, offsets.first_uncleanable_dirty_offset, delay > 0),
            )
        filthiest = choose_filthiest(cleanable for _, cleanable in candidates.values())
        if filthiest is None or not self.manager.try_begin(filthiest.topic_partition):
            return None
        return candidates[filthiest.topic_partition]

    def _update_checkpoint(self, entry: Log, offset: int) -> None:
        self.manager.update_checkpoints(
            entry.parent_dir, self._current_logs().keys(), update=((entry.topic, entry.partition), offset)
        )

    def _clean_log(self, cleaner: Cleaner, entry: Log, cleanable: LogToClean) -> None:
        tp = cleanable.topic_partition
        start = cleanable.first_dirty_offset
        try:
            end, stats = cleaner.clean(entry, cleanable)
        except (CleaningAbortedError, LogError, FileNotFoundError) as exc:
            log.info("Cleaning of %s-%d aborted: %s", tp[0], tp[1], exc)
            return
        except CorruptMessageError as exc:
            if entry.offline or entry.cleaner_generation != cleanable.snapshot.generation:
                log.info("Cleaning of %s-%d aborted: %s", tp[0], tp[1], exc)
                return
            log.warning("Marking %s-%d uncleanable: %s", tp[0], tp[1], exc)
            self._uncleanable.add(tp)
            return
        except OSError as exc:
            if entry.offline or entry.cleaner_generation != cleanable.snapshot.generation:
                log.info("Cleaning of %s-%d aborted: %s", tp[0], tp[1], exc)
                return
            log.error("Cleaning of %s-%d failed: %s", tp[0], tp[1], exc)
            if self._on_dir_failure is not None:
                self._on_dir_failure(entry.parent_dir, exc)
            return
        self._update_checkpoint(entry, end)
        megabytes = (stats.bytes_read + stats.map_bytes_read) / 1024 / 1024
        log.info(
            "Log cleaner cleaned log %s-%d (dirty section = [%d, %d]): %.1f MB of log processed in %.1f seconds "
            "(%.1f MB/sec); %d bytes read, %d written",
            tp[0],
            tp[1],
            start,
            end,
            megabytes,
            stats.elapsed_s,
            megabytes / max(stats.elapsed_s, 1e-9),
            stats.bytes_read,
            stats.bytes_written,
        )

    def remove_partitions(self, directories: Iterable[Path], partitions: Iterable[TopicPartition]) -> None:
        """Forget deleted logs: one rewrite of each of `directories`' checkpoints, which keeps only the logs
        still there (Kafka 2.8's batched `asyncDelete` calls `updateCheckpoints(logDir)` once per dir)."""
        self._uncleanable.difference_update(partitions)
        live = self._current_logs().keys()
        for directory in directories:
            self.manager.update_checkpoints(directory, live)
