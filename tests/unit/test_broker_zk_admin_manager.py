"""The pure parts of the broker's Admin API: Kafka's error mapping, IncrementalAlterConfigs' operations,
the layered broker configs and what DescribeConfigs makes of them, the delayed topic operations."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import pytest

from kafkaops.admin.config_def import TOPIC_CONFIGS, validate_broker_config
from kafkaops.admin.configs import AlterConfigOp, AlterConfigOpType, incremental_configs
from kafkaops.cluster.broker.config import parse_broker_config
from kafkaops.cluster.broker.config_helper import ConfigType, broker_config_entries, topic_config_entries
from kafkaops.cluster.broker.delayed_operation import DelayedOperationPurgatory
from kafkaops.cluster.broker.dynamic_broker_config import ConfigSource, DynamicBrokerConfig
from kafkaops.cluster.broker.zk_admin_manager import (
    TIMED_OUT,
    ApiError,
    CreatePartitionsMetadata,
    DelayedCreatePartitions,
    DelayedDeleteTopics,
    api_error,
    config_api_error,
)
from kafkaops.cluster.common import errors
from kafkaops.cluster.common.errors import InvalidConfigurationError, InvalidRequestError, UnknownConfigNameError

SET, DELETE, APPEND, SUBTRACT = AlterConfigOpType


def broker(**static: object) -> DynamicBrokerConfig:
    return DynamicBrokerConfig(parse_broker_config({"zookeeper.connect": "zk:2181", "broker.id": 1, **static}))


# --- errors --------------------------------------------------------------------------------------------


def test_api_error_keeps_kafka_codes_and_texts() -> None:
    assert api_error(errors.TopicExistsError("Topic 'a' already exists.")) == ApiError(36, "Topic 'a' already exists.")
    assert api_error(InvalidConfigurationError("Invalid value x for configuration y: z")) == ApiError(
        40, "Invalid value x for configuration y: z"
    )
    # not one of Kafka's errors: UNKNOWN_SERVER_ERROR, nothing internal leaks
    assert api_error(errors.AdminOperationError("internal detail")) == ApiError(-1, None)


def test_config_api_error_names_the_resource_for_a_bad_value() -> None:
    bad_value = InvalidConfigurationError("Invalid value x for configuration retention.ms: Not a number of type LONG")
    assert config_api_error(2, "t", bad_value) == ApiError(
        42,
        "Invalid config value for resource ConfigResource(type=TOPIC, name='t'): "
        "Invalid value x for configuration retention.ms: Not a number of type LONG",
    )
    assert config_api_error(2, "t", UnknownConfigNameError("Unknown topic config name: nope")) == ApiError(
        40, "Unknown topic config name: nope"
    )


# --- IncrementalAlterConfigs ---------------------------------------------------------------------------


def test_incremental_operations() -> None:
    current = {"retention.ms": "1000", "cleanup.policy": "compact"}
    ops = [
        AlterConfigOp("segment.bytes", SET, "1048576"),
        AlterConfigOp("retention.ms", DELETE, None),
        AlterConfigOp("cleanup.policy", APPEND, "delete"),
    ]
    assert incremental_configs(current, ops, TOPIC_CONFIGS) == {
        "cleanup.policy": "compact,delete",
        "segment.bytes": "1048576",
    }
    # SUBTRACT from the default when there is no override; Scala's List.diff takes one occurrence each
    replicas = [AlterConfigOp("leader.replication.throttled.replicas", APPEND, "0:1,0:1,1:2")]
    appended = incremental_configs({}, replicas, TOPIC_CONFIGS)
    assert appended == {"leader.replication.throttled.replicas": ",0:1,0:1,1:2"}
    subtract = [AlterConfigOp("cleanup.policy", SUBTRACT, "delete")]
    assert incremental_configs({}, subtract, TOPIC_CONFIGS) == {"cleanup.policy": ""}


def test_incremental_refusals_have_kafka_texts() -> None:
    with pytest.raises(InvalidRequestError, match="Error due to duplicate config keys : a$"):
        incremental_configs({}, [AlterConfigOp("a", SET, "1"), AlterConfigOp("a", DELETE, None)], TOPIC_CONFIGS)
    with pytest.raises(InvalidRequestError, match="Null value not supported for : SET:a$"):
        incremental_configs({}, [AlterConfigOp("a", SET, None)], TOPIC_CONFIGS)
    with pytest.raises(InvalidRequestError, match="Config value append is not allowed for config key: retention.ms$"):
        incremental_configs({}, [AlterConfigOp("retention.ms", APPEND, "1")], TOPIC_CONFIGS)
    with pytest.raises(UnknownConfigNameError, match="^Unknown topic config name: nope$"):
        incremental_configs({}, [AlterConfigOp("nope", SUBTRACT, "1")], TOPIC_CONFIGS)


def test_dynamic_broker_config_validation() -> None:
    validate_broker_config({"log.retention.ms": "1000", "my.custom": "x"}, per_broker=False)
    with pytest.raises(
        InvalidConfigurationError, match="^Cannot update these configs dynamically: Set\\(broker.id\\)$"
    ):
        validate_broker_config({"broker.id": "3"})
    with pytest.raises(InvalidConfigurationError, match="at default cluster level, broker id must be specified"):
        validate_broker_config({"listeners": "PLAINTEXT://:9092"}, per_broker=False)
    validate_broker_config({"listeners": "PLAINTEXT://:9092"}, per_broker=True)


# --- the layered broker configs ------------------------------------------------------------------------


def test_layers_and_synonyms_in_kafka_precedence() -> None:
    config = broker(**{"log.retention.hours": 24, "min.insync.replicas": 2})
    config.update({"log.retention.ms": "5000", "min.insync.replicas": "1"}, {"min.insync.replicas": "3"})
    assert config.current()["min.insync.replicas"] == "3"
    assert [(s.source, s.value) for s in config.synonyms("min.insync.replicas")] == [
        (ConfigSource.DYNAMIC_BROKER_CONFIG, "3"),
        (ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG, "1"),
        (ConfigSource.STATIC_BROKER_CONFIG, "2"),
        (ConfigSource.DEFAULT_CONFIG, "1"),
    ]
    assert [(s.name, s.source) for s in config.synonyms("log.retention.ms")] == [
        ("log.retention.ms", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG),
        ("log.retention.hours", ConfigSource.STATIC_BROKER_CONFIG),
        ("log.retention.hours", ConfigSource.DEFAULT_CONFIG),
    ]
    assert config.log_defaults()["retention.ms"] == "5000"
    assert config.log_defaults()["min.insync.replicas"] == "3"


def test_log_defaults_follow_kafka_getters() -> None:
    config = broker(**{"log.retention.hours": 24, "log.roll.hours": 1})
    defaults = config.log_defaults()
    assert defaults["retention.ms"] == str(24 * 3_600_000)
    assert defaults["segment.ms"] == "3600000"
    assert defaults["segment.bytes"] == "1073741824"
    assert broker(**{"log.retention.hours": -1}).log_defaults()["retention.ms"] == "-1"


def test_reconfigurables_hear_each_update() -> None:
    config = broker()
    seen: list[dict[str, str]] = []
    config.add_reconfigurable(lambda c: seen.append(c.dynamic_overrides()))
    config.update({"a": "1"}, {"a": "2", "b": "3"})
    assert seen == [{"a": "2", "b": "3"}]


# --- DescribeConfigs ------------------------------------------------------------------------------------


def test_topic_entries_sources_and_synonyms() -> None:
    config = broker(**{"log.segment.bytes": 1048576})
    entries = {e.name: e for e in topic_config_entries({"cleanup.policy": "compact, delete"}, config, True)}
    assert set(entries) == set(TOPIC_CONFIGS)
    policy = entries["cleanup.policy"]
    assert (policy.value, policy.source, policy.config_type) == (
        "compact,delete",
        ConfigSource.TOPIC_CONFIG,
        ConfigType.LIST,
    )
    assert [s.source for s in policy.synonyms] == [ConfigSource.TOPIC_CONFIG, ConfigSource.DEFAULT_CONFIG]
    segment = entries["segment.bytes"]
    assert (segment.value, segment.source) == ("1048576", ConfigSource.STATIC_BROKER_CONFIG)
    # Kafka: log.retention.ms has no default, so the hours it falls back on are dropped from the synonyms
    retention = entries["retention.ms"]
    assert (retention.value, retention.source, retention.synonyms) == ("604800000", ConfigSource.DEFAULT_CONFIG, ())
    assert not any(e.read_only or e.is_sensitive for e in entries.values())
    assert all(e.synonyms == () and e.documentation is None for e in topic_config_entries({}, config, False))
    documented = {e.name: e.documentation for e in topic_config_entries({}, config, False, True)}
    assert (
        documented["preallocate"] == "True if we should preallocate the file on disk when creating a new log segment."
    )


def test_broker_entries() -> None:
    config = broker(**{"zookeeper.digest.username": "u", "zookeeper.digest.password": "secret"})
    config.update({"log.cleaner.threads": "2", "custom.thing": "x"}, {"num.io.threads": "4"})
    per_broker = {e.name: e for e in broker_config_entries(config, True, True)}
    assert per_broker["broker.id"].read_only and per_broker["broker.id"].value == "1"
    assert per_broker["broker.id"].source == ConfigSource.STATIC_BROKER_CONFIG
    threads = per_broker["num.io.threads"]
    assert (threads.value, threads.source, threads.read_only) == ("4", ConfigSource.DYNAMIC_BROKER_CONFIG, False)
    assert (
        per_broker["zookeeper.digest.password"].value is None and per_broker["zookeeper.digest.password"].is_sensitive
    )
    assert per_broker["log.retention.ms"].value is None  # Kafka's null default
    assert per_broker["custom.thing"].is_sensitive and per_broker["custom.thing"].config_type == ConfigType.UNKNOWN
    default = {e.name: e for e in broker_config_entries(config, False, True)}
    assert set(default) == {"log.cleaner.threads", "custom.thing"}
    cleaner = default["log.cleaner.threads"]
    assert cleaner.source == ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG
    assert [s.source for s in cleaner.synonyms] == [ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG]


# --- the delayed topic operations -----------------------------------------------------------------------


@dataclass
class State:
    leader: int


class FakeCache:
    def __init__(self) -> None:
        self.topics: dict[str, dict[int, State]] = {}

    def partitions(self, topic: str) -> dict[int, State] | None:
        return self.topics.get(topic)

    def contains(self, topic: str) -> bool:
        return topic in self.topics


def test_delayed_create_completes_when_every_leader_is_known() -> None:
    async def scenario() -> tuple[dict[str, ApiError], dict[str, ApiError]]:
        cache = FakeCache()
        purgatory: DelayedOperationPurgatory[str] = DelayedOperationPurgatory("topic")
        failed = ApiError(36, "exists")
        metadata = [CreatePartitionsMetadata("a", frozenset({0, 1})), CreatePartitionsMetadata("b", error=failed)]
        operation = DelayedCreatePartitions(10_000, metadata, cache)  # type: ignore[arg-type]
        assert not purgatory.try_complete_else_watch(operation)
        cache.topics["a"] = {0: State(1), 1: State(-1)}
        assert purgatory.check_and_complete("a") == 0
        cache.topics["a"][1] = State(2)
        assert purgatory.check_and_complete("a") == 1
        done = await operation.result()
        expiring = DelayedCreatePartitions(10, [CreatePartitionsMetadata("c", frozenset({0}))], cache)  # type: ignore[arg-type]
        purgatory.try_complete_else_watch(expiring)
        return done, await expiring.result()

    done, expired = asyncio.run(scenario())
    assert done == {"a": ApiError(0), "b": ApiError(36, "exists")}
    assert expired == {"c": TIMED_OUT}


def test_delayed_delete_waits_until_gone() -> None:
    async def scenario() -> dict[str, ApiError]:
        cache = FakeCache()
        cache.topics["a"] = {0: State(1)}
        purgatory: DelayedOperationPurgatory[str] = DelayedOperationPurgatory("topic")
        operation = DelayedDeleteTopics(10_000, {"a": ApiError(0)}, cache)  # type: ignore[arg-type]
        assert not purgatory.try_complete_else_watch(operation)
        del cache.topics["a"]
        purgatory.check_and_complete("a")
        return await operation.result()

    assert asyncio.run(scenario()) == {"a": ApiError(0)}
