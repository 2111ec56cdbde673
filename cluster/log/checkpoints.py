"""Kafka's checkpoint files: a version line, a count line, then one entry per line.

    replication-offset-checkpoint       per log dir      <topic> <partition> <high watermark>
    recovery-point-offset-checkpoint    per log dir      <topic> <partition> <recovery point>
    log-start-offset-checkpoint         per log dir      <topic> <partition> <log start offset>
    leader-epoch-checkpoint             per partition    <epoch> <start offset>

    0
    2
    orders 0 1042
    orders 1 977

Sources (apache/kafka 2.8): `core/src/main/scala/kafka/server/checkpoints/CheckpointFile.scala` (the
frame: version, size, entries, "\\n" line ends; read fails on an unknown version, a malformed line or a
count that does not match), `OffsetCheckpointFile.scala` (version 0, `topic partition offset` split on
`\\s+`), `LeaderEpochCheckpointFile.scala` (version 0, `epoch offset`). Numbers parse as Java's
`Integer.parseInt` / `Long.parseLong` do. Kafka's reader treats an empty file as no entries; so does this
one, and a missing file too (Kafka creates an empty file first).

Writing is atomic as in Kafka: write `<file>.tmp`, fsync it, rename it over the file; then the
directory is fsynced too, so the rename itself survives a power cut (Kafka ≥ 3.0 does the same).
Offset checkpoints are written sorted by topic and partition so that files are reproducible.

The format/parse functions are pure; `read_checkpoint` / `write_checkpoint` are the I/O. Raises
MalformedCheckpointError for bad contents; OSError passes through for the caller to classify.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple, TypeVar

from kafkaops.cluster.common.errors import MalformedCheckpointError
from kafkaops.cluster.common.jvm_text import java_parse_int, java_parse_long, java_split

REPLICATION_OFFSET_CHECKPOINT = "replication-offset-checkpoint"
RECOVERY_POINT_OFFSET_CHECKPOINT = "recovery-point-offset-checkpoint"
LOG_START_OFFSET_CHECKPOINT = "log-start-offset-checkpoint"
LEADER_EPOCH_CHECKPOINT = "leader-epoch-checkpoint"
CURRENT_VERSION = 0

_LINE_BREAK = re.compile(r"\r\n|\r|\n")  # Java's BufferedReader.readLine
_WHITESPACE = re.compile(r"\s+", re.ASCII)  # Kafka's `WhiteSpacesPattern`: Java's \s is ASCII

T = TypeVar("T")


class EpochEntry(NamedTuple):
    """One leader epoch and the first offset written in it (Kafka's `EpochEntry`)."""

    epoch: int
    start_offset: int


def format_checkpoint(lines: Sequence[str]) -> str:
    return "".join(f"{line}\n" for line in (str(CURRENT_VERSION), str(len(lines)), *lines))


def parse_checkpoint(text: str, parse_line: Callable[[list[str]], T], name: str) -> list[T]:
    """The entries of a checkpoint file's text; `name` is the file, for the error message.

    Raises MalformedCheckpointError as Kafka's reader throws IOException: an unknown version, a line
    that does not parse, or a count line that disagrees with the entries."""
    lines = _LINE_BREAK.split(text)
    if lines[-1] == "":  # the terminator of the last line, not an empty line
        lines.pop()
    if not lines:
        return []
    line = lines[0]
    try:
        version = java_parse_int(line)
        if version != CURRENT_VERSION:
            raise MalformedCheckpointError(f"Unrecognized version of the checkpoint file ({name}): {version}")
        if len(lines) == 1:
            return []
        line = lines[1]
        expected = java_parse_int(line)
        entries = []
        for line in lines[2:]:
            entries.append(parse_line(java_split(line, _WHITESPACE)))
    except ValueError:  # NumberFormatError included
        raise MalformedCheckpointError(f"Malformed line in checkpoint file ({name}): {line}") from None
    if len(entries) != expected:
        raise MalformedCheckpointError(
            f"Expected {expected} entries in checkpoint file ({name}), but found only {len(entries)}"
        )
    return entries


# --- offset checkpoints: (topic, partition) -> offset --------------------------------------------------


def format_offsets(offsets: Mapping[tuple[str, int], int]) -> str:
    return format_checkpoint(
        [f"{topic} {partition} {offset}" for (topic, partition), offset in sorted(offsets.items())]
    )


def _offset_line(fields: list[str]) -> tuple[tuple[str, int], int]:
    if len(fields) != 3:
        raise ValueError(fields)
    topic, partition, offset = fields
    return (topic, java_parse_int(partition)), java_parse_long(offset)


def parse_offsets(text: str, name: str) -> dict[tuple[str, int], int]:
    return dict(parse_checkpoint(text, _offset_line, name))


# --- leader epoch checkpoint: epoch -> start offset ----------------------------------------------------


def format_epochs(entries: Iterable[EpochEntry]) -> str:
    return format_checkpoint([f"{entry.epoch} {entry.start_offset}" for entry in entries])


def _epoch_line(fields: list[str]) -> EpochEntry:
    if len(fields) != 2:
        raise ValueError(fields)
    return EpochEntry(java_parse_int(fields[0]), java_parse_long(fields[1]))


def parse_epochs(text: str, name: str) -> list[EpochEntry]:
    return parse_checkpoint(text, _epoch_line, name)


# --- I/O -------------------------------------------------------------------------------------------------


def read_checkpoint(path: Path) -> str:
    """The file's text; a missing file reads as empty (no entries)."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""
    except UnicodeDecodeError:
        raise MalformedCheckpointError(f"Checkpoint file ({path}) is not UTF-8 text") from None


def write_checkpoint(path: Path, text: str, *, durable: bool = True) -> None:
    """Replace `path` with `text` atomically: temp file, fsync, rename, fsync of the directory (the
    fsyncs only if `durable`: the rename alone is atomic, and survives a killed process). Each call
    makes an inode and frees one: on ext4 without a journal, making one scans past every inode freed in
    the last minutes, so thousands of rewrites in a burst cost quadratic time (6 s of a broker's network
    thread for 3,333 leader-epoch files in a reassignment of 10,000 partitions)."""
    temp = path.with_name(path.name + ".tmp")
    with open(temp, "w", encoding="utf-8", newline="\n") as file:
        file.write(text)
        if durable:
            file.flush()
            os.fsync(file.fileno())
    os.replace(temp, path)
    if durable:
        fsync_path(path.parent)


def fsync_path(path: Path) -> None:
    """Make a file's data, or a directory's entries (created, renamed, deleted files), durable."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
