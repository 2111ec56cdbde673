"""The requests the broker serves, as typed values (Kafka's `ProduceRequest`, `FetchRequest.PartitionData`,
... of `org.apache.kafka.common.requests`).

The protocol codec (cluster/protocol) decodes a request into a plain dict shaped by its schema; KafkaApis
turns that dict into one of these values with `from_wire` at its border, and the replica manager, the
metadata cache and the rest of the broker see only the values. Partitions keep the request's order, and
a request's duplicates stay duplicates: responses are built from them in the same order, byte for byte
as before these values existed.

The partition states of LeaderAndIsr and UpdateMetadata are the state-change log's
`LeaderAndIsrPartitionState` and `UpdateMetadataPartitionState` (Kafka's generated message classes, printed
as Kafka prints them); the metadata cache keeps the latter as they came.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kafkaops.cluster.broker.metadata_cache import CachedBroker
from kafkaops.cluster.common.client_channel import SECURITY_PROTOCOLS
from kafkaops.cluster.common.errors import InvalidRequestError
from kafkaops.cluster.protocol.schemas import flatten_stop_replica_partitions, iter_partition_states
from kafkaops.cluster.protocol.types import ZERO_UUID, Buffer
from kafkaops.cluster.state_change_log import LeaderAndIsrPartitionState, UpdateMetadataPartitionState
from kafkaops.cluster.zk.values import EndPoint, TopicPartition

Body = Mapping[str, Any]
"""A request body as the codec decoded it."""


# --- Produce --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ProducePartitionData:
    tp: TopicPartition
    records: Buffer | None


@dataclass(frozen=True, slots=True)
class ProduceRequest:
    version: int
    transactional_id: str | None
    acks: int
    timeout_ms: int
    partitions: tuple[ProducePartitionData, ...]

    @classmethod
    def from_wire(cls, body: Body, version: int) -> ProduceRequest:
        return cls(
            version,
            body["transactional_id"],
            body["acks"],
            body["timeout_ms"],
            tuple(
                ProducePartitionData(TopicPartition(topic["name"], data["index"]), data["records"])
                for topic in body["topic_data"]
                for data in topic["partition_data"]
            ),
        )


# --- Fetch ----------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FetchPartition:
    """One partition of a Fetch request (Kafka's `FetchRequest.PartitionData`)."""

    tp: TopicPartition
    fetch_offset: int
    current_leader_epoch: int
    log_start_offset: int
    max_bytes: int
    last_fetched_epoch: int = -1
    """Fetch v12 (KIP-595): the epoch of the last batch the fetcher has; -1 when not given."""


@dataclass(frozen=True, slots=True)
class FetchRequest:
    replica_id: int
    max_wait_ms: int
    min_bytes: int
    max_bytes: int
    isolation_level: int
    session_id: int
    session_epoch: int
    partitions: tuple[FetchPartition, ...]
    forgotten: tuple[TopicPartition, ...]

    @property
    def is_from_follower(self) -> bool:
        return self.replica_id >= 0

    @classmethod
    def from_wire(cls, body: Body) -> FetchRequest:
        return cls(
            body["replica_id"],
            body["max_wait_ms"],
            body["min_bytes"],
            body["max_bytes"],
            body["isolation_level"],
            body["session_id"],
            body["session_epoch"],
            tuple(
                FetchPartition(
                    TopicPartition(topic["topic"], p["partition"]),
                    p["fetch_offset"],
                    p["current_leader_epoch"],
                    p["log_start_offset"],
                    p["partition_max_bytes"],
                    p["last_fetched_epoch"],
                )
                for topic in body["topics"]
                for p in topic["partitions"]
            ),
            tuple(TopicPartition(t["topic"], p) for t in body["forgotten_topics_data"] for p in t["partitions"]),
        )


# --- ApiVersions ------------------------------------------------------------------------------------------

# KIP-511's rule for client_software_name and client_software_version (Kafka's ApiVersionsRequest.isValid)
_SOFTWARE = re.compile(r"[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?")


def valid_api_versions_request(body: Body, version: int) -> bool:
    """Whether an ApiVersions v3+ request names its client software as KIP-511 requires."""
    if version < 3:
        return True
    return all(_SOFTWARE.fullmatch(body[k]) for k in ("client_software_name", "client_software_version"))


# --- ListOffsets and OffsetForLeaderEpoch ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ListOffsetsPartition:
    tp: TopicPartition
    current_leader_epoch: int
    timestamp: int


@dataclass(frozen=True, slots=True)
class ListOffsetsRequest:
    replica_id: int
    isolation_level: int
    topics: tuple[tuple[str, tuple[ListOffsetsPartition, ...]], ...]
    """(topic, its partitions) as the request grouped them: the response groups its answers the same way."""

    @classmethod
    def from_wire(cls, body: Body) -> ListOffsetsRequest:
        return cls(
            body["replica_id"],
            body["isolation_level"],
            tuple(
                (
                    topic["name"],
                    tuple(
                        ListOffsetsPartition(
                            TopicPartition(topic["name"], p["partition_index"]),
                            p["current_leader_epoch"],
                            p["timestamp"],
                        )
                        for p in topic["partitions"]
                    ),
                )
                for topic in body["topics"]
            ),
        )


@dataclass(frozen=True, slots=True)
class OffsetForLeaderEpochPartition:
    tp: TopicPartition
    current_leader_epoch: int
    leader_epoch: int


@dataclass(frozen=True, slots=True)
class OffsetForLeaderEpochRequest:
    replica_id: int
    topics: tuple[tuple[str, tuple[OffsetForLeaderEpochPartition, ...]], ...]

    @classmethod
    def from_wire(cls, body: Body) -> OffsetForLeaderEpochRequest:
        return cls(
            body["replica_id"],
            tuple(
                (
                    topic["topic"],
                    tuple(
                        OffsetForLeaderEpochPartition(
                            TopicPartition(topic["topic"], p["partition"]), p["current_leader_epoch"], p["leader_epoch"]
                        )
                        for p in topic["partitions"]
                    ),
                )
                for topic in body["topics"]
            ),
        )


# --- controller requests ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LiveLeader:
    broker_id: int
    host: str
    port: int


@dataclass(frozen=True, slots=True)
class LeaderAndIsrRequest:
    controller_id: int
    controller_epoch: int
    broker_epoch: int
    partition_states: tuple[LeaderAndIsrPartitionState, ...]
    live_leaders: tuple[LiveLeader, ...]

    @classmethod
    def from_wire(cls, body: Body) -> LeaderAndIsrRequest:
        return cls(
            body["controller_id"],
            body["controller_epoch"],
            body["broker_epoch"],
            tuple(
                LeaderAndIsrPartitionState(
                    topic,
                    state["partition_index"],
                    state["controller_epoch"],
                    state["leader"],
                    state["leader_epoch"],
                    tuple(state["isr"]),
                    state["zk_version"],
                    tuple(state["replicas"]),
                    tuple(state["adding_replicas"]),
                    tuple(state["removing_replicas"]),
                    bool(state["is_new"]),
                )
                for topic, state in iter_partition_states(body)
            ),
            tuple(LiveLeader(b["broker_id"], b["host_name"], b["port"]) for b in body["live_leaders"]),
        )


@dataclass(frozen=True, slots=True)
class StopReplicaRequest:
    controller_id: int
    controller_epoch: int
    broker_epoch: int
    delete_partitions: bool
    partitions: tuple[TopicPartition, ...]

    @classmethod
    def from_wire(cls, body: Body) -> StopReplicaRequest:
        return cls(
            body["controller_id"],
            body["controller_epoch"],
            body["broker_epoch"],
            body["delete_partitions"],
            tuple(TopicPartition(topic, index) for topic, index in flatten_stop_replica_partitions(body)),
        )


@dataclass(frozen=True, slots=True)
class UpdateMetadataRequest:
    controller_id: int
    controller_epoch: int
    broker_epoch: int
    live_brokers: tuple[CachedBroker, ...]
    partition_states: tuple[UpdateMetadataPartitionState, ...]
    topic_ids: Mapping[str, uuid.UUID] = field(default_factory=dict)
    """The topics' ids (v7+; the zero UUID, meaning none, is left out), as Kafka's cache takes them."""

    @classmethod
    def from_wire(cls, body: Body) -> UpdateMetadataRequest:
        return cls(
            body["controller_id"],
            body["controller_epoch"],
            body["broker_epoch"],
            tuple(_live_broker(broker) for broker in body["live_brokers"]),
            tuple(
                UpdateMetadataPartitionState(
                    topic,
                    state["partition_index"],
                    state["controller_epoch"],
                    state["leader"],
                    state["leader_epoch"],
                    tuple(state["isr"]),
                    state["zk_version"],
                    tuple(state["replicas"]),
                    tuple(state["offline_replicas"]),
                )
                for topic, state in iter_partition_states(body)
            ),
            {t["topic_name"]: t["topic_id"] for t in body["topic_states"] if t.get("topic_id", ZERO_UUID) != ZERO_UUID},
        )


def _live_broker(broker: Body) -> CachedBroker:
    """A live broker of UpdateMetadata: every endpoint (v1+; v1 and v2 name none, so their listener is the
    protocol's, v3+ name it), or v0's single PLAINTEXT host and port; host and port of the first."""
    if broker["endpoints"]:
        endpoints = tuple(
            EndPoint(e.get("listener") or SECURITY_PROTOCOLS[e["security_protocol"]], e["host"], e["port"])
            for e in broker["endpoints"]
        )
    else:
        endpoints = (EndPoint("PLAINTEXT", broker["v0_host"], broker["v0_port"]),)
    first = endpoints[0]
    return CachedBroker(broker["id"], first.host, first.port, broker["rack"], endpoints)


@dataclass(frozen=True, slots=True)
class ControlledShutdownRequest:
    broker_id: int
    broker_epoch: int

    @classmethod
    def from_wire(cls, body: Body) -> ControlledShutdownRequest:
        return cls(body["broker_id"], body["broker_epoch"])


# --- admin and client requests ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ElectLeadersRequest:
    election_type: int
    """Kafka's `ElectionType` value: 0 preferred, 1 unclean."""
    topic_partitions: tuple[tuple[str, tuple[int, ...]], ...] | None
    """(topic, partitions) as requested; None for every partition of the cluster."""
    timeout_ms: int

    @property
    def partitions(self) -> list[TopicPartition] | None:
        if self.topic_partitions is None:
            return None
        return [TopicPartition(topic, p) for topic, partitions in self.topic_partitions for p in partitions]

    @classmethod
    def from_wire(cls, body: Body) -> ElectLeadersRequest:
        requested = body["topic_partitions"]
        return cls(
            body["election_type"],
            None if requested is None else tuple((t["topic"], tuple(t["partition_id"])) for t in requested),
            body["timeout_ms"],
        )


@dataclass(frozen=True, slots=True)
class InitProducerIdRequest:
    transactional_id: str | None
    transaction_timeout_ms: int

    @classmethod
    def from_wire(cls, body: Body) -> InitProducerIdRequest:
        return cls(body["transactional_id"], body["transaction_timeout_ms"])


@dataclass(frozen=True, slots=True)
class MetadataRequest:
    topics: tuple[str, ...] | None
    """None: every topic (a null list, or v0's empty one)."""

    @classmethod
    def from_wire(cls, body: Body, version: int) -> MetadataRequest:
        """Raises InvalidRequestError for a topic without a name or with an id (v10+): Kafka 2.8 has the
        fields but not the lookup by id."""
        topics = body["topics"]
        if topics is None or (version == 0 and not topics):
            return cls(None)
        for topic in topics:
            if topic["name"] is None:
                raise InvalidRequestError(f"Topic name can not be null for version {version}")
            if topic["topic_id"] != ZERO_UUID:
                raise InvalidRequestError(f"Topic IDs are not supported in requests for version {version}")
        return cls(tuple(t["name"] for t in topics))


# --- DeleteRecords, AlterReplicaLogDirs, DescribeLogDirs ---------------------------------------------------


@dataclass(frozen=True, slots=True)
class DeleteRecordsRequest:
    timeout_ms: int
    offsets: dict[TopicPartition, int]
    """Partition → offset (-1: the high watermark); a partition named twice keeps its last offset, as
    Kafka's handler builds a map."""

    @classmethod
    def from_wire(cls, body: Body) -> DeleteRecordsRequest:
        return cls(
            body["timeout_ms"],
            {
                TopicPartition(topic["name"], p["partition_index"]): p["offset"]
                for topic in body["topics"]
                for p in topic["partitions"]
            },
        )


@dataclass(frozen=True, slots=True)
class AlterReplicaLogDirsRequest:
    partition_dirs: dict[TopicPartition, str]
    """Partition → the log dir to move its replica to (Kafka's `partitionDirs`)."""

    @classmethod
    def from_wire(cls, body: Body) -> AlterReplicaLogDirsRequest:
        return cls(
            {
                TopicPartition(topic["name"], partition): log_dir["path"]
                for log_dir in body["dirs"]
                for topic in log_dir["topics"]
                for partition in topic["partitions"]
            }
        )


@dataclass(frozen=True, slots=True)
class DescribeLogDirsRequest:
    partitions: frozenset[TopicPartition] | None
    """The partitions to describe; None for all (the wire's null topics)."""

    @classmethod
    def from_wire(cls, body: Body) -> DescribeLogDirsRequest:
        topics = body["topics"]
        if topics is None:
            return cls(None)
        return cls(frozenset(TopicPartition(t["topic"], p) for t in topics for p in t["partition_index"]))
