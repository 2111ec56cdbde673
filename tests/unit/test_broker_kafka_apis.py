"""KafkaApis against fakes of what it asks (the replica manager, this broker's controller component): the
handler table, the wire-to-typed border and back through the real codec, and the handlers' own rules
(broker-epoch fencing, duplicates in ListOffsets, ElectLeaders and ControlledShutdown served by the
local controller)."""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

import pytest

from kafkaops.cluster.broker import kafka_apis
from kafkaops.cluster.broker.config import parse_broker_config
from kafkaops.cluster.broker.kafka_apis import KafkaApis
from kafkaops.cluster.broker.metadata_cache import MetadataCache
from kafkaops.cluster.broker.requests import (
    ElectLeadersRequest,
    LeaderAndIsrRequest,
    ListOffsetsPartition,
    StopReplicaRequest,
    UpdateMetadataRequest,
)
from kafkaops.cluster.broker.responses import ListOffsetsPartitionResult, PartitionErrors, ProducePartitionResult
from kafkaops.cluster.common import errors
from kafkaops.cluster.common.errors import KafkaOpsError
from kafkaops.cluster.protocol.messages import RequestHeader, decode_request, decode_response, encode_request
from kafkaops.cluster.protocol.messages import encode_response as encode
from kafkaops.cluster.protocol.schemas import SUPPORTED_VERSIONS, ApiKey, ElectionType, partition_state_fields
from kafkaops.cluster.protocol.types import ZERO_UUID
from kafkaops.cluster.state_change_log import LeaderAndIsrPartitionState
from kafkaops.cluster.zk.values import EndPoint, TopicPartition

BROKER_EPOCH = 100


class FakeReplicaManager:
    config = parse_broker_config({"zookeeper.connect": "zk:2181", "offsets.topic.num.partitions": 2})
    clock = staticmethod(time.time)

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []
        self.partitions: dict[TopicPartition, Any] = {}

    async def append_records(self, request):  # type: ignore[no-untyped-def]
        self.calls.append(("produce", request))
        return [ProducePartitionResult(p.tp, errors.NONE, 7, 0) for p in request.partitions]

    def fetch_offset_for_timestamp(self, request: ListOffsetsPartition, replica_id: int) -> ListOffsetsPartitionResult:
        self.calls.append(("list_offsets", request.tp))
        return ListOffsetsPartitionResult(request.tp, errors.NONE, -1, 42, 3)

    def become_leader_or_follower(self, correlation_id: int, request: LeaderAndIsrRequest) -> PartitionErrors:
        self.calls.append(("leader_and_isr", request))
        return PartitionErrors(errors.NONE, [(s.partition, errors.NONE) for s in request.partition_states])

    def stop_replicas(self, correlation_id: int, request: StopReplicaRequest) -> PartitionErrors:
        self.calls.append(("stop_replica", request))
        return PartitionErrors(errors.NONE, [(tp, errors.NONE) for tp in request.partitions])

    def maybe_update_metadata_cache(self, correlation_id: int, request: UpdateMetadataRequest) -> int:
        self.calls.append(("update_metadata", request))
        return errors.NONE


class FakeController:
    def __init__(self, active: bool, failure: Exception | None = None) -> None:
        self.is_active = active
        self.failure = failure
        self.calls: list[tuple[Any, ...]] = []

    def elect_leaders(self, election_type, partitions, timeout_s=60.0):  # type: ignore[no-untyped-def]
        self.calls.append((election_type, partitions, timeout_s))
        return {tp: (errors.NONE, None) for tp in partitions}

    def controlled_shutdown(self, broker_id, broker_epoch, timeout_s=30.0):  # type: ignore[no-untyped-def]
        self.calls.append((broker_id, broker_epoch))
        if self.failure is not None:
            raise self.failure
        return {TopicPartition("b", 0), TopicPartition("a", 1)}


def _apis(controller: FakeController | None = None, cache: MetadataCache | None = None):  # type: ignore[no-untyped-def]
    manager = FakeReplicaManager()
    apis = KafkaApis(
        0,
        "cluster-id",
        None,  # type: ignore[arg-type] - no handler here reaches ZooKeeper
        manager,  # type: ignore[arg-type]
        cache or MetadataCache(),
        controller or FakeController(active=False),
        lambda: BROKER_EPOCH,
    )
    return apis, manager


def _decoded(key: ApiKey, version: int, body: dict[str, Any]) -> dict[str, Any]:
    """A body as the codec hands it over: every field of the version, defaults for the others."""
    return decode_request(encode_request(RequestHeader(key, version, 9, "test"), body)).body


def _call(apis: KafkaApis, key: ApiKey, version: int, body: dict[str, Any]) -> dict[str, Any] | None:
    """The request through the codec both ways, as the network layer does."""
    request = decode_request(encode_request(RequestHeader(key, version, 9, "test"), body))
    response = asyncio.run(apis.handle(request))
    if response is None:
        return None
    correlation_id, decoded = decode_response(key, version, encode(key, version, 9, response))
    assert correlation_id == 9
    return decoded


def test_the_table_serves_every_api_it_advertises_and_only_those():
    apis, _ = _apis()
    versions = _call(apis, ApiKey.API_VERSIONS, 2, {})
    assert versions is not None
    assert [k["api_key"] for k in versions["api_keys"]] == sorted(apis.served)
    assert {ApiKey(k["api_key"]) for k in versions["api_keys"]} <= set(SUPPORTED_VERSIONS)
    assert ApiKey.CONTROLLED_SHUTDOWN in apis.served and ApiKey.ELECT_LEADERS in apis.served


def test_a_produce_with_acks_0_gets_no_response():
    apis, manager = _apis()
    body = {"transactional_id": None, "acks": 0, "timeout_ms": 1, "topic_data": [{"name": "t", "partition_data": []}]}
    assert _call(apis, ApiKey.PRODUCE, 8, body) is None
    assert manager.calls[0][0] == "produce"
    body["acks"], body["topic_data"] = 1, [{"name": "t", "partition_data": [{"index": 2, "records": b""}]}]
    answer = _call(apis, ApiKey.PRODUCE, 8, body)
    assert answer is not None and answer["responses"][0]["partition_responses"][0]["base_offset"] == 7


def test_list_offsets_answers_a_partition_named_twice_with_invalid_request():
    apis, manager = _apis()
    asked = [{"partition_index": 0, "current_leader_epoch": -1, "timestamp": -1}] * 2
    body = {"replica_id": -1, "isolation_level": 0, "topics": [{"name": "t", "partitions": asked}]}
    answer = _call(apis, ApiKey.LIST_OFFSETS, 5, body)
    assert answer is not None
    codes = [(p["error_code"], p["offset"]) for p in answer["topics"][0]["partitions"]]
    assert codes == [(errors.NONE, 42), (errors.InvalidRequestError.code, -1)]
    assert manager.calls == [("list_offsets", TopicPartition("t", 0))]


def _leader_and_isr(broker_epoch: int) -> dict[str, Any]:
    state = {
        "topic_name": "t",
        "partition_index": 0,
        "controller_epoch": 1,
        "leader": 0,
        "leader_epoch": 1,
        "isr": [0],
        "zk_version": 0,
        "replicas": [0],
    }
    return {
        "controller_id": 1,
        "controller_epoch": 1,
        "broker_epoch": broker_epoch,
        **partition_state_fields([state]),
        "live_leaders": [],
    }


@pytest.mark.parametrize(
    ("key", "version", "body"),
    [
        (ApiKey.LEADER_AND_ISR, 3, _leader_and_isr(BROKER_EPOCH - 1)),
        (
            ApiKey.STOP_REPLICA,
            1,
            {
                "controller_id": 1,
                "controller_epoch": 1,
                "broker_epoch": BROKER_EPOCH - 1,
                "delete_partitions": False,
                "topics": [{"name": "t", "partition_indexes": [0]}],
            },
        ),
        (
            ApiKey.UPDATE_METADATA,
            5,
            {"controller_id": 1, "controller_epoch": 1, "broker_epoch": BROKER_EPOCH - 1, "live_brokers": []},
        ),
    ],
)
def test_requests_to_an_older_registration_are_fenced(key, version, body):
    apis, manager = _apis()
    answer = _call(apis, key, version, body)
    assert answer is not None and answer["error_code"] == errors.StaleBrokerEpochError.code
    assert manager.calls == []


def test_leader_and_isr_reaches_the_replica_manager_typed_from_either_form():
    apis, manager = _apis()
    for version in (1, 3):  # partitions one by one, then grouped by topic
        answer = _call(apis, ApiKey.LEADER_AND_ISR, version, _leader_and_isr(-1 if version < 2 else BROKER_EPOCH))
        assert answer == {
            "error_code": 0,
            "partition_errors": [{"topic_name": "t", "partition_index": 0, "error_code": 0}],
            "topics": [],  # LeaderAndIsr v5's grouped form (decoding fills it)
        }
    states = [request.partition_states for name, request in manager.calls]
    assert states[0] == states[1] == (LeaderAndIsrPartitionState("t", 0, 1, 0, 1, (0,), 0, (0,)),)


def test_metadata_comes_from_the_cache():
    cache = MetadataCache()
    body = {
        "controller_id": 1,
        "controller_epoch": 1,
        "broker_epoch": -1,
        **partition_state_fields(
            [
                {
                    "topic_name": "t",
                    "partition_index": p,
                    "controller_epoch": 1,
                    "leader": leader,
                    "leader_epoch": 2,
                    "isr": [leader],
                    "zk_version": 0,
                    "replicas": [0, 1],
                    "offline_replicas": [],
                }
                for p, leader in ((0, 0), (1, 1))
            ]
        ),
        "live_brokers": [{"id": 0, "endpoints": [{"port": 9092, "host": "h", "listener": "PLAINTEXT"}]}],
    }
    cache.update(UpdateMetadataRequest.from_wire(_decoded(ApiKey.UPDATE_METADATA, 5, body)))
    apis, _ = _apis(cache=cache)
    answer = _call(apis, ApiKey.METADATA, 8, {"topics": [{"name": "t"}, {"name": "missing"}]})
    assert answer is not None
    assert answer["brokers"] == [{"node_id": 0, "host": "h", "port": 9092, "rack": None}]
    assert answer["cluster_id"] == "cluster-id" and answer["controller_id"] == 1
    known, missing = answer["topics"]
    assert [(p["error_code"], p["leader_id"], p["offline_replicas"]) for p in known["partitions"]] == [
        (errors.NONE, 0, [1]),
        (errors.LeaderNotAvailableError.code, -1, [1]),
    ]
    assert missing["error_code"] == errors.UnknownTopicOrPartitionError.code
    everything = _call(apis, ApiKey.METADATA, 0, {"topics": []})  # v0: an empty list is every topic
    assert everything is not None and [t["name"] for t in everything["topics"]] == ["t"]


def test_elect_leaders_is_served_by_the_active_local_controller():
    controller = FakeController(active=True)
    apis, _ = _apis(controller)
    body = {"election_type": 1, "topic_partitions": [{"topic": "t", "partition_id": [0, 1]}], "timeout_ms": 2000}
    answer = _call(apis, ApiKey.ELECT_LEADERS, 1, body)
    assert controller.calls == [(ElectionType.UNCLEAN, [TopicPartition("t", 0), TopicPartition("t", 1)], 2.0)]
    assert answer is not None and answer["error_code"] == 0
    assert [r["partition_id"] for r in answer["replica_election_results"][0]["partition_result"]] == [0, 1]
    body["election_type"] = 5
    refused = _call(apis, ApiKey.ELECT_LEADERS, 1, body)
    assert refused is not None and refused["error_code"] == errors.InvalidRequestError.code
    assert {r["error_code"] for r in refused["replica_election_results"][0]["partition_result"]} == {42}


class FakeZk:
    def get_controller_id(self) -> int:
        return 1


def test_an_elect_leaders_request_forwarded_keeps_its_body(monkeypatch):
    forwarded: list[tuple[Any, ...]] = []

    def send_request(host, port, api_key, version, body, client_id, timeout_s, channel):  # type: ignore[no-untyped-def]
        forwarded.append((host, port, api_key, version, body))
        return {"throttle_time_ms": 0, "error_code": 0, "replica_election_results": []}

    monkeypatch.setattr(
        kafka_apis, "broker_endpoint", lambda zk, broker_id, inter_broker: EndPoint("PLAINTEXT", "c", broker_id)
    )
    monkeypatch.setattr(kafka_apis, "send_request", send_request)
    apis, _ = _apis()
    apis.zk = FakeZk()  # type: ignore[assignment]
    body = {
        "election_type": 0,
        "topic_partitions": [{"topic": "t", "partition_id": [3]}, {"topic": "t", "partition_id": [1]}],
    }
    assert _call(apis, ApiKey.ELECT_LEADERS, 1, {**body, "timeout_ms": 10}) is not None
    assert forwarded == [("c", 1, ApiKey.ELECT_LEADERS, 1, {**body, "timeout_ms": 10})]
    everything = _decoded(ApiKey.ELECT_LEADERS, 0, {"topic_partitions": None, "timeout_ms": 1})
    assert ElectLeadersRequest.from_wire(everything).partitions is None


@pytest.mark.parametrize(
    ("controller", "code", "remaining"),
    [
        (FakeController(active=False), errors.NotControllerError.code, []),
        (FakeController(active=True), errors.NONE, [("a", 1), ("b", 0)]),
        (
            FakeController(active=True, failure=errors.StaleBrokerEpochError("old")),
            errors.StaleBrokerEpochError.code,
            [],
        ),
        (FakeController(active=True, failure=KafkaOpsError("boom")), errors.UnknownServerError.code, []),
    ],
)
def test_controlled_shutdown_is_answered_by_the_local_controller(controller, code, remaining):
    apis, _ = _apis(controller)
    answer = _call(apis, ApiKey.CONTROLLED_SHUTDOWN, 2, {"broker_id": 3, "broker_epoch": 12})
    assert answer is not None and answer["error_code"] == code
    assert [(p["topic_name"], p["partition_index"]) for p in answer["remaining_partitions"]] == remaining
    assert controller.calls == ([(3, 12)] if controller.is_active else [])


def _offsets_topic_cache() -> MetadataCache:
    """`__consumer_offsets` with 2 partitions: 0 led by broker 0 (alive), 1 by broker 1 (not alive)."""
    cache = MetadataCache()
    states = [
        {
            "topic_name": "__consumer_offsets",
            "partition_index": p,
            "controller_epoch": 1,
            "leader": p,
            "leader_epoch": 0,
            "isr": [p],
            "zk_version": 0,
            "replicas": [p],
            "offline_replicas": [],
        }
        for p in (0, 1)
    ]
    body = {
        "controller_id": 0,
        "controller_epoch": 1,
        "broker_epoch": -1,
        **partition_state_fields(states),
        "live_brokers": [{"id": 0, "endpoints": [{"port": 9092, "host": "h", "listener": "PLAINTEXT"}]}],
    }
    cache.update(UpdateMetadataRequest.from_wire(_decoded(ApiKey.UPDATE_METADATA, 5, body)))
    return cache


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_find_coordinator_answers_the_leader_of_the_groups_offsets_partition(version: int) -> None:
    apis, _ = _apis(cache=_offsets_topic_cache())
    # Java's "h".hashCode() is 104: partition 0 of 2, led by the live broker 0
    answer = _call(apis, ApiKey.FIND_COORDINATOR, version, {"key": "h", "key_type": 0})
    assert answer is not None
    assert (answer["error_code"], answer["node_id"], answer["host"], answer["port"]) == (0, 0, "h", 9092)
    # "g" (103) is partition 1, whose leader is not alive
    answer = _call(apis, ApiKey.FIND_COORDINATOR, version, {"key": "g", "key_type": 0})
    assert answer is not None and answer["error_code"] == errors.CoordinatorNotAvailableError.code
    assert answer["node_id"] == -1


def test_find_coordinator_of_transactions_and_unknown_key_types() -> None:
    apis, _ = _apis(cache=_offsets_topic_cache())
    answer = _call(apis, ApiKey.FIND_COORDINATOR, 2, {"key": "t", "key_type": 1})
    assert answer is not None and answer["error_code"] == errors.CoordinatorNotAvailableError.code
    answer = _call(apis, ApiKey.FIND_COORDINATOR, 2, {"key": "t", "key_type": 7})
    assert answer is not None and answer["error_code"] == errors.InvalidRequestError.code


@pytest.mark.parametrize(
    ("name", "version", "code"),
    [("librdkafka", "2.16.1", 0), ("apache-kafka-java", "2.8.2", 0), ("-x", "1", 42), ("a b", "1", 42), ("ok", "", 42)],
)
def test_api_versions_v3_checks_the_client_software_as_kip_511(name: str, version: str, code: int) -> None:
    apis, _ = _apis()
    answer = _call(apis, ApiKey.API_VERSIONS, 3, {"client_software_name": name, "client_software_version": version})
    assert answer is not None and answer["error_code"] == code
    assert (answer["api_keys"] == []) == (code != 0)  # Kafka's getErrorResponse lists no API
    if code == 0:
        advertised = {k["api_key"]: (k["min_version"], k["max_version"]) for k in answer["api_keys"]}
        assert advertised[ApiKey.FETCH] == (4, 12) and advertised[ApiKey.API_VERSIONS] == (0, 3)


def test_metadata_v10_refuses_topic_ids_and_null_names_as_kafka_2_8() -> None:
    apis, _ = _apis()
    topic_id = uuid.UUID(int=7)
    body = {"topics": [{"name": "t", "topic_id": topic_id}, {"name": None}]}
    answer = _call(apis, ApiKey.METADATA, 10, body)
    assert answer is not None and answer["brokers"] == []
    assert [(t["error_code"], t["name"], t["topic_id"], t["partitions"]) for t in answer["topics"]] == [
        (42, "t", topic_id, []),
        (42, "", ZERO_UUID, []),
    ]
    fine = _call(apis, ApiKey.METADATA, 11, {"topics": [{"name": "t"}]})
    assert fine is not None and [(t["error_code"], t["name"]) for t in fine["topics"]] == [(3, "t")]


def test_init_producer_id_v3_needs_both_or_neither_of_id_and_epoch() -> None:
    apis, _ = _apis()
    body = {"transactional_id": None, "transaction_timeout_ms": 1, "producer_id": 5, "producer_epoch": -1}
    answer = _call(apis, ApiKey.INIT_PRODUCER_ID, 3, body)
    assert answer is not None and answer["error_code"] == 42 and answer["producer_id"] == -1


def test_client_requests_wait_for_the_controllers_first_update_metadata() -> None:
    """A broker just started holds clients' requests until the controller has told it the cluster (as a KRaft
    broker does until it has caught up), for at most `metadata_wait_s`; the controller's requests and a
    connection's set-up are served at once."""
    apis, manager = _apis()
    apis.metadata_wait_s = 30.0

    def fill_cache(_: int, update: UpdateMetadataRequest) -> int:
        apis.metadata_cache.update(update)
        return errors.NONE

    manager.maybe_update_metadata_cache = fill_cache  # type: ignore[method-assign]

    def request(key: ApiKey, version: int, body: dict[str, Any]) -> Any:
        return decode_request(encode_request(RequestHeader(key, version, 9, "test"), body))

    update = {
        "controller_id": 1,
        "controller_epoch": 1,
        "broker_epoch": BROKER_EPOCH,
        "live_brokers": [{"id": 0, "endpoints": [{"port": 9092, "host": "h", "listener": "PLAINTEXT"}]}],
    }

    async def scenario() -> None:
        metadata = asyncio.ensure_future(apis.handle(request(ApiKey.METADATA, 8, {"topics": None})))
        versions = await asyncio.wait_for(apis.handle(request(ApiKey.API_VERSIONS, 0, {})), 1.0)
        assert versions is not None and versions["error_code"] == errors.NONE
        await asyncio.sleep(0.2)
        assert not metadata.done()
        answer = await asyncio.wait_for(apis.handle(request(ApiKey.UPDATE_METADATA, 5, update)), 1.0)
        assert answer == {"error_code": errors.NONE}
        brokers = (await asyncio.wait_for(metadata, 1.0))["brokers"]  # type: ignore[index]
        assert brokers == [{"node_id": 0, "host": "h", "port": 9092, "rack": None}]

    asyncio.run(scenario())


def test_without_an_update_metadata_a_client_is_answered_after_the_wait() -> None:
    apis, _ = _apis()
    apis.metadata_wait_s = 0.3
    started = time.monotonic()
    answer = _call(apis, ApiKey.METADATA, 8, {"topics": None})
    assert answer is not None and answer["brokers"] == [] and time.monotonic() - started >= 0.3
