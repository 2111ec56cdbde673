"""The group member (`kafka_client.group_consumer`) against a scripted coordinator: every request and answer
through the codec; the join (KIP-394's member id round, the leader's range assignment), positions from the
committed offsets else auto.offset.reset, commits of what poll returned, a rebalance announced by a
heartbeat (commit first, then join again), and LeaveGroup on close. Clock and sleeps injected."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kafkaops.admin.kafka_client.client import OffsetAndTimestamp
from kafkaops.admin.kafka_client.consumer import OffsetResetPolicy
from kafkaops.admin.kafka_client.consumer_protocol import (
    Assignment,
    Subscription,
    decode_assignment,
    encode_assignment,
    encode_subscription,
)
from kafkaops.admin.kafka_client.fetcher import FetchResult
from kafkaops.admin.kafka_client.group_consumer import GroupConsumer, GroupConsumerConfig
from kafkaops.admin.kafka_client.metadata import BrokerNode, ClusterMetadata, PartitionInfo, TopicInfo
from kafkaops.admin.kafka_client.records import ConsumerRecord, TimestampType
from kafkaops.cluster.common.errors import MemberIdRequiredError, RebalanceInProgressError
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


class Coordinator:
    """A KafkaClient stand-in: group APIs answered from scripts (per API key, in order, the last repeating),
    through the codec at our newest version; metadata, list offsets and fetches from fixed data."""

    retry_backoff_ms = 100

    def __init__(self, scripts: Mapping[ApiKey, list[dict[str, Any]]]) -> None:
        self.scripts = {key: list(answers) for key, answers in scripts.items()}
        self.sent: list[tuple[ApiKey, dict[str, Any]]] = []
        self.log = {T0: [b"a", b"b", b"c"], T1: [b"x"]}

    def _round_trip(self, api_key: ApiKey, body: Mapping[str, Any]) -> tuple[int, dict[str, Any]]:
        version = SUPPORTED_VERSIONS[api_key][1]
        self.sent.append((api_key, decode_request(encode_request(RequestHeader(api_key, version, 1, "c"), body)).body))
        queue = self.scripts[api_key]
        answer = queue.pop(0) if len(queue) > 1 else queue[0]
        return version, decode_response(api_key, version, encode_response(api_key, version, 1, answer))[1]

    def controller_request(
        self, api_key: ApiKey, body: Mapping[str, Any], extra: int = 0
    ) -> tuple[int, dict[str, Any]]:
        return self._round_trip(api_key, body)

    def broker_request(
        self, broker: int, api_key: ApiKey, body: Mapping[str, Any], extra: int = 0
    ) -> tuple[int, dict[str, Any]]:
        return self._round_trip(api_key, body)

    def metadata(self, topics: list[str] | None = None) -> ClusterMetadata:
        partitions = tuple(PartitionInfo("t", p, 1, 0, (1,), (1,)) for p in (0, 1))
        return ClusterMetadata({1: BrokerNode(1, "h", 1)}, 1, "c", {"t": TopicInfo("t", 0, False, partitions)})

    def list_offsets(self, topic: str, partition: int, timestamp: int, isolation_level: int = 0) -> OffsetAndTimestamp:
        return OffsetAndTimestamp(0 if timestamp == -2 else len(self.log[TopicPartition(topic, partition)]), -1)

    def fetch_many(self, offsets: Mapping[TopicPartition, int], *_: Any) -> dict[TopicPartition, FetchResult]:
        results = {}
        for tp, offset in offsets.items():
            values = self.log[tp][offset:]
            records = tuple(
                ConsumerRecord(tp.topic, tp.partition, offset + i, 0, TimestampType.CREATE_TIME, None, v)
                for i, v in enumerate(values)
            )
            end = len(self.log[tp])
            results[tp] = FetchResult(tp.topic, tp.partition, records, end, end, end, 0)
        return results

    def requests(self, api_key: ApiKey) -> list[dict[str, Any]]:
        return [body for key, body in self.sent if key == api_key]


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def join(code: int = 0, member: str = "m-1", generation: int = 1) -> dict[str, Any]:
    metadata = encode_subscription(Subscription(("t",)))
    return {
        "throttle_time_ms": 0,
        "error_code": code,
        "generation_id": generation,
        "protocol_type": "consumer",
        "protocol_name": "range",
        "leader": member,
        "member_id": member,
        "members": [{"member_id": member, "group_instance_id": None, "metadata": metadata}] if not code else [],
    }


def sync(partitions: tuple[TopicPartition, ...] = (T0, T1)) -> dict[str, Any]:
    return {
        "throttle_time_ms": 0,
        "error_code": 0,
        "protocol_type": "consumer",
        "protocol_name": "range",
        "assignment": encode_assignment(Assignment(partitions)),
    }


FOUND = {"throttle_time_ms": 0, "error_code": 0, "error_message": None, "node_id": 1, "host": "h", "port": 1}
FETCHED = {
    "throttle_time_ms": 0,
    "error_code": 0,
    "topics": [
        {
            "name": "t",
            "partitions": [
                {
                    "partition_index": 0,
                    "committed_offset": 1,
                    "committed_leader_epoch": -1,
                    "metadata": "",
                    "error_code": 0,
                },
                {
                    "partition_index": 1,
                    "committed_offset": -1,
                    "committed_leader_epoch": -1,
                    "metadata": "",
                    "error_code": 0,
                },
            ],
        }
    ],
}
COMMITTED = {
    "throttle_time_ms": 0,
    "topics": [
        {"name": "t", "partitions": [{"partition_index": 0, "error_code": 0}, {"partition_index": 1, "error_code": 0}]}
    ],
}
HEARTBEAT_OK = {"throttle_time_ms": 0, "error_code": 0}


def member(scripts: Mapping[ApiKey, list[dict[str, Any]]], clock: Clock) -> tuple[GroupConsumer, Coordinator]:
    coordinator = Coordinator(
        {
            ApiKey.FIND_COORDINATOR: [FOUND],
            ApiKey.OFFSET_FETCH: [FETCHED],
            ApiKey.OFFSET_COMMIT: [COMMITTED],
            ApiKey.HEARTBEAT: [HEARTBEAT_OK],
            ApiKey.LEAVE_GROUP: [{"throttle_time_ms": 0, "error_code": 0, "members": []}],
            **scripts,
        }
    )
    config = GroupConsumerConfig("g", auto_offset_reset=OffsetResetPolicy.EARLIEST)
    return GroupConsumer(coordinator, ["t"], config, clock=clock, sleep=clock.sleep), coordinator  # type: ignore[arg-type]


def test_join_assigns_as_leader_and_starts_at_the_committed_offsets() -> None:
    clock = Clock()
    consumer, coordinator = member(
        {ApiKey.JOIN_GROUP: [join(MemberIdRequiredError.code, member="m-1"), join()], ApiKey.SYNC_GROUP: [sync()]},
        clock,
    )
    records = consumer.poll(1000)
    first, second = coordinator.requests(ApiKey.JOIN_GROUP)
    assert (first["member_id"], second["member_id"]) == ("", "m-1")  # KIP-394's second round
    (synced,) = coordinator.requests(ApiKey.SYNC_GROUP)
    assert decode_assignment(synced["assignments"][0]["assignment"]).partitions == (T0, T1)
    # t-0 from its commit (1), t-1 from the beginning (no commit, earliest)
    assert [(r.partition, r.offset) for r in records] == [(0, 1), (0, 2), (1, 0)]
    assert consumer.positions == {T0: 3, T1: 1}
    consumer.commit()
    (committed,) = coordinator.requests(ApiKey.OFFSET_COMMIT)
    assert (committed["generation_id"], committed["member_id"]) == (1, "m-1")
    assert {p["partition_index"]: p["committed_offset"] for p in committed["topics"][0]["partitions"]} == {0: 3, 1: 1}
    consumer.close()
    (left,) = coordinator.requests(ApiKey.LEAVE_GROUP)
    assert left["members"][0]["member_id"] == "m-1"


def test_a_rebalance_commits_what_was_read_then_joins_again() -> None:
    clock = Clock()
    consumer, coordinator = member(
        {
            ApiKey.JOIN_GROUP: [join(), join(generation=2)],
            ApiKey.SYNC_GROUP: [sync(), sync((T1,))],
            ApiKey.HEARTBEAT: [{"throttle_time_ms": 0, "error_code": RebalanceInProgressError.code}, HEARTBEAT_OK],
        },
        clock,
    )
    consumer.poll(100)
    clock.now += 5  # the heartbeat is due
    consumer.poll(100)
    assert [r["generation_id"] for r in coordinator.requests(ApiKey.OFFSET_COMMIT)][:1] == [1]
    assert len(coordinator.requests(ApiKey.JOIN_GROUP)) == 2
    assert consumer.assignment == [T1] and consumer.rebalances == 2
