"""The broker's ZkAdminManager on a real ZooKeeper (no broker process: a stand-in metadata cache): each
request body gets Kafka's answer, per topic or resource, and bad input leaves ZooKeeper as it was."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from kafkaops.cluster.broker.config import parse_broker_config
from kafkaops.cluster.broker.dynamic_broker_config import DynamicBrokerConfig
from kafkaops.cluster.broker.zk_admin_manager import ZkAdminManager


@dataclass(frozen=True)
class Broker:
    broker_id: int
    rack: str | None = None


@dataclass
class State:
    leader: int


class StandInCache:
    """What the controller's UpdateMetadata would have told the broker."""

    def __init__(self, brokers: list[int]) -> None:
        self.brokers = [Broker(b) for b in brokers]
        self.topics: dict[str, dict[int, State]] = {}

    def alive_brokers(self) -> list[Broker]:
        return self.brokers

    def contains(self, topic: str) -> bool:
        return topic in self.topics

    def partitions(self, topic: str) -> dict[int, State] | None:
        return self.topics.get(topic)


def manager(zk, cache: StandInCache, controller: bool = True) -> ZkAdminManager:  # type: ignore[no-untyped-def]
    config = parse_broker_config({"zookeeper.connect": "unused", "broker.id": 0, "num.partitions": 2})
    return ZkAdminManager(  # type: ignore[arg-type]
        0, zk, cache, DynamicBrokerConfig(config), lambda: controller, default_num_partitions=config.num_partitions
    )


def topic(name: str, partitions: int = 1, rf: int = 1, configs: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "name": name,
        "num_partitions": partitions,
        "replication_factor": rf,
        "assignments": [],
        "configs": [{"name": k, "value": v} for k, v in (configs or {}).items()],
    }


def answers(response: dict[str, Any], key: str = "topics") -> dict[str, tuple[int, str | None]]:
    return {t["name"]: (t["error_code"], t["error_message"]) for t in response[key]}


def test_create_topics_answers_per_topic(zk, brokers, zk_tree):
    brokers([0, 1])
    cache = StandInCache([0, 1])
    admin = manager(zk, cache)
    before = zk_tree()
    body = {
        "topics": [topic("dup"), topic("dup"), topic("rf", rf=3), topic("cfg", configs={"segment.bytes": "1"})],
        "timeout_ms": 0,
        "validate_only": False,
    }
    response = asyncio.run(admin.create_topics(body, 5))
    assert answers(response) == {
        "dup": (42, "Found multiple entries for this topic."),
        "rf": (38, "Replication factor: 3 larger than available brokers: 2."),
        "cfg": (40, "Invalid value 1 for configuration segment.bytes: Value must be at least 14"),
    }
    assert len(response["topics"]) == 4
    checked = asyncio.run(
        admin.create_topics({"topics": [topic("ok", -1, 2)], "timeout_ms": 1000, "validate_only": True}, 5)
    )
    (result,) = checked["topics"]
    assert (result["error_code"], result["num_partitions"], result["replication_factor"]) == (0, 2, 2)
    assert {c["name"]: c["value"] for c in result["configs"]}["segment.bytes"] == "1073741824"
    assert zk_tree() == before
    not_controller = asyncio.run(manager(zk, cache, controller=False).create_topics(body, 5))
    assert {t["error_code"] for t in not_controller["topics"]} == {41}
    assert zk_tree() == before


def test_create_waits_for_leaders_then_times_out_or_completes(zk, brokers):
    brokers([0])
    cache = StandInCache([0])
    admin = manager(zk, cache)
    timed_out = asyncio.run(admin.create_topics({"topics": [topic("slow")], "timeout_ms": 200}, 4))
    assert answers(timed_out) == {"slow": (7, None)}
    assert zk.topic_exists("slow")  # written all the same: the controller finishes the job

    async def created_when_led() -> dict[str, Any]:
        pending = asyncio.ensure_future(admin.create_topics({"topics": [topic("fast", 2)], "timeout_ms": 30000}, 4))
        while not zk.topic_exists("fast"):
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.05)
        cache.topics["fast"] = {0: State(0), 1: State(0)}
        admin.try_complete_delayed_topic_operations(["fast"])
        return await pending

    assert answers(asyncio.run(created_when_led())) == {"fast": (0, None)}


def test_delete_and_create_partitions(zk, brokers, zk_tree):
    brokers([0])
    cache = StandInCache([0])
    admin = manager(zk, cache)
    asyncio.run(admin.create_topics({"topics": [topic("t")], "timeout_ms": 0}, 4))
    cache.topics["t"] = {0: State(0)}
    before = zk_tree()
    grow = {"topics": [{"name": "t", "count": 1, "assignments": None}], "timeout_ms": 0, "validate_only": False}
    assert answers(asyncio.run(admin.create_partitions(grow, 2)), "results") == {
        "t": (37, "Topic already has 1 partitions.")
    }
    assert zk_tree() == before
    grow["topics"] = [{"name": "t", "count": 2, "assignments": [{"broker_ids": [0]}]}]
    assert answers(asyncio.run(admin.create_partitions(grow, 2)), "results") == {"t": (7, None)}
    assert zk.get_topic_assignments(["t"])["t"].replicas == {0: [0], 1: [0]}

    async def deleted() -> dict[str, Any]:
        pending = asyncio.ensure_future(admin.delete_topics({"topic_names": ["t", "nope"], "timeout_ms": 30000}, 4))
        while "t" not in zk.get_topics_marked_for_deletion():
            await asyncio.sleep(0.01)
        del cache.topics["t"]
        admin.try_complete_delayed_topic_operations(["t"])
        return await pending

    assert answers(asyncio.run(deleted()), "responses") == {"t": (0, None), "nope": (3, None)}


def test_configs_describe_alter_incremental(zk, brokers, zk_tree):
    brokers([0])
    cache = StandInCache([0])
    admin = manager(zk, cache)
    asyncio.run(admin.create_topics({"topics": [topic("t")], "timeout_ms": 0}, 4))
    cache.topics["t"] = {0: State(0)}
    alter = {
        "resources": [
            {"resource_type": 2, "resource_name": "t", "configs": [{"name": "retention.ms", "value": "1000"}]},
            {"resource_type": 2, "resource_name": "nope", "configs": []},
            {"resource_type": 4, "resource_name": "5", "configs": []},
        ],
        "validate_only": False,
    }
    response = admin.alter_configs(alter)
    assert [(r["resource_name"], r["error_code"], r["error_message"]) for r in response["responses"]] == [
        ("t", 0, None),
        ("nope", 3, "The topic 'nope' does not exist."),
        ("5", 42, "Unexpected broker id, expected 0, but received 5"),
    ]
    assert zk.get_entity_config("topics", "t")[0] == {"retention.ms": "1000"}
    before = zk_tree()
    incremental = {
        "resources": [
            {
                "resource_type": 2,
                "resource_name": "t",
                "configs": [
                    {"name": "cleanup.policy", "config_operation": 2, "value": "compact"},
                    {"name": "retention.ms", "config_operation": 0, "value": "soon"},
                ],
            }
        ],
        "validate_only": False,
    }
    (refused,) = admin.incremental_alter_configs(incremental)["responses"]
    assert (refused["error_code"], refused["error_message"]) == (
        42,
        "Invalid config value for resource ConfigResource(type=TOPIC, name='t'): "
        "Invalid value soon for configuration retention.ms: Not a number of type LONG",
    )
    assert zk_tree() == before
    incremental["resources"][0]["configs"][1]["value"] = "2000"
    (done,) = admin.incremental_alter_configs(incremental)["responses"]
    assert done["error_code"] == 0
    assert zk.get_entity_config("topics", "t")[0] == {"retention.ms": "2000", "cleanup.policy": "delete,compact"}

    describe = {
        "resources": [
            {"resource_type": 2, "resource_name": "t", "configuration_keys": ["retention.ms", "cleanup.policy"]},
            {"resource_type": 2, "resource_name": "gone", "configuration_keys": None},
            {"resource_type": 4, "resource_name": "", "configuration_keys": None},
        ],
        "include_synonyms": True,
    }
    topic_result, gone, default = admin.describe_configs(describe, 3)["results"]
    configs = {c["name"]: c for c in topic_result["configs"]}
    assert set(configs) == {"retention.ms", "cleanup.policy"}
    assert (configs["retention.ms"]["value"], configs["retention.ms"]["config_source"]) == ("2000", 1)
    assert [s["source"] for s in configs["retention.ms"]["synonyms"]] == [1]
    assert (gone["error_code"], gone["configs"]) == (3, [])
    assert (default["error_code"], default["configs"]) == (0, [])
