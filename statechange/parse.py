"""Parsing state-change logs: lines into entries, and an entry's first line into fields.

Pure functions over bytes and strings; no file is opened here. Nothing here raises on odd input: a line
that matches no known shape is still an entry (its `message` is the line), binary garbage included.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterator
from itertools import compress, count
from operator import itemgetter

from kafkaops.statechange import patterns as p
from kafkaops.statechange.model import Entry, Partition, RawEntry

_KEY = itemgetter(slice(0, p.KEY_WIDTH))

ORPHAN_KEY = b""
"""The key of lines that precede a file's first timestamp: they sort before everything in their stream."""


def split_entries(lines: list[bytes], *, file_start: bool) -> tuple[list[bytes], list[bytes]]:
    """Lines of whole entries (see `sources.read_lines`) into (keys, texts), one of each per entry.

    A line starting with `[yyyy-MM-dd HH:mm:ss,SSS]` starts an entry, and those 25 bytes are its key
    (`model.RawEntry.key`); so does one starting with `yyyy-MM-dd HH:mm:ss,SSS ` (the layout without
    brackets), keyed `[yyyy-MM-dd HH:mm:ss,SSS]` all the same (`entry_key`); every other line (stack trace,
    wrapped message, garbage) belongs to the entry above it. At the start of a file, lines before the first
    timestamp form one orphan entry keyed ORPHAN_KEY. Lines come without their `\\n`, so `\\r\\n` files
    pass through byte for byte.

    This is the merger's inner loop: one slice per line, then one test in C of all of them at once; a
    list whose lines all start entries (most lists) is used as it is, its slices as its keys. Nothing
    is decoded.
    """
    texts = lines
    keys = list(map(_KEY, texts))
    heads = b"".join(keys)
    # Digits masked to 0, a line that starts an entry begins with `[0000-00-00 00:00:00,000]`; the heads
    # are all such iff they are KEY_WIDTH long each and together a prefix of _ENTRY_SHAPES.
    if len(heads) != p.KEY_WIDTH * len(keys) or not _ENTRY_SHAPES.startswith(heads.translate(_MASK_DIGITS)):
        shapes = b"\n".join(keys).translate(_MASK_DIGITS).split(b"\n")
        odd = list(compress(count(), map(_ENTRY_SHAPE.__ne__, shapes)))
        plain = [i for i in odd if shapes[i].startswith(_PLAIN_SHAPE)]
        continuations = [i for i in odd if not shapes[i].startswith(_PLAIN_SHAPE)] if plain else odd
        if continuations and continuations[0] == 0:
            del continuations[0]  # the first line starts the first text whatever it is
        if continuations:
            texts = _join_continuations(texts, continuations)
        keys = list(map(entry_key, texts)) if plain else list(map(_KEY, texts)) if continuations else keys
    if file_start and not p.ENTRY_START_RE.match(texts[0]):
        keys[0] = ORPHAN_KEY
    return keys, texts


def entry_key(text: bytes) -> bytes:
    """The merge key of an entry's text: its first 25 bytes, or `[timestamp]` for the layout without
    brackets, so that entries of both layouts sort by time together."""
    if text[:1] != b"[" and text[:24].translate(_MASK_DIGITS) == _PLAIN_SHAPE:
        return b"[" + text[:23] + b"]"
    return text[: p.KEY_WIDTH]


_MASK_DIGITS = bytes.maketrans(b"123456789", b"000000000")
_ENTRY_SHAPE = b"[0000-00-00 00:00:00,000]"
_PLAIN_SHAPE = b"0000-00-00 00:00:00,000 "
"""What a line that starts an entry (`patterns.ENTRY_START`) begins with, once its digits are masked, in
Kafka's layout and in the layout without brackets."""
_ENTRY_SHAPES = _ENTRY_SHAPE * (1 << 16)
"""The masked heads of a list of lines that all start entries are a prefix of this (1.6 MB; a list of
more lines takes the slow path, as any list with a continuation line does)."""


def _join_continuations(lines: list[bytes], continuations: list[int]) -> list[bytes]:
    """Lines into entries: each line whose index is in `continuations` (ascending, none 0) joins the
    entry above it. Each entry is joined once, so a long stack trace costs linear time."""
    texts: list[bytes] = []
    done = 0  # lines[:done] are in texts or in the pending entry
    first = 0  # the pending entry's first line
    for line in continuations:
        if line != done:  # line - 1 starts a new multi-line entry
            if done:
                texts.append(b"\n".join(lines[first:done]))
            texts += lines[done : line - 1]
            first = line - 1
        done = line + 1
    texts.append(b"\n".join(lines[first:done]))
    texts += lines[done:]
    return texts


def _replace_as_java(error: UnicodeError) -> tuple[str, int]:
    """Python's "replace", except that an encoded surrogate (`ED A0..BF [80..BF]`, CESU-8) is one
    malformed sequence, one U+FFFD, as Java's UTF-8 decoder reads it (Python replaces each byte). The
    Spark engine's strings come from Java's decoder; with this, every byte string decodes to the same
    text in both engines (checked on random bytes against Spark), so --grep and JSON output agree."""
    if not isinstance(error, UnicodeDecodeError):
        raise error
    data, start = error.object, error.start
    if data[start] == 0xED and start + 1 < len(data) and 0xA0 <= data[start + 1] <= 0xBF:
        end = start + 2
        if end < len(data) and 0x80 <= data[end] <= 0xBF:
            end += 1
        return "\ufffd", end
    return "\ufffd", error.end


DECODE_ERRORS = "kafkaops.replace-as-java"
codecs.register_error(DECODE_ERRORS, _replace_as_java)


def entry_lines(text: bytes) -> list[str]:
    """An entry's lines, decoded (invalid UTF-8 replaced as Java does, never an error), without line
    terminators."""
    return [_strip_cr(line) for line in text.decode("utf-8", DECODE_ERRORS).split("\n")]


def first_line(text: bytes) -> str:
    """An entry's first line, decoded as `entry_lines` does."""
    end = text.find(b"\n")
    return _strip_cr((text if end < 0 else text[:end]).decode("utf-8", DECODE_ERRORS))


def entry_text(text: bytes) -> str:
    """What `--grep` searches: the whole entry, its first line and its continuation lines (a stack trace),
    decoded as `entry_lines` does, without line terminators, joined by `\\n`. So `^`/`$` are the entry's
    start and end (`(?m)`: of each line), and a match may span lines. The Spark engine joins its rows of
    the entry's lines into the same string."""
    decoded = text.decode("utf-8", DECODE_ERRORS)
    return "\n".join(map(_strip_cr, decoded.split("\n"))) if "\r" in decoded else decoded


def _strip_cr(line: str) -> str:
    return line[:-1] if line.endswith("\r") else line


def parse_entry(raw: RawEntry) -> Entry:
    """All the fields of an entry; the first line decides them, continuation lines are carried as text."""
    first, *continuation = entry_lines(raw.text)
    if raw.key == ORPHAN_KEY:
        timestamp, level, message = None, None, first
    else:
        timestamp, level, message = parse_first_line(first)
    actor, actor_id, epoch = parse_actor(message)
    return Entry(
        timestamp=timestamp,
        level=level,
        actor=actor,
        actor_id=actor_id,
        controller_epoch=epoch,
        partitions=partitions_in(message),
        message=message,
        continuation=tuple(continuation),
        source=raw.source,
        line=raw.line,
    )


def parse_first_line(line: str) -> tuple[str, str | None, str]:
    """(timestamp, level, message) of a line that starts an entry (see `patterns.HEADER`)."""
    match = p.HEADER_RE.match(line)
    if match is None:  # cannot happen for a line that starts with ENTRY_START; kept total anyway
        return line.lstrip("[")[: p.TIMESTAMP_WIDTH], None, line
    return (
        match.group(p.HEADER_TIMESTAMP),
        match.group(p.HEADER_LEVEL),
        match.group(p.HEADER_MESSAGE),
    )


def parse_actor(message: str) -> tuple[str | None, int | None, int | None]:
    """(actor, actor id, controller epoch) from the §4.2 prefixes, old (0.8 - 0.11) or new (1.0+).

    A broker's message has no epoch of its own; the epoch of the controller whose request it handles
    (`... from controller 0 epoch 3 ...`) is the one that relates it to the controller's lines.
    """
    actor: str | None = None
    actor_id: int | None = None
    epoch: int | None = None
    match = p.ACTOR_RE.match(message)
    if match is not None:
        controller_id = _first_group(match, p.ACTOR_CONTROLLER_ID)
        if controller_id is not None:
            actor, actor_id = "controller", controller_id
        else:
            actor, actor_id = "broker", _first_group(match, p.ACTOR_BROKER_ID)
        epoch = _first_group(match, p.ACTOR_EPOCH)
    if epoch is None:
        request = p.REQUEST_EPOCH_RE.search(message)
        if request is not None:
            epoch = int(request.group(p.REQUEST_EPOCH_EPOCH))
    return actor, actor_id, epoch


def _first_group(match: re.Match[str], groups: tuple[int, ...]) -> int | None:
    for group in groups:
        value = match.group(group)
        if value is not None:
            return int(value)
    return None


def partitions_in(message: str) -> tuple[Partition, ...]:
    """Every partition the message names, in any of the forms of `patterns.PARTITION`, first seen first."""
    return tuple(dict.fromkeys(iter_partitions(message)))


def iter_partitions(message: str) -> Iterator[Partition]:
    """The partitions the message names, in order, repeats included; lazily, for a filter that stops at
    the first one it wants."""
    for match in p.PARTITION_RE.finditer(message):
        for topic_group, partition_group in p.PARTITION_GROUPS:
            topic = match.group(topic_group)
            if topic is not None:
                yield Partition(topic, int(match.group(partition_group)))
                break


def is_legal_topic(topic: str) -> bool:
    return p.LEGAL_TOPIC_RE.match(topic) is not None
