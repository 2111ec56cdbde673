"""Topic ids end to end, as Kafka 2.8 (IBP 2.8) has them: the id in `/brokers/topics/<t>` (written by a
broker's CreateTopics, or by the controller for a `--zookeeper` topic) is what every broker's Metadata v10+
answers (the controller's UpdateMetadata v7 carries it), what CreateTopics v7 answers, and what DeleteTopics
v6 deletes a topic by; kafka-python's admin client reads them unmodified."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator
from typing import Any

from kafka.admin import KafkaAdminClient

from kafkaops.admin import topics as admin_topics
from kafkaops.admin.kafka_client.client import KafkaClient
from kafkaops.cluster.common import errors
from kafkaops.cluster.local.waiting import wait_for
from kafkaops.cluster.protocol.schemas import ApiKey
from kafkaops.cluster.zk.client import KafkaZkClient
from kafkaops.cluster.zk.values import kafka_uuid_from_text
from tests.cluster.clients_util import all_bootstraps

TIMEOUT_S = 60


@contextlib.contextmanager
def kafka_python_admin(bootstrap: str) -> Iterator[KafkaAdminClient]:
    client = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=60000)
    try:
        yield client
    finally:
        client.close()


def znode_id(zk: KafkaZkClient, topic: str) -> uuid.UUID | None:
    found = zk.get_topic_assignments([topic]).get(topic)
    return kafka_uuid_from_text(found.topic_id) if found is not None and found.topic_id else None


def as_uuid(value: Any) -> uuid.UUID:
    return value if isinstance(value, uuid.UUID) else uuid.UUID(str(value))


def broker_topic_ids(client: KafkaClient, broker_id: int, topics: list[str]) -> dict[str, uuid.UUID]:
    """What one broker's Metadata answers (at v10 or later, else the test fails)."""
    body = {"topics": [{"name": t} for t in topics], "allow_auto_topic_creation": False}
    version, answer = client.broker_request(broker_id, ApiKey.METADATA, body)
    assert version >= 10, version
    return {t["name"]: t["topic_id"] for t in answer["topics"] if t["error_code"] == 0}


def test_topic_ids_are_the_znodes_in_every_answer(cluster, zk):  # type: ignore[no-untyped-def]
    local = cluster(brokers=3)
    bootstrap = all_bootstraps(local)
    with kafka_python_admin(bootstrap) as admin, KafkaClient(bootstrap) as client:
        created = admin.create_topics({"by-api": {"num_partitions": 2, "replication_factor": 2}}, timeout_ms=30000)
        (topic,) = created["topics"]
        api_id = znode_id(zk, "by-api")
        assert topic["error_code"] == 0 and api_id is not None  # written with the assignment
        assert as_uuid(topic["topic_id"]) == api_id  # CreateTopics v7

        # a --zookeeper topic has none until the controller gives it one
        admin_topics.create_topic(zk, "by-zk", 1, 2, None, {})
        zk_id = wait_for(lambda: znode_id(zk, "by-zk"), timeout_s=TIMEOUT_S)
        assert zk_id != api_id

        expected = {"by-api": api_id, "by-zk": zk_id}
        for broker_id in (0, 1, 2):
            wait_for(
                lambda b=broker_id: broker_topic_ids(client, b, list(expected)) == expected,  # type: ignore[misc]
                timeout_s=TIMEOUT_S,
                what=f"broker {broker_id}'s Metadata answers the znodes' topic ids",
            )
        described = {t["name"]: as_uuid(t["topic_id"]) for t in admin.describe_topics(list(expected))}
        assert described == expected

        # DeleteTopics v6: by id; an unknown id is UNKNOWN_TOPIC_ID with no name
        unknown = uuid.UUID(int=12345)
        refused = admin.delete_topics([unknown], timeout_ms=30000, raise_errors=False)
        assert [(t["name"], as_uuid(t["topic_id"]), t["error_code"]) for t in refused["topics"]] == [
            (None, unknown, errors.UnknownTopicIdError.code)
        ]
        deleted = admin.delete_topics([api_id], timeout_ms=30000)
        assert [(t["name"], as_uuid(t["topic_id"]), t["error_code"]) for t in deleted["topics"]] == [
            ("by-api", api_id, 0)
        ]
        wait_for(lambda: "by-api" not in zk.get_all_topics(), timeout_s=TIMEOUT_S)
        assert broker_topic_ids(client, 0, ["by-api", "by-zk"]) == {"by-zk": zk_id}
