"""Config calls of Kafka's Admin API over a `KafkaClient`: describeConfigs, incrementalAlterConfigs and
(the legacy, whole-set) alterConfigs, for topics, brokers and the brokers' default (`ConfigResource`
with an empty name).

A broker resource with an id goes to that broker (only it knows its static and dynamic configs, as
Kafka's `ConstantNodeIdProvider`); topics and the broker default go to any broker. Nothing here prints.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping, Sequence
from typing import Any

from kafkaops.admin.kafka_client.admin_calls import raise_for, to_broker
from kafkaops.admin.kafka_client.client import KafkaClient
from kafkaops.cluster.protocol.schemas import ApiKey


class ResourceType(enum.IntEnum):
    """Kafka's `ConfigResource.Type` wire ids."""

    TOPIC = 2
    BROKER = 4
    BROKER_LOGGER = 8


class ConfigSource(enum.IntEnum):
    """Kafka's `DescribeConfigsResponse.ConfigSource`; the name is what ConfigCommand prints."""

    UNKNOWN = 0
    DYNAMIC_TOPIC_CONFIG = 1
    DYNAMIC_BROKER_CONFIG = 2
    DYNAMIC_DEFAULT_BROKER_CONFIG = 3
    STATIC_BROKER_CONFIG = 4
    DEFAULT_CONFIG = 5
    DYNAMIC_BROKER_LOGGER_CONFIG = 6


class AlterConfigOpType(enum.IntEnum):
    """Kafka's `AlterConfigOp.OpType` wire ids."""

    SET = 0
    DELETE = 1
    APPEND = 2
    SUBTRACT = 3


@dataclasses.dataclass(frozen=True, order=True)
class ConfigResource:
    type: ResourceType
    name: str  # a topic, a broker id, or "" for the brokers' default

    def broker_id(self) -> int | None:
        """The broker that must answer for this resource (None: any broker)."""
        if self.type in (ResourceType.BROKER, ResourceType.BROKER_LOGGER) and self.name:
            return int(self.name)
        return None


@dataclasses.dataclass(frozen=True)
class ConfigSynonym:
    name: str
    value: str | None
    source: ConfigSource


@dataclasses.dataclass(frozen=True)
class ConfigEntry:
    """One config of a DescribeConfigs answer; `value` is None for a sensitive config."""

    name: str
    value: str | None
    source: ConfigSource
    is_sensitive: bool
    read_only: bool
    synonyms: tuple[ConfigSynonym, ...] = ()

    @property
    def is_default(self) -> bool:
        return self.source is ConfigSource.DEFAULT_CONFIG


def _source(raw: Mapping[str, Any]) -> ConfigSource:
    source = raw.get("config_source")
    if source is None or source < 0:
        # DescribeConfigs v0 only says whether the value is the default (the codec fills in -1)
        return ConfigSource.DEFAULT_CONFIG if raw.get("is_default") else ConfigSource.UNKNOWN
    try:
        return ConfigSource(source)
    except ValueError:
        return ConfigSource.UNKNOWN


def _entry(raw: Mapping[str, Any]) -> ConfigEntry:
    synonyms = tuple(
        ConfigSynonym(s["name"], s.get("value"), ConfigSource(s["source"])) for s in raw.get("synonyms") or ()
    )
    return ConfigEntry(
        raw["name"], raw.get("value"), _source(raw), bool(raw.get("is_sensitive")), bool(raw.get("read_only")), synonyms
    )


def describe_configs(
    client: KafkaClient, resource: ConfigResource, include_synonyms: bool = False
) -> list[ConfigEntry]:
    """The resource's configs in the broker's order. Raises the resource's error (an unknown topic:
    UnknownTopicOrPartitionError; InvalidRequestError, ...)."""
    body = {
        "resources": [
            {"resource_type": int(resource.type), "resource_name": resource.name, "configuration_keys": None}
        ],
        "include_synonyms": include_synonyms,
        "include_documentation": False,
    }
    answer = to_broker(client, resource.broker_id(), ApiKey.DESCRIBE_CONFIGS, body)
    for result in answer["results"]:
        raise_for(result["error_code"], result.get("error_message"))
        return [_entry(c) for c in result["configs"]]
    return []


def incremental_alter_configs(
    client: KafkaClient,
    resource: ConfigResource,
    operations: Sequence[tuple[str, AlterConfigOpType, str | None]],
    validate_only: bool = False,
) -> None:
    """IncrementalAlterConfigs of one resource: (name, operation, value) in order. Raises its error
    (InvalidConfigError, InvalidRequestError, UnknownTopicOrPartitionError, ...)."""
    body = {
        "resources": [
            {
                "resource_type": int(resource.type),
                "resource_name": resource.name,
                "configs": [{"name": n, "config_operation": int(op), "value": v} for n, op, v in operations],
            }
        ],
        "validate_only": validate_only,
    }
    answer = to_broker(client, resource.broker_id(), ApiKey.INCREMENTAL_ALTER_CONFIGS, body)
    for result in answer["responses"]:
        raise_for(result["error_code"], result.get("error_message"))


def alter_configs(
    client: KafkaClient, resource: ConfigResource, configs: Mapping[str, str | None], validate_only: bool = False
) -> None:
    """AlterConfigs of one resource: its whole new set of dynamic configs (what is left out is
    removed). Raises its error."""
    body = {
        "resources": [
            {
                "resource_type": int(resource.type),
                "resource_name": resource.name,
                "configs": [{"name": n, "value": v} for n, v in configs.items()],
            }
        ],
        "validate_only": validate_only,
    }
    answer = to_broker(client, resource.broker_id(), ApiKey.ALTER_CONFIGS, body)
    for result in answer["responses"]:
        raise_for(result["error_code"], result.get("error_message"))
