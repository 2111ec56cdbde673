"""kafka-configs in ZooKeeper mode for topics and brokers (Kafka 2.8 `ConfigCommand`, §2.2).

An alteration reads the entity's overrides, validates the whole new set, then writes it together
with its `/config/changes/config_change_` notification in one multi, conditional on the version
read: a concurrent change or a bad value leaves ZooKeeper exactly as it was.
"""

from __future__ import annotations

import collections
import dataclasses
import enum
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from kafkaops.admin.client_quotas import validate_quota_config
from kafkaops.admin.config_def import (
    BROKER_CONFIGS_UPDATABLE_WHILE_RUNNING,
    validate_broker_config,
    validate_topic_config,
)
from kafkaops.admin.topics import validate_topic_name
from kafkaops.admin.user_scram_credentials import preprocess_scram_credentials
from kafkaops.cluster.common.config_types import ConfigKey
from kafkaops.cluster.common.config_types import ConfigType as ConfigValueType
from kafkaops.cluster.common.errors import (
    InvalidArgumentError,
    InvalidConfigurationError,
    InvalidRequestError,
    UnknownConfigNameError,
    UnknownTopicOrPartitionError,
)
from kafkaops.cluster.common.jvm_text import java_string_hash, properties_order, scala_immutable_set
from kafkaops.cluster.zk.client import KafkaZkClient
from kafkaops.cluster.zk.znodes import (
    DEFAULT_ENTITY_NAME,
    ConfigType,
    desanitize_entity_name,
    sanitize_entity_name,
    user_client_entity_path,
)

SUPPORTED_ENTITY_TYPES = (ConfigType.TOPIC, ConfigType.BROKER, ConfigType.USER, ConfigType.CLIENT)
_QUOTA_ENTITY_TYPES = (ConfigType.USER, ConfigType.CLIENT)


@dataclasses.dataclass(frozen=True)
class ConfigEntity:
    """One config entity; `name` None means every entity of the type (describe only). Users' and
    clients' names are sanitized (`Sanitizer`), as their znodes are named."""

    entity_type: str
    name: str | None

    def __str__(self) -> str:
        # ConfigCommand.Entity.toString
        type_name = {ConfigType.TOPIC: "topic", ConfigType.USER: "user-principal", ConfigType.CLIENT: "client-id"}.get(
            self.entity_type, self.entity_type
        )
        if self.name is None:
            return self.entity_type
        if self.name == DEFAULT_ENTITY_NAME:
            return f"default {type_name}"
        name = desanitize_entity_name(self.name) if self.entity_type in _QUOTA_ENTITY_TYPES else self.name
        return f"{type_name} '{name}'"


@dataclasses.dataclass(frozen=True)
class ClientQuotaConfigEntity(ConfigEntity):
    """Kafka's `ConfigCommand.ConfigEntity` of a users or clients root and, for <user, client-id>
    quotas, a clients child (`/config/users/<user>/clients/<client-id>`)."""

    child: ConfigEntity | None = None

    @property
    def full_sanitized_name(self) -> str:
        """The entity's path under its root type's znode (`alice/clients/c1`); names must be set."""
        if self.child is None:
            return self.name or ""
        return user_client_entity_path(self.name or "", self.child.name)

    @property
    def validated_as_user(self) -> bool:
        """A named user alone takes `DynamicConfig.User`'s names; any other quota entity the client ones."""
        return self.entity_type == ConfigType.USER and self.name != DEFAULT_ENTITY_NAME and self.child is None

    def __str__(self) -> str:
        root = ConfigEntity.__str__(self)
        return root if self.child is None else f"{root}, {self.child}"


def parse_client_quota_entity(types: Sequence[str], names: Sequence[str], alter: bool) -> ClientQuotaConfigEntity:
    """`ConfigCommand.parseClientQuotaEntity`: `types` are users and/or clients (checked before), `names`
    the `--entity-name` values in command-line order with "" for each `--entity-default`."""
    if alter and len(names) != len(types):
        raise InvalidArgumentError(
            "--entity-name or --entity-default must be specified with each --entity-type for --alter"
        )
    reverse = len(types) == 2 and types[0] == ConfigType.CLIENT
    ordered_types = list(reversed(types)) if reverse else list(types)
    ordered_names = iter(list(reversed(names)) if reverse and len(names) == 2 else names)

    def entity(entity_type: str) -> ConfigEntity:
        name = next(ordered_names, None)
        if name is None:
            return ConfigEntity(entity_type, None)
        return ConfigEntity(entity_type, sanitize_entity_name(name) if name else DEFAULT_ENTITY_NAME)

    root = entity(ordered_types[0])
    child = entity(ordered_types[1]) if len(ordered_types) > 1 else None
    return ClientQuotaConfigEntity(root.entity_type, root.name, child)


def parse_add_config(text: str) -> dict[str, str]:
    """`--add-config 'k1=v1,k2=[v1,v2],k3=v3'`: commas inside `[...]` do not split; brackets are dropped."""
    lookahead = r"(?=[^\]]*(?:\[|$))"
    pairs = [re.split(r"\s*=\s*" + lookahead, item) for item in re.split("," + lookahead, text)]
    if any(len(pair) != 2 for pair in pairs):
        raise InvalidArgumentError(
            'requirement failed: Invalid entity config: all configs to be added must be in the format "key=val".'
        )
    return {key.strip(): re.sub(r"\[?\]?", "", value).strip() for key, value in pairs}


def load_properties(path: Path) -> dict[str, str]:
    """A Java `.properties` file (`Utils.loadProps`): `#`/`!` comments, `=`, `:` or blank separators,
    backslash line continuations and escapes."""
    try:
        text = path.read_text(encoding="latin-1")
    except OSError as error:
        raise InvalidArgumentError(f"Cannot read {path}: {error.strerror}") from None
    logical: list[str] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.lstrip()
        if not pending and (not line or line[0] in "#!"):
            continue
        trailing = len(line) - len(line.rstrip("\\"))
        if trailing % 2 == 1:
            pending += line[:-1]
            continue
        logical.append(pending + line)
        pending = ""
    if pending:
        logical.append(pending)
    result: dict[str, str] = {}
    for line in logical:
        match = re.match(r"((?:\\.|[^=:\s\\])*)\s*[=:\s]?\s*(.*)$", line)
        if match is None:  # pragma: no cover - the pattern matches any string
            continue
        result[_unescape(match.group(1))] = _unescape(match.group(2))
    return result


def _unescape(text: str) -> str:
    def replace(match: re.Match[str]) -> str:
        escaped = match.group(1)
        if escaped.startswith("u"):
            return chr(int(escaped[1:], 16))
        return {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}.get(escaped, escaped)

    return re.sub(r"\\(u[0-9a-fA-F]{4}|.)", replace, text)


@dataclasses.dataclass(frozen=True)
class AlterConfigResult:
    entity: ConfigEntity
    config: dict[str, str]
    notification: str


def alter_config(
    zk: KafkaZkClient, entity: ConfigEntity, add: Mapping[str, str], delete: Sequence[str]
) -> AlterConfigResult:
    """`ConfigCommand.alterConfigWithZk` + `AdminZkClient.changeConfigs` for a topic, a broker, or a
    user / client / <user, client-id> quota entity."""
    if entity.name is None:
        raise InvalidArgumentError(f"an entity name must be specified with --alter of {entity.entity_type}")
    if entity.entity_type == ConfigType.BROKER:
        _check_brokers_not_running(zk, entity, add)
    if entity.entity_type == ConfigType.USER:
        add = preprocess_scram_credentials(add)
    path = entity.full_sanitized_name if isinstance(entity, ClientQuotaConfigEntity) else entity.name
    current, version = zk.get_entity_config(entity.entity_type, path)
    missing = [key for key in delete if key not in current]
    if missing:
        raise InvalidConfigurationError(f"Invalid config(s): {','.join(missing)}")
    config = dict(current)
    config.update(add)
    for key in delete:
        config.pop(key, None)
    # kafka-configs --zookeeper writes a `<default>` listener config as Kafka 2.8's does (only the brokers'
    # AlterConfigs refuses it, as DynamicBrokerConfig does)
    return change_configs(zk, entity, config, version, default_may_set_per_broker_configs=True)


def change_configs(
    zk: KafkaZkClient,
    entity: ConfigEntity,
    config: Mapping[str, str],
    expected_version: int | None,
    validate_only: bool = False,
    default_may_set_per_broker_configs: bool = False,
) -> AlterConfigResult:
    """Replace an entity's overrides by `config` (Kafka's `AdminZkClient.changeConfigs`, with
    `validateTopicConfig` / `DynamicBrokerConfig.validate` first): the write of kafka-configs and of the
    brokers' AlterConfigs and IncrementalAlterConfigs. `expected_version` is the config znode's version
    the new set was computed from (None: it had none); `validate_only` checks without writing (the
    notification is then ""). Raises InvalidTopicError, UnknownTopicOrPartitionError,
    InvalidConfigurationError (UnknownConfigNameError for a name Kafka does not know),
    ZNodeVersionConflictError."""
    if entity.name is None:
        raise InvalidArgumentError(f"an entity name must be specified with --alter of {entity.entity_type}")
    if entity.entity_type == ConfigType.TOPIC:
        validate_topic_name(entity.name)
        if not zk.topic_exists(entity.name):
            raise UnknownTopicOrPartitionError(f"Topic '{entity.name}' does not exist.", named=False)
        validate_topic_config(config)
    elif isinstance(entity, ClientQuotaConfigEntity):
        validate_quota_config(config, entity.validated_as_user)
    else:
        per_broker = entity.name != DEFAULT_ENTITY_NAME or default_may_set_per_broker_configs
        validate_broker_config(config, per_broker=per_broker)
    if validate_only:
        return AlterConfigResult(entity, dict(config), "")
    path = entity.full_sanitized_name if isinstance(entity, ClientQuotaConfigEntity) else entity.name
    notification = zk.set_entity_config_and_notify(entity.entity_type, path, config, expected_version)
    return AlterConfigResult(entity, dict(config), notification)


class AlterConfigOpType(enum.IntEnum):
    """Kafka's `AlterConfigOp.OpType`; the value is the wire byte of IncrementalAlterConfigs."""

    SET = 0
    DELETE = 1
    APPEND = 2
    SUBTRACT = 3


@dataclasses.dataclass(frozen=True)
class AlterConfigOp:
    """One operation of an IncrementalAlterConfigs resource (Kafka's `AlterConfigOp`)."""

    name: str
    op: AlterConfigOpType
    value: str | None


def incremental_configs(
    current: Mapping[str, str], ops: Sequence[AlterConfigOp], definitions: Mapping[str, ConfigKey]
) -> dict[str, str]:
    """The overrides after `ops` (Kafka 2.8 `ZkAdminManager.prepareIncrementalConfigs` and the checks before
    it): APPEND and SUBTRACT only on LIST configs, starting from the current override or the default.

    Raises InvalidRequestError (duplicate names, null values, a list operation on another type) and
    UnknownConfigNameError (a list operation on a name `definitions` does not have), with Kafka's texts."""
    counts = collections.Counter(op.name for op in ops)
    duplicates = [name for name, count in counts.items() if count > 1]
    if duplicates:
        raise InvalidRequestError(f"Error due to duplicate config keys : {','.join(duplicates)}")
    nulls = [f"{op.op.name}:{op.name}" for op in ops if op.value is None and op.op is not AlterConfigOpType.DELETE]
    if nulls:
        raise InvalidRequestError(f"Null value not supported for : {','.join(nulls)}")
    config = dict(current)
    for op in ops:
        if op.op is AlterConfigOpType.SET:
            config[op.name] = op.value or ""
        elif op.op is AlterConfigOpType.DELETE:
            config.pop(op.name, None)
        else:
            verb = "append" if op.op is AlterConfigOpType.APPEND else "subtract"
            key = definitions.get(op.name)
            if key is None:
                raise UnknownConfigNameError(f"Unknown topic config name: {op.name}")
            if key.type is not ConfigValueType.LIST:
                raise InvalidRequestError(f"Config value {verb} is not allowed for config key: {op.name}")
            old = config.get(op.name, key.default).split(",")
            given = (op.value or "").split(",")
            new = old + given if op.op is AlterConfigOpType.APPEND else _list_diff(old, given)
            config[op.name] = ",".join(new)
    return config


def _list_diff(old: list[str], removed: list[str]) -> list[str]:
    """Scala's `List.diff`: each element of `removed` takes away one occurrence."""
    remaining = list(old)
    for item in removed:
        if item in remaining:
            remaining.remove(item)
    return remaining


def _check_brokers_not_running(zk: KafkaZkClient, entity: ConfigEntity, add: Mapping[str, str]) -> None:
    """Only the replication quotas may change through ZooKeeper while the broker runs (Kafka 2.x)."""
    # Kafka: `configsToBeAdded.asScala.keySet.filterNot(...)`, a Scala Set in the Properties' order
    dynamic = [key for key in properties_order(add) if key not in BROKER_CONFIGS_UPDATABLE_WHILE_RUNNING]
    if not dynamic:
        return
    names = scala_immutable_set(dynamic, java_string_hash)
    message = f"--bootstrap-server option must be specified to update broker configs {names}."
    info = (
        "Broker configuration updates using ZooKeeper are supported for bootstrapping before brokers"
        " are started to enable encrypted password configs to be stored in ZooKeeper."
    )
    if entity.name != DEFAULT_ENTITY_NAME:
        if int(entity.name or "-1") in zk.get_sorted_broker_ids():
            raise InvalidArgumentError(f"requirement failed: {message} when broker {entity.name} is running. {info}")
    elif zk.get_sorted_broker_ids():
        raise InvalidArgumentError(
            f"requirement failed: {message} for default cluster if any broker is running. {info}"
        )


@dataclasses.dataclass(frozen=True)
class EntityConfig:
    entity: ConfigEntity
    config: tuple[tuple[str, str], ...]  # in java.util.Properties order, as Kafka prints it


def describe_configs(zk: KafkaZkClient, entity: ConfigEntity) -> list[EntityConfig]:
    """`describeConfigWithZk`: one entity, or every entity of the type that has a config znode."""
    if isinstance(entity, ClientQuotaConfigEntity):
        return _describe_client_quota_configs(zk, entity)
    names = [entity.name] if entity.name is not None else zk.get_all_entities(entity.entity_type)
    configs = zk.get_entity_configs(entity.entity_type, names)
    return [
        EntityConfig(
            ConfigEntity(entity.entity_type, name),
            tuple((k, configs[name][k]) for k in properties_order(configs[name])),
        )
        for name in names
    ]


def _describe_client_quota_configs(zk: KafkaZkClient, entity: ClientQuotaConfigEntity) -> list[EntityConfig]:
    """Kafka's `ConfigEntity.getAllEntities`: a named entity, or every root (and, with a clients child
    without a name, every child of each root) that has a config znode. Listing every user leaves out the
    users whose znode only holds <user, client-id> quotas."""
    entities = _all_quota_entities(zk, entity)
    configs = zk.get_entity_configs(entity.entity_type, [e.full_sanitized_name for e in entities])
    describe_all_users = entity.entity_type == ConfigType.USER and entity.name is None and entity.child is None
    described = []
    for each in entities:
        config = configs[each.full_sanitized_name]
        if config or not describe_all_users:
            described.append(EntityConfig(each, tuple((k, config[k]) for k in properties_order(config))))
    return described


def _all_quota_entities(zk: KafkaZkClient, entity: ClientQuotaConfigEntity) -> list[ClientQuotaConfigEntity]:
    child = entity.child
    if entity.name is None:
        roots = [dataclasses.replace(entity, name=name) for name in zk.get_all_entities(entity.entity_type)]
        if child is None:
            return roots
        return [
            e
            for root in roots
            for e in _all_quota_entities(zk, dataclasses.replace(root, child=ConfigEntity(child.entity_type, None)))
        ]
    if child is None or child.name is not None:
        return [entity]
    return [
        dataclasses.replace(entity, child=ConfigEntity(child.entity_type, name))
        for name in zk.get_user_client_entities(entity.name)
    ]
