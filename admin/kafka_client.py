"""A small blocking Kafka client on our own protocol codec: metadata, produce, fetch, list offsets.

What the console tools (`kafkaops console-producer`, `console-consumer`, `producer-perf-test`) and
replica verification need from a broker, and nothing more: no consumer groups, no idempotence, no
transactions, no compression beyond gzip. It speaks to any broker that serves the versions of
kafka-protocol.md §1 (ours, or Apache Kafka 2.1+), over plain blocking sockets:

    KafkaClient                one per caller; NOT thread-safe (one thread drives it)
    ├── metadata cache         brokers and partition leaders, refreshed on leadership errors
    └── _Connection per broker host:port, opened lazily; ApiVersions on connect picks each API's
                               version as min(ours, the broker's); requests answered in order

Retries follow Kafka's Java producer: an error the broker marks retriable (NOT_LEADER_OR_FOLLOWER,
LEADER_NOT_AVAILABLE, UNKNOWN_TOPIC_OR_PARTITION, NOT_ENOUGH_REPLICAS, ...) or a connection lost with
the request in flight uses up one of `retries`; a leader that cannot be reached at all, or that the
metadata does not name yet, uses none (the request was never sent) but still counts against
`delivery_timeout_ms`. Before each retry the client waits `retry_backoff_ms` and refreshes the
metadata, which is how a produce finds the new leader after a leader dies. Everything the broker
refuses is raised as the protocol room's error for Kafka's code (`kafkaops.cluster.protocol.errors`),
with Kafka's own text.

Below the client, the pieces the console tools share and that are pure (tested without a broker):
`decode_records` (whole batches → the records at or after the fetch offset), `murmur2` /
`partition_for_key` (Kafka's default partitioner for keyed records), `StickyPartitioner`,
`PartitionConsumer` (assign-style consumption of some partitions, no group) and `PerfStats` with
`ThroughputThrottler` (kafka-producer-perf-test's arithmetic).

Clocks, sleeps and randomness are injected (`clock` in seconds, monotonic; `wall_clock_ms` for record
timestamps; `sleep`; `random.Random`), so tests drive them.
"""

from __future__ import annotations

import contextlib
import random
import socket
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, TypeVar

from kafkaops.cluster.errors import InvalidArgumentError
from kafkaops.cluster.protocol.errors import (
    BrokerError,
    CorrelationIdMismatchError,
    CorruptMessageError,
    InvalidFrameError,
    KafkaProtocolError,
    KafkaStorageError,
    LeaderNotAvailableError,
    MessageTooLargeError,
    NetworkExceptionError,
    NotLeaderOrFollowerError,
    OffsetOutOfRangeError,
    RequestTimedOutError,
    UnknownTopicOrPartitionError,
    UnsupportedVersionError,
    from_code,
)
from kafkaops.cluster.protocol.framing import CorrelationIds, check_correlation_id, frame, read_frame_blocking
from kafkaops.cluster.protocol.messages import RequestHeader, decode_response, encode_request
from kafkaops.cluster.protocol.records import Compression, Record, build_batch, iter_batches, iter_records
from kafkaops.cluster.protocol.schemas import SUPPORTED_VERSIONS, ApiKey
from kafkaops.cluster.zk.values import TopicPartition

T = TypeVar("T")

EARLIEST_TIMESTAMP = -2
"""ListOffsets' "earliest": the log start offset."""
LATEST_TIMESTAMP = -1
"""ListOffsets' "latest": the high watermark for consumers, the log end offset for brokers and debug callers."""
CONSUMER_REPLICA_ID = -1
DEBUGGING_REPLICA_ID = -2
"""Kafka's `FetchRequest.DEBUGGING_CONSUMER_ID`: any replica answers, not only the leader."""
READ_UNCOMMITTED = 0
READ_COMMITTED = 1

DEFAULT_MAX_BYTES = 52_428_800
"""Kafka's consumer `fetch.max.bytes`."""
DEFAULT_PARTITION_MAX_BYTES = 1_048_576
"""Kafka's consumer `max.partition.fetch.bytes`."""
DEFAULT_MAX_WAIT_MS = 500
"""Kafka's consumer `fetch.max.wait.ms`."""

_ACKS = (-1, 0, 1)
_ANY_VERSION = (0, 32767)


# --- values ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BrokerNode:
    node_id: int
    host: str
    port: int
    rack: str | None = None

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"


@dataclass(frozen=True, slots=True)
class PartitionInfo:
    """One partition as a broker's Metadata answer describes it; `leader` is -1 when there is none."""

    topic: str
    partition: int
    leader: int
    leader_epoch: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    offline_replicas: tuple[int, ...] = ()
    error_code: int = 0


@dataclass(frozen=True, slots=True)
class TopicInfo:
    name: str
    error_code: int
    is_internal: bool
    partitions: tuple[PartitionInfo, ...]


@dataclass(frozen=True, slots=True)
class ClusterMetadata:
    """A Metadata answer: live brokers, the controller and the topics asked for (all of them for None)."""

    brokers: Mapping[int, BrokerNode]
    controller_id: int
    cluster_id: str | None
    topics: Mapping[str, TopicInfo]

    def partition(self, topic: str, partition: int) -> PartitionInfo | None:
        info = self.topics.get(topic)
        if info is None:
            return None
        return next((p for p in info.partitions if p.partition == partition), None)


class TimestampType(IntEnum):
    CREATE_TIME = 0
    LOG_APPEND_TIME = 1

    def __str__(self) -> str:
        # org.apache.kafka.common.record.TimestampType's names, as the console consumer prints them
        return "CreateTime" if self is TimestampType.CREATE_TIME else "LogAppendTime"


@dataclass(frozen=True, slots=True)
class ConsumerRecord:
    topic: str
    partition: int
    offset: int
    timestamp: int
    timestamp_type: TimestampType
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...] = ()
    leader_epoch: int = -1


@dataclass(frozen=True, slots=True)
class FetchResult:
    """One partition's Fetch answer: its records from the requested offset on, and where to go next.

    `next_offset` is past the last complete batch returned (control batches included), or the requested
    offset when nothing came back.
    """

    topic: str
    partition: int
    records: tuple[ConsumerRecord, ...]
    next_offset: int
    high_watermark: int
    last_stable_offset: int
    log_start_offset: int


@dataclass(frozen=True, slots=True)
class RawFetchResult:
    """One partition's Fetch answer with its RECORDS bytes as they came (whole batches from the one that
    contains the fetch offset, perhaps a truncated batch at the end), for tools that compare batches
    instead of reading records (replica verification)."""

    topic: str
    partition: int
    records: bytes
    high_watermark: int
    log_start_offset: int


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


ProducerRecordTuple = tuple[bytes | None, bytes | None, Sequence[tuple[str, bytes | None]] | None]
"""What `produce` takes per record: (key, value, headers), headers may be None."""


# --- pure helpers -----------------------------------------------------------------------------------------


def parse_bootstrap_servers(servers: str | Sequence[str]) -> list[tuple[str, int]]:
    """`host:port[,host:port...]` (or a list of them) as (host, port) pairs; IPv6 hosts in brackets.

    Raises InvalidArgumentError with Kafka's `ClientUtils.parseAndValidateAddresses` texts.
    """
    items = servers.split(",") if isinstance(servers, str) else list(servers)
    addresses = []
    for raw in items:
        item = raw.strip()
        if not item:
            continue
        host, sep, port_text = item.rpartition(":")
        host = host.removeprefix("[").removesuffix("]")
        if not sep or not host or not port_text.isdigit() or not 0 < int(port_text) < 65536:
            raise InvalidArgumentError(f"Invalid url in bootstrap.servers: {item}")
        addresses.append((host, int(port_text)))
    if not addresses:
        raise InvalidArgumentError("No resolvable bootstrap urls given in bootstrap.servers")
    return addresses


def parse_acks(value: str | int) -> int:
    """Kafka's `acks` setting: "all" or -1, 0, 1. Raises InvalidArgumentError with Kafka's ConfigException text."""
    text = str(value).strip()
    if text.lower() == "all":
        return -1
    if text in ("-1", "0", "1"):
        return int(text)
    raise InvalidArgumentError(f"Invalid value {value} for configuration acks: String must be one of: all, -1, 0, 1")


def decode_records(
    topic: str, partition: int, data: bytes | memoryview, fetch_offset: int
) -> tuple[list[ConsumerRecord], int]:
    """The records of a Fetch answer's RECORDS bytes at or after `fetch_offset`, and the next offset to fetch.

    A broker returns whole batches starting with the one that *contains* the fetch offset, so the first
    records may lie before it and are skipped; a size-limited answer may end in a truncated batch, which
    is ignored (the next fetch starts at it). Control batches (transaction markers) are skipped but
    moved past. Raises CorruptMessageError for a bad CRC or malformed bytes,
    UnsupportedCompressionTypeError for snappy/lz4/zstd batches, and MessageTooLargeError when bytes came
    back but not one whole batch (the fetch size is below the batch size; brokers before KIP-74).
    """
    records: list[ConsumerRecord] = []
    next_offset = fetch_offset
    whole_batches = 0
    for batch in iter_batches(data, allow_truncated_tail=True):
        whole_batches += 1
        header = batch.header
        if header.next_offset <= fetch_offset:
            continue
        next_offset = max(next_offset, header.next_offset)
        if header.is_control:
            continue
        timestamp_type = TimestampType.LOG_APPEND_TIME if header.log_append_time else TimestampType.CREATE_TIME
        for record in iter_records(batch):
            if record.offset < fetch_offset:
                continue
            records.append(
                ConsumerRecord(
                    topic,
                    partition,
                    record.offset,
                    record.timestamp,
                    timestamp_type,
                    record.key,
                    record.value,
                    record.headers,
                    header.partition_leader_epoch,
                )
            )
    if len(data) > 0 and whole_batches == 0:
        raise MessageTooLargeError(
            f"There are some messages at [Partition=Offset]: {{{topic}-{partition}={fetch_offset}}} whose size is "
            f"larger than the fetch size {len(data)} and hence cannot be returned. Increase the fetch size on the "
            "client (using max.partition.fetch.bytes)"
        )
    return records, next_offset


def murmur2(data: bytes) -> int:
    """Kafka's `Utils.murmur2` (signed 32-bit result), which its default partitioner hashes keys with."""
    m, r = 0x5BD1E995, 24
    length = len(data)
    h = (0x9747B28C ^ length) & 0xFFFFFFFF
    for i in range(0, length - length % 4, 4):
        k = data[i] | (data[i + 1] << 8) | (data[i + 2] << 16) | (data[i + 3] << 24)
        k = (k * m) & 0xFFFFFFFF
        k ^= k >> r
        k = (k * m) & 0xFFFFFFFF
        h = (h * m) & 0xFFFFFFFF
        h ^= k
    tail = length & ~3
    extra = length % 4
    if extra == 3:
        h ^= data[tail + 2] << 16
    if extra >= 2:
        h ^= data[tail + 1] << 8
    if extra >= 1:
        h ^= data[tail]
        h = (h * m) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * m) & 0xFFFFFFFF
    h ^= h >> 15
    return h - (1 << 32) if h & 0x80000000 else h


def partition_for_key(key: bytes, num_partitions: int) -> int:
    """Kafka's DefaultPartitioner for a keyed record: `toPositive(murmur2(key)) % numPartitions`."""
    return (murmur2(key) & 0x7FFFFFFF) % num_partitions


class StickyPartitioner:
    """Kafka 2.4+'s choice for records without a key: one partition for a whole batch, a new random one
    (different from the last, when there is a choice) for the next batch (KIP-480)."""

    def __init__(self, rng: random.Random) -> None:
        self._rng = rng
        self._current: dict[str, int] = {}

    def partition(self, topic: str, num_partitions: int) -> int:
        if topic not in self._current or self._current[topic] >= num_partitions:
            self._current[topic] = self._rng.randrange(num_partitions)
        return self._current[topic]

    def new_batch(self, topic: str, num_partitions: int) -> int:
        previous = self._current.get(topic)
        choice = self._rng.randrange(num_partitions)
        if num_partitions > 1 and choice == previous:
            choice = (choice + 1 + self._rng.randrange(num_partitions - 1)) % num_partitions
        self._current[topic] = choice
        return choice


# --- connections ------------------------------------------------------------------------------------------


class _NotSent(Exception):
    """The request never left: no connection could be made. Not a retry attempt (Kafka's NetworkClient
    does not send to a node that is not ready); wraps the error to raise if time runs out."""

    def __init__(self, error: BrokerError) -> None:
        super().__init__(str(error))
        self.error = error


class _Connection:
    """One blocking connection to one broker; requests are answered in order, one at a time (or pipelined
    with send/receive). Any failure closes it; the next request reconnects."""

    def __init__(self, host: str, port: int, client_id: str, timeout_s: float, node: str) -> None:
        self.host = host
        self.port = port
        self.client_id = client_id
        self.timeout_s = timeout_s
        self.node = node
        self._sock: socket.socket | None = None
        self._ids = CorrelationIds()
        self._in_flight: list[tuple[int, ApiKey, int]] = []
        self.versions: dict[int, tuple[int, int]] = {}

    def _unreachable(self, error: OSError) -> _NotSent:
        return _NotSent(
            NetworkExceptionError(
                f"Connection to node {self.node} ({self.host}:{self.port}) could not be established. "
                f"Broker may not be available. ({error})"
            )
        )

    def connect(self) -> None:
        if self._sock is not None:
            return
        try:
            sock = socket.create_connection((self.host, self.port), timeout=self.timeout_s)
        except OSError as error:
            raise self._unreachable(error) from error
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._sock = sock
        try:
            self.versions = self._api_versions()
        except BrokerError as error:
            self.close()
            raise _NotSent(error) from error

    def _api_versions(self) -> dict[int, tuple[int, int]]:
        """ApiVersions v0, which every broker since Kafka 0.10 answers with its full list (kafka-protocol.md
        §3); the version we pick per API is then min(ours, the broker's)."""
        body = self.request(ApiKey.API_VERSIONS, 0, {}, self.timeout_s)
        if body["error_code"]:
            raise from_code(body["error_code"])
        return {k["api_key"]: (k["min_version"], k["max_version"]) for k in body["api_keys"]}

    def version(self, api_key: ApiKey) -> int:
        """The highest version both sides speak. Raises UnsupportedVersionError if there is none."""
        ours = SUPPORTED_VERSIONS[api_key]
        theirs = self.versions.get(int(api_key))
        if theirs is None or max(ours[0], theirs[0]) > min(ours[1], theirs[1]):
            served = "does not serve it" if theirs is None else f"serves v{theirs[0]}-{theirs[1]}"
            raise UnsupportedVersionError(
                f"Broker {self.node} ({self.host}:{self.port}) and this client have no {api_key.name} version in "
                f"common: we speak v{ours[0]}-{ours[1]}, the broker {served}"
            )
        return min(ours[1], theirs[1])

    def send(self, api_key: ApiKey, version: int, body: Mapping[str, Any], expect_response: bool = True) -> int:
        """Send one request; with `expect_response`, queue it for `receive`. Raises OSError on failure."""
        if self._sock is None:
            raise OSError("not connected")
        correlation_id = self._ids.next()
        header = RequestHeader(api_key, version, correlation_id, self.client_id)
        self._sock.settimeout(self.timeout_s)
        self._sock.sendall(frame(encode_request(header, body)))
        if expect_response:
            self._in_flight.append((correlation_id, api_key, version))
        return correlation_id

    def receive(self, timeout_s: float) -> dict[str, Any]:
        """The answer to the oldest request in flight. Raises OSError, InvalidFrameError, CorruptMessageError
        or CorrelationIdMismatchError; the caller closes the connection on any of them."""
        if self._sock is None:
            raise OSError("not connected")
        expected, api_key, version = self._in_flight.pop(0)
        self._sock.settimeout(timeout_s)
        received, body = decode_response(api_key, version, read_frame_blocking(self._sock))
        check_correlation_id(expected, received)
        return body

    def request(self, api_key: ApiKey, version: int, body: Mapping[str, Any], timeout_s: float) -> dict[str, Any]:
        """Send and wait for the answer. Failures close the connection and raise NetworkExceptionError (or
        RequestTimedOutError when the answer did not come in time); both are retriable."""
        try:
            self.send(api_key, version, body)
            return self.receive(timeout_s)
        except TimeoutError as error:
            self.close()
            raise RequestTimedOutError(
                f"{api_key.name} to node {self.node} ({self.host}:{self.port}) got no answer in {timeout_s:.1f} s"
            ) from error
        except (OSError, InvalidFrameError, CorruptMessageError, CorrelationIdMismatchError) as error:
            self.close()
            raise NetworkExceptionError(
                f"Connection to node {self.node} ({self.host}:{self.port}) was lost while waiting for "
                f"{api_key.name}: {error}"
            ) from error

    def close(self) -> None:
        self._in_flight.clear()
        if self._sock is not None:
            with contextlib.suppress(OSError):
                self._sock.close()
            self._sock = None


# --- the client -------------------------------------------------------------------------------------------

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
    ) -> None:
        if request_timeout_ms <= 0:
            raise InvalidArgumentError(f"request.timeout.ms must be positive, got {request_timeout_ms}")
        self._bootstrap = parse_bootstrap_servers(bootstrap_servers)
        self.client_id = client_id
        self.request_timeout_ms = request_timeout_ms
        self.retries = retries
        self.retry_backoff_ms = retry_backoff_ms
        self.delivery_timeout_ms = delivery_timeout_ms
        self._clock = clock
        self._wall_clock_ms = wall_clock_ms
        self._sleep = sleep
        self._connections: dict[tuple[str, int], _Connection] = {}
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

    def _connection(self, host: str, port: int, node: str) -> _Connection:
        key = (host, port)
        connection = self._connections.get(key)
        if connection is None:
            connection = _Connection(host, port, self.client_id, self._timeout_s(), node)
            self._connections[key] = connection
        connection.connect()
        return connection

    def _broker_connection(self, broker_id: int) -> _Connection:
        """A connection to a broker the metadata names. Raises _NotSent if it is unknown or unreachable."""
        node = self._cluster.brokers.get(broker_id) if self._cluster is not None else None
        if node is None:
            try:
                self.metadata([])
            except NetworkExceptionError as error:
                raise _NotSent(error) from error
            node = self._cluster.brokers.get(broker_id) if self._cluster is not None else None
        if node is None:
            raise _NotSent(NetworkExceptionError(f"Broker {broker_id} is not in the cluster's metadata"))
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
            except _NotSent as unsent:
                errors.append(unsent.error.message)
                continue
            except (NetworkExceptionError, RequestTimedOutError) as error:
                errors.append(error.message)
                continue
            return self._store_metadata(response, wanted)
        raise NetworkExceptionError("No broker answered a Metadata request: " + "; ".join(errors))

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
                {"topic": topic, "partitions": [tp.partition for tp in partitions if tp.topic == topic]}
                for topic in dict.fromkeys(tp.topic for tp in partitions)
            ],
            "timeout_ms": timeout_ms,
        }
        broker_id = cluster.controller_id if cluster.controller_id in cluster.brokers else next(iter(cluster.brokers))
        connection = self._broker_connection(broker_id)
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
        brokers = {
            b["node_id"]: BrokerNode(b["node_id"], b["host"], b["port"], b.get("rack")) for b in response["brokers"]
        }
        topics = {}
        for t in response["topics"]:
            partitions = tuple(
                sorted(
                    (
                        PartitionInfo(
                            t["name"],
                            p["partition_index"],
                            p["leader_id"],
                            p["leader_epoch"],
                            tuple(p["replica_nodes"]),
                            tuple(p["isr_nodes"]),
                            tuple(p["offline_replicas"]),
                            p["error_code"],
                        )
                        for p in t["partitions"]
                    ),
                    key=lambda p: p.partition,
                )
            )
            topics[t["name"]] = TopicInfo(t["name"], t["error_code"], t["is_internal"], partitions)
        cluster = ClusterMetadata(brokers, response["controller_id"], response["cluster_id"], topics)
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

        Raises UnknownTopicOrPartitionError (retriable: counts as an attempt), or _NotSent wrapping
        LeaderNotAvailableError while the partition has no leader.
        """
        info = self._partitions.get(tp)
        if info is None or tp.topic in self._stale or info.leader < 0:
            try:
                cluster = self.metadata([tp.topic])
            except NetworkExceptionError as error:
                raise _NotSent(error) from error
            topic = cluster.topics.get(tp.topic)
            if topic is not None and topic.error_code == LeaderNotAvailableError.code:
                raise _NotSent(from_code(topic.error_code))  # a topic being created: wait for its leaders
            if topic is not None and topic.error_code:
                raise from_code(topic.error_code)
            info = self._partitions.get(tp)
        if info is None:
            raise UnknownTopicOrPartitionError(f"{tp}: This server does not host this topic-partition.")
        if info.leader < 0:
            raise _NotSent(LeaderNotAvailableError(f"{tp}: partition has no leader"))
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
            except _NotSent as unsent:
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

    def _fetch_body(
        self,
        partitions: Mapping[TopicPartition, int],
        max_wait_ms: int,
        max_bytes: int,
        partition_max_bytes: int,
        replica_id: int,
        isolation_level: int,
        min_bytes: int,
    ) -> dict[str, Any]:
        topics: dict[str, list[dict[str, Any]]] = {}
        for tp, offset in partitions.items():
            topics.setdefault(tp.topic, []).append(
                {
                    "partition": tp.partition,
                    "current_leader_epoch": -1,
                    "fetch_offset": offset,
                    "log_start_offset": -1,
                    "partition_max_bytes": partition_max_bytes,
                }
            )
        return {
            "replica_id": replica_id,
            "max_wait_ms": max_wait_ms,
            "min_bytes": min_bytes,
            "max_bytes": max_bytes,
            "isolation_level": isolation_level,
            "session_id": 0,
            "session_epoch": -1,
            "topics": [{"topic": t, "partitions": ps} for t, ps in topics.items()],
            "forgotten_topics_data": [],
            "rack_id": "",
        }

    @staticmethod
    def _fetch_results(
        response: Mapping[str, Any], requested: Mapping[TopicPartition, int]
    ) -> dict[TopicPartition, FetchResult | BrokerError]:
        if response.get("error_code"):
            error = from_code(response["error_code"])
            return dict.fromkeys(requested, error)
        results: dict[TopicPartition, FetchResult | BrokerError] = {}
        for topic in response["responses"]:
            for p in topic["partitions"]:
                tp = TopicPartition(topic["topic"], p["partition_index"])
                if tp not in requested:
                    continue
                if p["error_code"]:
                    results[tp] = from_code(p["error_code"])
                    continue
                try:
                    records, next_offset = decode_records(tp.topic, tp.partition, p["records"] or b"", requested[tp])
                except BrokerError as error:
                    results[tp] = error
                    continue
                results[tp] = FetchResult(
                    tp.topic,
                    tp.partition,
                    tuple(records),
                    next_offset,
                    p["high_watermark"],
                    p["last_stable_offset"],
                    p["log_start_offset"],
                )
        for tp in requested:
            results.setdefault(tp, NetworkExceptionError(f"The Fetch answer did not mention {tp}"))
        return results

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
        body = self._fetch_body(wanted, max_wait_ms, max_bytes, max_bytes, replica_id, isolation_level, min_bytes)

        def attempt() -> FetchResult:
            connection = self._broker_connection(self._leader(tp))
            response = connection.request(
                ApiKey.FETCH, connection.version(ApiKey.FETCH), body, self._timeout_s(max_wait_ms)
            )
            result = self._fetch_results(response, wanted)[tp]
            if isinstance(result, BrokerError):
                raise result
            return result

        return self._retrying(topic, attempt)

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
        body = self._fetch_body(wanted, max_wait_ms, max_bytes, max_bytes, replica_id, isolation_level, 1)
        try:
            connection = self._broker_connection(broker_id)
        except _NotSent as unsent:
            raise unsent.error from None
        response = connection.request(
            ApiKey.FETCH, connection.version(ApiKey.FETCH), body, self._timeout_s(max_wait_ms)
        )
        result = self._fetch_results(response, wanted)[tp]
        if isinstance(result, BrokerError):
            raise result
        return result

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
        body = self._fetch_body(
            offsets, max_wait_ms, max_bytes, partition_max_bytes, replica_id, READ_UNCOMMITTED, min_bytes
        )
        try:
            connection = self._broker_connection(broker_id)
        except _NotSent as unsent:
            raise unsent.error from None
        response = connection.request(
            ApiKey.FETCH, connection.version(ApiKey.FETCH), body, self._timeout_s(max_wait_ms)
        )
        if response.get("error_code"):
            return dict.fromkeys(offsets, from_code(response["error_code"]))
        results: dict[TopicPartition, RawFetchResult | BrokerError] = {}
        for topic in response["responses"]:
            for p in topic["partitions"]:
                tp = TopicPartition(topic["topic"], p["partition_index"])
                if tp not in offsets:
                    continue
                if p["error_code"]:
                    results[tp] = from_code(p["error_code"])
                    continue
                results[tp] = RawFetchResult(
                    tp.topic, tp.partition, bytes(p["records"] or b""), p["high_watermark"], p["log_start_offset"]
                )
        for tp in offsets:
            results.setdefault(tp, NetworkExceptionError(f"The Fetch answer did not mention {tp}"))
        return results

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
            except _NotSent as unsent:
                results[tp] = unsent.error
            except BrokerError as error:
                results[tp] = error
        sent: list[tuple[_Connection, dict[TopicPartition, int]]] = []
        for leader, wanted in by_leader.items():
            body = self._fetch_body(
                wanted, max_wait_ms, max_bytes, partition_max_bytes, CONSUMER_REPLICA_ID, isolation_level, 1
            )
            try:
                connection = self._broker_connection(leader)
                connection.send(ApiKey.FETCH, connection.version(ApiKey.FETCH), body)
                sent.append((connection, wanted))
            except _NotSent as unsent:
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
            results.update(self._fetch_results(response, wanted))
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
            except _NotSent as unsent:
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
                return p
    raise NetworkExceptionError(f"The broker's answer did not mention {tp}")


# --- producing many records: partitioning and batching -----------------------------------------------------


@dataclass
class SendOutcome:
    """What became of some records sent together: their partition, base offset (-1 for acks=0), or error."""

    partition: int
    records: list[ProducerRecordTuple]
    base_offset: int = -1
    error: BrokerError | None = None


class BatchSender:
    """Sends records the way Kafka's producer spreads them: to a fixed partition if one is given, keyed
    records by murmur2 of the key, records without a key to one sticky partition per batch. Each call to
    `send` is one batch per partition involved. Errors are reported per batch, not raised, as the
    producer's callbacks report them."""

    def __init__(
        self,
        client: KafkaClient,
        topic: str,
        *,
        partition: int | None = None,
        acks: int = -1,
        timeout_ms: int | None = None,
        compression: Compression = Compression.NONE,
        rng: random.Random | None = None,
    ) -> None:
        self.client = client
        self.topic = topic
        self.partition = partition
        self.acks = acks
        self.timeout_ms = timeout_ms
        self.compression = compression
        self._sticky = StickyPartitioner(rng or random.Random())
        self._num_partitions: int | None = None

    def num_partitions(self) -> int:
        if self._num_partitions is None:
            self._num_partitions = len(self.client.partitions_for(self.topic))
        return self._num_partitions

    def assign(self, records: Sequence[ProducerRecordTuple]) -> dict[int, list[ProducerRecordTuple]]:
        """Group records by the partition each goes to, keeping their order within a partition."""
        if self.partition is not None:
            return {self.partition: list(records)}
        count = self.num_partitions()
        sticky = self._sticky.new_batch(self.topic, count) if any(r[0] is None for r in records) else -1
        groups: dict[int, list[ProducerRecordTuple]] = {}
        for record in records:
            target = sticky if record[0] is None else partition_for_key(record[0], count)
            groups.setdefault(target, []).append(record)
        return groups

    def send(self, records: Sequence[ProducerRecordTuple]) -> list[SendOutcome]:
        outcomes = []
        for partition, group in self.assign(records).items():
            outcome = SendOutcome(partition, group)
            try:
                outcome.base_offset = self.client.produce(
                    self.topic, partition, group, self.acks, self.timeout_ms, compression=self.compression
                )
            except BrokerError as error:
                outcome.error = error
            outcomes.append(outcome)
        return outcomes


# --- consuming some partitions without a group --------------------------------------------------------------


class OffsetResetPolicy(IntEnum):
    EARLIEST = EARLIEST_TIMESTAMP
    LATEST = LATEST_TIMESTAMP
    NONE = 0


class PartitionConsumer:
    """Kafka's consumer with `assign()` and no group: positions start at `start` (EARLIEST_TIMESTAMP,
    LATEST_TIMESTAMP or an absolute offset) and move past what `poll` returns; an offset out of range
    is reset by `reset` (Kafka's auto.offset.reset; NONE raises OffsetOutOfRangeError with Kafka's text)."""

    def __init__(
        self,
        client: KafkaClient,
        topic: str,
        partitions: Sequence[int] | None = None,
        start: int = LATEST_TIMESTAMP,
        reset: OffsetResetPolicy = OffsetResetPolicy.LATEST,
        *,
        max_wait_ms: int = DEFAULT_MAX_WAIT_MS,
        max_bytes: int = DEFAULT_MAX_BYTES,
        partition_max_bytes: int = DEFAULT_PARTITION_MAX_BYTES,
        isolation_level: int = READ_UNCOMMITTED,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.client = client
        self.topic = topic
        ids = client.partitions_for(topic) if partitions is None else list(partitions)
        if partitions is not None:
            known = set(client.partitions_for(topic))
            missing = [p for p in ids if p not in known]
            if missing:
                raise UnknownTopicOrPartitionError(
                    f"{topic}-{missing[0]}: This server does not host this topic-partition."
                )
        self.reset = reset
        self.max_wait_ms = max_wait_ms
        self.max_bytes = max_bytes
        self.partition_max_bytes = partition_max_bytes
        self.isolation_level = isolation_level
        self._clock = clock
        self._sleep = sleep
        self.positions: dict[TopicPartition, int] = {}
        for p in ids:
            tp = TopicPartition(topic, p)
            self.positions[tp] = self._resolve(tp, start) if start < 0 else start

    def _resolve(self, tp: TopicPartition, timestamp: int) -> int:
        return self.client.list_offsets(tp.topic, tp.partition, timestamp, self.isolation_level).offset

    def _reset(self, tp: TopicPartition) -> None:
        if self.reset is OffsetResetPolicy.NONE:
            raise OffsetOutOfRangeError(
                f"Offsets out of range with no configured reset policy for partitions: {{{tp}={self.positions[tp]}}}"
            )
        self.positions[tp] = self._resolve(tp, int(self.reset))

    def poll(self, timeout_ms: int) -> list[ConsumerRecord]:
        """Records from every assigned partition, waiting up to `timeout_ms` for some; [] if none came.

        Retriable errors (a leader moved or died) are retried inside the timeout; others are raised.
        """
        deadline = self._clock() + max(timeout_ms, 0) / 1000
        while True:
            remaining_ms = max(int((deadline - self._clock()) * 1000), 0)
            results = self.client.fetch_many(
                dict(self.positions),
                min(self.max_wait_ms, remaining_ms),
                self.max_bytes,
                self.partition_max_bytes,
                self.isolation_level,
            )
            records: list[ConsumerRecord] = []
            retry = False
            for tp, result in sorted(results.items()):
                if isinstance(result, OffsetOutOfRangeError):
                    self._reset(tp)
                elif isinstance(result, BrokerError):
                    if not result.retriable:
                        raise result
                    retry = True
                else:
                    records.extend(result.records)
                    self.positions[tp] = result.next_offset
            if records or self._clock() >= deadline:
                return records
            if retry:
                self._sleep(min(self.client.retry_backoff_ms / 1000, max(deadline - self._clock(), 0)))


# --- kafka-producer-perf-test's arithmetic ------------------------------------------------------------------


def perf_payload(record_size: int, seed: int = 0) -> bytes:
    """The perf test's payload: `record_size` random uppercase letters (Kafka uses `new Random(0)`)."""
    rng = random.Random(seed)
    return bytes(rng.randrange(26) + 65 for _ in range(record_size))


class ThroughputThrottler:
    """Kafka's `ThroughputThrottler`: when more than `target` records per second have been sent since
    `start_ms`, sleep 1/target s per record (in steps of at least 2 ms). A negative target never throttles."""

    MIN_SLEEP_S = 0.002

    def __init__(self, target: float, start_ms: int, sleep: Callable[[float], None] = time.sleep) -> None:
        self.target = target
        self.start_ms = start_ms
        self._sleep = sleep
        self._deficit_s = 0.0

    def should_throttle(self, amount_so_far: int, send_start_ms: int) -> bool:
        if self.target < 0:
            return False
        elapsed_s = (send_start_ms - self.start_ms) / 1000
        return elapsed_s > 0 and amount_so_far / elapsed_s > self.target

    def throttle(self) -> None:
        if self.target == 0:
            self._sleep(3600.0)
            return
        self._deficit_s += 1 / self.target
        if self._deficit_s >= self.MIN_SLEEP_S:
            self._sleep(self._deficit_s)
            self._deficit_s = 0.0


@dataclass(frozen=True, slots=True)
class PerfWindow:
    """One reporting window: records, records/s, MB/s, average and maximum latency (ms)."""

    count: int
    records_per_sec: float
    mb_per_sec: float
    avg_latency_ms: float
    max_latency_ms: float


@dataclass(frozen=True, slots=True)
class PerfTotal:
    count: int
    records_per_sec: float
    mb_per_sec: float
    avg_latency_ms: float
    max_latency_ms: float
    p50_ms: int
    p95_ms: int
    p99_ms: int
    p999_ms: int


@dataclass
class PerfStats:
    """Kafka's `ProducerPerformance.Stats`: totals, a sample of latencies (at most ~500,000 of them) for
    the percentiles, and windows of `reporting_interval_ms` handed to `on_window` as they close."""

    num_records: int
    start_ms: int
    reporting_interval_ms: int = 5000
    on_window: Callable[[PerfWindow], None] | None = None
    count: int = 0
    bytes: int = 0
    total_latency: int = 0
    max_latency: int = 0
    window_start_ms: int = 0
    window_count: int = 0
    window_bytes: int = 0
    window_total_latency: int = 0
    window_max_latency: int = 0
    latencies: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.sampling = max(self.num_records // max(min(self.num_records, 500_000), 1), 1)
        self.window_start_ms = self.start_ms

    def record(self, iteration: int, latency_ms: int, size: int, now_ms: int) -> None:
        self.count += 1
        self.bytes += size
        self.total_latency += latency_ms
        self.max_latency = max(self.max_latency, latency_ms)
        self.window_count += 1
        self.window_bytes += size
        self.window_total_latency += latency_ms
        self.window_max_latency = max(self.window_max_latency, latency_ms)
        if iteration % self.sampling == 0:
            self.latencies.append(latency_ms)
        if now_ms - self.window_start_ms >= self.reporting_interval_ms:
            if self.on_window is not None:
                self.on_window(self.window(now_ms))
            self.window_start_ms = now_ms
            self.window_count = self.window_bytes = self.window_total_latency = self.window_max_latency = 0

    def window(self, now_ms: int) -> PerfWindow:
        elapsed = max(now_ms - self.window_start_ms, 1)
        return PerfWindow(
            self.window_count,
            1000.0 * self.window_count / elapsed,
            1000.0 * self.window_bytes / elapsed / (1024.0 * 1024.0),
            self.window_total_latency / max(self.window_count, 1),
            float(self.window_max_latency),
        )

    def total(self, now_ms: int) -> PerfTotal:
        elapsed = max(now_ms - self.start_ms, 1)
        ordered = sorted(self.latencies)

        def percentile(p: float) -> int:
            return ordered[int(p * len(ordered))] if ordered else 0

        return PerfTotal(
            self.count,
            1000.0 * self.count / elapsed,
            1000.0 * self.bytes / elapsed / (1024.0 * 1024.0),
            self.total_latency / max(self.count, 1),
            float(self.max_latency),
            percentile(0.5),
            percentile(0.95),
            percentile(0.99),
            percentile(0.999),
        )


def run_producer_perf(
    client: KafkaClient,
    topic: str,
    num_records: int,
    payloads: Sequence[bytes],
    throughput: float,
    *,
    acks: int = -1,
    batch_size: int = 16384,
    timeout_ms: int | None = None,
    on_window: Callable[[PerfWindow], None] | None = None,
    wall_clock_ms: Callable[[], int] = lambda: time.time_ns() // 1_000_000,
    sleep: Callable[[float], None] = time.sleep,
    rng: random.Random | None = None,
) -> tuple[PerfTotal, list[SendOutcome]]:
    """kafka-producer-perf-test's loop on the blocking client: records without keys are gathered into
    batches of up to `batch_size` bytes (one sticky partition per batch, as Kafka's producer does), a
    batch goes out when full, before the throttler sleeps, and at the end; each record's latency is from
    its creation to its batch's answer. Returns the totals and the failed batches (not raised)."""
    if not payloads:
        raise InvalidArgumentError("No payloads to send")
    sender = BatchSender(client, topic, acks=acks, timeout_ms=timeout_ms, rng=rng)
    sender.num_partitions()
    start = wall_clock_ms()
    stats = PerfStats(num_records, start, on_window=on_window)
    throttler = ThroughputThrottler(throughput, start, sleep)
    failed: list[SendOutcome] = []
    pending: list[tuple[int, int, bytes]] = []  # (iteration, created at ms, payload)
    pending_bytes = 0

    def flush() -> None:
        nonlocal pending_bytes
        if not pending:
            return
        outcomes = sender.send([(None, payload, None) for _, _, payload in pending])
        done = wall_clock_ms()
        failed.extend(o for o in outcomes if o.error is not None)
        for iteration, created, payload in pending:
            stats.record(iteration, done - created, len(payload), done)
        pending.clear()
        pending_bytes = 0

    chooser = rng or random.Random()
    for i in range(num_records):
        payload = payloads[0] if len(payloads) == 1 else payloads[chooser.randrange(len(payloads))]
        send_start = wall_clock_ms()
        if pending and pending_bytes + len(payload) > batch_size:
            flush()
        pending.append((i, send_start, payload))
        pending_bytes += len(payload)
        if throttler.should_throttle(i, send_start):
            flush()
            throttler.throttle()
    flush()
    return stats.total(wall_clock_ms()), failed
