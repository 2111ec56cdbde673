"""Kafka's config definitions and validation: topic configs (`LogConfig`) and dynamic broker configs.

Values are parsed the way Kafka's `ConfigDef` parses them and errors carry `ConfigException`'s text,
`Invalid value <v> for configuration <name>: <reason>`, so an operator sees what Kafka would say.
Tables from Kafka 2.8 `LogConfig.scala`, `KafkaConfig.scala` (Defaults) and `DynamicConfig.scala`
(kafka-reference.md §2.2).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from typing import Any

from kafkaops.cluster.common.config_types import (
    LATEST_API_VERSION,
    ConfigKey,
    ConfigType,
    api_version,
    at_least,
    between,
    config_error,
    each_one_of,
    one_of,
    parse_value,
)
from kafkaops.cluster.common.errors import InvalidConfigurationError, UnknownConfigNameError
from kafkaops.cluster.common.jvm_text import (
    INT_MAX,
    LONG_MAX,
    java_list_text,
    java_string_hash,
    properties_order,
    scala_immutable_set,
)


def throttled_replicas(name: str, value: Any) -> None:
    """`ThrottledReplicaListValidator`: `*`, or `partitionId:brokerId` entries."""
    # Kafka 2.8 (KAFKA-10460): `*` only as the whole value, never mixed with replicas
    if (
        all(re.fullmatch(r"([0-9]+:[0-9]+)?", str(item).strip()) for item in value)
        or "".join(map(str, value)).strip() == "*"
    ):
        return
    shown = java_list_text(value)
    raise config_error(
        name,
        shown,
        f"{name} must be the literal '*' or a list of replicas in the following format: "
        "[partitionId]:[brokerId],[partitionId]:[brokerId],...",
    )


def _definitions(*keys: ConfigKey) -> dict[str, ConfigKey]:
    return {k.name: k for k in keys}


TOPIC_CONFIGS: dict[str, ConfigKey] = _definitions(
    # Kafka's LogConfig definition order: validation reports the first bad value in this order
    ConfigKey("segment.bytes", ConfigType.INT, "1073741824", at_least(14)),
    ConfigKey("segment.ms", ConfigType.LONG, "604800000", at_least(1)),
    ConfigKey("segment.jitter.ms", ConfigType.LONG, "0", at_least(0)),
    ConfigKey("segment.index.bytes", ConfigType.INT, "10485760", at_least(0)),
    ConfigKey("flush.messages", ConfigType.LONG, str(LONG_MAX), at_least(0)),
    ConfigKey("flush.ms", ConfigType.LONG, str(LONG_MAX), at_least(0)),
    ConfigKey("retention.bytes", ConfigType.LONG, "-1"),
    ConfigKey("retention.ms", ConfigType.LONG, "604800000", at_least(-1)),
    ConfigKey("max.message.bytes", ConfigType.INT, "1048588", at_least(0)),
    ConfigKey("index.interval.bytes", ConfigType.INT, "4096", at_least(0)),
    ConfigKey("delete.retention.ms", ConfigType.LONG, "86400000", at_least(0)),
    ConfigKey("min.compaction.lag.ms", ConfigType.LONG, "0", at_least(0)),
    ConfigKey("max.compaction.lag.ms", ConfigType.LONG, str(LONG_MAX), at_least(1)),
    ConfigKey("file.delete.delay.ms", ConfigType.LONG, "60000", at_least(0)),
    ConfigKey("min.cleanable.dirty.ratio", ConfigType.DOUBLE, "0.5", between(0, 1)),
    ConfigKey("cleanup.policy", ConfigType.LIST, "delete", each_one_of("compact", "delete")),
    ConfigKey("unclean.leader.election.enable", ConfigType.BOOLEAN, "false"),
    ConfigKey("min.insync.replicas", ConfigType.INT, "1", at_least(1)),
    ConfigKey(
        "compression.type",
        ConfigType.STRING,
        "producer",
        one_of("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"),
    ),
    ConfigKey("preallocate", ConfigType.BOOLEAN, "false"),
    ConfigKey("message.format.version", ConfigType.STRING, LATEST_API_VERSION, api_version),
    ConfigKey("message.timestamp.type", ConfigType.STRING, "CreateTime", one_of("CreateTime", "LogAppendTime")),
    ConfigKey("message.timestamp.difference.max.ms", ConfigType.LONG, str(LONG_MAX), at_least(0)),
    ConfigKey("leader.replication.throttled.replicas", ConfigType.LIST, "", throttled_replicas),
    ConfigKey("follower.replication.throttled.replicas", ConfigType.LIST, "", throttled_replicas),
    ConfigKey("message.downconversion.enable", ConfigType.BOOLEAN, "true"),
)


def validate_topic_config(config: Mapping[str, str]) -> dict[str, Any]:
    """Kafka's `LogConfig.validate`: known names, parseable and valid values, compaction lags in order.

    Returns the parsed values of the given keys. Raises InvalidConfigurationError with Kafka's text.
    """
    validate_topic_config_names(config)
    parsed: dict[str, Any] = {}
    for key in TOPIC_CONFIGS.values():
        if key.name in config:
            value = parse_value(key.name, key.type, config[key.name])
            if key.validator is not None:
                key.validator(key.name, value)
            parsed[key.name] = value
    min_lag = parsed.get("min.compaction.lag.ms", 0)
    max_lag = parsed.get("max.compaction.lag.ms", LONG_MAX)
    if min_lag > max_lag:
        raise InvalidConfigurationError(
            f"conflict topic config setting min.compaction.lag.ms ({min_lag}) > max.compaction.lag.ms ({max_lag})"
        )
    return parsed


def validate_topic_config_names(names: Mapping[str, str] | Sequence[str]) -> None:
    for name in names:
        if name not in TOPIC_CONFIGS:
            raise UnknownConfigNameError(f"Unknown topic config name: {name}")


def topic_config_value(overrides: Mapping[str, str], name: str, broker_defaults: Mapping[str, str]) -> Any:
    """The effective value of a topic config: the topic's override, else the cluster default, else Kafka's."""
    key = TOPIC_CONFIGS[name]
    broker_name = TOPIC_TO_BROKER_CONFIG.get(name, name)
    raw = overrides.get(name, broker_defaults.get(broker_name, key.default))
    return parse_value(name, key.type, raw)


# --- brokers ------------------------------------------------------------------------------------

BROKER_CONFIGS_UPDATABLE_WHILE_RUNNING = (
    "leader.replication.throttled.rate",
    "follower.replication.throttled.rate",
    "replica.alter.log.dirs.io.max.bytes.per.second",
)
"""Kafka's `BrokerConfigsUpdatableUsingZooKeeperWhileBrokerRunning`: the replication quotas."""

TOPIC_TO_BROKER_CONFIG = {
    # LogConfig name → the KafkaConfig name that gives its cluster default (`LogConfig.TopicConfigSynonyms`)
    "segment.bytes": "log.segment.bytes",
    "segment.ms": "log.roll.ms",
    "segment.jitter.ms": "log.roll.jitter.ms",
    "segment.index.bytes": "log.index.size.max.bytes",
    "flush.messages": "log.flush.interval.messages",
    "flush.ms": "log.flush.interval.ms",
    "retention.bytes": "log.retention.bytes",
    "retention.ms": "log.retention.ms",
    "max.message.bytes": "message.max.bytes",
    "index.interval.bytes": "log.index.interval.bytes",
    "delete.retention.ms": "log.cleaner.delete.retention.ms",
    "min.compaction.lag.ms": "log.cleaner.min.compaction.lag.ms",
    "max.compaction.lag.ms": "log.cleaner.max.compaction.lag.ms",
    "file.delete.delay.ms": "log.segment.delete.delay.ms",
    "min.cleanable.dirty.ratio": "log.cleaner.min.cleanable.ratio",
    "cleanup.policy": "log.cleanup.policy",
    "unclean.leader.election.enable": "unclean.leader.election.enable",
    "min.insync.replicas": "min.insync.replicas",
    "compression.type": "compression.type",
    "preallocate": "log.preallocate",
    "message.format.version": "log.message.format.version",
    "message.timestamp.type": "log.message.timestamp.type",
    "message.timestamp.difference.max.ms": "log.message.timestamp.difference.max.ms",
    "message.downconversion.enable": "log.message.downconversion.enable",
}

BROKER_LOG_VALIDATORS = {
    "log.segment.bytes": at_least(14),
    "log.index.size.max.bytes": at_least(4),
    "log.flush.interval.messages": at_least(1),
    "message.max.bytes": at_least(0),
    "log.index.interval.bytes": at_least(0),
    "log.segment.delete.delay.ms": at_least(0),
    "log.cleanup.policy": each_one_of("compact", "delete"),
    "min.insync.replicas": at_least(1),
    "compression.type": one_of("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"),
    "log.message.timestamp.type": one_of("CreateTime", "LogAppendTime"),
}
"""KafkaConfig 2.8's validators of the dynamic log defaults; the others are only type-checked."""

BROKER_DYNAMIC_CONFIGS: dict[str, ConfigKey] = _definitions(
    *(ConfigKey(name, ConfigType.LONG, str(LONG_MAX), at_least(0)) for name in BROKER_CONFIGS_UPDATABLE_WHILE_RUNNING),
    # cluster-wide log defaults (DynamicLogConfig): the broker-side names of the topic configs, with
    # KafkaConfig's own validators, which are not always LogConfig's (log.retention.ms has none)
    *(
        dataclasses.replace(
            TOPIC_CONFIGS[topic_name], name=broker_name, validator=BROKER_LOG_VALIDATORS.get(broker_name)
        )
        for topic_name, broker_name in TOPIC_TO_BROKER_CONFIG.items()
        if topic_name != "message.format.version"
    ),
    # DynamicListenerConfig: per-broker listener changes
    ConfigKey("listeners", ConfigType.STRING, ""),
    ConfigKey("advertised.listeners", ConfigType.STRING, ""),
    # DynamicThreadPool and the log cleaner (DynamicConfig / LogCleaner.ReconfigurableConfigs)
    ConfigKey("num.io.threads", ConfigType.INT, "8", at_least(1)),
    ConfigKey("num.network.threads", ConfigType.INT, "3", at_least(1)),
    ConfigKey("num.replica.fetchers", ConfigType.INT, "1"),
    ConfigKey("num.recovery.threads.per.data.dir", ConfigType.INT, "1", at_least(1)),
    ConfigKey("background.threads", ConfigType.INT, "10", at_least(1)),
    ConfigKey("log.cleaner.threads", ConfigType.INT, "1", at_least(0)),
    ConfigKey("log.cleaner.dedupe.buffer.size", ConfigType.LONG, "134217728"),
    ConfigKey("log.cleaner.io.buffer.size", ConfigType.INT, "524288", at_least(0)),
    ConfigKey("log.cleaner.io.buffer.load.factor", ConfigType.DOUBLE, "0.9"),
    ConfigKey("log.cleaner.io.max.bytes.per.second", ConfigType.DOUBLE, "1.7976931348623157E308"),
    ConfigKey("log.cleaner.backoff.ms", ConfigType.LONG, "15000", at_least(0)),
    ConfigKey("max.connections.per.ip", ConfigType.INT, str(INT_MAX), at_least(0)),
    ConfigKey("max.connections", ConfigType.INT, str(INT_MAX), at_least(0)),
    ConfigKey("max.connection.creation.rate", ConfigType.INT, str(INT_MAX), at_least(0)),
)

BROKER_STATIC_CONFIGS = frozenset(
    {
        "broker.id",
        "broker.rack",
        "log.dirs",
        "log.dir",
        "zookeeper.connect",
        "zookeeper.session.timeout.ms",
        "zookeeper.connection.timeout.ms",
        "zookeeper.set.acl",
        "inter.broker.listener.name",
        "inter.broker.protocol.version",
        "num.partitions",
        "default.replication.factor",
        "delete.topic.enable",
        "auto.create.topics.enable",
        "auto.leader.rebalance.enable",
        "leader.imbalance.per.broker.percentage",
        "leader.imbalance.check.interval.seconds",
        "replica.lag.time.max.ms",
        "replica.fetch.max.bytes",
        "replica.fetch.wait.max.ms",
        "controlled.shutdown.enable",
        "controlled.shutdown.max.retries",
        "controller.socket.timeout.ms",
        "socket.request.max.bytes",
        "offsets.topic.replication.factor",
        "transaction.state.log.replication.factor",
        "reserved.broker.max.id",
        "broker.id.generation.enable",
        # the other spellings of the dynamic log defaults, and the message format, are static
        "log.message.format.version",
        "log.retention.hours",
        "log.retention.minutes",
        "log.roll.hours",
        "log.roll.jitter.hours",
        "log.retention.check.interval.ms",
        "log.flush.scheduler.interval.ms",
        "log.flush.offset.checkpoint.interval.ms",
        "log.cleaner.enable",
        "num.replica.alter.log.dirs.threads",
        "replica.socket.timeout.ms",
        "replica.fetch.min.bytes",
        "replica.fetch.backoff.ms",
        "replica.high.watermark.checkpoint.interval.ms",
        "controlled.shutdown.retry.backoff.ms",
        "offsets.topic.num.partitions",
        "offset.metadata.max.bytes",
        "offsets.load.buffer.size",
        "offsets.topic.segment.bytes",
        "offsets.retention.minutes",
        "offsets.retention.check.interval.ms",
        "offsets.commit.timeout.ms",
        "transaction.state.log.min.isr",
        "group.initial.rebalance.delay.ms",
        "group.min.session.timeout.ms",
        "group.max.session.timeout.ms",
        "group.max.size",
        "socket.send.buffer.bytes",
        "socket.receive.buffer.bytes",
        "queued.max.requests",
    }
)
"""KafkaConfig names that are not dynamic: `Cannot update these configs dynamically` (custom names pass)."""


BROKER_PER_BROKER_CONFIGS = frozenset({"listeners", "advertised.listeners", "listener.security.protocol.map"})
"""Kafka's `DynamicBrokerConfig.PerBrokerConfigs` (its listener part; kafkaops has no SSL/SASL configs):
refused at the cluster-wide `<default>` level."""

ALL_DYNAMIC_BROKER_CONFIGS = frozenset(
    (set(BROKER_DYNAMIC_CONFIGS) - set(BROKER_CONFIGS_UPDATABLE_WHILE_RUNNING))
    | {"message.max.bytes", "metric.reporters", "max.connections.per.ip.overrides"}
    | BROKER_PER_BROKER_CONFIGS
)
"""Kafka's `DynamicBrokerConfig.AllDynamicConfigs` (log cleaner, log defaults, thread pools, listeners, socket
server): what DescribeConfigs answers `read_only=false` for. The replication quotas are dynamic through
`DynamicConfig.Broker` but not in this set, so Kafka describes them read-only; so do we."""


def validate_broker_config(config: Mapping[str, str], per_broker: bool = True) -> None:
    """`DynamicConfig.Broker.validate` + `DynamicBrokerConfig.validateConfigs` for a ZooKeeper write.

    Custom (non-Kafka) names are allowed, as Kafka allows them; known dynamic names are parsed and
    validated; static broker configs are refused, and per-broker ones (listeners) at the `<default>`
    level (`per_broker` False).
    """
    # Kafka: `props.asScala.keySet.intersect(nonDynamicProps)`, a Scala Set in the Properties' order
    static = [name for name in properties_order(config) if name in BROKER_STATIC_CONFIGS]
    if static:
        names = scala_immutable_set(static, java_string_hash)
        raise InvalidConfigurationError(f"Cannot update these configs dynamically: {names}")
    per_broker_names = [name for name in properties_order(config) if name in BROKER_PER_BROKER_CONFIGS]
    if per_broker_names and not per_broker:
        names = scala_immutable_set(per_broker_names, java_string_hash)
        raise InvalidConfigurationError(
            f"Cannot update these configs at default cluster level, broker id must be specified: {names}"
        )
    for name, value in config.items():
        key = BROKER_DYNAMIC_CONFIGS.get(name)
        if key is not None:
            parsed = parse_value(name, key.type, value)
            if key.validator is not None:
                key.validator(name, parsed)
