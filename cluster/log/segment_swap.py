"""Replacing segments crash-safely, as Kafka's `Log.replaceSegments` and its recovery in `loadSegments`.

The log cleaner writes a group of segments' survivors into new files named after the group's first base
offset with a `.cleaned` suffix (`00000000000000000000.log.cleaned`, `.index.cleaned`,
`.timeindex.cleaned`); then, under the log's lock:

    1. every new file  .cleaned -> .swap            (the new segment is complete and wanted)
    2. every old file  <name>   -> <name>.deleted   (then unlinked)
    3. every new file  .swap    -> <name>           (the first old segment's name, taken over)

A crash before 1 leaves `.cleaned` files: loading deletes them (the old segments are whole). A crash after
1 leaves a `.swap` log: loading deletes its indexes (rebuilt from it), deletes the segments whose base
offsets lie in its range [base, next offset), renames it live, and the load recovers it as any segment
whose index is missing. `.deleted` files are deleted on load. As in Kafka (KAFKA-6264), a `.swap` at or
above the lowest `.cleaned` base offset belongs to an unfinished operation and is deleted with it.

`SegmentSnapshot` / `LogSnapshot` are what the cleaner reads of a log, taken under its lock at one moment.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path

from kafkaops.cluster.common.errors import CorruptMessageError
from kafkaops.cluster.protocol.records import HEADER_SIZE, read_header

from .config import LogConfig
from .segment import INDEX_SUFFIX, LOG_SUFFIX, TIME_INDEX_SUFFIX, segment_file_name

log = logging.getLogger(__name__)

CLEANED_FILE_SUFFIX = ".cleaned"
SWAP_FILE_SUFFIX = ".swap"
DELETED_FILE_SUFFIX = ".deleted"
SEGMENT_FILE_SUFFIXES = (LOG_SUFFIX, INDEX_SUFFIX, TIME_INDEX_SUFFIX)


@dataclass(frozen=True, slots=True)
class SegmentSnapshot:
    """A segment as the cleaner sees it: its bytes [0, size) do not change while it is not active."""

    base_offset: int
    size: int
    log_path: Path
    last_modified_ms: int
    largest_timestamp: int
    offset_index_bytes: int
    time_index_bytes: int


@dataclass(frozen=True, slots=True)
class LogSnapshot:
    """A log's segments (the active one last) and offsets at one moment; `generation` changes with every
    truncation, rename or close, which makes a cleaning started before it void."""

    topic: str
    partition: int
    directory: Path
    segments: tuple[SegmentSnapshot, ...]
    log_start_offset: int
    log_end_offset: int
    generation: int
    config: LogConfig

    @property
    def active(self) -> SegmentSnapshot:
        return self.segments[-1]


def segment_path(directory: Path, base_offset: int, suffix: str, extra: str = "") -> Path:
    return directory / (segment_file_name(base_offset, suffix) + extra)


def change_suffixes(directory: Path, base_offset: int, old: str, new: str) -> None:
    """Rename a segment's three files from suffix `old` to `new` (Kafka's `changeFileSuffixes`); a missing
    index is skipped (it is rebuilt from the log)."""
    for suffix in SEGMENT_FILE_SUFFIXES:
        source = segment_path(directory, base_offset, suffix, old)
        if suffix != LOG_SUFFIX and not source.exists():
            continue
        os.replace(source, segment_path(directory, base_offset, suffix, new))


def delete_segment_files(directory: Path, base_offset: int, extra: str = "") -> None:
    for suffix in SEGMENT_FILE_SUFFIXES:
        segment_path(directory, base_offset, suffix, extra).unlink(missing_ok=True)


def next_offset_of_file(path: Path) -> int | None:
    """The offset after the last whole batch of a segment file, None if it holds none."""
    next_offset = None
    with open(path, "rb") as file:
        data = file.read()
    position = 0
    while len(data) - position >= HEADER_SIZE:
        try:
            header = read_header(data, position)
        except CorruptMessageError:
            break
        if position + header.size > len(data):
            break
        next_offset = header.next_offset
        position += header.size
    return next_offset


def recover_interrupted_swaps(directory: Path) -> None:
    """Finish or undo what a crash left of a segment replacement (see the module docstring). Runs before the
    log's segments are listed."""
    swaps: list[int] = []
    cleaned: list[Path] = []
    for path in directory.iterdir():
        name = path.name
        if name.endswith(DELETED_FILE_SUFFIX):
            log.info("Deleting stray temporary file %s", path)
            path.unlink()
        elif name.endswith(CLEANED_FILE_SUFFIX):
            cleaned.append(path)
        elif name.endswith(LOG_SUFFIX + SWAP_FILE_SUFFIX) and name[:20].isdigit():
            swaps.append(int(name[:20]))
    min_cleaned = min((int(path.name[:20]) for path in cleaned if path.name[:20].isdigit()), default=None)
    for base in sorted(swaps):
        # Its indexes are rebuilt from the log: they may be from before the swap file's last change.
        for suffix in (INDEX_SUFFIX, TIME_INDEX_SUFFIX):
            segment_path(directory, base, suffix, SWAP_FILE_SUFFIX).unlink(missing_ok=True)
        if min_cleaned is not None and base >= min_cleaned:
            log.info("Deleting %s: part of an unfinished replacement", segment_path(directory, base, LOG_SUFFIX))
            delete_segment_files(directory, base, SWAP_FILE_SUFFIX)
            continue
        _complete_swap(directory, base)
    for path in cleaned:
        log.info("Deleting %s: a cleaning was interrupted", path)
        path.unlink(missing_ok=True)


def _complete_swap(directory: Path, base: int) -> None:
    swap = segment_path(directory, base, LOG_SUFFIX, SWAP_FILE_SUFFIX)
    end = next_offset_of_file(swap)
    end = base + 1 if end is None else end
    log.info("Completing the interrupted swap of %s (offsets %d to %d)", swap, base, end)
    for path in directory.iterdir():
        name = path.name
        if len(name) == 20 + len(LOG_SUFFIX) and name.endswith(LOG_SUFFIX) and name[:20].isdigit():
            old = int(name[:20])
            if base <= old < end:
                delete_segment_files(directory, old)
    os.replace(swap, segment_path(directory, base, LOG_SUFFIX))
