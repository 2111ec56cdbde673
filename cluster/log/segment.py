"""One segment of a partition log: `<base offset>.log` and its two indexes (Kafka's `LogSegment`).

The `.log` file is record batches back to back, exactly as they were appended: no header, no padding,
no framing of ours. Batches are found by walking their own length fields (records.read_header), starting
from the offset index's entry at or below the offset wanted, so a lookup reads at most about
`index.interval.bytes` of headers before it reaches its batch.

Reads go through `os.pread` on a descriptor opened on first use and then held for the segment's life
(a segment nothing has read or written yet holds none, nor do its indexes: a broker hosting thousands of
empty partitions needs no descriptor for them); appends are one `os.pwrite` of everything appended at once.
I/O errors surface as OSError: the owning `Log` turns them into LogDirFailureError. Not thread-safe: the
owning log's lock covers it.
"""

from __future__ import annotations

import errno
import logging
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from kafkaops.cluster.common.errors import CorruptMessageError
from kafkaops.cluster.protocol.records import (
    HEADER_SIZE,
    LOG_OVERHEAD,
    Batch,
    BatchHeader,
    iter_batches,
    iter_records,
    read_header,
)
from kafkaops.cluster.protocol.types import Buffer

from .checkpoints import fsync_path
from .epoch_cache import LeaderEpochCache
from .file_records import FileRecords
from .index import OffsetIndex, TimeIndex

log = logging.getLogger(__name__)

LOG_SUFFIX = ".log"
INDEX_SUFFIX = ".index"
TIME_INDEX_SUFFIX = ".timeindex"
INT32_MAX = 2**31 - 1

_SCAN_CHUNK = 16 * 1024
"""Header walks read this much at a time: a few index intervals of headers per read."""
MIN_FILE_RECORDS_BYTES = 32 * 1024
"""Reads smaller than this go into a Fetch response as bytes, not as a file slice (`read_file_records`)."""
_IOV_MAX = 1024
"""Linux's limit on the buffers of one `pwritev` (an append of more pieces is joined first)."""
_RECOVERY_CHUNK = 8 * 1024 * 1024
"""Recovery validates this much at a time (grown for a batch that does not fit)."""


def segment_file_name(base_offset: int, suffix: str) -> str:
    """Kafka's `filenamePrefixFromOffset`: the base offset in 20 digits, zero-padded."""
    return f"{base_offset:020d}{suffix}"


AppendedBatch = tuple[int, int, int]
"""What a segment needs to know of a batch it is given: (last offset, max timestamp, size), as the log
stores it (after the leader assigned its offsets). A plain tuple: one is made per batch appended."""


@dataclass(frozen=True, slots=True)
class TimestampOffset:
    """The first record at or after a timestamp: its timestamp, its offset, its batch's leader epoch
    (-1 when the batch carries none), as ListOffsets answers."""

    timestamp: int
    offset: int
    leader_epoch: int


def _pread(fd: int, size: int, position: int) -> bytes:
    """Exactly `size` bytes from `position`, fewer only at the end of the file."""
    data = os.pread(fd, size, position)
    if len(data) == size or not data:
        return data
    parts = [data]
    read = len(data)
    while read < size:
        more = os.pread(fd, size - read, position + read)
        if not more:
            break
        parts.append(more)
        read += len(more)
    return b"".join(parts)


class LogSegment:
    def __init__(
        self,
        directory: Path,
        base_offset: int,
        size: int,
        offset_index: OffsetIndex,
        time_index: TimeIndex,
        *,
        index_interval_bytes: int,
        created_ms: int,
    ) -> None:
        self.base_offset = base_offset
        self.log_path = directory / segment_file_name(base_offset, LOG_SUFFIX)
        self.size = size
        self.offset_index = offset_index
        self.time_index = time_index
        self.index_interval_bytes = index_interval_bytes
        self.created_ms = created_ms
        self.max_timestamp, self.offset_of_max_timestamp = time_index.last_entry
        self._fd: int | None = None  # None: not opened yet; -1: closed
        self._bytes_since_last_index_entry = 0
        # The first batch's max timestamp, which segment.ms counts from (None: not read yet, or empty).
        self._rolling_based_timestamp: int | None = None

    # --- opening ---------------------------------------------------------------------------------------

    @classmethod
    def create(
        cls, directory: Path, base_offset: int, *, index_interval_bytes: int, index_bytes: int, now_ms: int
    ) -> LogSegment:
        """A new, empty segment; files left under its name (an earlier life of the log) are emptied."""
        os.close(
            os.open(directory / segment_file_name(base_offset, LOG_SUFFIX), os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
        )
        offset_index = OffsetIndex(
            directory / segment_file_name(base_offset, INDEX_SUFFIX), base_offset, index_bytes // 8
        )
        time_index = TimeIndex(
            directory / segment_file_name(base_offset, TIME_INDEX_SUFFIX), base_offset, index_bytes // 12
        )
        # Created now, empty, so that loading never mistakes a young segment's index for a lost one.
        offset_index.reset()
        time_index.reset()
        return cls(
            directory,
            base_offset,
            0,
            offset_index,
            time_index,
            index_interval_bytes=index_interval_bytes,
            created_ms=now_ms,
        )

    @classmethod
    def open(
        cls, directory: Path, base_offset: int, *, index_interval_bytes: int, index_bytes: int, now_ms: int
    ) -> tuple[LogSegment, bool]:
        """An existing segment, and whether its indexes failed their checks (it must then be recovered)."""
        size = os.stat(directory / segment_file_name(base_offset, LOG_SUFFIX)).st_size
        index_path = directory / segment_file_name(base_offset, INDEX_SUFFIX)
        time_index_path = directory / segment_file_name(base_offset, TIME_INDEX_SUFFIX)
        offset_index = OffsetIndex.load(index_path, base_offset, index_bytes // 8, size)
        time_index = TimeIndex.load(time_index_path, base_offset, index_bytes // 12)
        segment = cls(
            directory,
            base_offset,
            size,
            offset_index or OffsetIndex(index_path, base_offset, index_bytes // 8),
            time_index or TimeIndex(time_index_path, base_offset, index_bytes // 12),
            index_interval_bytes=index_interval_bytes,
            created_ms=now_ms,
        )
        broken = offset_index is None or time_index is None or not segment._last_index_entry_matches()
        return segment, broken

    def _file(self) -> int:
        """The `.log` descriptor, opened on first use. A closed segment's is -1: using it fails (EBADF)."""
        if self._fd is None:
            self._fd = os.open(self.log_path, os.O_RDWR)
        return self._fd

    def _last_index_entry_matches(self) -> bool:
        """Whether the offset index's last entry points at a batch that ends at that offset."""
        if not len(self.offset_index):
            return True
        offset, position = self.offset_index.last_entry
        try:
            header = read_header(_pread(self._file(), HEADER_SIZE, position))
        except CorruptMessageError:
            header = None
        if header is None or header.last_offset != offset or position + header.size > self.size:
            log.warning("Rebuilding index %s: its last entry does not match the log", self.offset_index.path)
            return False
        return True

    # --- reading ---------------------------------------------------------------------------------------

    def headers(self, start: int = 0) -> Iterator[tuple[int, BatchHeader]]:
        """(position, header) of every batch from `start` (a batch boundary) to the end. The framing is
        trusted (it was checked on append or by recovery); garbage raises CorruptMessageError."""
        chunk, chunk_start = b"", start
        position = start
        while position < self.size:
            at = position - chunk_start
            if len(chunk) - at < HEADER_SIZE:
                chunk = _pread(self._file(), min(_SCAN_CHUNK, self.size - position), position)
                chunk_start, at = position, 0
            header = read_header(chunk, at)
            yield position, header
            position += header.size

    def translate_offset(self, offset: int) -> tuple[int, BatchHeader] | None:
        """The position and header of the first batch whose last offset is ≥ `offset`, if any."""
        _, start = self.offset_index.lookup(offset)
        for position, header in self.headers(start):
            if header.last_offset >= offset:
                return position, header
        return None

    def read(self, offset: int, max_bytes: int, max_offset: int | None, min_one_batch: bool) -> bytes | None:
        """Whole batches from the one holding `offset`: as many as fit in `max_bytes` (at least the first
        with `min_one_batch`), none whose last offset reaches `max_offset`. None when no batch here
        reaches `offset` (the caller tries the next segment).

        Both ends are found through the index and a walk of at most about `index.interval.bytes` of
        headers each; the bytes between are read without being parsed (they were checked on append)."""
        found = self._read_range(offset, max_bytes, max_offset, min_one_batch)
        if found is None:
            return None
        start, end = found
        return _pread(self._file(), end - start, start) if end > start else b""

    def read_file_records(
        self, offset: int, max_bytes: int, max_offset: int | None, min_one_batch: bool
    ) -> FileRecords | bytes | None:
        """`read`'s batches as a slice of the file, unread (Kafka's `FileRecords.slice`); b"" for none.

        A slice holds a descriptor until its response is sent, so small reads, where copying costs nothing
        worth saving, are read as bytes: a fetch of thousands of partitions with a few records each does
        not hold thousands of descriptors. Out of descriptors, the read is made as bytes too."""
        found = self._read_range(offset, max_bytes, max_offset, min_one_batch)
        if found is None:
            return None
        start, end = found
        size = end - start
        if size < MIN_FILE_RECORDS_BYTES:
            return _pread(self._file(), size, start) if size > 0 else b""
        try:
            return FileRecords(self._file(), start, size)
        except OSError as error:
            if error.errno not in (errno.EMFILE, errno.ENFILE):
                raise
            return _pread(self._file(), size, start)

    def _read_range(
        self, offset: int, max_bytes: int, max_offset: int | None, min_one_batch: bool
    ) -> tuple[int, int] | None:
        """The positions [start, end) `read` returns the bytes of."""
        found = self.translate_offset(offset)
        if found is None:
            return None
        start, first = found
        end = self.size
        if max_offset is not None:
            reaching = self.translate_offset(max_offset)
            if reaching is not None:
                end = reaching[0]
        limit = first.size if min_one_batch and first.size > max_bytes else max_bytes
        if end - start > limit:
            end = self._last_boundary(start, start + limit)
        return start, end

    def _last_boundary(self, start: int, bound: int) -> int:
        """The end of the last whole batch in [start, bound), given that bound < the segment's size."""
        position = max(start, self.offset_index.floor_position(bound))
        for at, header in self.headers(position):
            if at + header.size > bound:
                return at
        return self.size

    def next_offset(self) -> int:
        """The offset after the last batch (the base offset when empty): Kafka's `readNextOffset`."""
        _, position = self.offset_index.last_entry
        next_offset = self.base_offset
        for _, header in self.headers(position):
            next_offset = header.next_offset
        return next_offset

    def largest_timestamp(self) -> int:
        """The largest record timestamp, or the file's modification time if there is none (Kafka)."""
        if self.max_timestamp >= 0:
            return self.max_timestamp
        return os.stat(self.log_path).st_mtime_ns // 1_000_000

    def find_offset_by_timestamp(self, timestamp: int, starting_offset: int) -> TimestampOffset | None:
        """The first record at or after `starting_offset` whose timestamp is ≥ `timestamp` (Kafka's
        `findOffsetByTimestamp`). Reads records: UnsupportedCompressionTypeError for codecs other than
        none and gzip."""
        _, indexed_offset = self.time_index.lookup(timestamp)
        _, start = self.offset_index.lookup(max(indexed_offset, starting_offset))
        for position, header in self.headers(start):
            if header.max_timestamp < timestamp:
                continue
            batch = Batch(header, memoryview(_pread(self._file(), header.size, position)))
            for record in iter_records(batch):
                if record.timestamp >= timestamp and record.offset >= starting_offset:
                    return TimestampOffset(record.timestamp, record.offset, header.partition_leader_epoch)
        return None

    # --- writing ---------------------------------------------------------------------------------------

    def append(self, pieces: Sequence[Buffer], size: int, batches: Sequence[AppendedBatch]) -> None:
        """Write `pieces` (`size` bytes: the `batches`, back to back) at the end with one `pwritev`, then
        index them."""
        position = self.size
        try:
            fd = self._file()
            if len(pieces) > _IOV_MAX:
                pieces = [b"".join(pieces)]
            written = os.pwritev(fd, pieces, position) if len(pieces) > 1 else os.pwrite(fd, pieces[0], position)
            if written < size:  # a short write (rare on a file): the rest, from where it stopped
                rest = memoryview(b"".join(pieces))
                while written < size:
                    written += os.pwrite(fd, rest[written:], position + written)
        except OSError:
            # Leave no torn batch behind if the disk allows it; the log goes offline either way.
            try:
                os.ftruncate(self._file(), position)
            except OSError:
                log.exception("Cannot remove a partly written batch from %s", self.log_path)
            raise
        for last_offset, max_timestamp, size in batches:
            self._track(position, last_offset, max_timestamp, size)
            position += size
        self.size = position

    def _track(self, position: int, last_offset: int, max_timestamp: int, size: int) -> None:
        """Kafka's `LogSegment.append` bookkeeping for one batch at `position`: the running max timestamp,
        then an index entry if more than `index.interval.bytes` went by since the last one."""
        if position == 0:
            self._rolling_based_timestamp = max_timestamp
        if max_timestamp > self.max_timestamp:
            self.max_timestamp, self.offset_of_max_timestamp = max_timestamp, last_offset
        if self._bytes_since_last_index_entry > self.index_interval_bytes:
            self.offset_index.append(last_offset, position)
            self.time_index.maybe_append(self.max_timestamp, self.offset_of_max_timestamp)
            self._bytes_since_last_index_entry = 0
        self._bytes_since_last_index_entry += size

    def should_roll(
        self, *, append_size: int, max_timestamp: int, max_offset: int, now_ms: int, segment_bytes: int, segment_ms: int
    ) -> bool:
        """Kafka's `shouldRoll`: full by bytes, old by time (counted from the first batch's timestamp when
        it has one, else from the segment's creation), a full index, or an offset too far from the base
        for a relative INT32."""
        return (
            self.size > segment_bytes - append_size
            or (self.size > 0 and self._time_waited_for_roll(now_ms, max_timestamp) > segment_ms)
            or self.offset_index.is_full
            or self.time_index.is_full
            or max_offset - self.base_offset > INT32_MAX
        )

    def _time_waited_for_roll(self, now_ms: int, message_timestamp: int) -> int:
        if self._rolling_based_timestamp is None and self.size > 0:
            self._rolling_based_timestamp = read_header(_pread(self._file(), HEADER_SIZE, 0)).max_timestamp
        if self._rolling_based_timestamp is not None and self._rolling_based_timestamp >= 0:
            return message_timestamp - self._rolling_based_timestamp
        return now_ms - self.created_ms

    def recover(self, epochs: LeaderEpochCache, next_base_offset: int | None = None) -> int:
        """Rebuild the indexes from the log, validating it batch by batch (CRC, framing, offsets ascending
        from the base, within INT32 of it and below the next segment's base: the base offset field is not
        under the CRC), and cut it at the first batch that fails: a torn or corrupt tail. Batches with a
        newer leader epoch than the cache's latest are assigned to it. Returns the number of bytes cut."""
        self.offset_index.reset()
        self.time_index.reset()
        self.max_timestamp, self.offset_of_max_timestamp = -1, self.base_offset
        self._bytes_since_last_index_entry = 0
        self._rolling_based_timestamp = None
        valid = 0
        expected = self.base_offset
        problem = "a batch is cut short"
        try:
            for position, batch in self._valid_batches():
                header = batch.header
                if header.base_offset < expected or header.last_offset_delta < 0:
                    problem = f"batch at offset {header.base_offset} does not follow offset {expected - 1}"
                    break
                if header.last_offset - self.base_offset > INT32_MAX or (
                    next_base_offset is not None and header.last_offset >= next_base_offset
                ):
                    problem = f"offset {header.last_offset} lies outside the segment"
                    break
                self._track(position, header.last_offset, header.max_timestamp, header.size)
                epoch = header.partition_leader_epoch
                if epoch >= 0 and (epochs.latest_epoch is None or epoch > epochs.latest_epoch):
                    epochs.assign(epoch, header.base_offset)
                valid = position + header.size
                expected = header.next_offset
        except CorruptMessageError as exc:
            problem = str(exc)
        # A cleanly closed segment ends with its max timestamp in the time index; so does a recovered one.
        self.time_index.maybe_append(self.max_timestamp, self.offset_of_max_timestamp)
        truncated = self.size - valid
        if truncated:
            log.warning("Truncating %s at byte %d (%d bytes): %s", self.log_path, valid, truncated, problem)
            os.ftruncate(self._file(), valid)
            self.size = valid
        return truncated

    def _valid_batches(self) -> Iterator[tuple[int, Batch]]:
        """(position, batch) of the whole, CRC-checked batches from the start; stops silently at a batch
        cut short by the end of the file and raises CorruptMessageError at a malformed one."""
        position = 0
        chunk_size = _RECOVERY_CHUNK
        while position < self.size:
            data = _pread(self._file(), min(chunk_size, self.size - position), position)
            consumed = 0
            for batch in iter_batches(data, allow_truncated_tail=True):
                yield position + consumed, batch
                consumed += batch.header.size
            if consumed == 0:
                if position + len(data) >= self.size or len(data) < LOG_OVERHEAD:
                    return  # the file ends inside this batch: a torn tail
                # A batch larger than the chunk: read it whole next time round.
                chunk_size = max(chunk_size, int.from_bytes(data[8:12], "big", signed=True) + LOG_OVERHEAD)
            position += consumed

    def truncate_to(self, offset: int, now_ms: int) -> int | None:
        """Remove the batches holding offsets ≥ `offset`, whole (one holding `offset` goes too). Returns
        the base offset of the first batch removed, or None if nothing was."""
        found = self.translate_offset(offset)
        self.offset_index.truncate_to(offset)
        self.time_index.truncate_to(offset)
        self._bytes_since_last_index_entry = 0
        self.max_timestamp, self.offset_of_max_timestamp = self.time_index.last_entry
        if found is None:
            return None
        position, header = found
        os.ftruncate(self._file(), position)
        self.size = position
        if position == 0:
            self.created_ms = now_ms
            self._rolling_based_timestamp = None
        return header.base_offset

    def on_become_inactive(self) -> None:
        """The log rolled past this segment: record its max timestamp and drop the index descriptors."""
        self.time_index.maybe_append(self.max_timestamp, self.offset_of_max_timestamp)
        self.offset_index.close()
        self.time_index.close()

    def flush(self) -> None:
        if self._fd is not None:
            os.fsync(self._fd)
        else:  # never opened since it was created or loaded: what is on disk is only the file itself
            fsync_path(self.log_path)
        self.offset_index.flush()
        self.time_index.flush()

    def close(self) -> None:
        """Close cleanly: the max timestamp goes into the time index, as on roll."""
        self.on_become_inactive()
        self._close_log()

    def _close_log(self) -> None:
        fd, self._fd = self._fd, -1
        if fd is not None and fd >= 0:
            os.close(fd)

    def close_handles(self) -> None:
        """Release the descriptors without writing anything (the log is failed, or being deleted)."""
        self._close_log()
        self.offset_index.close()
        self.time_index.close()

    def update_parent_dir(self, directory: Path) -> None:
        """The partition directory was renamed: the files keep their names in it."""
        self.log_path = directory / self.log_path.name
        self.offset_index.path = directory / self.offset_index.path.name
        self.time_index.path = directory / self.time_index.path.name

    def delete(self) -> None:
        self._close_log()
        self.offset_index.delete()
        self.time_index.delete()
        self.log_path.unlink(missing_ok=True)
