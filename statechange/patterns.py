"""The regular expressions that recognise state-change log lines: written once, used by both engines.

The local engine compiles them with Python's `re`; the Spark engine hands the same strings to the JVM
(`regexp_extract`, `rlike`). They are therefore written in the common subset of the two dialects:

* explicit character classes only (no `\\d`, `\\w`, `\\s`: their meaning differs between the two);
* no `$`: Java's `$` also matches before a final `\\r`, `\\u0085` or `\\u2028`, Python's before a final
  `\\n`; `(?![\\s\\S])` is "end of input" in both;
* `(?s)` (dot matches everything) where `.` is used, for the same reason;
* numbered groups only (Java spells named groups `(?<n>)`, Python `(?P<n>)`); the group numbers are
  exported next to each pattern so neither engine hard-codes them.

A line is handed to these patterns without its line terminator (`\\n` or `\\r\\n`).
"""

from __future__ import annotations

import re

# --- the log4j layouts: Kafka's `[%d] %p %m (%c)%n` (kafka-reference.md §4.1), and `%d %p %m (%c)%n`
# without the brackets, as Strimzi's Kafka images write it (`%d{ISO8601} %p %m (%c) [%t]%n`: its console
# layout also names the thread after the logger) ---------------------------------------------------------

TIMESTAMP = r"[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2},[0-9]{3}"
"""`%d` in log4j's ISO8601 form: fixed width, so timestamps compare correctly as strings or bytes."""

TIMESTAMP_WIDTH = 23

KEY_WIDTH = 2 + TIMESTAMP_WIDTH
"""`[2024-05-01 13:00:00,123]`: the head of a line that starts an entry in Kafka's layout, which the
streaming merge sorts by. An entry in the layout without brackets is keyed the same way (`parse.entry_key`):
every key has the brackets, so keys compare as their timestamps do, whatever layout each line came in."""

NUMBER = r"([0-9]{1,18})"
"""Ids, epochs and partition numbers; bounded so that the JVM side can cast to bigint without overflow."""

ENTRY_START = r"(?:\[" + TIMESTAMP + r"\]|" + TIMESTAMP + r" )"
"""A line that starts with this starts a new entry; any other line continues the entry above it."""

ENTRY_TIMESTAMP = r"^\[?(" + TIMESTAMP + r")"
"""The timestamp of a line that starts an entry, in either layout (group 1)."""

ENTRY_BREAK = r"\n(?=" + ENTRY_START + ")"
"""The newline before a line that starts an entry: where a block of lines splits into entries."""

LEVELS = ("TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL")

HEADER = (
    r"(?s)^\[?(" + TIMESTAMP + r")\]? ?"
    r"(?:(" + "|".join(LEVELS) + r")(?: +|(?![\s\S])))?"
    # Greedy, then back off to a ` (logger)` suffix (and Strimzi's ` [thread]` after it) if there is one: a
    # few steps from the line's end, where a lazy `.*?` would try the suffix at every character.
    r"(.*(?= \([a-zA-Z0-9_.$-]+\)(?: \[[^\]\n]*\])?(?![\s\S]))|.*)"
)
"""The first line of an entry: timestamp, level (absent if the line does not follow the layout), message
without the ` (state.change.logger)` suffix (nor a ` [thread]` after it). It matches every line that starts
with ENTRY_START."""
HEADER_TIMESTAMP, HEADER_LEVEL, HEADER_MESSAGE = 1, 2, 3

# --- who wrote the message (kafka-reference.md §4.2) ----------------------------------------------

ACTOR = (
    "^(?:"
    + "|".join(
        (
            r"\[Controller id=" + NUMBER + r"(?: epoch=" + NUMBER + r")?\]",  # 1.0+, epoch once known
            r"\[Broker id=" + NUMBER + r"\]",  # 1.0+
            r"Controller " + NUMBER + r" epoch " + NUMBER + r" ",  # 0.8 - 0.11
            r"Broker " + NUMBER + r" ",  # 0.8 - 0.11
        )
    )
    + ")"
)
ACTOR_CONTROLLER_ID = (1, 4)
ACTOR_BROKER_ID = (3, 6)
ACTOR_EPOCH = (2, 5)
"""Group numbers in ACTOR: at most one group of each tuple participates in a match."""

REQUEST_EPOCH = r"controller " + NUMBER + r" epoch " + NUMBER
"""A broker's message names the controller (and its epoch) that sent the request being handled."""
REQUEST_EPOCH_EPOCH = 2

# --- partitions named in a message -----------------------------------------------------------------

TOPIC_CHARS = r"[a-zA-Z0-9._-]"
"""Kafka's `Topic.LEGAL_CHARS`."""
_TOPIC = TOPIC_CHARS + "+"
# A bracketed topic must contain a non-digit: `[0, 1]` is a replica list in every 2.x request dump.
_BRACKET_TOPIC = "[0-9]*[a-zA-Z._-]" + TOPIC_CHARS + "*"  # unambiguous: no quadratic backtracking
_TOKEN_END = r"(?=[ \t,\])]|\.(?!" + TOPIC_CHARS + r")|(?![\s\S]))"

PARTITION = "|".join(
    (
        # 0.8 - 0.11 `[topic,partition]`, Kafka's own StateChangeLogMerger.topicPartitionRegex
        r"\[(" + _BRACKET_TOPIC + r"),(?: )*" + NUMBER + r"\]",
        # 2.4+ request state dumps: LeaderAndIsrPartitionState(topicName='foo', partitionIndex=0, ...)
        r"topicName='(" + _TOPIC + r")', partitionIndex=" + NUMBER,
        # response dumps: {topic=foo,partition=0,error_code=0}
        r"topic=(" + _TOPIC + r"),partition=" + NUMBER,
        # 1.0+ TopicPartition.toString `topic-partition`: the partition is the digits after the last `-`.
        # A token of its own (after a space, `[` or `,`; not a host `kafka-1:9092`, `kafka-1.example.com`,
        # nor a rack `rack: us-east-1`), possibly ending a sentence with `.`. The delimiter before it is
        # consumed rather than looked behind at, and the `rack:` test comes after it, so every alternative
        # starts with a character and the regex engines skip ahead to candidate positions instead of
        # trying each alternative everywhere (a quarter faster with Python's `re` than `(?<!rack:)[ ...`).
        r"[ \t\[,](?<!rack:[ \t\[,])(" + _TOPIC + r")-" + NUMBER + _TOKEN_END,
    )
)
PARTITION_GROUPS = ((1, 2), (3, 4), (5, 6), (7, 8))
"""(topic, partition) group numbers in PARTITION, one pair per alternative; one pair participates."""

LEGAL_TOPIC = "^" + _TOPIC + r"(?![\s\S])"


def topic_partition(topic: str) -> list[tuple[str, int, str]]:
    """PARTITION's forms for one topic, as (pattern, width, chars): the form starts `width` characters
    before the topic's name, the last of them one of `chars`. A message names a partition of `topic` (in
    `parse.iter_partitions`, a left-to-right scan) exactly when a form matches `width` before where the
    name occurs; the one group of the form is the partition number. (PARTITION's matches never overlap
    one another, except that a 0.8 `[topic-1,0]`, the topic `topic-1`, also reads as `[topic-1`, the topic
    `topic`, partition 1: the scan takes the first, so here the `t-p` form is not taken at a `[` that
    starts a `[topic,partition]`.) For Python's `re` only: the local engine's raw-bytes filter
    (`filters.topic_accept`)."""
    name = re.escape(topic)
    forms = [
        (r"topicName='" + name + r"', partitionIndex=" + NUMBER, len("topicName='"), "'"),
        (r"topic=" + name + r",partition=" + NUMBER, len("topic="), "="),
        (r"[ \t,](?<!rack:[ \t,])" + name + "-" + NUMBER + _TOKEN_END, 1, " \t,"),
        (r"\[(?<!rack:\[)(?!" + _BRACKET_TOPIC + r",(?: )*[0-9]{1,18}\])" + name + "-" + NUMBER + _TOKEN_END, 1, "["),
    ]
    if not topic.isdigit():  # a bracketed topic has a non-digit
        forms.append((r"\[" + name + r",(?: )*" + NUMBER + r"\]", 1, "["))
    return forms


# --- rotated files (log4j DailyRollingFileAppender, DatePattern '.'yyyy-MM-dd-HH) -------------------

ROTATED_NAME = r"^(.+)\.([0-9]{4}-[0-9]{2}(?:-[0-9]{2}(?:-[0-9]{2}(?:-[0-9]{2})?)?)?)((?:\.gz)?)(?![\s\S])"
"""`state-change.log.2024-05-01-13[.gz]`: base name, date suffix, compression. Any DatePattern from
monthly to per-minute keeps the suffix fixed-width per pattern, so suffixes sort in time order."""
ROTATED_BASE, ROTATED_DATE, ROTATED_GZ = 1, 2, 3


def compile_text(pattern: str) -> re.Pattern[str]:
    """Compile for decoded text; ASCII mode keeps `[\\s\\S]` and friends as in Java."""
    return re.compile(pattern, re.ASCII)


def compile_bytes(pattern: str) -> re.Pattern[bytes]:
    """Compile for raw lines (the fast path never decodes)."""
    return re.compile(pattern.encode("ascii"))


ENTRY_START_RE = compile_bytes(ENTRY_START)
ENTRY_BREAK_RE = compile_bytes(ENTRY_BREAK)
HEADER_RE = compile_text(HEADER)
ACTOR_RE = compile_text(ACTOR)
REQUEST_EPOCH_RE = compile_text(REQUEST_EPOCH)
PARTITION_RE = compile_text(PARTITION)
LEGAL_TOPIC_RE = compile_text(LEGAL_TOPIC)
ROTATED_NAME_RE = compile_text(ROTATED_NAME)
