"""`KafkaClient`: metadata, produce, fetch, list offsets and leader epochs over blocking connections.

    KafkaClient                one per caller; NOT thread-safe (one thread drives it)
    ├── metadata cache         brokers and partition leaders, refreshed on leadership errors
    └── BrokerConnection per   host:port, opened lazily; ApiVersions on connect picks each API's
        broker                 version as min(ours, the broker's); requests answered in order

Retries follow Kafka's Java producer: an error the broker marks retriable (NOT_LEADER_OR_FOLLOWER,
LEADER_NOT_AVAILABLE, UNKNOWN_TOPIC_OR_PARTITION, NOT_ENOUGH_REPLICAS, ...) or a connection lost with
the request in flight uses up one of `retries`; a leader that cannot be reached at all, or that the
metadata does not name yet, uses none (the request was never sent) but still counts against
`delivery_timeout_ms`. Before each retry the client waits `retry_backoff_ms` and refreshes the
metadata, which is how a produce finds the new leader after a leader dies.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from kafkaops.admin.kafka_client.connection import BrokerConnection, NotSent, parse_bootstrap_servers
from kafkaops.admin.kafka_client.fetcher import (
    CONSUMER_REPLICA_ID,
    DEBUGGING_REPLICA_ID,
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_WAIT_MS,
    DEFAULT_PARTITION_MAX_BYTES,
    READ_UNCOMMITTED,
    FetchResult,
    RawFetchResult,
    fetch_request_body,
    fetch_results,
    raw_fetch_results,
)
from kafkaops.admin.kafka_client.metadata import ClusterMetadata, PartitionInfo, cluster_metadata
from kafkaops.admin.kafka_client.records import ProducerRecordTuple
from kafkaops.cluster.common.client_channel import PLAINTEXT_CHANNEL, ClientChannel
from kafkaops.cluster.common.errors import (
    BrokerError,
    InvalidArgumentError,
    KafkaProtocolError,
    KafkaStorageError,
    LeaderNotAvailableError,
    NetworkExceptionError,
    NotLeaderOrFollowerError,
    RequestTimedOutError,
    UnknownTopicOrPartitionError,
    UnsupportedVersionError,
    from_code,
)
from kafkaops.cluster.protocol.records import Compression, Record, build_batch
from kafkaops.cluster.protocol.schemas import ApiKey
from kafkaops.cluster.zk.values import TopicPartition

T = TypeVar("T")

EARLIEST_TIMESTAMP = -2
"""ListOffsets' "earliest": the log start offset."""
LATEST_TIMESTAMP = -1
"""ListOffsets' "latest": the high watermark for consumers, the log end offset for brokers and debug callers."""

_ACKS = (-1, 0, 1)


@dataclass(frozen=True, slots=True)
class OffsetAndTimestamp:
    offset: int
    timestamp: int
    leader_epoch: int = -1


@dataclass(frozen=True, slots=True)
class EpochEndOffset:
    """OffsetForLeaderEpoch's answer: the largest epoch <= the one asked for, and where it ends."""

    leader_epoch: int
    end_offset: int


_REFRESH_METADATA = (
    UnknownTopicOrPartitionError,
    LeaderNotAvailableError,
    NotLeaderOrFollowerError,
    NetworkExceptionError,
    RequestTimedOutError,
    KafkaStorageError,
)
"""Errors after which the leader we asked may have moved: refresh the metadata before retrying (Java's
client treats KAFKA_STORAGE_ERROR as invalid metadata too: the controller moves such leaders away)."""


class KafkaClient:
    """A blocking client for metadata, produce, fetch and list offsets. Not thread-safe.

    `request_timeout_ms` bounds each request's wait for its answer (plus the fetch's max wait);
    `retries` and `retry_backoff_ms` are Kafka's producer settings, `delivery_timeout_ms` bounds a whole
    call including its retries. Use as a context manager, or call `close()`.
    """

    def __init__(
        self,
        bootstrap_servers: str | list[str],
        client_id: str = "kafkaops",
        request_timeout_ms: int = 30000,
        *,
        retries: int = 2147483647,
        retry_backoff_ms: int = 100,
        delivery_timeout_ms: int = 120000,
        clock: Callable[[], float] = time.monotonic,
        wall_clock_ms: Callable[[], int] = lambda: time.time_ns() // 1_000_000,
        sleep: Callable[[float], None] = time.sleep,
        channel: ClientChannel = PLAINTEXT_CHANNEL,
    ) -> None:
        if request_timeout_ms <= 0:
            raise InvalidArgumentError(f"request.timeout.ms must be positive, got {request_timeout_ms}")
        self._bootstrap = parse_bootstrap_servers(bootstrap_servers)
        self.client_id = client_id
        self.channel = channel
        """How every connection is made: `security.protocol` and its `ssl.*` settings (client_config)."""
        self.request_timeout_ms = request_timeout_ms
        self.retries = retries
        self.retry_backoff_ms = retry_backoff_ms
        self.delivery_timeout_ms = delivery_timeout_ms
        self._clock = clock
        self._wall_clock_ms = wall_clock_ms
        self._sleep = sleep
        self._connections: dict[tuple[str, int], BrokerConnection] = {}
        self._cluster: ClusterMetadata | None = None
        self._partitions: dict[TopicPartition, PartitionInfo] = {}
        self._stale: set[str] = set()

    # -- lifecycle --

    def close(self) -> None:
        for connection in self._connections.values():
            connection.close()
        self._connections.clear()

    def __enter__(self) -> KafkaClient:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # -- connections --

    def _timeout_s(self, extra_ms: int = 0) -> float:
        return (self.request_timeout_ms + max(extra_ms, 0)) / 1000

    def _connection(self, host: str, port: int, node: str) -> BrokerConnection:
        key = (host, port)
        connection = self._connections.get(key)
        if connection is None:
            connection = BrokerConnection(host, port, self.client_id, self._timeout_s(), node, self.channel)
            self._connections[key] = connection
        connection.connect()
        return connection

    def _broker_connection(self, broker_id: int) -> BrokerConnection:
        """A connection to a broker the metadata names. Raises NotSent if it is unknown or unreachable."""
        node = self._cluster.brokers.get(broker_id) if self._cluster is not None else None
        if node is None:
            try:
                self.metadata([])
            except NetworkExceptionError as error:
                raise NotSent(error) from error
            node = self._cluster.brokers.get(broker_id) if self._cluster is not None else None
        if node is None:
            raise NotSent(NetworkExceptionError(f"Broker {broker_id} is not in the cluster's metadata"))
        return self._connection(node.host, node.port, str(broker_id))

    # -- metadata --

    def metadata(self, topics: Iterable[str] | None = None) -> ClusterMetadata:
        """Brokers and the partitions of `topics` (all topics for None, none for []), from the first broker
        that answers: known brokers first, then the bootstrap servers. Updates the client's cache.

        Raises NetworkExceptionError if no broker answers.
        """
        wanted = None if topics is None else list(topics)
        body = {
            "topics": None if wanted is None else [{"name": t} for t in wanted],
            "allow_auto_topic_creation": False,
        }
        candidates: list[tuple[str, int, str]] = []
        if self._cluster is not None:
            candidates += [(b.host, b.port, str(b.node_id)) for b in self._cluster.brokers.values()]
        candidates += [(host, port, f"-{i + 1}") for i, (host, port) in enumerate(self._bootstrap)]
        errors: list[str] = []
        seen: set[tuple[str, int]] = set()
        for host, port, node in candidates:
            if (host, port) in seen:
                continue
            seen.add((host, port))
            try:
                connection = self._connection(host, port, node)
                version = connection.version(ApiKey.METADATA)
                if wanted is not None and not wanted and version == 0:
                    version = 1  # v0 reads [] as "all topics"
                response = connection.request(ApiKey.METADATA, version, body, self._timeout_s())
            except NotSent as unsent:
                errors.append(unsent.error.message)
                continue
            except (NetworkExceptionError, RequestTimedOutError) as error:
                errors.append(error.message)
                continue
            return self._store_metadata(response, wanted)
        raise NetworkExceptionError("No broker answered a Metadata request: " + "; ".join(errors))

    # -- any API --

    def broker_request(
        self, broker_id: int, api_key: ApiKey, body: Mapping[str, Any], extra_timeout_ms: int = 0
    ) -> tuple[int, dict[str, Any]]:
        """One request to one broker at the highest version both sides speak: (that version, the answer).
        The body is version-independent (schema.py: keys a version lacks are ignored, defaults fill in).
        Raises NotSent, NetworkExceptionError, RequestTimedOutError or UnsupportedVersionError."""
        connection = self._broker_connection(broker_id)
        version = connection.version(api_key)
        return version, connection.request(api_key, version, body, self._timeout_s(extra_timeout_ms))

    def controller_request(
        self, api_key: ApiKey, body: Mapping[str, Any], extra_timeout_ms: int = 0
    ) -> tuple[int, dict[str, Any]]:
        """As `broker_request`, to the controller the metadata names (any broker if it names none, as
        Kafka's admin client does for APIs a broker forwards)."""
        return self.broker_request(self._controller_or_any(self.metadata([])), api_key, body, extra_timeout_ms)

    @staticmethod
    def _controller_or_any(cluster: ClusterMetadata) -> int:
        return cluster.controller_id if cluster.controller_id in cluster.brokers else next(iter(cluster.brokers))

    # -- elections --

    def elect_leaders(
        self, election_type: int, partitions: Sequence[TopicPartition] | None, timeout_ms: int
    ) -> dict[TopicPartition, tuple[int, str | None]]:
        """An ElectLeaders request (0 preferred, 1 unclean; None = every partition) to the controller, or to
        any broker, which forwards it: per partition (error code, message). Raises NetworkExceptionError
        if no broker answers, and the top-level error if the request as a whole failed."""
        cluster = self.metadata([])
        body = {
            "election_type": election_type,
            "topic_partitions": None
            if partitions is None
            else [
                {"topic": topic, "partition_id": [tp.partition for tp in partitions if tp.topic == topic]}
                for topic in dict.fromkeys(tp.topic for tp in partitions)
            ],
            "timeout_ms": timeout_ms,
        }
        connection = self._broker_connection(self._controller_or_any(cluster))
        version = connection.version(ApiKey.ELECT_LEADERS)
        if election_type != 0 and version < 1:
            raise UnsupportedVersionError("The broker only speaks ElectLeaders v0: preferred elections only")
        response = connection.request(ApiKey.ELECT_LEADERS, version, body, self._timeout_s(timeout_ms))
        if response.get("error_code", 0):
            raise from_code(response["error_code"])
        return {
            TopicPartition(result["topic"], p["partition_id"]): (p["error_code"], p["error_message"])
            for result in response["replica_election_results"]
            for p in result["partition_result"]
        }

    def _store_metadata(self, response: Mapping[str, Any], wanted: list[str] | None) -> ClusterMetadata:
        """Cache the answer: its brokers, its topics (replacing the cached ones when all topics were
        asked for) and their partitions' leaders, which are then no longer stale."""
        cluster = cluster_metadata(response)
        brokers, topics = cluster.brokers, cluster.topics
        previous = self._cluster.topics if self._cluster is not None else {}
        self._cluster = ClusterMetadata(
            brokers,
            cluster.controller_id,
            cluster.cluster_id,
            {**({} if wanted is None else previous), **topics},
        )
        for info in topics.values():
            self._stale.discard(info.name)
            for key in [k for k in self._partitions if k.topic == info.name]:
                del self._partitions[key]
            for p in info.partitions:
                self._partitions[TopicPartition(p.topic, p.partition)] = p
        return cluster

    def partitions_for(self, topic: str) -> list[int]:
        """The partition ids of `topic`, from fresh metadata. Raises UnknownTopicOrPartitionError (with Kafka's
        text) if the topic does not exist, or the topic-level error the broker answered."""
        info = self.metadata([topic]).topics.get(topic)
        if info is None or info.error_code == UnknownTopicOrPartitionError.code:
            raise UnknownTopicOrPartitionError(f"Topic {topic} not present in metadata")
        if info.error_code:
            raise from_code(info.error_code)
        return [p.partition for p in info.partitions]

    def _leader(self, tp: TopicPartition) -> int:
        """The partition's leader id from the cache, refreshed when stale or missing.

        Raises UnknownTopicOrPartitionError (retriable: counts as an attempt), or NotSent wrapping
        LeaderNotAvailableError while the partition has no leader.
        """
        info = self._partitions.get(tp)
        if info is None or tp.topic in self._stale or info.leader < 0:
            try:
                cluster = self.metadata([tp.topic])
            except NetworkExceptionError as error:
                raise NotSent(error) from error
            topic = cluster.topics.get(tp.topic)
            if topic is not None and topic.error_code == LeaderNotAvailableError.code:
                raise NotSent(from_code(topic.error_code))  # a topic being created: wait for its leaders
            if topic is not None and topic.error_code:
                raise from_code(topic.error_code)
            info = self._partitions.get(tp)
        if info is None:
            raise UnknownTopicOrPartitionError(f"{tp}: This server does not host this topic-partition.")
        if info.leader < 0:
            raise NotSent(LeaderNotAvailableError(f"{tp}: partition has no leader"))
        return info.leader

    # -- the retry loop --

    def _retrying(self, topic: str, attempt: Callable[[], T]) -> T:
        """Run `attempt` until it succeeds, a non-retriable error comes, `retries` attempts have failed, or
        `delivery_timeout_ms` has passed; metadata of `topic` is refreshed before retrying where useful."""
        deadline = self._clock() + self.delivery_timeout_ms / 1000
        failures = 0
        while True:
            try:
                return attempt()
            except NotSent as unsent:
                last = unsent.error
            except BrokerError as error:
                if not error.retriable:
                    raise
                failures += 1
                if failures > self.retries:
                    raise
                last = error
            if isinstance(last, _REFRESH_METADATA):
                self._stale.add(topic)
            backoff = self.retry_backoff_ms / 1000
            if self._clock() + backoff > deadline:
                raise last
            self._sleep(backoff)

    # -- produce --

    def produce(
        self,
        topic: str,
        partition: int,
        records: Sequence[ProducerRecordTuple],
        acks: int = -1,
        timeout_ms: int | None = None,
        *,
        compression: Compression = Compression.NONE,
        timestamp_ms: int | None = None,
    ) -> int:
        """Append `records` as one batch to the partition's leader; the base offset it got (-1 for acks=0).

        `timeout_ms` is how long the leader may wait for the ISR (acks=-1); it defaults to the request
        timeout. Raises the Kafka error of the answer (retriable ones after the retry budget), or
        InvalidArgumentError for acks outside -1, 0, 1 or no records.
        """
        if acks not in _ACKS:
            raise InvalidArgumentError(
                f"Invalid value {acks} for configuration acks: String must be one of: all, -1, 0, 1"
            )
        if not records:
            raise InvalidArgumentError("No records to produce")
        timestamp = self._wall_clock_ms() if timestamp_ms is None else timestamp_ms
        batch = build_batch(
            [Record(i, timestamp, key, value, tuple(headers or ())) for i, (key, value, headers) in enumerate(records)],
            compression=compression,
        )
        timeout = self.request_timeout_ms if timeout_ms is None else timeout_ms
        tp = TopicPartition(topic, partition)
        body = {
            "transactional_id": None,
            "acks": acks,
            "timeout_ms": timeout,
            "topic_data": [{"name": topic, "partition_data": [{"index": partition, "records": batch}]}],
        }

        def attempt() -> int:
            connection = self._broker_connection(self._leader(tp))
            version = connection.version(ApiKey.PRODUCE)
            if acks == 0:
                try:
                    connection.send(ApiKey.PRODUCE, version, body, expect_response=False)
                except OSError as error:
                    connection.close()
                    raise NetworkExceptionError(f"Produce to {tp} failed: {error}") from error
                return -1
            response = connection.request(ApiKey.PRODUCE, version, body, self._timeout_s(timeout))
            answer = _partition_answer(response["responses"], "name", "partition_responses", "index", tp)
            if answer["error_code"]:
                raise from_code(answer["error_code"], answer.get("error_message"))
            return int(answer["base_offset"])

        return self._retrying(topic, attempt)

    # -- fetch --

    def fetch(
        self,
        topic: str,
        partition: int,
        offset: int,
        max_bytes: int = DEFAULT_PARTITION_MAX_BYTES,
        max_wait_ms: int = DEFAULT_MAX_WAIT_MS,
        replica_id: int = CONSUMER_REPLICA_ID,
        isolation_level: int = READ_UNCOMMITTED,
        *,
        min_bytes: int = 1,
    ) -> FetchResult:
        """Records of one partition from `offset` on, read from its leader (waiting up to `max_wait_ms` for
        at least `min_bytes`), with the high watermark and log start offset.

        Raises OffsetOutOfRangeError when `offset` is outside the log, or the answer's other Kafka error
        (retriable ones after the retry budget).
        """
        tp = TopicPartition(topic, partition)
        wanted = {tp: offset}
        body = fetch_request_body(wanted, max_wait_ms, max_bytes, max_bytes, replica_id, isolation_level, min_bytes)

        def attempt() -> FetchResult:
            return self._fetch_one(self._broker_connection(self._leader(tp)), body, wanted, max_wait_ms)

        return self._retrying(topic, attempt)

    def _fetch_one(
        self,
        connection: BrokerConnection,
        body: Mapping[str, Any],
        wanted: Mapping[TopicPartition, int],
        max_wait_ms: int,
    ) -> FetchResult:
        """Send a Fetch of one partition; its records, or its error raised."""
        response = connection.request(
            ApiKey.FETCH, connection.version(ApiKey.FETCH), body, self._timeout_s(max_wait_ms)
        )
        (result,) = fetch_results(response, wanted).values()
        if isinstance(result, BrokerError):
            raise result
        return result

    def _debug_connection(self, broker_id: int) -> BrokerConnection:
        """A connection to `broker_id` for a request that is not retried: NetworkExceptionError if none."""
        try:
            return self._broker_connection(broker_id)
        except NotSent as unsent:
            raise unsent.error from None

    def fetch_from_broker(
        self,
        broker_id: int,
        topic: str,
        partition: int,
        offset: int,
        max_bytes: int = DEFAULT_PARTITION_MAX_BYTES,
        max_wait_ms: int = 0,
        replica_id: int = DEBUGGING_REPLICA_ID,
        isolation_level: int = READ_UNCOMMITTED,
    ) -> FetchResult:
        """One Fetch sent to `broker_id` itself (by default as Kafka's debugging consumer, -2, which any
        replica answers), for comparing replicas. No retries: the answer's error is raised as it came;
        NetworkExceptionError if the broker cannot be reached."""
        tp = TopicPartition(topic, partition)
        wanted = {tp: offset}
        body = fetch_request_body(wanted, max_wait_ms, max_bytes, max_bytes, replica_id, isolation_level, 1)
        return self._fetch_one(self._debug_connection(broker_id), body, wanted, max_wait_ms)

    def fetch_raw_from_broker(
        self,
        broker_id: int,
        offsets: Mapping[TopicPartition, int],
        partition_max_bytes: int = DEFAULT_PARTITION_MAX_BYTES,
        max_wait_ms: int = 0,
        *,
        max_bytes: int = DEFAULT_MAX_BYTES,
        min_bytes: int = 1,
        replica_id: int = DEBUGGING_REPLICA_ID,
    ) -> dict[TopicPartition, RawFetchResult | BrokerError]:
        """One Fetch for all of `offsets`, sent to `broker_id` itself (by default as Kafka's debugging
        consumer, -2, which any replica answers up to its own high watermark), the batches left undecoded.

        Each partition gets its result or its error (not raised). No retries: NetworkExceptionError or
        RequestTimedOutError is raised when the broker cannot be reached or does not answer in time."""
        body = fetch_request_body(
            offsets, max_wait_ms, max_bytes, partition_max_bytes, replica_id, READ_UNCOMMITTED, min_bytes
        )
        connection = self._debug_connection(broker_id)
        response = connection.request(
            ApiKey.FETCH, connection.version(ApiKey.FETCH), body, self._timeout_s(max_wait_ms)
        )
        return raw_fetch_results(response, offsets)

    def fetch_many(
        self,
        offsets: Mapping[TopicPartition, int],
        max_wait_ms: int = DEFAULT_MAX_WAIT_MS,
        max_bytes: int = DEFAULT_MAX_BYTES,
        partition_max_bytes: int = DEFAULT_PARTITION_MAX_BYTES,
        isolation_level: int = READ_UNCOMMITTED,
    ) -> dict[TopicPartition, FetchResult | BrokerError]:
        """One Fetch per leader for all of `offsets`, sent to every leader before any answer is read (so
        the long polls overlap). Each partition gets its result or its error (not raised): leadership
        errors mark the topic's metadata stale so the next call asks the new leader. No retries here."""
        by_leader: dict[int, dict[TopicPartition, int]] = {}
        results: dict[TopicPartition, FetchResult | BrokerError] = {}
        for tp, offset in offsets.items():
            try:
                by_leader.setdefault(self._leader(tp), {})[tp] = offset
            except NotSent as unsent:
                results[tp] = unsent.error
            except BrokerError as error:
                results[tp] = error
        sent: list[tuple[BrokerConnection, dict[TopicPartition, int]]] = []
        for leader, wanted in by_leader.items():
            body = fetch_request_body(
                wanted, max_wait_ms, max_bytes, partition_max_bytes, CONSUMER_REPLICA_ID, isolation_level, 1
            )
            try:
                connection = self._broker_connection(leader)
                connection.send(ApiKey.FETCH, connection.version(ApiKey.FETCH), body)
                sent.append((connection, wanted))
            except NotSent as unsent:
                results.update(dict.fromkeys(wanted, unsent.error))
            except OSError as error:
                self._connections_close_for(leader)
                results.update(dict.fromkeys(wanted, NetworkExceptionError(f"Fetch from broker {leader}: {error}")))
        for connection, wanted in sent:
            try:
                response = connection.receive(self._timeout_s(max_wait_ms))
            except (OSError, KafkaProtocolError) as error:
                connection.close()
                results.update(dict.fromkeys(wanted, NetworkExceptionError(f"Fetch from {connection.node}: {error}")))
                continue
            results.update(fetch_results(response, wanted))
        for tp, result in results.items():
            if isinstance(result, _REFRESH_METADATA):
                self._stale.add(tp.topic)
        return results

    def _connections_close_for(self, broker_id: int) -> None:
        node = self._cluster.brokers.get(broker_id) if self._cluster is not None else None
        if node is not None and (node.host, node.port) in self._connections:
            self._connections[(node.host, node.port)].close()

    # -- offsets --

    def list_offsets(
        self, topic: str, partition: int, timestamp: int, isolation_level: int = READ_UNCOMMITTED
    ) -> OffsetAndTimestamp:
        """The partition leader's offset for `timestamp`: LATEST_TIMESTAMP (-1) the high watermark,
        EARLIEST_TIMESTAMP (-2) the log start offset, t >= 0 the first offset whose timestamp is >= t
        (offset -1 if none). Raises the answer's Kafka error (retriable ones after the retry budget)."""
        tp = TopicPartition(topic, partition)
        body = {
            "replica_id": CONSUMER_REPLICA_ID,
            "isolation_level": isolation_level,
            "topics": [
                {
                    "name": topic,
                    "partitions": [{"partition_index": partition, "current_leader_epoch": -1, "timestamp": timestamp}],
                }
            ],
        }

        def attempt() -> OffsetAndTimestamp:
            connection = self._broker_connection(self._leader(tp))
            response = connection.request(
                ApiKey.LIST_OFFSETS, connection.version(ApiKey.LIST_OFFSETS), body, self._timeout_s()
            )
            answer = _partition_answer(response["topics"], "name", "partitions", "partition_index", tp)
            if answer["error_code"]:
                raise from_code(answer["error_code"])
            return OffsetAndTimestamp(answer["offset"], answer["timestamp"], answer["leader_epoch"])

        return self._retrying(topic, attempt)

    def offset_for_leader_epoch(
        self, topic: str, partition: int, leader_epoch: int, broker_id: int | None = None
    ) -> EpochEndOffset:
        """Where `leader_epoch` ends on the leader (or, as a debug caller, on `broker_id`). Raises the
        answer's Kafka error; with `broker_id` there are no retries."""
        tp = TopicPartition(topic, partition)
        body = {
            "replica_id": CONSUMER_REPLICA_ID if broker_id is None else DEBUGGING_REPLICA_ID,
            "topics": [
                {
                    "topic": topic,
                    "partitions": [{"partition": partition, "current_leader_epoch": -1, "leader_epoch": leader_epoch}],
                }
            ],
        }

        def attempt() -> EpochEndOffset:
            connection = self._broker_connection(self._leader(tp) if broker_id is None else broker_id)
            version = connection.version(ApiKey.OFFSET_FOR_LEADER_EPOCH)
            response = connection.request(ApiKey.OFFSET_FOR_LEADER_EPOCH, version, body, self._timeout_s())
            answer = _partition_answer(response["topics"], "topic", "partitions", "partition", tp)
            if answer["error_code"]:
                raise from_code(answer["error_code"])
            return EpochEndOffset(answer["leader_epoch"], answer["end_offset"])

        if broker_id is not None:
            try:
                return attempt()
            except NotSent as unsent:
                raise unsent.error from None
        return self._retrying(topic, attempt)


def _partition_answer(
    topics: Iterable[Mapping[str, Any]], name_key: str, partitions_key: str, index_key: str, tp: TopicPartition
) -> Mapping[str, Any]:
    for topic in topics:
        if topic[name_key] != tp.topic:
            continue
        for p in topic[partitions_key]:
            if p[index_key] == tp.partition:
                answer: Mapping[str, Any] = p
                return answer
    raise NetworkExceptionError(f"The broker's answer did not mention {tp}")
