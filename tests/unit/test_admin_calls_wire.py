"""The Admin API calls' requests and answers against the codec's schemas, at every version both sides
speak: each request body encodes and decodes back, and each answer, encoded by the schema and decoded
again, is read by the call (so no field name can be wrong on either side)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from kafkaops.admin.kafka_client import config_admin, reassignment_admin, topic_admin
from kafkaops.admin.kafka_client.config_admin import AlterConfigOpType, ConfigResource, ConfigSource, ResourceType
from kafkaops.admin.kafka_client.metadata import BrokerNode, ClusterMetadata
from kafkaops.cluster.common.errors import InvalidConfigError, InvalidReplicationFactorError, TopicExistsError
from kafkaops.cluster.protocol.messages import (
    RequestHeader,
    decode_request,
    decode_response,
    encode_request,
    encode_response,
)
from kafkaops.cluster.protocol.schemas import SUPPORTED_VERSIONS, ApiKey
from kafkaops.cluster.zk.values import ReplicaAssignment, TopicPartition


class WireClient:
    """Stands in for KafkaClient at one API version: requests go through the codec both ways, and the
    canned answer too."""

    def __init__(self, version: int, answer: Mapping[str, Any]) -> None:
        self.version = version
        self.answer = answer
        self.requests: list[tuple[ApiKey, dict[str, Any]]] = []

    def _round_trip(self, api_key: ApiKey, body: Mapping[str, Any]) -> tuple[int, dict[str, Any]]:
        payload = encode_request(RequestHeader(api_key, self.version, 7, "test"), body)
        self.requests.append((api_key, decode_request(payload).body))
        _, answer = decode_response(api_key, self.version, encode_response(api_key, self.version, 7, self.answer))
        return self.version, answer

    def metadata(self, topics: list[str] | None = None) -> ClusterMetadata:
        return ClusterMetadata({1: BrokerNode(1, "127.0.0.1", 9092)}, 1, "cluster", {})

    def controller_request(
        self, api_key: ApiKey, body: Mapping[str, Any], extra_timeout_ms: int = 0
    ) -> tuple[int, dict[str, Any]]:
        return self._round_trip(api_key, body)

    def broker_request(
        self, broker_id: int, api_key: ApiKey, body: Mapping[str, Any], extra_timeout_ms: int = 0
    ) -> tuple[int, dict[str, Any]]:
        return self._round_trip(api_key, body)


def versions(api_key: ApiKey) -> list[int]:
    low, high = SUPPORTED_VERSIONS[api_key]
    return list(range(low, high + 1))


@pytest.mark.parametrize("version", versions(ApiKey.CREATE_TOPICS))
def test_create_topics(version):
    answer = {
        "throttle_time_ms": 0,
        "topics": [
            {
                "name": "t",
                "error_code": 36,
                "error_message": "Topic 't' already exists.",
                "num_partitions": -1,
                "replication_factor": -1,
                "configs": [],
            }
        ],
    }
    client = WireClient(version, answer)
    new = topic_admin.NewTopic("t", 3, 2, None, {"retention.ms": "1000"})
    with pytest.raises(TopicExistsError) as raised:
        topic_admin.create_topics(client, [new], 30000)  # type: ignore[arg-type]
    assert str(raised.value) == (
        "Topic 't' already exists." if version >= 1 else "Topic with this name already exists."
    )
    body = client.requests[0][1]
    topic = body["topics"][0]
    assert (topic["name"], topic["num_partitions"], topic["replication_factor"]) == ("t", 3, 2)
    assert [(c["name"], c["value"]) for c in topic["configs"]] == [("retention.ms", "1000")]
    assert body["timeout_ms"] == 30000
    manual = topic_admin.NewTopic("m", assignment={0: [1, 2], 1: [2, 3]})
    client = WireClient(version, {**answer, "topics": [{**answer["topics"][0], "error_code": 0}]})
    topic_admin.create_topics(client, [manual], 1000)  # type: ignore[arg-type]
    sent = client.requests[0][1]["topics"][0]
    assert (sent["num_partitions"], sent["replication_factor"]) == (-1, -1)
    assert [(a["partition_index"], a["broker_ids"]) for a in sent["assignments"]] == [(0, [1, 2]), (1, [2, 3])]


@pytest.mark.parametrize("version", versions(ApiKey.DELETE_TOPICS))
def test_delete_topics(version):
    client = WireClient(
        version, {"throttle_time_ms": 0, "responses": [{"name": "t", "error_code": 0, "error_message": None}]}
    )
    topic_admin.delete_topics(client, ["t"], 30000)  # type: ignore[arg-type]
    body = client.requests[0][1]
    names = [t["name"] for t in body["topics"]] if version >= 6 else body["topic_names"]
    assert names == ["t"]


@pytest.mark.parametrize("version", versions(ApiKey.CREATE_PARTITIONS))
def test_create_partitions(version):
    answer = {"throttle_time_ms": 0, "results": [{"name": "t", "error_code": 38, "error_message": None}]}
    client = WireClient(version, answer)
    with pytest.raises(InvalidReplicationFactorError):
        topic_admin.create_partitions(client, {"t": topic_admin.NewPartitions(4, [[1, 2]])}, 30000)  # type: ignore[arg-type]
    topic = client.requests[0][1]["topics"][0]
    assert (topic["name"], topic["count"], [a["broker_ids"] for a in topic["assignments"]]) == ("t", 4, [[1, 2]])
    client = WireClient(version, {**answer, "results": [{"name": "t", "error_code": 0, "error_message": None}]})
    topic_admin.create_partitions(client, {"t": topic_admin.NewPartitions(4)}, 30000)  # type: ignore[arg-type]
    assert client.requests[0][1]["topics"][0]["assignments"] is None


@pytest.mark.parametrize("version", versions(ApiKey.DESCRIBE_CONFIGS))
def test_describe_configs(version):
    synonyms = [{"name": "retention.ms", "value": "5", "source": 1}] if version >= 1 else []
    config = {
        "name": "retention.ms",
        "value": "5",
        "read_only": False,
        "is_default": False,
        "config_source": 1,
        "is_sensitive": False,
        "synonyms": synonyms,
        "config_type": 0,
        "documentation": None,
    }
    answer = {
        "throttle_time_ms": 0,
        "results": [
            {"error_code": 0, "error_message": None, "resource_type": 2, "resource_name": "t", "configs": [config]}
        ],
    }
    client = WireClient(version, answer)
    (entry,) = config_admin.describe_configs(client, ConfigResource(ResourceType.TOPIC, "t"), include_synonyms=True)  # type: ignore[arg-type]
    assert (entry.name, entry.value) == ("retention.ms", "5")
    assert entry.source is (ConfigSource.DYNAMIC_TOPIC_CONFIG if version >= 1 else ConfigSource.UNKNOWN)
    default = {**config, "is_default": True, "config_source": 5}
    client = WireClient(version, {**answer, "results": [{**answer["results"][0], "configs": [default]}]})
    (entry,) = config_admin.describe_configs(client, ConfigResource(ResourceType.TOPIC, "t"))  # type: ignore[arg-type]
    assert entry.is_default  # v0 says so with is_default, later versions with the source
    resource = client.requests[0][1]["resources"][0]
    assert (resource["resource_type"], resource["resource_name"], resource["configuration_keys"]) == (2, "t", None)


@pytest.mark.parametrize("version", versions(ApiKey.INCREMENTAL_ALTER_CONFIGS))
def test_incremental_alter_configs(version):
    answer = {
        "throttle_time_ms": 0,
        "responses": [{"error_code": 40, "error_message": "Invalid value x", "resource_type": 2, "resource_name": "t"}],
    }
    client = WireClient(version, answer)
    operations = [("retention.ms", AlterConfigOpType.SET, "x"), ("segment.ms", AlterConfigOpType.DELETE, "")]
    with pytest.raises(InvalidConfigError) as raised:
        config_admin.incremental_alter_configs(client, ConfigResource(ResourceType.TOPIC, "t"), operations)  # type: ignore[arg-type]
    assert str(raised.value) == "Invalid value x"
    sent = client.requests[0][1]["resources"][0]["configs"]
    assert [(c["name"], c["config_operation"], c["value"]) for c in sent] == [
        ("retention.ms", 0, "x"),
        ("segment.ms", 1, ""),
    ]


@pytest.mark.parametrize("version", versions(ApiKey.ALTER_CONFIGS))
def test_alter_configs(version):
    answer = {
        "throttle_time_ms": 0,
        "responses": [{"error_code": 0, "error_message": None, "resource_type": 4, "resource_name": "1"}],
    }
    client = WireClient(version, answer)
    config_admin.alter_configs(client, ConfigResource(ResourceType.BROKER, "1"), {"log.cleaner.threads": "2"})  # type: ignore[arg-type]
    sent = client.requests[0][1]["resources"][0]
    assert (sent["resource_type"], sent["resource_name"]) == (4, "1")
    assert [(c["name"], c["value"]) for c in sent["configs"]] == [("log.cleaner.threads", "2")]


@pytest.mark.parametrize("version", versions(ApiKey.ALTER_PARTITION_REASSIGNMENTS))
def test_alter_partition_reassignments(version):
    answer = {
        "throttle_time_ms": 0,
        "error_code": 0,
        "error_message": None,
        "responses": [
            {
                "name": "t",
                "partitions": [
                    {"partition_index": 0, "error_code": 0, "error_message": None},
                    {"partition_index": 1, "error_code": 85, "error_message": None},
                ],
            }
        ],
    }
    client = WireClient(version, answer)
    errors = reassignment_admin.alter_partition_reassignments(
        client,  # type: ignore[arg-type]
        {TopicPartition("t", 0): [2, 1], TopicPartition("t", 1): None},
    )
    assert {tp: str(e) for tp, e in errors.items()} == {
        TopicPartition("t", 1): "No partition reassignment is in progress."
    }
    sent = client.requests[0][1]["topics"][0]
    assert [(p["partition_index"], p["replicas"]) for p in sent["partitions"]] == [(0, [2, 1]), (1, None)]


@pytest.mark.parametrize("version", versions(ApiKey.LIST_PARTITION_REASSIGNMENTS))
def test_list_partition_reassignments(version):
    answer = {
        "throttle_time_ms": 0,
        "error_code": 0,
        "error_message": None,
        "topics": [
            {
                "name": "t",
                "partitions": [
                    {"partition_index": 2, "replicas": [3, 0, 2], "adding_replicas": [0], "removing_replicas": [2]}
                ],
            }
        ],
    }
    client = WireClient(version, answer)
    found = reassignment_admin.list_partition_reassignments(client, [TopicPartition("t", 2)])  # type: ignore[arg-type]
    assert found == {TopicPartition("t", 2): ReplicaAssignment((3, 0, 2), (0,), (2,))}
    assert client.requests[0][1]["topics"] == [{"name": "t", "partition_indexes": [2]}]
    client = WireClient(version, answer)
    reassignment_admin.list_partition_reassignments(client)  # type: ignore[arg-type]
    assert client.requests[0][1]["topics"] is None


class SequenceClient(WireClient):
    """A WireClient answering from a list, one answer per request."""

    def __init__(self, version: int, answers: list[Mapping[str, Any]]) -> None:
        super().__init__(version, answers[0])
        self.answers = list(answers)

    def _round_trip(self, api_key: ApiKey, body: Mapping[str, Any]) -> tuple[int, dict[str, Any]]:
        self.answer = self.answers.pop(0)
        return super()._round_trip(api_key, body)


def _alter_dirs_answer(code: int) -> dict[str, Any]:
    return {
        "throttle_time_ms": 0,
        "results": [{"topic_name": "t", "partitions": [{"partition_index": 0, "error_code": code}]}],
    }


@pytest.mark.parametrize("version", versions(ApiKey.ALTER_REPLICA_LOG_DIRS))
def test_log_dir_moves_are_retried_while_the_replica_is_not_there_yet(version):
    from kafkaops.admin.kafka_client.log_dirs import TopicPartitionReplica
    from kafkaops.admin.reassignment_admin_ops import execute_moves
    from kafkaops.cluster.common.errors import AdminOperationError, TerseReassignmentFailure

    replica = TopicPartitionReplica("t", 0, 1)
    pauses: list[float] = []
    client = SequenceClient(version, [_alter_dirs_answer(9), _alter_dirs_answer(0)])
    lines = execute_moves(client, {replica: "/data/b"}, 10000, clock=lambda: 0.0, sleep=pauses.append)  # type: ignore[arg-type]
    assert lines == ["Successfully started log directory move for: t-0-1"]
    assert pauses == [0.1]
    assert [r[1]["dirs"][0]["path"] for r in client.requests] == ["/data/b", "/data/b"]
    times = iter([0.0, 20.0])
    client = SequenceClient(version, [_alter_dirs_answer(9)])
    with pytest.raises(
        TerseReassignmentFailure, match="^Timed out before log directory move could be started for: t-0-1$"
    ):
        execute_moves(client, {replica: "/data/b"}, 10000, clock=lambda: next(times), sleep=pauses.append)  # type: ignore[arg-type]
    client = SequenceClient(version, [_alter_dirs_answer(57)])  # LOG_DIR_NOT_FOUND
    with pytest.raises(AdminOperationError, match="^Failed to alter dir for t-0-1$"):
        execute_moves(client, {replica: "/nope"}, 10000)  # type: ignore[arg-type]
