"""Topic ids from the controller to the clients, as Kafka 2.8 carries them: the controller's UpdateMetadata v7
(the ids of its context, as the znodes hold them), the broker's decoding and metadata cache, Metadata v10+'s
answer, CreateTopics v7's and DeleteTopics v6's (topics named by id)."""

from __future__ import annotations

import asyncio
import base64
import uuid
from typing import Any

from kafkaops.cluster.broker.config import parse_broker_config
from kafkaops.cluster.broker.dynamic_broker_config import DynamicBrokerConfig
from kafkaops.cluster.broker.metadata_cache import MetadataCache
from kafkaops.cluster.broker.requests import UpdateMetadataRequest
from kafkaops.cluster.broker.responses import metadata_response
from kafkaops.cluster.broker.zk_admin_manager import NONE, ApiError, ZkAdminManager, _create_topics_response
from kafkaops.cluster.common import errors
from kafkaops.cluster.controller.channel import UPDATE_METADATA_VERSION, ControllerBrokerRequestBatch
from kafkaops.cluster.protocol.messages import RequestHeader, decode_request, encode_request
from kafkaops.cluster.protocol.schemas import RESPONSES, SUPPORTED_VERSIONS, ApiKey
from kafkaops.cluster.protocol.types import ZERO_UUID
from kafkaops.cluster.state_change_log import ControllerLog
from kafkaops.cluster.zk.values import (
    LeaderAndIsr,
    LeaderIsrAndControllerEpoch,
    TopicPartition,
    kafka_uuid_from_text,
    kafka_uuid_text,
    new_kafka_uuid,
)
from tests.unit.controller_fakes import RecordingRequestChannel, RecordingSink, broker

TEXT_ID = "AAAAAAAAAAAAAAAAAAAAAQ"  # Kafka's text of the UUID 0x...01
A, B = TopicPartition("a", 0), TopicPartition("b", 0)


def _update_metadata_sent(topic_ids: dict[str, str]) -> list[tuple[int, ApiKey, int, dict[str, Any]]]:
    batch = ControllerBrokerRequestBatch(5)
    batch.add_update_metadata([1, 2], [A, B])
    channel = RecordingRequestChannel()
    state = LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 3, (1, 2), 4), 9)
    batch.send_requests_to_brokers(
        9,
        channel,  # type: ignore[arg-type]
        {1: broker(1), 2: broker(2)},
        {1: 10, 2: 20},
        lambda tp: state,
        lambda tp: (1, 2),
        lambda tp: False,
        ControllerLog(5, 9),
        RecordingSink(),
        topic_ids=topic_ids,
    )
    return [(q.broker_id, q.api_key, q.version, q.body) for q in channel.queued]


def _wire(version: int, body: dict[str, Any]) -> dict[str, Any]:
    header = RequestHeader(ApiKey.UPDATE_METADATA, version, 1, "controller-5")
    return decode_request(encode_request(header, body)).body


def test_kafka_uuid_text_round_trips_as_kafka_prints_it() -> None:
    assert kafka_uuid_from_text(TEXT_ID) == uuid.UUID(int=1)
    assert kafka_uuid_text(uuid.UUID(int=1)) == TEXT_ID
    assert kafka_uuid_from_text(None) == ZERO_UUID and kafka_uuid_text(ZERO_UUID) is None
    fresh = new_kafka_uuid()
    assert kafka_uuid_text(kafka_uuid_from_text(fresh)) == fresh
    assert kafka_uuid_from_text(fresh).bytes == base64.urlsafe_b64decode(fresh + "==")


def test_the_controller_sends_update_metadata_v7_with_its_topic_ids() -> None:
    assert UPDATE_METADATA_VERSION == 7 and SUPPORTED_VERSIONS[ApiKey.UPDATE_METADATA] == (0, 7)  # Kafka 2.8s range
    sent = _update_metadata_sent({"a": TEXT_ID})  # "b" has no id (created before IBP 2.8)
    assert [(b, key, v) for b, key, v, _ in sent] == [(1, ApiKey.UPDATE_METADATA, 7), (2, ApiKey.UPDATE_METADATA, 7)]
    decoded = _wire(7, sent[0][3])
    assert [(t["topic_name"], t["topic_id"]) for t in decoded["topic_states"]] == [
        ("a", uuid.UUID(int=1)),
        ("b", ZERO_UUID),
    ]
    assert decoded["broker_epoch"] == 10 and _wire(7, sent[1][3])["broker_epoch"] == 20
    request = UpdateMetadataRequest.from_wire(decoded)
    assert request.topic_ids == {"a": uuid.UUID(int=1)}  # the zero UUID is no id
    assert [s.partition for s in request.partition_states] == [A, B]


def test_update_metadata_v5_carries_no_topic_ids() -> None:
    body = _update_metadata_sent({"a": TEXT_ID})[0][3]
    request = UpdateMetadataRequest.from_wire(_wire(5, body))
    assert request.topic_ids == {} and len(request.partition_states) == 2


def test_the_cache_keeps_ids_until_the_topic_goes_and_metadata_v10_answers_them() -> None:
    cache = MetadataCache()
    cache.update(UpdateMetadataRequest.from_wire(_wire(7, _update_metadata_sent({"a": TEXT_ID})[0][3])))
    assert cache.topic_id("a") == uuid.UUID(int=1) and cache.topic_id("b") is None
    assert cache.topic_name(uuid.UUID(int=1)) == "a" and cache.topic_name(uuid.UUID(int=2)) is None
    # a later request without the id keeps it (Kafka's cache merges them)
    cache.update(UpdateMetadataRequest.from_wire(_wire(7, _update_metadata_sent({})[0][3])))
    assert cache.topic_ids() == {"a": uuid.UUID(int=1)}

    body = metadata_response(
        cache.alive_brokers(),
        [(t, cache.partitions(t)) for t in ("a", "b", "gone")],
        "cluster",
        cache.controller_id,
        cache.topic_ids(),
    )
    for version in (10, 11):
        wire = RESPONSES[ApiKey.METADATA].encode(body, version)
        decoded = RESPONSES[ApiKey.METADATA].decode(wire, version)
        assert [(t["name"], t["topic_id"]) for t in decoded["topics"]] == [
            ("a", uuid.UUID(int=1)),
            ("b", ZERO_UUID),
            ("gone", ZERO_UUID),
        ]

    deleting = _update_metadata_sent({"a": TEXT_ID})[0][3]
    # a plain copy: the sent request's shared states hold the bytes they were encoded to, and must not change
    deleting["topic_states"] = list(deleting["topic_states"])
    for topic in deleting["topic_states"]:
        for state in topic["partition_states"]:
            state["leader"] = -2  # LeaderDuringDelete
    cache.update(UpdateMetadataRequest.from_wire(_wire(7, deleting)))
    assert cache.topic_ids() == {} and cache.topics() == []


def _admin(cache: MetadataCache) -> ZkAdminManager:
    config = DynamicBrokerConfig(parse_broker_config({"zookeeper.connect": "zk:2181", "broker.id": 1}))
    return ZkAdminManager(1, None, cache, config, lambda: True)  # type: ignore[arg-type]  # no ZooKeeper reached


def _delete(cache: MetadataCache, topics: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    body = asyncio.run(_admin(cache).delete_topics({"topics": topics, "timeout_ms": 1000}, 6))
    decoded = RESPONSES[ApiKey.DELETE_TOPICS].decode(RESPONSES[ApiKey.DELETE_TOPICS].encode(body, 6), 6)
    return [(r["name"], r["topic_id"], r["error_code"]) for r in decoded["responses"]]


def test_delete_topics_v6_resolves_ids_with_the_cache_as_kafka_2_8() -> None:
    cache = MetadataCache()
    cache.update(UpdateMetadataRequest.from_wire(_wire(7, _update_metadata_sent({"a": TEXT_ID})[0][3])))
    unknown = uuid.UUID(int=99)
    assert _delete(cache, [{"name": None, "topic_id": unknown}, {"name": "missing", "topic_id": ZERO_UUID}]) == [
        (None, unknown, errors.UnknownTopicIdError.code),
        ("missing", ZERO_UUID, errors.UnknownTopicOrPartitionError.code),
    ]
    # a name and an id for one topic: Kafka throws InvalidRequestException, every topic gets INVALID_REQUEST
    both = [{"name": "a", "topic_id": uuid.UUID(int=1)}, {"name": None, "topic_id": unknown}]
    assert _delete(cache, both) == [
        ("a", uuid.UUID(int=1), errors.InvalidRequestError.code),
        (None, unknown, errors.InvalidRequestError.code),
    ]


def test_create_topics_v7_answers_the_id_and_older_versions_drop_it() -> None:
    topics = [{"name": "t"}, {"name": "bad"}]
    results = {"t": NONE, "bad": ApiError(errors.TopicExistsError.code)}
    body = _create_topics_response(topics, results, {"t": {"topic_id": uuid.UUID(int=1)}})
    v7 = RESPONSES[ApiKey.CREATE_TOPICS].decode(RESPONSES[ApiKey.CREATE_TOPICS].encode(body, 7), 7)
    assert [(t["name"], t["topic_id"], t["error_code"]) for t in v7["topics"]] == [
        ("t", uuid.UUID(int=1), 0),
        ("bad", ZERO_UUID, errors.TopicExistsError.code),
    ]
    v6 = RESPONSES[ApiKey.CREATE_TOPICS].decode(RESPONSES[ApiKey.CREATE_TOPICS].encode(body, 6), 6)
    assert [t["name"] for t in v6["topics"]] == ["t", "bad"]
