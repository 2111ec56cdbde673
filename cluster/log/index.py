"""A segment's sparse indexes, in Kafka's file formats (big-endian, fixed-size entries, no header).

    <base>.index       relative offset INT32 | position INT32            (OffsetIndex.scala)
    <base>.timeindex   timestamp INT64 | relative offset INT32           (TimeIndex.scala)

An offset-index entry maps the last offset of a batch to the byte position where that batch starts;
one is added once more than `index.interval.bytes` were appended since the previous entry, so a lookup
lands at most that many bytes before the batch it wants. A time-index entry says that every offset after
its offset has a timestamp at or above its timestamp's predecessors: the segment's running maximum
timestamp, recorded at the same points when it grew.

Kafka preallocates `segment.index.bytes` and memory-maps the file, trimming it on roll; here entries are
appended to the file as they are made and mirrored in memory (8 or 12 bytes per `index.interval.bytes`
of log, e.g. 2 MiB for a 1 GiB segment at the default 4096), so a file on disk is always exactly the
entries, as Kafka's are after a clean shutdown. `segment.index.bytes` still bounds the entry count:
a full index rolls the segment, as in Kafka.

Loading checks an index (Kafka's `sanityCheck`, made stricter): whole entries, ascending, inside the
log; the segment checks that the last entry points at a batch ending at that offset. An index that
fails is rebuilt from the log. Not thread-safe: the owning log's lock covers it.
"""

from __future__ import annotations

import bisect
import logging
import os
import struct
from array import array
from pathlib import Path

log = logging.getLogger(__name__)

_OFFSET_ENTRY = struct.Struct(">ii")
_TIME_ENTRY = struct.Struct(">qi")


class _IndexFile:
    """The file half: entries appended through a descriptor opened on the first append, truncation, fsync."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    def _append(self, data: bytes) -> None:
        if self._fd is None:
            self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.write(self._fd, data)

    def _truncate(self, size: int) -> None:
        if self._fd is not None:
            os.ftruncate(self._fd, size)
            return
        # Not held: an index that is only reset or cut back (a new or recovered empty segment) keeps none.
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT, 0o644)
        try:
            os.ftruncate(fd, size)
        finally:
            os.close(fd)

    def _rewrite(self, data: bytes) -> None:
        self._truncate(0)
        if data:
            self._append(data)

    def flush(self) -> None:
        fd = os.open(self.path, os.O_RDONLY | os.O_CREAT, 0o644)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    def close(self) -> None:
        """Release the descriptor (an inactive segment's index is only read, from memory)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def delete(self) -> None:
        self.close()
        self.path.unlink(missing_ok=True)


def _read_entries(path: Path, entry: struct.Struct) -> list[tuple[int, int]] | str:
    """The file's entries, or why it cannot be used."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return "missing"
    if len(data) % entry.size:
        return f"size {len(data)} is not a multiple of {entry.size}"
    return list(entry.iter_unpack(data))


def _offset_entries_problem(entries: list[tuple[int, int]], log_size: int) -> str | None:
    previous_relative = previous_position = -1
    for relative, position in entries:
        if relative <= previous_relative or position <= previous_position or position >= log_size:
            return f"entry ({relative}, {position}) is out of order or outside the {log_size}-byte log"
        previous_relative, previous_position = relative, position
    return None


def _time_entries_problem(entries: list[tuple[int, int]]) -> str | None:
    previous_timestamp, previous_relative = -1, 0
    for timestamp, relative in entries:
        if timestamp <= previous_timestamp or relative < previous_relative:
            return f"entry ({timestamp}, {relative}) is out of order"
        previous_timestamp, previous_relative = timestamp, relative
    return None


class OffsetIndex(_IndexFile):
    entry_size = _OFFSET_ENTRY.size

    def __init__(self, path: Path, base_offset: int, max_entries: int) -> None:
        super().__init__(path)
        self.base_offset = base_offset
        self.max_entries = max_entries
        self._relative = array("i")
        self._positions = array("i")

    @classmethod
    def load(cls, path: Path, base_offset: int, max_entries: int, log_size: int) -> OffsetIndex | None:
        """The index in `path`, or None (with the reason logged) if it must be rebuilt from the log."""
        entries = _read_entries(path, _OFFSET_ENTRY)
        problem = entries if isinstance(entries, str) else _offset_entries_problem(entries, log_size)
        if problem is not None or isinstance(entries, str):
            log.warning("Rebuilding index %s: %s", path, problem)
            return None
        index = cls(path, base_offset, max_entries)
        for relative, position in entries:
            index._relative.append(relative)
            index._positions.append(position)
        return index

    def __len__(self) -> int:
        return len(self._relative)

    @property
    def is_full(self) -> bool:
        return len(self._relative) >= self.max_entries

    @property
    def last_entry(self) -> tuple[int, int]:
        """(offset, position) of the last entry; (base offset, 0) when empty."""
        if not self._relative:
            return self.base_offset, 0
        return self.base_offset + self._relative[-1], self._positions[-1]

    def lookup(self, offset: int) -> tuple[int, int]:
        """(offset, position) of the last entry whose offset is ≤ `offset`; (base offset, 0) if none."""
        slot = bisect.bisect_right(self._relative, offset - self.base_offset) - 1
        if slot < 0:
            return self.base_offset, 0
        return self.base_offset + self._relative[slot], self._positions[slot]

    def floor_position(self, position: int) -> int:
        """The position of the last entry at or below `position` (a batch boundary); 0 if none."""
        slot = bisect.bisect_right(self._positions, position) - 1
        return self._positions[slot] if slot >= 0 else 0

    def append(self, offset: int, position: int) -> None:
        relative = offset - self.base_offset
        self._append(_OFFSET_ENTRY.pack(relative, position))
        self._relative.append(relative)
        self._positions.append(position)

    def truncate_to(self, offset: int) -> None:
        """Drop the entries for offsets ≥ `offset`."""
        keep = bisect.bisect_left(self._relative, offset - self.base_offset)
        if keep < len(self._relative):
            del self._relative[keep:], self._positions[keep:]
            self._truncate(keep * self.entry_size)

    def reset(self) -> None:
        """Drop every entry (the index is being rebuilt)."""
        del self._relative[:], self._positions[:]
        self._rewrite(b"")


class TimeIndex(_IndexFile):
    entry_size = _TIME_ENTRY.size

    def __init__(self, path: Path, base_offset: int, max_entries: int) -> None:
        super().__init__(path)
        self.base_offset = base_offset
        self.max_entries = max_entries
        self._timestamps = array("q")
        self._relative = array("i")

    @classmethod
    def load(cls, path: Path, base_offset: int, max_entries: int) -> TimeIndex | None:
        """The index in `path`, or None (with the reason logged) if it must be rebuilt from the log."""
        entries = _read_entries(path, _TIME_ENTRY)
        problem = entries if isinstance(entries, str) else _time_entries_problem(entries)
        if problem is not None or isinstance(entries, str):
            log.warning("Rebuilding time index %s: %s", path, problem)
            return None
        index = cls(path, base_offset, max_entries)
        for timestamp, relative in entries:
            index._timestamps.append(timestamp)
            index._relative.append(relative)
        return index

    def __len__(self) -> int:
        return len(self._timestamps)

    @property
    def is_full(self) -> bool:
        return len(self._timestamps) >= self.max_entries

    @property
    def last_entry(self) -> tuple[int, int]:
        """(timestamp, offset) of the last entry; (-1, base offset) when empty, as Kafka's."""
        if not self._timestamps:
            return -1, self.base_offset
        return self._timestamps[-1], self.base_offset + self._relative[-1]

    def lookup(self, timestamp: int) -> tuple[int, int]:
        """(timestamp, offset) of the last entry whose timestamp is ≤ `timestamp`; (-1, base) if none."""
        slot = bisect.bisect_right(self._timestamps, timestamp) - 1
        if slot < 0:
            return -1, self.base_offset
        return self._timestamps[slot], self.base_offset + self._relative[slot]

    def maybe_append(self, timestamp: int, offset: int) -> None:
        """Add (timestamp, offset) if the timestamp is above the last entry's (Kafka's `maybeAppend`)."""
        if timestamp <= self.last_entry[0]:
            return
        relative = offset - self.base_offset
        self._append(_TIME_ENTRY.pack(timestamp, relative))
        self._timestamps.append(timestamp)
        self._relative.append(relative)

    def truncate_to(self, offset: int) -> None:
        """Drop the entries for offsets ≥ `offset`."""
        keep = bisect.bisect_left(self._relative, offset - self.base_offset)
        if keep < len(self._relative):
            del self._timestamps[keep:], self._relative[keep:]
            self._truncate(keep * self.entry_size)

    def reset(self) -> None:
        """Drop every entry (the index is being rebuilt)."""
        del self._timestamps[:], self._relative[:]
        self._rewrite(b"")
