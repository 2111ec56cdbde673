"""The Admin API calls about log dirs and log start offsets, as Kafka 2.8's `KafkaAdminClient` makes them:
`describe_log_dirs`, `describe_replica_log_dirs`, `alter_replica_log_dirs` (each to the brokers named) and
`delete_records` (to each partition's leader). Over `KafkaClient.broker_request`, so they work against any
broker that serves the APIs (ours, or Apache Kafka's), at the version both sides speak.

Errors the brokers answer come back per broker, dir, replica or partition as the error for Kafka's code
(`BrokerError`, with Kafka's default text for it, as the admin client's `Errors.exception()`); a broker
that cannot be reached raises.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kafkaops.admin.kafka_client.admin_calls import to_broker
from kafkaops.admin.kafka_client.client import KafkaClient
from kafkaops.cluster.common import errors
from kafkaops.cluster.common.errors import BrokerError, ClusterAuthorizationFailedError, from_code
from kafkaops.cluster.common.java_errors import default_message
from kafkaops.cluster.protocol.schemas import ApiKey
from kafkaops.cluster.zk.values import TopicPartition

INVALID_OFFSET_LAG = -1


@dataclass(frozen=True, slots=True)
class TopicPartitionReplica:
    """A partition's replica on one broker (Kafka's `TopicPartitionReplica`); prints as Kafka's toString."""

    topic: str
    partition: int
    broker_id: int

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}-{self.broker_id}"


@dataclass(frozen=True, slots=True)
class ReplicaInfo:
    """One log in a log dir (Kafka's `ReplicaInfo`): bytes on disk, offset lag (a future log's distance to
    the current log's end; -1 when the broker does not serve the partition), whether it is a future log."""

    size: int
    offset_lag: int
    is_future: bool


@dataclass(frozen=True, slots=True)
class LogDirDescription:
    """A broker's log dir (Kafka's `LogDirDescription`): its error (None when healthy) and its logs, in the
    order the broker answered them."""

    error: BrokerError | None
    replica_infos: Mapping[TopicPartition, ReplicaInfo]


@dataclass(frozen=True, slots=True)
class ReplicaLogDirInfo:
    """Where a replica lives on its broker (Kafka's `DescribeReplicaLogDirsResult.ReplicaLogDirInfo`):
    its current and, while it is being moved, future log dir with their offset lags; None and -1 when
    there is none."""

    current_replica_log_dir: str | None = None
    current_replica_offset_lag: int = INVALID_OFFSET_LAG
    future_replica_log_dir: str | None = None
    future_replica_offset_lag: int = INVALID_OFFSET_LAG


def _error(code: int) -> BrokerError | None:
    return None if code == errors.NONE else _exception(code)


def _exception(code: int) -> BrokerError:
    """`Errors.forCode(code).exception()`: the error with Kafka's default text for its code."""
    return from_code(code, default_message(code))


def _topics_body(partitions: Iterable[TopicPartition], name_key: str, partitions_key: str) -> list[dict[str, Any]]:
    grouped: dict[str, list[int]] = {}
    for tp in partitions:
        grouped.setdefault(tp.topic, []).append(tp.partition)
    return [{name_key: topic, partitions_key: indexes} for topic, indexes in grouped.items()]


def describe_log_dirs_response(response: Mapping[str, Any]) -> dict[str, LogDirDescription]:
    """A DescribeLogDirs answer as the admin client reads it (`logDirDescriptions`): log dir → description.
    Raises ClusterAuthorizationFailedError for an answer without dirs, as Kafka's client does."""
    descriptions: dict[str, LogDirDescription] = {}
    for result in response["results"]:
        infos = {
            TopicPartition(topic["name"], p["partition_index"]): ReplicaInfo(
                p["partition_size"], p["offset_lag"], p["is_future_key"]
            )
            for topic in result["topics"]
            for p in topic["partitions"]
        }
        descriptions[result["log_dir"]] = LogDirDescription(_error(result["error_code"]), infos)
    if not descriptions:
        raise _exception(ClusterAuthorizationFailedError.code)
    return descriptions


def describe_log_dirs(client: KafkaClient, broker_ids: Iterable[int]) -> dict[int, dict[str, LogDirDescription]]:
    """Kafka's `describeLogDirs`: every log dir of each broker with all its logs. Raises what a broker's
    request raises (NetworkExceptionError for a broker that is not in the cluster or cannot be reached)."""
    results: dict[int, dict[str, LogDirDescription]] = {}
    for broker_id in dict.fromkeys(broker_ids):
        response = to_broker(client, broker_id, ApiKey.DESCRIBE_LOG_DIRS, {"topics": None})
        results[broker_id] = describe_log_dirs_response(response)
    return results


def partition_sizes(descriptions: Mapping[int, Mapping[str, LogDirDescription]]) -> dict[tuple[str, int], int]:
    """Each partition's size in bytes, the largest of its replicas' current logs (future logs and failed
    dirs aside): what a reassignment planner balances, from a `describe_log_dirs` answer."""
    sizes: dict[tuple[str, int], int] = {}
    for dirs in descriptions.values():
        for description in dirs.values():
            if description.error is not None:
                continue
            for tp, info in description.replica_infos.items():
                if not info.is_future:
                    key = (tp.topic, tp.partition)
                    sizes[key] = max(sizes.get(key, 0), info.size)
    return sizes


def describe_replica_log_dirs(
    client: KafkaClient, replicas: Iterable[TopicPartitionReplica]
) -> dict[TopicPartitionReplica, ReplicaLogDirInfo | BrokerError]:
    """Kafka's `describeReplicaLogDirs`: one DescribeLogDirs per broker for the partitions asked of it;
    each replica's dirs, or the error of a dir that failed (KAFKA_STORAGE_ERROR...)."""
    by_broker: dict[int, list[TopicPartitionReplica]] = {}
    for replica in dict.fromkeys(replicas):
        by_broker.setdefault(replica.broker_id, []).append(replica)
    results: dict[TopicPartitionReplica, ReplicaLogDirInfo | BrokerError] = {}
    for broker_id, wanted in by_broker.items():
        tps = [TopicPartition(r.topic, r.partition) for r in wanted]
        body = {"topics": _topics_body(tps, "topic", "partition_index")}
        response = to_broker(client, broker_id, ApiKey.DESCRIBE_LOG_DIRS, body)
        found: dict[TopicPartition, ReplicaLogDirInfo | BrokerError] = {tp: ReplicaLogDirInfo() for tp in tps}
        for log_dir, description in describe_log_dirs_response(response).items():
            for tp, info in description.replica_infos.items():
                current = found.get(tp)
                if current is None or isinstance(current, BrokerError):
                    continue
                if description.error is not None:
                    found[tp] = description.error
                elif info.is_future:
                    found[tp] = ReplicaLogDirInfo(
                        current.current_replica_log_dir, current.current_replica_offset_lag, log_dir, info.offset_lag
                    )
                else:
                    found[tp] = ReplicaLogDirInfo(
                        log_dir, info.offset_lag, current.future_replica_log_dir, current.future_replica_offset_lag
                    )
        for replica in wanted:
            results[replica] = found[TopicPartition(replica.topic, replica.partition)]
    return results


def alter_replica_log_dirs(
    client: KafkaClient, assignment: Mapping[TopicPartitionReplica, str]
) -> dict[TopicPartitionReplica, BrokerError | None]:
    """Kafka's `alterReplicaLogDirs`: one AlterReplicaLogDirs per broker; per replica None once the broker
    accepted the move, or its error (REPLICA_NOT_AVAILABLE while the replica does not exist there yet: the
    broker remembers the dir for when it does; LOG_DIR_NOT_FOUND, KAFKA_STORAGE_ERROR, ...)."""
    by_broker: dict[int, dict[TopicPartitionReplica, str]] = {}
    for replica, log_dir in assignment.items():
        by_broker.setdefault(replica.broker_id, {})[replica] = log_dir
    results: dict[TopicPartitionReplica, BrokerError | None] = {}
    for broker_id, moves in by_broker.items():
        dirs: dict[str, list[TopicPartition]] = {}
        for replica, log_dir in moves.items():
            dirs.setdefault(log_dir, []).append(TopicPartition(replica.topic, replica.partition))
        body = {
            "dirs": [{"path": path, "topics": _topics_body(tps, "name", "partitions")} for path, tps in dirs.items()]
        }
        response = to_broker(client, broker_id, ApiKey.ALTER_REPLICA_LOG_DIRS, body)
        answered = {
            TopicPartition(topic["topic_name"], p["partition_index"]): _error(p["error_code"])
            for topic in response["results"]
            for p in topic["partitions"]
        }
        for replica in moves:
            tp = TopicPartition(replica.topic, replica.partition)
            results[replica] = answered[tp] if tp in answered else _exception(errors.UnknownServerError.code)
    return results


def delete_records(
    client: KafkaClient, offsets: Mapping[TopicPartition, int], timeout_ms: int = 30000
) -> dict[TopicPartition, int | BrokerError]:
    """Kafka's `deleteRecords`: per partition its new low watermark, or its error. The partitions' leaders
    come from fresh metadata (a topic's error, LEADER_NOT_AVAILABLE without a leader), then one
    DeleteRecords per leader, whose answer waits until every live replica deleted (within `timeout_ms`)."""
    cluster = client.metadata(list(dict.fromkeys(tp.topic for tp in offsets)))
    results: dict[TopicPartition, int | BrokerError] = {}
    by_leader: dict[int, dict[TopicPartition, int]] = {}
    for tp, offset in offsets.items():
        topic = cluster.topics.get(tp.topic)
        if topic is None or topic.error_code != errors.NONE:
            results[tp] = _exception(
                topic.error_code if topic is not None else errors.UnknownTopicOrPartitionError.code
            )
            continue
        info = cluster.partition(tp.topic, tp.partition)
        if info is None or info.leader < 0:
            results[tp] = _exception(errors.LeaderNotAvailableError.code)
            continue
        by_leader.setdefault(info.leader, {})[tp] = offset
    for leader, wanted in by_leader.items():
        grouped: dict[str, list[dict[str, int]]] = {}
        for tp, offset in wanted.items():
            grouped.setdefault(tp.topic, []).append({"partition_index": tp.partition, "offset": offset})
        body = {"topics": [{"name": t, "partitions": ps} for t, ps in grouped.items()], "timeout_ms": timeout_ms}
        try:
            response = to_broker(client, leader, ApiKey.DELETE_RECORDS, body, timeout_ms)
        except BrokerError as error:  # the leader could not be reached: its partitions fail with the cause
            for tp in wanted:
                results[tp] = error
            continue
        for topic in response["topics"]:
            for p in topic["partitions"]:
                tp = TopicPartition(topic["name"], p["partition_index"])
                if tp in wanted:
                    code = p["error_code"]
                    results[tp] = p["low_watermark"] if code == errors.NONE else _exception(code)
    return {tp: results.get(tp, _exception(errors.UnknownServerError.code)) for tp in offsets}
