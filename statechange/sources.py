"""Which files to read, in which streams, and reading them.

`--logs` entries may be files, directories (their files) or globs; `--logs-regex` keeps Kafka's
semantics. Rotated files of one log (`state-change.log.2024-05-01-13`, ..., `state-change.log`) form one
stream in time order, so the merge sees one broker as one sorted sequence. `group_rotated` is pure and
shared with the Spark engine, which lists remote file systems its own way.
"""

from __future__ import annotations

import glob
import gzip
import os
import posixpath
import re
import zlib
from collections.abc import Iterator, Sequence

from kafkaops.cluster.common.errors import InvalidArgumentError
from kafkaops.statechange import patterns

_GLOB_CHARS = re.compile(r"[*?\[]")
STATE_CHANGE_NAME = "state-change"


def expand_logs(entries: Sequence[str]) -> list[str]:
    """The files named by `--logs` entries, in the order given; repeats dropped.

    A directory stands for its files whose name contains `state-change` (a broker's log directory also
    holds server.log, controller.log, ...); a glob for its matches; each sorted by name.
    Raises InvalidArgumentError for an entry that names nothing readable.
    """
    files: list[str] = []
    for entry in entries:
        if not entry:
            continue
        if _GLOB_CHARS.search(entry) and not os.path.exists(entry):
            matches = sorted(m for m in glob.glob(entry) if os.path.isfile(m))
            if not matches:
                raise InvalidArgumentError(f"No state-change log matches {entry}")
            files.extend(matches)
        elif os.path.isdir(entry):
            found = sorted(
                os.path.join(entry, name)
                for name in os.listdir(entry)
                if STATE_CHANGE_NAME in name and os.path.isfile(os.path.join(entry, name))
            )
            if not found:
                raise InvalidArgumentError(f"No file named *{STATE_CHANGE_NAME}* in directory {entry}")
            files.extend(found)
        else:
            files.append(entry)
    return check_readable(list(dict.fromkeys(files)))


def logs_regex(spec: str) -> list[str]:
    """Kafka's `--logs-regex /dir/regex`: split at the last `/` (no `/`: the current directory), keep the
    directory's files whose names contain a match of the regex (an unanchored search, as Scala's
    `findFirstIn`). Kafka lists in file-system order; here names are sorted, so runs are repeatable.
    Raises InvalidArgumentError.
    """
    slash = spec.rfind("/")
    directory = "." if slash < 0 else spec[:slash]
    try:
        name_regex = re.compile(spec[slash + 1 :])
    except re.error as error:
        raise InvalidArgumentError(
            f'Invalid regular expression "{spec[slash + 1 :]}" in --logs-regex: {error}'
        ) from None
    try:
        names = sorted(os.listdir(directory or "/"))
    except OSError as error:
        raise InvalidArgumentError(f"Cannot list directory {directory}: {error.strerror}") from None
    files = [
        directory + "/" + name
        for name in names
        if name_regex.search(name) and os.path.isfile(os.path.join(directory or "/", name))
    ]
    if not files:
        raise InvalidArgumentError(f"No state-change log in {directory} matches {spec[slash + 1 :]}")
    return check_readable(files)


def check_readable(files: list[str]) -> list[str]:
    """Fail before any output rather than halfway through the merge. Raises InvalidArgumentError."""
    for path in files:
        if not os.path.isfile(path):
            reason = "is a directory" if os.path.isdir(path) else "no such file"
            raise InvalidArgumentError(f"Cannot read state-change log {path}: {reason}")
        if not os.access(path, os.R_OK):
            raise InvalidArgumentError(f"Cannot read state-change log {path}: permission denied")
    return files


def group_rotated(paths: Sequence[str]) -> list[list[str]]:
    """Streams of files: rotated files of one log grouped in time order, the live file last.

    `d/state-change.log.2024-05-01-12[.gz]`, `d/state-change.log.2024-05-01-13`, `d/state-change.log`
    form one stream; it sits where the first of its files appears in `paths` (the merge's tiebreak).
    Paths are strings in `/` form (local paths or URIs); no file system is touched.
    """
    streams: dict[tuple[str, str], list[tuple[tuple[int, str], str]]] = {}
    for path in paths:
        directory, name = posixpath.split(path)
        rotated = patterns.ROTATED_NAME_RE.match(name)
        if rotated is not None:
            base, order = rotated.group(patterns.ROTATED_BASE), (0, rotated.group(patterns.ROTATED_DATE))
        else:
            base, order = name.removesuffix(".gz"), (1, "")  # the live file is the newest
        streams.setdefault((directory, base), []).append((order, path))
    return [[path for _, path in sorted(files)] for files in streams.values()]


BLOCK_SIZE = 64 * 1024
"""Bytes read per file per step. Small enough that a merge of a hundred streams keeps its working set
small (on 100 brokers' logs 64 KiB beat 16, 32, 128 and 256 KiB: the lines of all streams' blocks are
alive at once, and split into cold memory costs more), big enough that splitting and sorting run in C on
runs of hundreds of entries."""

MAX_ENTRY_SIZE = 256 * 1024 * 1024
"""An entry (a line and its continuation lines) longer than this is refused: a stack trace is
kilobytes and a 1 MB line passes, but a file with no timestamped line in 256 MiB is no state-change
log, and merging it would only exhaust memory."""


def read_lines(path: str, block_size: int = BLOCK_SIZE) -> Iterator[list[bytes]]:
    """The file's lines, `.gz` decompressed, in lists of whole entries: a list ends where the next line
    starts an entry (`patterns.ENTRY_START`), so no entry is cut from its continuation lines. Lines come
    without their `\\n` (a `\\r` of `\\r\\n` stays); the file's final newline adds no empty line.

    Each read is split into lines once, in C, and never copied whole again: only the read's last entry
    (usually one line, part of which is still unread) is carried over to the next read.

    Raises InvalidArgumentError if the file cannot be read, is not valid gzip (possibly after lists
    were produced: a truncated archive is only found at its end) or has an entry beyond MAX_ENTRY_SIZE.
    """
    starts_entry = patterns.ENTRY_START_RE.match
    try:
        with gzip.open(path, "rb") if path.endswith(".gz") else open(path, "rb") as file:
            carry: list[bytes] = []  # the last entry read: its lines, the last one possibly partial
            carried = 0  # bytes read since the last line that starts an entry
            # Reading at least as much as is carried keeps a long entry's cost linear, not quadratic.
            while chunk := file.read(max(block_size, carried)):
                lines = chunk.split(b"\n")
                if carry:
                    lines[0] = carry[-1] + lines[0]
                    if len(carry) > 1:
                        lines[:0] = carry[:-1]
                # The last line of this read that starts an entry, found in the bytes (C, not a loop
                # over lines); one at the very start of the read stays in the carried entry, which is
                # fine: `parse.split_entries` tells entries apart, this only decides where to cut.
                cut = chunk.rfind(b"\n[")
                while cut >= 0 and not starts_entry(chunk, cut + 1):
                    cut = chunk.rfind(b"\n[", 0, cut)
                if cut >= 0:
                    index = len(lines) - 1 - chunk.count(b"\n", cut + 1)
                    carry = lines[index:]
                    del lines[index:]
                    carried = len(chunk) - cut - 1
                    yield lines
                else:
                    carry = lines
                    carried += len(chunk)
                    if carried > MAX_ENTRY_SIZE:
                        raise InvalidArgumentError(
                            f"Cannot read state-change log {path}: no line starts a log entry in its "
                            f"{MAX_ENTRY_SIZE >> 20} MiB from byte {file.tell() - carried} on "
                            "(is it a state-change log?)"
                        )
            if carry and not carry[-1]:
                carry.pop()  # the empty "line" after the final newline
            if carry:
                yield carry
    except (OSError, EOFError, zlib.error) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        raise InvalidArgumentError(f"Cannot read state-change log {path}: {reason}") from None


def total_size(paths: Sequence[str]) -> int:
    return sum(os.path.getsize(path) for path in paths)
