"""What DescribeConfigs answers for a topic or a broker (Kafka 2.8's `ConfigHelper`).

Pure functions over a topic's overrides and the broker's layered configs (`DynamicBrokerConfig`): each
entry carries its value as Kafka renders it (`ConfigDef.convertToString` of the parsed value), its
source (the highest layer that sets it, through the config's synonyms), its synonyms in precedence
order, `read_only` (a broker config Kafka cannot change while running), `is_sensitive` (a password, or
a name Kafka does not know and so cannot vouch for: its value is then withheld, as Kafka withholds it),
its type and, when asked, its documentation (Kafka's texts for topic configs; kafkaops has none for
broker configs, which get null).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass

from kafkaops.admin.config_def import ALL_DYNAMIC_BROKER_CONFIGS, TOPIC_CONFIGS, TOPIC_TO_BROKER_CONFIG
from kafkaops.admin.config_docs import TOPIC_CONFIG_DOCS
from kafkaops.cluster.broker.config import BROKER_CONFIGS
from kafkaops.cluster.broker.dynamic_broker_config import (
    ConfigSource,
    ConfigSynonym,
    DynamicBrokerConfig,
    broker_config_key,
    broker_config_synonyms,
)
from kafkaops.cluster.common.config_types import ConfigKey, parse_value
from kafkaops.cluster.common.errors import KafkaOpsError
from kafkaops.cluster.common.jvm_text import java_double_string


class ConfigType(enum.IntEnum):
    """Kafka's `DescribeConfigsResponse.ConfigType`; the value is the wire byte."""

    UNKNOWN = 0
    BOOLEAN = 1
    STRING = 2
    INT = 3
    SHORT = 4
    LONG = 5
    DOUBLE = 6
    LIST = 7
    CLASS = 8
    PASSWORD = 9


@dataclass(frozen=True, slots=True)
class DescribedConfig:
    """One entry of a DescribeConfigs result (and of a CreateTopics v5+ result)."""

    name: str
    value: str | None
    source: ConfigSource
    read_only: bool
    is_sensitive: bool
    synonyms: tuple[ConfigSynonym, ...]
    config_type: ConfigType
    documentation: str | None = None


def config_string(key: ConfigKey, raw: str) -> str:
    """`ConfigDef.convertToString` of the parsed value: `" 10 "` is `10`, `TRUE` is `true`, `compact, delete`
    is `compact,delete`; a value that does not parse (never written by us) is shown as stored."""
    try:
        value = parse_value(key.name, key.type, raw)
    except KafkaOpsError:
        return raw
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return java_double_string(value)
    if isinstance(value, list):
        return ",".join(value)
    return str(value)


PEM_PASSWORD_CONFIGS = frozenset({"ssl.keystore.key", "ssl.keystore.certificate.chain", "ssl.truststore.certificates"})
"""Kafka's PASSWORD-typed inline PEM stores (KIP-651): never shown."""


def _value_type(name: str, key: ConfigKey | None) -> tuple[ConfigType, bool]:
    """The wire type and whether the value is sensitive (`KafkaConfig.maybeSensitive`: unknown or PASSWORD)."""
    if key is None:
        return ConfigType.UNKNOWN, True
    if "password" in name or name in PEM_PASSWORD_CONFIGS:
        # ours: the ZooKeeper digest password and the inline PEM stores are plain STRINGs in the config file
        return ConfigType.PASSWORD, True
    return ConfigType[key.type.value], False


def topic_config_entries(
    overrides: Mapping[str, str],
    broker: DynamicBrokerConfig,
    include_synonyms: bool,
    include_documentation: bool = False,
) -> list[DescribedConfig]:
    """Every topic config (Kafka's `createTopicConfigEntry` over `LogConfig`'s values), by name."""
    defaults = broker.log_defaults()
    entries = []
    for name in sorted(TOPIC_CONFIGS):
        key = TOPIC_CONFIGS[name]
        config_type, sensitive = _value_type(name, key)
        value = config_string(key, overrides.get(name, defaults[name]))
        synonyms: list[ConfigSynonym] = []
        if name in overrides:
            synonyms.append(ConfigSynonym(name, value, ConfigSource.TOPIC_CONFIG))
        broker_name = TOPIC_TO_BROKER_CONFIG.get(name)
        if broker_name is not None:
            synonyms.extend(broker.synonyms(broker_name, broker_config_synonyms(broker_name)))
        entries.append(
            DescribedConfig(
                name=name,
                value=None if sensitive else value,
                source=synonyms[0].source if synonyms else ConfigSource.DEFAULT_CONFIG,
                read_only=False,
                is_sensitive=sensitive,
                synonyms=tuple(synonyms) if include_synonyms else (),
                config_type=config_type,
                documentation=TOPIC_CONFIG_DOCS.get(name) if include_documentation else None,
            )
        )
    return entries


def broker_config_entries(
    broker: DynamicBrokerConfig, per_broker: bool, include_synonyms: bool
) -> list[DescribedConfig]:
    """A broker's configs (`per_broker`: every config the broker knows and every one set for it, at their
    current values) or the cluster-wide `<default>` ones (only those set there), by name (Kafka's
    `createBrokerConfigEntry`)."""
    if per_broker:
        current = broker.current()
        names = set(current) | set(broker.static_default_configs) | set(BROKER_CONFIGS)
        values: Mapping[str, str | None] = {name: current.get(name) for name in names}
    else:
        values = broker.dynamic_default_configs
    entries = []
    for name in sorted(values):
        key = broker_config_key(name)
        config_type, sensitive = _value_type(name, key)
        raw = values[name]
        value = None if sensitive or raw is None else (config_string(key, raw) if key is not None else raw)
        synonyms = [
            ConfigSynonym(s.name, None if sensitive else s.value, s.source)
            for s in broker.synonyms(name)
            if per_broker or s.source is ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG
        ]
        entries.append(
            DescribedConfig(
                name=name,
                value=value,
                source=synonyms[0].source if synonyms else ConfigSource.DEFAULT_CONFIG,
                read_only=name not in ALL_DYNAMIC_BROKER_CONFIGS,
                is_sensitive=sensitive,
                synonyms=tuple(synonyms) if include_synonyms else (),
                config_type=config_type,
            )
        )
    return entries


__all__ = [
    "ConfigSource",
    "ConfigSynonym",
    "ConfigType",
    "DescribedConfig",
    "broker_config_entries",
    "config_string",
    "topic_config_entries",
]
