"""Which entries to keep: the filter value, its validation (Kafka's texts), and the local predicate.

Semantics (kafka-reference.md §2.7, with Kafka's blind spots fixed):

* `--topic T` keeps entries that name a partition of T (exact name, as Kafka's `topic == group(1)`);
  `--partitions` narrows that to those partition numbers. Kafka looks at the first `[t,p]` token of a
  line only; an entry here names all its partitions (1.0+ `t-p` and request dumps too), and it is kept
  if any of them matches.
* `--start-time` / `--end-time` are inclusive. Both sides are fixed-width `yyyy-MM-dd HH:mm:ss,SSS`
  strings, so the bounds compare with the raw timestamps as strings: no log date is ever parsed, and
  there is no time zone to get wrong (log4j wrote local time; the bounds are read in the same clock).
* Unlike Kafka, an entry without a partition or a date is kept unless a filter asks for one.
* `--broker`, `--controller-epoch`, `--level` (beyond Kafka) match the parsed actor id, controller epoch
  and level exactly.
* `--grep REGEX` (beyond Kafka) keeps entries whose text contains a match: see `compile_grep` and
  `parse.entry_text`. Both engines run this same compiled pattern (the Spark engine as a Python
  predicate on its executors, see `spark.merge`), so they keep the same entries.
"""

from __future__ import annotations

import functools
import re
import re._constants  # type: ignore[import-not-found]  # CPython internals: no stubs
import re._parser  # type: ignore[import-not-found]
from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from itertools import accumulate, repeat
from operator import add

from kafkaops.cluster.common import log4j
from kafkaops.cluster.common.errors import InvalidArgumentError, InvalidTopicError, UsageError
from kafkaops.statechange import patterns
from kafkaops.statechange.parse import (
    ORPHAN_KEY,
    entry_key,
    entry_text,
    first_line,
    is_legal_topic,
    iter_partitions,
    parse_actor,
    parse_first_line,
)

PARTITIONS_NEED_TOPIC = 'The option "[topic]" needs to be provided an argument when specifying partition ids'

KAFKA_DEFAULT_START = "0000-00-00 00:00:00,000"
KAFKA_DEFAULT_END = "9999-12-31 23:59:59,999"
"""Kafka's defaults for --start-time / --end-time; given explicitly they mean "no bound" here too."""

_LENIENT_TIME = re.compile(
    r"([0-9]{1,4})-([0-9]{1,2})-([0-9]{1,2}) ([0-9]{1,2}):([0-9]{1,2}):([0-9]{1,2}),([0-9]{1,3})", re.ASCII
)


@dataclass(frozen=True)
class EntryFilter:
    topic: str | None = None
    partitions: frozenset[int] = frozenset()
    start: str | None = None
    """Inclusive lower bound, a canonical timestamp; None: unbounded (entries without a date kept)."""
    end: str | None = None
    brokers: frozenset[int] = frozenset()
    controller_epochs: frozenset[int] = frozenset()
    levels: frozenset[str] = frozenset()
    grep: str | None = None
    """A regular expression searched in each entry's text (`compile_grep`), as given; checked when the
    filter is made from options (`filter_from_options`)."""

    @property
    def needs_fields(self) -> bool:
        """Whether deciding needs the parsed first line, not only the timestamp."""
        return bool(self.topic or self.brokers or self.controller_epochs or self.levels)

    @property
    def is_empty(self) -> bool:
        return not self.needs_fields and self.start is None and self.end is None and self.grep is None


def filter_from_options(
    topic: str | None = None,
    partitions: str | None = None,
    start_time: str = KAFKA_DEFAULT_START,
    end_time: str = KAFKA_DEFAULT_END,
    broker: str | None = None,
    controller_epoch: str | None = None,
    level: str | None = None,
    grep: str | None = None,
) -> EntryFilter:
    """The filter from the command-line options, checked in Kafka's order (the CLI and the spark-submit
    entry share it). Raises UsageError (Kafka prints the usage after it) or InvalidArgumentError."""
    if partitions is not None and topic is None:
        raise UsageError(PARTITIONS_NEED_TOPIC)
    return EntryFilter(
        topic=check_topic(topic) if topic is not None else None,
        partitions=parse_partitions(partitions) if partitions is not None else frozenset(),
        start=parse_time(start_time, "--start-time"),
        end=parse_time(end_time, "--end-time"),
        brokers=parse_ids(broker, "--broker") if broker is not None else frozenset(),
        controller_epochs=(
            parse_ids(controller_epoch, "--controller-epoch") if controller_epoch is not None else frozenset()
        ),
        levels=parse_levels(level) if level is not None else frozenset(),
        grep=compile_grep(grep).pattern if grep is not None else None,
    )


def parse_partitions(value: str) -> frozenset[int]:
    """Kafka's `--partitions 0,1,2`; repeated ids are refused with Kafka's text.

    Raises InvalidArgumentError (Kafka itself dies with a NumberFormatException trace on `a,b`).
    """
    ids: list[int] = []
    for item in value.split(","):
        text = item.strip()
        if not text.isascii() or not text.isdigit():
            raise InvalidArgumentError(f'The list of partitions contains an invalid partition id: "{item}"')
        ids.append(int(text))
    repeated = [str(i) for i in dict.fromkeys(i for i in ids if ids.count(i) > 1)]
    if repeated:
        raise InvalidArgumentError("The list of partitions contains repeated entries: " + ",".join(repeated))
    return frozenset(ids)


def parse_time(value: str, option: str) -> str | None:
    """A --start-time / --end-time value as a canonical fixed-width timestamp (None: no bound).

    Kafka replaces `"` by spaces and trims (so `"2024-05-01 13:00:00,000"` quoted twice still works) and
    parses `yyyy-MM-dd HH:mm:ss,SSS` leniently; fields of fewer digits are accepted here as there, but a
    date that does not exist is refused instead of rolled over. Raises InvalidArgumentError.
    """
    text = value.replace('"', " ").strip()
    if text in (KAFKA_DEFAULT_START, KAFKA_DEFAULT_END):
        return None
    match = _LENIENT_TIME.fullmatch(text)
    try:
        if match is None:
            raise ValueError
        year, month, day, hour, minute, second, millis = (int(g) for g in match.groups())
        moment = datetime(year, month, day, hour, minute, second, millis * 1000)
    except ValueError:
        raise InvalidArgumentError(
            f'Invalid {option} "{value}": expected a date and time in the format yyyy-MM-dd HH:mm:ss,SSS'
        ) from None
    return log4j.timestamp(moment)


def parse_ids(value: str, option: str) -> frozenset[int]:
    """`--broker 1,2` / `--controller-epoch 3`. Raises InvalidArgumentError."""
    try:
        return frozenset(int(item) for item in value.split(","))
    except ValueError:
        raise InvalidArgumentError(f'Invalid {option} "{value}": expected comma-separated integers') from None


def parse_levels(value: str) -> frozenset[str]:
    levels = frozenset(item.strip().upper() for item in value.split(","))
    unknown = sorted(levels - set(patterns.LEVELS))
    if unknown:
        raise InvalidArgumentError(
            f'Unknown level "{",".join(unknown)}" in --level: expected {", ".join(patterns.LEVELS)}'
        )
    return levels


GREP_FLAGS = re.ASCII
"""`\\d`, `\\w`, `\\s`, `\\b` and `(?i)` work on ASCII only, as in Java's `Pattern` and grep by default: what an
operator who writes `correlationId \\d+` or `(?i)offline` means. Python's Unicode classes would also
take digits and letters of other scripts."""


@functools.lru_cache(maxsize=8)
def compile_grep(pattern: str) -> re.Pattern[str]:
    """The `--grep` pattern, for `pattern.search(parse.entry_text(text))`: Python's `re` syntax, GREP_FLAGS.

    The one place it is compiled: the streaming engine calls the result, the Spark engine ships it to its
    executors (a compiled pattern pickles as its source and flags). Raises InvalidArgumentError.
    """
    try:
        return re.compile(pattern, GREP_FLAGS)
    # ValueError: `(?u)` (Unicode) against GREP_FLAGS; OverflowError: `a{99999999999}`
    except (re.error, ValueError, OverflowError) as error:
        reason = str(error)
    except RecursionError:
        reason = "nested too deeply"
    raise InvalidArgumentError(f'Invalid regular expression "{pattern}" in --grep: {reason}')


def check_topic(topic: str) -> str:
    """A topic with characters Kafka never allows cannot match anything: say so instead of printing
    nothing. Raises InvalidTopicError with Kafka's `Topic.validate` text."""
    if not is_legal_topic(topic):
        raise InvalidTopicError(
            f'Topic name "{topic}" is illegal, it contains a character other than '
            "ASCII alphanumerics, '.', '_' and '-'"
        )
    return topic


def entry_selector(spec: EntryFilter) -> Callable[[list[bytes], list[bytes]], list[int]] | None:
    """The local engine's filter over a block's (keys, texts): the indexes of the entries to keep, or None
    when every entry is kept.

    Cheap tests first: the time bounds on the raw keys, `[timestamp]` (an orphan's empty key is below
    any lower bound, and `\\xff` stands above any timestamp), for the whole block at once where it lies
    inside or outside the bounds; then the topic as a substring (an entry that names a partition of T
    contains T); then --grep, on the entries that contain its required literal if it has one; and only
    then is the first line parsed.
    """
    if spec.is_empty:
        return None
    bounded = spec.start is not None or spec.end is not None
    low = b"[%s]" % spec.start.encode() if spec.start is not None else b"\x00"
    high = b"[%s]" % spec.end.encode() if spec.end is not None else b"\xff"
    topic = spec.topic.encode() if spec.topic is not None else None
    grep = compile_grep(spec.grep) if spec.grep is not None else None
    search = grep.search if grep is not None else None
    literal = required_literal(grep) if grep is not None else None

    def select(keys: list[bytes], texts: list[bytes]) -> list[int]:
        kept: Sequence[int] = range(len(keys))
        if bounded and keys:
            first, last = min(keys), max(keys)
            if last < low or first > high:
                return []
            if first < low or last > high:
                kept = [i for i, key in enumerate(keys) if low <= key <= high]
        for needle in (topic, literal):
            if needle is not None and kept:
                found = containing(needle, texts)
                kept = found if len(kept) == len(keys) else sorted(set(found).intersection(kept))
        if search is not None:
            kept = [i for i in kept if search(entry_text(texts[i])) is not None]
        if spec.needs_fields:
            kept = [i for i in kept if fields_match(spec, keys[i], texts[i])]
        return list(kept)

    return select


def containing(needle: bytes, texts: list[bytes]) -> list[int]:
    """Indexes of the texts that contain `needle` (no `\\n` in it), ascending: one search through the
    block for a needle that is rare (most blocks have none), one step per matching text for one that is
    frequent; both several times cheaper than a `needle in text` per text."""
    joined = b"\n".join(texts)
    at = joined.find(needle)
    if at < 0:
        return []
    # starts[i]: the offset of texts[i] in joined (each text is followed by one `\n`)
    starts = list(accumulate(map(add, map(len, texts), repeat(1)), initial=0))
    found = []
    while at >= 0:
        index = bisect_right(starts, at) - 1
        found.append(index)
        at = joined.find(needle, starts[index + 1])
    return found


def required_literal(pattern: re.Pattern[str]) -> bytes | None:
    """Bytes that every entry whose text (`parse.entry_text`) `pattern` matches contains, or None: the
    longest run of plain characters in the pattern's top-level sequence (`correlationId 5` in
    `correlationId 5[0-9]*`), in UTF-8. Without `\\r`, `\\n` (the text has line ends normalised) and
    U+FFFD (it may stand for other bytes), and none at all under IGNORECASE or with a top-level `|`.

    An optimisation only: reads the pattern with `re._parser`, CPython's own parser, which is not a
    public API; if that fails (another Python), there is no literal and every entry is searched.
    """
    try:
        parsed = re._parser.parse(pattern.pattern, pattern.flags)
        if parsed.state.flags & re.IGNORECASE:
            return None
        best, run = "", ""
        for opcode, value in parsed:
            char = chr(value) if opcode is re._constants.LITERAL else ""
            if char and char not in "\r\n\ufffd":
                run += char
                best = max(best, run, key=len)
            else:
                run = ""
        return best.encode() if best else None  # a lone surrogate cannot be encoded: no literal then
    except Exception:  # any failure only costs the optimisation
        return None


def fields_match(spec: EntryFilter, key: bytes, text: bytes) -> bool:
    """The filters on parsed fields; only the fields asked for are parsed (partitions cost the most)."""
    if key == ORPHAN_KEY:
        message, level = first_line(text), None
    else:
        _, level, message = parse_first_line(first_line(text))
    if spec.levels and level not in spec.levels:
        return False
    if spec.brokers or spec.controller_epochs:
        _, actor_id, epoch = parse_actor(message)
        if spec.brokers and actor_id not in spec.brokers:
            return False
        if spec.controller_epochs and epoch not in spec.controller_epochs:
            return False
    return spec.topic is None or any(
        p.topic == spec.topic and (not spec.partitions or p.partition in spec.partitions)
        for p in iter_partitions(message)
    )


# --- the compiled merge core's filter (`merge_core`): tests on raw bytes, in the order of their cost ------

Accept = Callable[[bool, bytes], bool]
"""Given (orphan, text) of an entry, whether to keep it."""

ORPHAN_INT_KEY = -1
NO_INT_BOUND = 1 << 62


@dataclass(frozen=True)
class RawPlan:
    """`entry_selector`'s decisions, for an engine that sees one raw entry at a time and keys timestamps as
    ints (`yyyyMMddHHmmssSSS`: the digits of the timestamp, so ints order as the timestamps do): keep an entry
    when low <= key <= high (an orphan's key is ORPHAN_INT_KEY), its first line contains `line_needle`, its
    text `text_needle`, and `accept(orphan, text)` (None: always). The cheap tests only narrow what
    `accept` sees; `accept` alone decides what remains."""

    low: int = ORPHAN_INT_KEY
    high: int = NO_INT_BOUND
    line_needle: bytes = b""
    text_needle: bytes = b""
    accept: Accept | None = field(default=None, compare=False)


def int_key(timestamp: str) -> int:
    """A canonical `yyyy-MM-dd HH:mm:ss,SSS` as the int key `RawPlan` compares."""
    return int("".join(char for char in timestamp if char.isdigit()))


def raw_plan(spec: EntryFilter) -> RawPlan:
    """The plan that keeps the same entries as `entry_selector(spec)`: the time window on int keys (any
    bound drops orphans, as `[timestamp]` bounds do), the topic as a literal of the first line, a --grep
    pattern's required literal in the text; then the topic exactly on the raw message (`topic_accept`)
    and the --grep pattern on the entry's text, or, with the parsed-field filters, `entry_selector`
    itself on the entry."""
    bounded = spec.start is not None or spec.end is not None
    low = (int_key(spec.start) if spec.start is not None else 0) if bounded else ORPHAN_INT_KEY
    high = int_key(spec.end) if spec.end is not None else NO_INT_BOUND
    topic = spec.topic.encode() if spec.topic is not None else b""
    literal = required_literal(compile_grep(spec.grep)) if spec.grep is not None else None
    accept: Accept | None = None
    if spec.brokers or spec.controller_epochs or spec.levels:
        select = entry_selector(spec)
        assert select is not None

        def accept(orphan: bool, text: bytes) -> bool:
            return bool(select([ORPHAN_KEY if orphan else entry_key(text)], [text]))

    elif spec.grep is not None:
        search = compile_grep(spec.grep).search
        named = topic_accept(spec.topic, spec.partitions) if spec.topic is not None else None

        def accept(orphan: bool, text: bytes) -> bool:
            return search(entry_text(text)) is not None and (named is None or named(orphan, text))

    elif spec.topic is not None:
        accept = topic_accept(spec.topic, spec.partitions)
    return RawPlan(low, high, topic, literal or b"", accept)


@functools.cache
def _header_bytes() -> re.Pattern[bytes]:
    return patterns.compile_bytes(patterns.HEADER)  # on first use: every command pays for an import


def raw_plan_pays(spec: EntryFilter) -> bool:
    """Whether an engine running `raw_plan(spec)` beats the block-wise `entry_selector`: not when its
    `accept` parses the fields of every entry in the window (--level, --broker, --controller-epoch) or
    searches every one (a --grep pattern without a required literal), one call per entry instead of
    one per block."""
    if spec.levels or spec.brokers or spec.controller_epochs:
        return False
    return spec.grep is None or required_literal(compile_grep(spec.grep)) is not None


_KAFKA_LAYOUT = re.compile(
    rb"\[.{23}\] (?:" + "|".join(patterns.LEVELS).encode() + rb") ++(.*) \(state\.change\.logger\)", re.DOTALL
)
"""A first line in Kafka's layout, `[timestamp] LEVEL message (state.change.logger)`, group 1 its message as
`patterns.HEADER` reads it: the spaces after the level are all taken (possessive, as HEADER's greedy ` +`
never gives one back) and the logger ends the line (the rightmost ` (logger)`, as HEADER backs off to)."""


_LOGGER_SUFFIX = b" (state.change.logger)"
_LEVEL_BYTES = frozenset(level.encode() for level in patterns.LEVELS)


def raw_message(line: bytes, orphan: bool) -> bytes:
    """`parse.parse_first_line(line)`'s message, on bytes (the line without its terminator): by
    `_KAFKA_LAYOUT` for Kafka's layout, else by `patterns.HEADER`."""
    if orphan:
        return line
    # `_KAFKA_LAYOUT` by slicing, for the usual line (a third of a filtered merge's Python time was that
    # regex): `[` + 23 bytes + `] `, a level up to the next space, the spaces, the message, the logger
    if line[:1] == b"[" and line[24:26] == b"] " and line.endswith(_LOGGER_SUFFIX):
        space = line.find(b" ", 26)
        if space > 0 and line[26:space] in _LEVEL_BYTES:
            start = space
            while line[start] == 0x20:  # the possessive ` ++` (the line ends with `)`: it stops)
                start += 1
            end = len(line) - len(_LOGGER_SUFFIX)
            if start < end:  # else the spaces took the logger's own: the regex fails too
                return line[start:end]
    kafka = _KAFKA_LAYOUT.fullmatch(line)
    if kafka is not None:
        return kafka.group(1)
    match = _header_bytes().match(line)
    return line if match is None else match.group(patterns.HEADER_MESSAGE)


def topic_accept(topic: str, partitions: frozenset[int]) -> Accept:
    """`fields_match` for --topic/--partitions alone, on the raw first line: at each occurrence of the
    topic's name in the message (`raw_message`), `patterns.topic_partition`'s forms. All the patterns are
    ASCII, so bytes match as the decoded text does (a non-ASCII byte, like a replaced character, is in
    none of their classes)."""
    name = topic.encode()
    # by the character before the name: the forms that can match there, and where they start
    forms: dict[int, list[tuple[Callable[[bytes, int], re.Match[bytes] | None], int]]] = {}
    for pattern, width, chars in patterns.topic_partition(topic):
        match = patterns.compile_bytes(pattern).match
        for char in chars.encode():
            forms.setdefault(char, []).append((match, width))

    def accept(orphan: bool, text: bytes) -> bool:
        end = text.find(b"\n")
        line = text if end < 0 else text[:end]
        if line.endswith(b"\r"):
            line = line[:-1]
        message = raw_message(line, orphan)
        at = message.find(name)
        while at >= 0:
            for match, width in forms.get(message[at - 1], ()) if at else ():
                found = match(message, at - width) if at >= width else None
                if found is not None and (not partitions or int(found.group(1)) in partitions):
                    return True
            at = message.find(name, at + 1)
        return False

    return accept
