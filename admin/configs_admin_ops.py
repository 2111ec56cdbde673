"""kafka-configs through the Admin API for topics, brokers and the brokers' default (Kafka 2.8
`ConfigCommand.describeConfig` / `alterConfig` with an AdminClient); the ZooKeeper path is
`admin.configs`.

As Kafka 2.8 does: a topic is altered with IncrementalAlterConfigs (SET / DELETE), a broker or the
brokers' default with AlterConfigs (the whole new set of its dynamic configs, which is why a sensitive
config, whose value DescribeConfigs does not return, must be given again). A deletion of a config the
entity does not have is refused before anything is sent (`Invalid config(s): ...`). Broker loggers
(`--entity-type broker-loggers`) are not offered. Nothing here prints.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from kafkaops.admin.kafka_client.client import KafkaClient
from kafkaops.admin.kafka_client.config_admin import (
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
    ResourceType,
    alter_configs,
    describe_configs,
    incremental_alter_configs,
)
from kafkaops.admin.kafka_client.topic_admin import list_topics, live_brokers
from kafkaops.admin.topics import validate_topic_name
from kafkaops.cluster.common.errors import InvalidArgumentError, InvalidConfigurationError
from kafkaops.cluster.common.jvm_text import hash_map_order, java_string_hash, scala_immutable_set
from kafkaops.cluster.zk.znodes import ConfigType

BROKER_DEFAULT = ""
"""The brokers' default entity in the Admin API (`ConfigResource(BROKER, "")`)."""


@dataclasses.dataclass(frozen=True)
class DescribedEntity:
    """One entity's configs as ConfigCommand prints them: dynamic ones (or all, with `--all`)."""

    entity_type: str  # topics or brokers
    name: str  # BROKER_DEFAULT for the brokers' default
    entries: tuple[ConfigEntry, ...]


def _resource(entity_type: str, name: str) -> tuple[ConfigResource, ConfigSource]:
    """Kafka's `getResourceConfig`: the resource and the source of its dynamic configs."""
    if entity_type == ConfigType.TOPIC:
        if name:
            validate_topic_name(name)
        return ConfigResource(ResourceType.TOPIC, name), ConfigSource.DYNAMIC_TOPIC_CONFIG
    if entity_type == ConfigType.BROKER:
        if name == BROKER_DEFAULT:
            return ConfigResource(ResourceType.BROKER, name), ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG
        try:
            int(name)
        except ValueError:
            raise InvalidArgumentError(
                f"The entity name for {entity_type} must be a valid integer broker id, found: {name}"
            ) from None
        return ConfigResource(ResourceType.BROKER, name), ConfigSource.DYNAMIC_BROKER_CONFIG
    raise InvalidArgumentError(f"Invalid entity type: {entity_type}")


def resource_configs(
    client: KafkaClient, entity_type: str, name: str, *, include_synonyms: bool, describe_all: bool
) -> list[ConfigEntry]:
    resource, dynamic = _resource(entity_type, name)
    entries = describe_configs(client, resource, include_synonyms)
    return entries if describe_all else [e for e in entries if e.source is dynamic]


def describe_entities(
    client: KafkaClient, entity_type: str, name: str | None, describe_all: bool
) -> list[DescribedEntity]:
    """`describeResourceConfig`: the named entity, or every topic (in the order of Kafka's HashMap of
    names), or every live broker then the brokers' default."""
    if name is not None:
        names = [name]
    elif entity_type == ConfigType.TOPIC:
        names = hash_map_order(list_topics(client))
    else:
        names = [str(b) for b in live_brokers(client)] + [BROKER_DEFAULT]
    return [
        DescribedEntity(
            entity_type,
            n,
            tuple(resource_configs(client, entity_type, n, include_synonyms=True, describe_all=describe_all)),
        )
        for n in names
    ]


def alter_entity(
    client: KafkaClient, entity_type: str, name: str, add: Mapping[str, str], delete: Sequence[str]
) -> None:
    """`alterConfig` for a topic (IncrementalAlterConfigs) or a broker / the brokers' default
    (AlterConfigs of the whole dynamic set). Raises InvalidConfigurationError (Kafka's texts) for a
    deletion of a config the entity does not have or a sensitive config left out, else the broker's error."""
    resource, _ = _resource(entity_type, name)
    old = {e.name: e for e in resource_configs(client, entity_type, name, include_synonyms=False, describe_all=False)}
    missing = [key for key in delete if key not in old]
    if missing:
        raise InvalidConfigurationError(f"Invalid config(s): {','.join(missing)}")
    if entity_type == ConfigType.TOPIC:
        operations = [(k, AlterConfigOpType.SET, v) for k, v in add.items()]
        operations += [(k, AlterConfigOpType.DELETE, "") for k in delete]
        incremental_alter_configs(client, resource, operations)
        return
    new: dict[str, str | None] = {k: e.value for k, e in old.items()}
    new.update(add)
    for key in delete:
        new.pop(key, None)
    sensitive = [k for k, v in new.items() if v is None]
    if sensitive:
        raise InvalidConfigurationError(
            "All sensitive broker config entries must be specified for --alter, missing entries: "
            + scala_immutable_set(sensitive, java_string_hash)
        )
    alter_configs(client, resource, new)
