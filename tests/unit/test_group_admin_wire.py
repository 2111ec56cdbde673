"""The consumer-group Admin API calls (`kafka_client.group_admin`) against the codec's schemas: each
request encodes and decodes at the version under test, each canned answer goes through the codec, so
no field name can be wrong on either side; and the coordinator retries (NOT_COORDINATOR,
COORDINATOR_LOAD_IN_PROGRESS) until the deadline, on an injected clock."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from kafkaops.admin.kafka_client import group_admin as ga
from kafkaops.admin.kafka_client.consumer_protocol import Assignment, encode_assignment
from kafkaops.admin.kafka_client.metadata import BrokerNode, ClusterMetadata
from kafkaops.cluster.common.errors import (
    CoordinatorLoadInProgressError,
    CoordinatorNotAvailableError,
    GroupIdNotFoundError,
    InvalidArgumentError,
    NonEmptyGroupError,
    NotCoordinatorError,
    RequestTimedOutError,
    UnknownMemberIdError,
)
from kafkaops.cluster.protocol.messages import (
    RequestHeader,
    decode_request,
    decode_response,
    encode_request,
    encode_response,
)
from kafkaops.cluster.protocol.schemas import SUPPORTED_VERSIONS, ApiKey
from kafkaops.cluster.zk.values import TopicPartition

T0, T1 = TopicPartition("t", 0), TopicPartition("t", 1)


def found(node_id: int = 2, code: int = 0) -> dict[str, Any]:
    return {"error_code": code, "error_message": None, "node_id": node_id, "host": "127.0.0.1", "port": 9000 + node_id}


class WireClient:
    """Stands in for KafkaClient: answers per API key in order (the last one repeats), every request and
    answer through the codec at `version` (capped to the API's range)."""

    retry_backoff_ms = 100

    def __init__(self, version: int, answers: Mapping[ApiKey, list[dict[str, Any]]]) -> None:
        self.version = version
        self.answers = {key: list(values) for key, values in answers.items()}
        self.requests: list[tuple[ApiKey, int | None, dict[str, Any]]] = []

    def _round_trip(self, broker: int | None, api_key: ApiKey, body: Mapping[str, Any]) -> tuple[int, dict[str, Any]]:
        low, high = SUPPORTED_VERSIONS[api_key]
        version = max(low, min(self.version, high))
        payload = encode_request(RequestHeader(api_key, version, 7, "test"), body)
        self.requests.append((api_key, broker, decode_request(payload).body))
        queue = self.answers[api_key]
        answer = queue.pop(0) if len(queue) > 1 else queue[0]
        _, decoded = decode_response(api_key, version, encode_response(api_key, version, 7, answer))
        return version, decoded

    def metadata(self, topics: list[str] | None = None) -> ClusterMetadata:
        brokers = {i: BrokerNode(i, "127.0.0.1", 9000 + i) for i in (1, 2)}
        return ClusterMetadata(brokers, 1, "cluster", {})

    def controller_request(
        self, api_key: ApiKey, body: Mapping[str, Any], extra_timeout_ms: int = 0
    ) -> tuple[int, dict[str, Any]]:
        return self._round_trip(None, api_key, body)

    def broker_request(
        self, broker_id: int, api_key: ApiKey, body: Mapping[str, Any], extra_timeout_ms: int = 0
    ) -> tuple[int, dict[str, Any]]:
        return self._round_trip(broker_id, api_key, body)


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def versions(api_key: ApiKey) -> list[int]:
    low, high = SUPPORTED_VERSIONS[api_key]
    return list(range(low, high + 1))


def described(code: int = 0, state: str = "Stable", protocol_type: str = "consumer") -> dict[str, Any]:
    member = {
        "member_id": "m-1",
        "group_instance_id": None,
        "client_id": "c",
        "client_host": "/127.0.0.1",
        "member_metadata": b"",
        "member_assignment": encode_assignment(Assignment((T0, T1))),
    }
    group = {
        "error_code": code,
        "group_id": "g",
        "group_state": state,
        "protocol_type": protocol_type,
        "protocol_data": "range",
        "members": [member],
    }
    return {"groups": [group]}


@pytest.mark.parametrize("version", versions(ApiKey.DESCRIBE_GROUPS))
def test_describe_reads_members_and_their_assignments(version: int) -> None:
    client = WireClient(version, {ApiKey.FIND_COORDINATOR: [found()], ApiKey.DESCRIBE_GROUPS: [described()]})
    description = ga.describe_consumer_group(client, "g", 5000)  # type: ignore[arg-type]
    assert description.state == "Stable" and description.partition_assignor == "range"
    assert description.coordinator == BrokerNode(2, "127.0.0.1", 9002)
    (member,) = description.members
    assert (member.member_id, member.client_id, member.host, member.assignment) == ("m-1", "c", "/127.0.0.1", (T0, T1))
    (find, _, find_body), (describe, broker, _) = client.requests
    assert find is ApiKey.FIND_COORDINATOR and find_body["key"] == "g"
    assert describe is ApiKey.DESCRIBE_GROUPS and broker == 2


def test_describe_refuses_a_group_of_another_protocol() -> None:
    client = WireClient(
        5, {ApiKey.FIND_COORDINATOR: [found()], ApiKey.DESCRIBE_GROUPS: [described(protocol_type="connect")]}
    )
    with pytest.raises(InvalidArgumentError, match=r"^GroupId g is not a consumer group \(connect\)\.$"):
        ga.describe_consumer_group(client, "g", 5000)  # type: ignore[arg-type]


def test_coordinator_moved_and_loading_are_retried() -> None:
    client = WireClient(
        5,
        {
            ApiKey.FIND_COORDINATOR: [found(code=CoordinatorNotAvailableError.code), found(1), found(2)],
            ApiKey.DESCRIBE_GROUPS: [
                described(NotCoordinatorError.code),
                described(CoordinatorLoadInProgressError.code),
                described(),
            ],
        },
    )
    clock = Clock()
    description = ga.describe_consumer_group(client, "g", 5000, clock=clock, sleep=clock.sleep)  # type: ignore[arg-type]
    assert description.coordinator.node_id == 2
    assert clock.now == pytest.approx(0.3)


def test_a_coordinator_that_never_comes_times_out() -> None:
    client = WireClient(3, {ApiKey.FIND_COORDINATOR: [found(code=CoordinatorNotAvailableError.code)]})
    clock = Clock()
    with pytest.raises(RequestTimedOutError, match=r"^Call\(callName=describeConsumerGroups\) timed out after"):
        ga.describe_consumer_group(client, "g", 1000, clock=clock, sleep=clock.sleep)  # type: ignore[arg-type]
    assert clock.now <= 1.0


@pytest.mark.parametrize("version", versions(ApiKey.LIST_GROUPS))
def test_list_groups_of_every_broker_consumer_groups_only(version: int) -> None:
    answer = {
        "error_code": 0,
        "groups": [
            {"group_id": "a", "protocol_type": "consumer", "group_state": "Stable"},
            {"group_id": "simple", "protocol_type": "", "group_state": "Empty"},
            {"group_id": "connect", "protocol_type": "connect", "group_state": "Stable"},
        ],
    }
    client = WireClient(version, {ApiKey.LIST_GROUPS: [answer]})
    listings = ga.list_consumer_groups(client, ["Stable"] if version >= 4 else [])  # type: ignore[arg-type]
    assert [(g.group_id, g.is_simple) for g in listings] == [("a", False), ("simple", True)]
    assert [g.state for g in listings] == (["Stable", "Empty"] if version >= 4 else [None, None])
    assert [broker for _, broker, _ in client.requests] == [1, 2]
    if version >= 4:
        assert client.requests[0][2]["states_filter"] == ["Stable"]


@pytest.mark.parametrize("version", versions(ApiKey.OFFSET_FETCH)[2:])  # all partitions (null) needs v2+
def test_list_offsets_leaves_out_partitions_without_a_commit(version: int) -> None:
    partitions = [
        {"partition_index": 0, "committed_offset": 5, "committed_leader_epoch": 3, "metadata": "m", "error_code": 0},
        {"partition_index": 1, "committed_offset": -1, "committed_leader_epoch": -1, "metadata": "", "error_code": 0},
    ]
    answer = {"topics": [{"name": "t", "partitions": partitions}], "error_code": 0}
    client = WireClient(version, {ApiKey.FIND_COORDINATOR: [found()], ApiKey.OFFSET_FETCH: [answer]})
    offsets = ga.list_consumer_group_offsets(client, "g", 5000)  # type: ignore[arg-type]
    assert list(offsets) == [T0] and offsets[T0].offset == 5
    assert client.requests[-1][2]["topics"] is None


@pytest.mark.parametrize("version", versions(ApiKey.OFFSET_COMMIT))
def test_alter_offsets_commits_as_an_admin_and_raises_a_partitions_error(version: int) -> None:
    ok = {"topics": [{"name": "t", "partitions": [{"partition_index": 0, "error_code": 0}]}]}
    client = WireClient(version, {ApiKey.FIND_COORDINATOR: [found()], ApiKey.OFFSET_COMMIT: [ok]})
    ga.alter_consumer_group_offsets(client, "g", {T0: 7}, 5000)  # type: ignore[arg-type]
    body = client.requests[-1][2]
    assert body["topics"][0]["partitions"][0]["committed_offset"] == 7
    if version >= 1:
        assert (body["generation_id"], body["member_id"]) == (-1, "")
    refused = {
        "topics": [{"name": "t", "partitions": [{"partition_index": 0, "error_code": UnknownMemberIdError.code}]}]
    }
    client = WireClient(version, {ApiKey.FIND_COORDINATOR: [found()], ApiKey.OFFSET_COMMIT: [refused]})
    with pytest.raises(UnknownMemberIdError):
        ga.alter_consumer_group_offsets(client, "g", {T0: 7}, 5000)  # type: ignore[arg-type]


@pytest.mark.parametrize("version", versions(ApiKey.DELETE_GROUPS))
def test_delete_groups_per_group_results(version: int) -> None:
    client = WireClient(
        version,
        {
            ApiKey.FIND_COORDINATOR: [found()],
            ApiKey.DELETE_GROUPS: [
                {"throttle_time_ms": 0, "results": [{"group_id": "a", "error_code": 0}]},
                {"throttle_time_ms": 0, "results": [{"group_id": "b", "error_code": NonEmptyGroupError.code}]},
                {"throttle_time_ms": 0, "results": [{"group_id": "c", "error_code": GroupIdNotFoundError.code}]},
            ],
        },
    )
    results = ga.delete_consumer_groups(client, ["a", "b", "c"], 5000)  # type: ignore[arg-type]
    assert results["a"] is None
    assert isinstance(results["b"], NonEmptyGroupError) and isinstance(results["c"], GroupIdNotFoundError)


def test_delete_offsets_answers_group_and_partition_codes() -> None:
    answer = {
        "error_code": 0,
        "throttle_time_ms": 0,
        "topics": [
            {
                "name": "t",
                "partitions": [{"partition_index": 0, "error_code": 86}, {"partition_index": 1, "error_code": 0}],
            }
        ],
    }
    client = WireClient(0, {ApiKey.FIND_COORDINATOR: [found()], ApiKey.OFFSET_DELETE: [answer]})
    result = ga.delete_consumer_group_offsets(client, "g", [T0, T1], 5000)  # type: ignore[arg-type]
    assert result == ga.DeleteOffsetsResult(0, {T0: 86, T1: 0})
