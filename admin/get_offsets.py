"""Kafka's GetOffsetShell (`kafka-get-offsets.sh`, KIP-635): the offsets of the partitions a filter selects.

The pure parts are Kafka 3.0's: the `--topic-partitions` rule grammar, `--topic` as an IncludeList regex
with `--partitions`, `--exclude-internal-topics`, the `--time` values, the (topic, partition) order. The
wire part asks any broker for the metadata of every topic (Kafka's consumer `listTopics`), skips the
partitions without a leader (Kafka prints a line for each), and sends one ListOffsets request per leader
for all its partitions; retriable answers (a moved leader, an offset not yet available) are retried with
fresh metadata until `timeout_ms` has passed, as Kafka's consumer does within `default.api.timeout.ms`.
"""

from __future__ import annotations

import re
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kafkaops.admin.kafka_client import CONSUMER_REPLICA_ID, READ_UNCOMMITTED, ClusterMetadata, KafkaClient
from kafkaops.admin.kafka_client.connection import NotSent
from kafkaops.cluster.common.errors import (
    BrokerError,
    InvalidArgumentError,
    NetworkExceptionError,
    RequestTimedOutError,
    UnsupportedVersionError,
    from_code,
)
from kafkaops.cluster.common.jvm_text import java_parse_int, java_parse_long
from kafkaops.cluster.protocol.schemas import SUPPORTED_VERSIONS, ApiKey
from kafkaops.cluster.zk.values import TopicPartition

LATEST_TIMESTAMP = -1
EARLIEST_TIMESTAMP = -2
MAX_TIMESTAMP = -3
"""KIP-734 (Kafka 3.0): the offset of the record with the largest timestamp; needs ListOffsets v7."""
MAX_TIMESTAMP_VERSION = 7
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state"})
"""Kafka's `Topic.isInternal`."""
DEFAULT_API_TIMEOUT_MS = 60000
INT_MAX = 2**31 - 1

TOPIC_PARTITION_PATTERN = re.compile(r"([^:,]*)(?::(?:([0-9]*)|(?:([0-9]*)-([0-9]*))))?")
"""Kafka's `TopicPartitionPattern`, quoted in `--topic-partitions`' help."""

_TIME_NAMES = {"latest": LATEST_TIMESTAMP, "earliest": EARLIEST_TIMESTAMP, "max-timestamp": MAX_TIMESTAMP}


# --- filters ----------------------------------------------------------------------------------------------


def include_list(raw: str) -> re.Pattern[str]:
    """Kafka's `IncludeList`: commas mean "or", spaces and surrounding quotes go; the topic must match whole.
    Raises InvalidArgumentError("<regex> is an invalid regex.")."""
    regex = re.sub(r"""["']+$""", "", re.sub(r"""^["']+""", "", raw.strip().replace(",", "|").replace(" ", "")))
    try:
        return re.compile(regex)
    except re.error:
        raise InvalidArgumentError(f"{regex} is an invalid regex.") from None


@dataclass(frozen=True, slots=True)
class PartitionRule:
    """One topic-partition pattern: a topic regex, then one partition or a range [lower, upper)."""

    topic: re.Pattern[str]
    partition: int | None = None
    lower: int = 0
    upper: int = INT_MAX

    def matches(self, topic: str, partition: int) -> bool:
        if not self.topic.fullmatch(topic):
            return False
        if self.partition is not None:
            return partition == self.partition
        return self.lower <= partition < self.upper


@dataclass(frozen=True, slots=True)
class TopicPartitionFilter:
    """The partitions any rule selects (Kafka's composite filter), internal topics out if asked."""

    rules: tuple[PartitionRule, ...]
    exclude_internal_topics: bool = False

    def __call__(self, topic: str, partition: int) -> bool:
        if self.exclude_internal_topics and topic in INTERNAL_TOPICS:
            return False
        return any(rule.matches(topic, partition) for rule in self.rules)


def parse_rule_spec(spec: str) -> PartitionRule:
    """One `--topic-partitions` item: `topic-regex[:N | :N-M | :N- | :-M]`. Raises InvalidArgumentError
    (`Invalid rule specification: <spec>`) or NumberFormatError (a number beyond an int)."""
    match = TOPIC_PARTITION_PATTERN.fullmatch(spec)
    if match is None:
        raise InvalidArgumentError(f"Invalid rule specification: {spec}")
    topic, single, lower, upper = (group or None for group in match.groups())
    rule = PartitionRule(include_list(topic or ".*"))
    if single is not None:
        return PartitionRule(rule.topic, partition=java_parse_int(single))
    return PartitionRule(
        rule.topic,
        lower=java_parse_int(lower) if lower is not None else 0,
        upper=java_parse_int(upper) if upper is not None else INT_MAX,
    )


def filter_from_patterns(topic_partitions: str, exclude_internal_topics: bool) -> TopicPartitionFilter:
    """`--topic-partitions`: a comma-separated list of rules (Java's split drops trailing empty items)."""
    specs = topic_partitions.split(",")
    while len(specs) > 1 and specs[-1] == "":
        specs.pop()
    return TopicPartitionFilter(tuple(parse_rule_spec(spec) for spec in specs), exclude_internal_topics)


def parse_partition_set(partitions: str | None) -> frozenset[int]:
    """`--partitions`: partition ids separated by commas (empty: every partition). Raises
    InvalidArgumentError with Kafka's text."""
    if not partitions:
        return frozenset()
    try:
        return frozenset(java_parse_int(item) for item in partitions.split(","))
    except ValueError:
        raise InvalidArgumentError(
            f"--partitions expects a comma separated list of numeric partition ids, but received: {partitions}"
        ) from None


def filter_from_topic_and_partitions(
    topic: str | None, partitions: str | None, exclude_internal_topics: bool
) -> TopicPartitionFilter:
    """`--topic` (a regex, every topic without it) with `--partitions` (every partition without it)."""
    ids = parse_partition_set(partitions)
    pattern = include_list(topic if topic is not None else ".*")
    rules = (PartitionRule(pattern),) if not ids else tuple(PartitionRule(pattern, partition=p) for p in sorted(ids))
    return TopicPartitionFilter(rules, exclude_internal_topics)


def parse_time(text: str) -> int:
    """`--time`: a timestamp, -1 / latest, -2 / earliest, -3 / max-timestamp. Raises InvalidArgumentError."""
    if text in _TIME_NAMES:
        return _TIME_NAMES[text]
    try:
        return java_parse_long(text)
    except ValueError:
        raise InvalidArgumentError(
            f"Malformed time argument {text}. Please use -1 or latest / -2 or earliest / -3 or max-timestamp, "
            "or a specified long format timestamp"
        ) from None


# --- selecting and asking -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PartitionOffset:
    """A partition's answer: its offset, or None where no record is at or after the timestamp."""

    topic: str
    partition: int
    offset: int | None


@dataclass(frozen=True, slots=True)
class GetOffsetsResult:
    offsets: tuple[PartitionOffset, ...]
    """In Kafka's order: by topic, then partition."""
    leaderless: tuple[TopicPartition, ...]
    """Selected partitions without a leader, skipped (in metadata order)."""


def select_partitions(
    cluster: ClusterMetadata, partition_filter: Callable[[str, int], bool]
) -> tuple[dict[int, list[TopicPartition]], list[TopicPartition]]:
    """The selected partitions by leader, and those without one. Topics the metadata answered with an error
    are left out, as Kafka's consumer leaves them out of `listTopics`."""
    by_leader: dict[int, list[TopicPartition]] = defaultdict(list)
    leaderless: list[TopicPartition] = []
    for info in cluster.topics.values():
        if info.error_code:
            continue
        for p in info.partitions:
            if not partition_filter(p.topic, p.partition):
                continue
            if p.leader < 0 or p.leader not in cluster.brokers:
                leaderless.append(TopicPartition(p.topic, p.partition))
            else:
                by_leader[p.leader].append(TopicPartition(p.topic, p.partition))
    return by_leader, leaderless


def list_offsets_body(partitions: Sequence[TopicPartition], timestamp: int) -> dict[str, Any]:
    grouped: dict[str, list[int]] = defaultdict(list)
    for tp in partitions:
        grouped[tp.topic].append(tp.partition)
    return {
        "replica_id": CONSUMER_REPLICA_ID,
        "isolation_level": READ_UNCOMMITTED,
        "topics": [
            {
                "name": topic,
                "partitions": [{"partition_index": p, "current_leader_epoch": -1, "timestamp": timestamp} for p in ids],
            }
            for topic, ids in grouped.items()
        ],
    }


def _answers(response: Mapping[str, Any]) -> Iterable[tuple[TopicPartition, int, int]]:
    for topic in response["topics"]:
        for p in topic["partitions"]:
            yield TopicPartition(topic["name"], p["partition_index"]), p["error_code"], p["offset"]


def get_offsets(
    client: KafkaClient,
    partition_filter: Callable[[str, int], bool],
    timestamp: int,
    *,
    timeout_ms: int = DEFAULT_API_TIMEOUT_MS,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> GetOffsetsResult:
    """The offsets at `timestamp` of every partition `partition_filter` selects.

    Raises InvalidArgumentError ("Could not match any topic-partitions with the specified filters"),
    UnsupportedVersionError (-3 where ListOffsets v7 is not spoken), the non-retriable Kafka error a
    leader answered, RequestTimedOutError when retriable errors outlast `timeout_ms`, NetworkExceptionError
    when no broker answers the metadata request.
    """
    if timestamp == MAX_TIMESTAMP and SUPPORTED_VERSIONS[ApiKey.LIST_OFFSETS][1] < MAX_TIMESTAMP_VERSION:
        raise UnsupportedVersionError(
            f"-3 (max-timestamp) needs ListOffsets v{MAX_TIMESTAMP_VERSION} (Kafka 3.0+); this client speaks up to "
            f"v{SUPPORTED_VERSIONS[ApiKey.LIST_OFFSETS][1]}"
        )
    started = clock()
    by_leader, leaderless = select_partitions(client.metadata(), partition_filter)
    if not by_leader and not leaderless:
        raise InvalidArgumentError("Could not match any topic-partitions with the specified filters")
    found: dict[TopicPartition, int | None] = {}
    pending = by_leader
    while True:
        retry: list[TopicPartition] = []
        for leader, partitions in pending.items():
            retry += _ask_leader(client, leader, partitions, timestamp, found)
        if not retry:
            break
        if (clock() - started) * 1000 + client.retry_backoff_ms > timeout_ms:
            raise RequestTimedOutError(f"Failed to get offsets by times in {int((clock() - started) * 1000)}ms")
        sleep(client.retry_backoff_ms / 1000)
        pending = _leaders_again(client, retry)
    offsets = tuple(
        PartitionOffset(tp.topic, tp.partition, found[tp]) for tp in sorted(found, key=lambda t: (t.topic, t.partition))
    )
    return GetOffsetsResult(offsets, tuple(leaderless))


def _leaders_again(client: KafkaClient, partitions: list[TopicPartition]) -> dict[int, list[TopicPartition]]:
    """Fresh leaders of the partitions to ask again; those still without one under -1, asked after the next
    refresh (Kafka's consumer waits for metadata naming a leader)."""
    wanted = set(partitions)
    by_leader, leaderless = select_partitions(
        client.metadata(sorted({tp.topic for tp in partitions})), lambda topic, p: TopicPartition(topic, p) in wanted
    )
    found = {tp for tps in by_leader.values() for tp in tps}
    missing = leaderless + [tp for tp in partitions if tp not in found and tp not in leaderless]
    if missing:
        by_leader[-1] = missing
    return dict(by_leader)


def _ask_leader(
    client: KafkaClient,
    leader: int,
    partitions: list[TopicPartition],
    timestamp: int,
    found: dict[TopicPartition, int | None],
) -> list[TopicPartition]:
    """Ask one leader; record its answers in `found`; return the partitions to ask again."""
    if leader < 0:
        return partitions
    try:
        version, response = client.broker_request(leader, ApiKey.LIST_OFFSETS, list_offsets_body(partitions, timestamp))
    except (NotSent, NetworkExceptionError, RequestTimedOutError):
        return partitions
    if timestamp == MAX_TIMESTAMP and version < MAX_TIMESTAMP_VERSION:
        raise UnsupportedVersionError(f"Broker {leader} does not support MAX_TIMESTAMP offset spec")
    retry = []
    for tp, error_code, offset in _answers(response):
        if error_code:
            error = from_code(error_code)
            if not isinstance(error, BrokerError) or not error.retriable:
                raise error
            retry.append(tp)
        else:
            found[tp] = offset if offset >= 0 else None
    return retry
