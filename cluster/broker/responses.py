"""What the broker answers, as typed values, and the wire form of each response.

The replica manager returns per-partition results (Kafka's `ProduceResponse.PartitionResponse`,
`FetchPartitionData`, ...); KafkaApis turns them into the response body the codec encodes, with the
functions below, at its border. A body holds every field of the newest version we speak; the codec
writes what the response's version has.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping, Sequence, Set
from dataclasses import dataclass
from typing import Any

from kafkaops.cluster.broker.metadata_cache import CachedBroker
from kafkaops.cluster.common import errors
from kafkaops.cluster.protocol.records_send import TransferableRecords, parts_size
from kafkaops.cluster.protocol.schemas import RESPONSES, SUPPORTED_VERSIONS, ApiKey
from kafkaops.cluster.protocol.types import ZERO_UUID, Buffer
from kafkaops.cluster.state_change_log import UpdateMetadataPartitionState
from kafkaops.cluster.zk.values import INTERNAL_TOPICS, TopicPartition

NONE = errors.NONE

Body = dict[str, Any]
"""A response body for the codec."""


def _by_topic(tps: Iterable[TopicPartition], entries: Iterable[Body]) -> dict[str, list[Body]]:
    """Entries grouped by their partition's topic, topics in order of first appearance."""
    grouped: dict[str, list[Body]] = {}
    for tp, entry in zip(tps, entries, strict=True):
        grouped.setdefault(tp.topic, []).append(entry)
    return grouped


# --- Produce --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ProducePartitionResult:
    """Where a partition's batch landed, or why not (Kafka's `ProduceResponse.PartitionResponse`); an
    error's base offset is -1, its log start offset that of the append if there was one."""

    tp: TopicPartition
    error_code: int
    base_offset: int = -1
    log_start_offset: int = -1


def produce_response(results: Sequence[ProducePartitionResult], throttle_time_ms: int = 0) -> Body:
    responses = _by_topic(
        (r.tp for r in results),
        (
            {
                "index": r.tp.partition,
                "error_code": r.error_code,
                "base_offset": r.base_offset,
                "log_append_time_ms": -1,
                "log_start_offset": r.log_start_offset,
                "record_errors": [],
                "error_message": None,
            }
            for r in results
        ),
    )
    return {
        "responses": [{"name": t, "partition_responses": ps} for t, ps in responses.items()],
        "throttle_time_ms": throttle_time_ms,
    }


# --- Fetch ----------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FetchPartitionResult:
    """What a fetch read from one partition (Kafka's `FetchPartitionData`). An error leaves the offsets
    at -1 and the records empty."""

    tp: TopicPartition
    error_code: int
    high_watermark: int = -1
    log_start_offset: int = -1
    records: Buffer | TransferableRecords = b""
    """The batches read, a slice of a segment file (sent from it, socket_server) or bytes."""
    diverging_epoch: tuple[int, int] | None = None
    """Fetch v12: (epoch, end offset) of the leader's log where the fetcher's last fetched epoch diverges."""


@dataclass(frozen=True, slots=True)
class FetchResult:
    error_code: int
    """A session error (FETCH_SESSION_ID_NOT_FOUND, ...): then there are no partitions."""
    session_id: int
    partitions: Sequence[FetchPartitionResult]


def _epoch_end_offset(epoch: int, end_offset: int) -> Body:
    return {"epoch": epoch, "end_offset": end_offset}


def fetch_response(result: FetchResult, throttle_time_ms: int = 0) -> Body:
    topics = _by_topic(
        (r.tp for r in result.partitions),
        (
            {
                "partition": r.tp.partition,
                "error_code": r.error_code,
                "high_watermark": r.high_watermark,
                "last_stable_offset": r.high_watermark,  # no transactions: the LSO is the HW
                "log_start_offset": r.log_start_offset,
                "aborted_transactions": [],
                "preferred_read_replica": -1,
                "record_set": r.records,
                **({} if r.diverging_epoch is None else {"diverging_epoch": _epoch_end_offset(*r.diverging_epoch)}),
            }
            for r in result.partitions
        ),
    )
    return {
        "throttle_time_ms": throttle_time_ms,
        "error_code": result.error_code,
        "session_id": result.session_id,
        "responses": [{"topic": t, "partition_responses": ps} for t, ps in topics.items()],
    }


def fetch_response_size(result: FetchResult, version: int) -> int:
    """Kafka's `FetchResponse.sizeOf`: the response's size at `version` plus its 4-byte correlation id,
    what a consumer's fetch counts against its byte-rate quota."""
    out: list[bytes] = []
    RESPONSES[ApiKey.FETCH].encode_into(fetch_response(result), version, out)
    return 4 + parts_size(out)  # records that are slices of files count by their size, unread


# --- ListOffsets and OffsetForLeaderEpoch ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ListOffsetsPartitionResult:
    tp: TopicPartition
    error_code: int
    timestamp: int = -1
    offset: int = -1
    leader_epoch: int = -1


def list_offsets_response(topics: Iterable[tuple[str, Iterable[ListOffsetsPartitionResult]]]) -> Body:
    return {
        "throttle_time_ms": 0,
        "topics": [
            {
                "name": name,
                "partitions": [
                    {
                        "partition_index": r.tp.partition,
                        "error_code": r.error_code,
                        "timestamp": r.timestamp,
                        "offset": r.offset,
                        "leader_epoch": r.leader_epoch,
                    }
                    for r in results
                ],
            }
            for name, results in topics
        ],
    }


@dataclass(frozen=True, slots=True)
class EpochEndOffset:
    """The end offset of a leader epoch in one partition (Kafka's `EpochEndOffset`)."""

    tp: TopicPartition
    error_code: int
    leader_epoch: int
    end_offset: int = -1


def offset_for_leader_epoch_response(topics: Iterable[tuple[str, Iterable[EpochEndOffset]]]) -> Body:
    return {
        "throttle_time_ms": 0,
        "topics": [
            {
                "topic": name,
                "partitions": [
                    {
                        "error_code": r.error_code,
                        "partition": r.tp.partition,
                        "leader_epoch": r.leader_epoch,
                        "end_offset": r.end_offset,
                    }
                    for r in results
                ],
            }
            for name, results in topics
        ],
    }


# --- controller requests ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PartitionErrors:
    """The answer to LeaderAndIsr or StopReplica: a top-level error, else one code per partition in the
    request's order."""

    error_code: int
    partition_errors: Sequence[tuple[TopicPartition, int]] = ()


def partition_errors_response(result: PartitionErrors) -> Body:
    """A LeaderAndIsr or StopReplica response body (both have this shape)."""
    return {
        "error_code": result.error_code,
        "partition_errors": [
            {"topic_name": tp.topic, "partition_index": tp.partition, "error_code": code}
            for tp, code in result.partition_errors
        ],
    }


def update_metadata_response(error_code: int) -> Body:
    return {"error_code": error_code}


def controlled_shutdown_response(error_code: int, remaining: Iterable[TopicPartition] = ()) -> Body:
    return {
        "error_code": error_code,
        "remaining_partitions": [
            {"topic_name": tp.topic, "partition_index": tp.partition} for tp in sorted(remaining, key=str)
        ],
    }


# --- admin and client requests ------------------------------------------------------------------------------


def elect_leaders_response(
    partitions: Iterable[TopicPartition], results: Mapping[TopicPartition, tuple[int, str | None]], top_level: int
) -> Body:
    """Per-partition results grouped by topic; a top-level error is repeated on every partition, as v0 has
    no top-level field."""
    by_topic: dict[str, list[Body]] = {}
    for tp in partitions:
        code, message = results.get(tp, (top_level, None))
        by_topic.setdefault(tp.topic, []).append(
            {"partition_id": tp.partition, "error_code": code, "error_message": message}
        )
    return {
        "throttle_time_ms": 0,
        "error_code": top_level,
        "replica_election_results": [{"topic": t, "partition_result": ps} for t, ps in by_topic.items()],
    }


def init_producer_id_response(error_code: int, producer_id: int | None = None) -> Body:
    if producer_id is None:
        return {"throttle_time_ms": 0, "error_code": error_code}
    return {"throttle_time_ms": 0, "error_code": error_code, "producer_id": producer_id, "producer_epoch": 0}


def api_versions_error(error_code: int) -> Body:
    """Kafka's `ApiVersionsRequest.getErrorResponse`: the error alone, no API listed."""
    return {"error_code": error_code, "api_keys": [], "throttle_time_ms": 0}


def api_versions_response(served: Iterable[ApiKey]) -> Body:
    """Every API this broker serves with the versions we speak (v3's tagged feature fields stay empty:
    no feature versioning in ZooKeeper mode without `/feature`)."""
    return {
        "error_code": 0,
        "api_keys": [
            {"api_key": int(k), "min_version": SUPPORTED_VERSIONS[k][0], "max_version": SUPPORTED_VERSIONS[k][1]}
            for k in sorted(served)
        ],
        "throttle_time_ms": 0,
    }


def metadata_error_response(requested: Sequence[Body] | None, error_code: int) -> Body:
    """Kafka's `MetadataRequest.getErrorResponse`: every requested topic with the error, no broker."""
    return {
        "brokers": [],
        "topics": [
            {
                "error_code": error_code,
                "name": topic["name"] or "",  # the response's name is not nullable
                "topic_id": topic["topic_id"],
                "is_internal": False,
                "partitions": [],
            }
            for topic in requested or []
        ],
    }


def metadata_response(
    brokers: Sequence[CachedBroker],
    topics: Iterable[tuple[str, Mapping[int, UpdateMetadataPartitionState] | None]],
    cluster_id: str | None,
    controller_id: int | None,
    topic_ids: Mapping[str, uuid.UUID] | None = None,
    alive_ids: Set[int] | None = None,
    error_unavailable_listeners: bool = False,
) -> Body:
    """A Metadata response body (any version 0-11: the codec drops what a version lacks), from the cache's
    brokers, partition states (None: a topic the cache does not know) and topic ids (v10+; the zero UUID
    for a topic without one, as Kafka's `getTopicMetadata`).

    `brokers` are those the client's listener reaches; `alive_ids` every live broker (default: `brokers`).
    Kafka's errors: an unknown topic is UNKNOWN_TOPIC_OR_PARTITION; a partition whose leader is not alive
    is LEADER_NOT_AVAILABLE, one whose live leader lacks the client's listener LISTENER_NOT_FOUND with
    `error_unavailable_listeners` (v6+; LEADER_NOT_AVAILABLE before); missing replicas are
    REPLICA_NOT_AVAILABLE only for old clients, so like Kafka 2.8 we report them as offline replicas instead.
    """
    reachable = {b.broker_id for b in brokers}
    alive = reachable if alive_ids is None else alive_ids
    topic_entries: list[Body] = []
    for topic, partitions in topics:
        if partitions is None:
            topic_entries.append(
                {
                    "error_code": errors.UnknownTopicOrPartitionError.code,
                    "name": topic,
                    "is_internal": False,
                    "partitions": [],
                }
            )
            continue
        entries = []
        for index, partition in sorted(partitions.items()):
            leader_alive = partition.leader in reachable
            if leader_alive:
                error = NONE
            elif partition.leader in alive and error_unavailable_listeners:
                error = errors.ListenerNotFoundError.code
            else:
                error = errors.LeaderNotAvailableError.code
            entries.append(
                {
                    "error_code": error,
                    "partition_index": index,
                    "leader_id": partition.leader if leader_alive else -1,
                    "leader_epoch": partition.leader_epoch,
                    "replica_nodes": list(partition.replicas),
                    "isr_nodes": list(partition.isr),
                    "offline_replicas": [r for r in partition.replicas if r not in alive],
                }
            )
        topic_entries.append(
            {
                "error_code": NONE,
                "name": topic,
                "topic_id": (topic_ids or {}).get(topic, ZERO_UUID),
                "is_internal": topic in INTERNAL_TOPICS,
                "partitions": entries,
            }
        )
    return {
        "throttle_time_ms": 0,
        "brokers": [{"node_id": b.broker_id, "host": b.host, "port": b.port, "rack": b.rack} for b in brokers],
        "cluster_id": cluster_id,
        "controller_id": controller_id if controller_id is not None else -1,
        "topics": topic_entries,
    }


# --- DeleteRecords, AlterReplicaLogDirs, DescribeLogDirs ---------------------------------------------------


def delete_records_response(results: Mapping[TopicPartition, tuple[int, int]]) -> Body:
    """Per partition (error code, low watermark), grouped by topic in order of first appearance."""
    return {
        "throttle_time_ms": 0,
        "topics": [
            {"name": topic, "partitions": partitions}
            for topic, partitions in _by_topic(
                results,
                (
                    {"partition_index": tp.partition, "low_watermark": lw, "error_code": code}
                    for tp, (code, lw) in results.items()
                ),
            ).items()
        ],
    }


def alter_replica_log_dirs_response(results: Mapping[TopicPartition, int]) -> Body:
    return {
        "throttle_time_ms": 0,
        "results": [
            {"topic_name": topic, "partitions": partitions}
            for topic, partitions in _by_topic(
                results, ({"partition_index": tp.partition, "error_code": code} for tp, code in results.items())
            ).items()
        ],
    }


@dataclass(frozen=True, slots=True)
class ReplicaDescription:
    """One log in a DescribeLogDirs answer (Kafka's `DescribeLogDirsPartition`)."""

    partition: int
    size: int
    offset_lag: int
    is_future: bool


@dataclass(frozen=True, slots=True)
class LogDirDescription:
    """One log dir in a DescribeLogDirs answer: its logs by topic (a topic whose logs were not asked for
    has an empty list, as Kafka answers)."""

    log_dir: str
    error_code: int
    topics: dict[str, list[ReplicaDescription]]


def describe_log_dirs_response(descriptions: Iterable[LogDirDescription]) -> Body:
    return {
        "throttle_time_ms": 0,
        "results": [
            {
                "error_code": description.error_code,
                "log_dir": description.log_dir,
                "topics": [
                    {
                        "name": topic,
                        "partitions": [
                            {
                                "partition_index": replica.partition,
                                "partition_size": replica.size,
                                "offset_lag": replica.offset_lag,
                                "is_future_key": replica.is_future,
                            }
                            for replica in replicas
                        ],
                    }
                    for topic, replicas in description.topics.items()
                ],
            }
            for description in descriptions
        ],
    }
