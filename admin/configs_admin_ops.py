"""kafka-configs through the Admin API for topics, brokers, the brokers' default, users and clients (Kafka 2.8
`ConfigCommand.describeConfig` / `alterConfig` with an AdminClient); the ZooKeeper path is
`admin.configs`.

As Kafka 2.8 does: a topic is altered with IncrementalAlterConfigs (SET / DELETE), a broker or the
brokers' default with AlterConfigs (the whole new set of its dynamic configs, which is why a sensitive
config, whose value DescribeConfigs does not return, must be given again). A deletion of a config the
entity does not have is refused before anything is sent (`Invalid config(s): ...`). Broker loggers
(`--entity-type broker-loggers`) are not offered. Users' and clients' quotas go through
DescribeClientQuotas / AlterClientQuotas (one entity: a user, a client id, or a <user, client-id> pair,
each name or the default). Nothing here prints.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence

from kafkaops.admin import client_quotas, user_scram_credentials
from kafkaops.admin.client_quotas import SCRAM_MECHANISMS, FilterComponent, QuotaAlteration, QuotaEntity
from kafkaops.admin.kafka_client import user_scram_credentials as scram_admin
from kafkaops.admin.kafka_client.client import KafkaClient
from kafkaops.admin.kafka_client.client_quotas import alter_client_quotas, describe_client_quotas
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
from kafkaops.cluster.common.config_types import ConfigType as ValueType
from kafkaops.cluster.common.config_types import parse_value
from kafkaops.cluster.common.errors import InvalidArgumentError, InvalidConfigurationError, ResourceNotFoundError
from kafkaops.cluster.common.java_errors import java_exception_text
from kafkaops.cluster.common.jvm_text import (
    hash_map_order,
    java_hash_map_order,
    java_int,
    java_string_hash,
    properties_order,
    scala_immutable_set,
    scala_set_order,
)
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


# --- users and clients: client quotas (Kafka's alterQuotaConfigs / describeQuotaConfigs) ----------------

QUOTA_ENTITY_TYPES = {ConfigType.USER: client_quotas.USER, ConfigType.CLIENT: client_quotas.CLIENT_ID}
"""kafka-configs' entity types → `ClientQuotaEntity`'s."""


def quota_filter(entity_types: Sequence[str], entity_names: Sequence[str]) -> list[FilterComponent]:
    """`getAllClientQuotasConfigs`' components: the `--entity-type`s zipped with the names ("" for the
    default entity); a type without a name matches any entity of the type."""
    if len(entity_names) > len(entity_types):
        raise InvalidArgumentError("More entity names specified than entity types")
    components = []
    for index, entity_type in enumerate(entity_types):
        quota_type = QUOTA_ENTITY_TYPES.get(entity_type)
        if quota_type is None:
            raise InvalidArgumentError(f"Unexpected entity type {entity_type}")
        if index >= len(entity_names):
            components.append(FilterComponent(quota_type, client_quotas.MATCH_ANY))
        elif entity_names[index] == "":
            components.append(FilterComponent(quota_type, client_quotas.MATCH_DEFAULT))
        else:
            components.append(FilterComponent(quota_type, client_quotas.MATCH_EXACT, entity_names[index]))
    return components


def _quota_entity_hash(entity: QuotaEntity) -> int:
    # ClientQuotaEntity.hashCode: Objects.hash(entries), a HashMap's hash the sum of key ^ value hashes
    total = sum(java_string_hash(k) ^ (0 if v is None else java_string_hash(v)) for k, v in entity.items())
    return java_int(31 + total)


def describe_quota_entities(
    client: KafkaClient, entity_types: Sequence[str], entity_names: Sequence[str]
) -> list[tuple[QuotaEntity, dict[str, float]]]:
    """DescribeClientQuotas with `ClientQuotaFilter.containsOnly`: the entities of exactly these types
    that have a quota, in the order of the Admin client's `HashMap<ClientQuotaEntity, ...>`."""
    return admin_client_order(describe_client_quotas(client, quota_filter(entity_types, entity_names), strict=True))


def admin_client_order(
    described: Sequence[tuple[QuotaEntity, dict[str, float]]],
) -> list[tuple[QuotaEntity, dict[str, float]]]:
    """DescribeClientQuotasResponse's `new HashMap<ClientQuotaEntity, ...>(size)` order of the entries,
    filled in the response's order."""
    hashes = [_quota_entity_hash(entity) for entity, _ in described]
    order = java_hash_map_order(range(len(described)), hashes.__getitem__, len(described))
    return [described[i] for i in order]


def _scala_keys(add: Mapping[str, str], keep: Callable[[str], bool]) -> list[str]:
    # `configsToBeAdded.keys.filter...`: the keys of a Scala immutable Map built from a Properties
    ordered = scala_set_order(properties_order(add), java_string_hash)
    return [key for key in ordered if keep(key)]


def check_quota_changes(
    entity_types: Sequence[str], entity_names: Sequence[str], add: Mapping[str, str], delete: Sequence[str]
) -> None:
    """`alterConfig`'s checks for users and clients with `--bootstrap-server`, with Kafka's texts
    (Scala's `Set(...)` / `ArrayBuffer(...)` included)."""
    is_scram = SCRAM_MECHANISMS.__contains__
    is_quota = client_quotas.is_client_or_user_quota_config
    unknown_add = _scala_keys(add, lambda k: not is_scram(k) and not is_quota(k))
    scram_add = _scala_keys(add, is_scram)
    unknown_delete = [k for k in delete if not is_scram(k) and not is_quota(k)]
    scram_delete = [k for k in delete if is_scram(k)]
    quota_changes = any(is_quota(k) for k in add) or any(is_quota(k) for k in delete)
    if entity_types[0] == ConfigType.CLIENT or len(entity_types) == 2:
        client = ConfigType.CLIENT
        if unknown_add or scram_add:
            raise InvalidArgumentError(
                f"Only quota configs can be added for '{client}' using --bootstrap-server. "
                f"Unexpected config names: {scala_immutable_set(unknown_add + scram_add, java_string_hash)}"
            )
        if unknown_delete or scram_delete:
            raise InvalidArgumentError(
                f"Only quota configs can be deleted for '{client}' using --bootstrap-server. "
                f"Unexpected config names: ArrayBuffer({', '.join(unknown_delete + scram_delete)})"
            )
        return
    user = ConfigType.USER
    if unknown_add:
        raise InvalidArgumentError(
            f"Only quota and SCRAM credential configs can be added for '{user}' using --bootstrap-server. "
            f"Unexpected config names: {scala_immutable_set(unknown_add, java_string_hash)}"
        )
    if unknown_delete:
        raise InvalidArgumentError(
            f"Only quota and SCRAM credential configs can be deleted for '{user}' using --bootstrap-server. "
            f"Unexpected config names: ArrayBuffer({', '.join(unknown_delete)})"
        )
    if scram_add or scram_delete:
        if "" in entity_names:
            raise InvalidArgumentError(
                "The use of --entity-default or --user-defaults is not allowed with User SCRAM Credentials "
                "using --bootstrap-server."
            )
        if quota_changes:
            raise InvalidArgumentError(
                f"Cannot alter both quota and SCRAM credential configs simultaneously for '{user}' using "
                "--bootstrap-server."
            )


def alter_quota_entity(
    client: KafkaClient,
    entity_types: Sequence[str],
    entity_names: Sequence[str],
    add: Mapping[str, str],
    delete: Sequence[str],
) -> None:
    """`alterQuotaConfigs`: one AlterClientQuotas of the entity named by the types and names ("" for a
    default). Raises InvalidArgumentError / InvalidConfigurationError (Kafka's texts) before anything is
    sent, else the broker's error for the entity."""
    check_quota_changes(entity_types, entity_names, add, delete)
    is_quota = client_quotas.is_client_or_user_quota_config
    if not any(is_quota(k) for k in add) and not any(is_quota(k) for k in delete):
        alter_user_scram_credential_configs(client, entity_names[0], add, delete)
        return
    if len(entity_types) != len(entity_names):
        raise InvalidArgumentError("Exactly one entity name must be specified for every entity type")
    described = describe_quota_entities(client, entity_types, entity_names)
    old = described[0][1] if described else {}
    missing = [key for key in delete if key not in old]
    if missing:
        raise InvalidConfigurationError(f"Invalid config(s): {','.join(missing)}")
    entity: QuotaEntity = {QUOTA_ENTITY_TYPES[t]: (n or None) for t, n in zip(entity_types, entity_names, strict=True)}
    ops: list[tuple[str, float | None]] = []
    for key in scala_set_order(properties_order(add), java_string_hash):
        try:
            ops.append((key, float(parse_value(key, ValueType.DOUBLE, add[key]))))
        except InvalidConfigurationError:
            raise InvalidArgumentError(f"Cannot parse quota configuration value for {key}: {add[key]}") from None
    ops.extend((key, None) for key in delete)
    [(_, error)] = alter_client_quotas(client, [QuotaAlteration(entity, tuple(ops))])
    if error is not None:
        raise error


def alter_user_scram_credential_configs(
    client: KafkaClient, user: str, add: Mapping[str, str], delete: Sequence[str]
) -> None:
    """`ConfigCommand.alterUserScramCredentialConfigs`: one AlterUserScramCredentials for the user. Raises
    InvalidArgumentError (Kafka's texts) before anything is sent, else the broker's error for the user."""
    deletions, upsertions = user_scram_credentials.scram_alterations(user, add, delete)
    for _, error in scram_admin.alter_user_scram_credentials(client, deletions, upsertions):
        if error is not None:
            raise error


def user_scram_credential_lines(client: KafkaClient, entity_names: Sequence[str]) -> list[str]:
    """`describeClientQuotaAndUserScramCredentialConfigs`' SCRAM part: a line per user with credentials
    (those without any are left out, as the admin client's `users()` leaves them), no secret shown."""
    lines = []
    for description in scram_admin.describe_user_scram_credentials(client, list(entity_names)):
        error, user = description.error, description.user
        if error is not None and error.code == ResourceNotFoundError.code:
            continue
        if error is not None:
            text = java_exception_text(error.code, error.message)
            lines.append(
                f"Error retrieving SCRAM credential configs for user-principal '{user}': ExecutionException: {text}"
            )
            continue
        infos = ", ".join(f"{name}=iterations={iterations}" for name, iterations in description.credential_infos)
        lines.append(f"SCRAM credential configs for user-principal '{user}' are {infos}")
    return lines
