"""`kafkaops configs`: Kafka 2.8's kafka-configs for topics and brokers, ZooKeeper mode (§2.2)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Annotated

import typer

from kafkaops.admin import configs as admin_configs
from kafkaops.admin import configs_admin_ops
from kafkaops.admin.kafka_client.client import KafkaClient
from kafkaops.admin.kafka_client.config_admin import ConfigEntry
from kafkaops.cli.common import (
    BootstrapServerOption,
    CommandConfigOption,
    StateDirOption,
    ZookeeperOption,
    admin_client,
    check_connection,
    zookeeper,
)
from kafkaops.cli.output import OutputFormat, kafka_errors, print_json, print_lines
from kafkaops.cli.topics import MESSAGE_FORMAT_WARNING
from kafkaops.cluster.common.errors import InvalidArgumentError, UsageError
from kafkaops.cluster.zk.client import KafkaZkClient
from kafkaops.cluster.zk.znodes import DEFAULT_ENTITY_NAME, ConfigType

BROKER_LOGGERS = "broker-loggers"
DESCRIPTION = "This tool helps to manipulate and describe entity config for a topic, client, user, broker or ip"
_BROKER_ENTITY_TYPES = (
    ConfigType.TOPIC,
    ConfigType.CLIENT,
    ConfigType.USER,
    ConfigType.BROKER,
    BROKER_LOGGERS,
    ConfigType.IP,
)
"""Kafka's `BrokerSupportedConfigTypes`: what --bootstrap-server accepts (broker-loggers not offered here)."""
CLIENT_ID = "kafkaops-configs"


def resolve_entity(
    entity_types: list[str],
    entity_names: list[str],
    entity_default: bool,
    topic: str | None,
    broker: str | None,
    broker_defaults: bool,
    alter: bool,
    bootstrap: bool = False,
) -> admin_configs.ConfigEntity:
    """Kafka's `ConfigCommandOptions.checkArgs` entity rules and `parseEntity`, for one entity (the
    entity types allowed depend on the connection, `bootstrap` for --bootstrap-server)."""
    flag_types = [ConfigType.TOPIC] * (topic is not None) + [ConfigType.BROKER] * (
        broker is not None or broker_defaults
    )
    if (entity_types or entity_names or entity_default) and flag_types:
        raise InvalidArgumentError(
            "--entity-{type,name,default} should not be used in conjunction with specific entity flags"
        )
    types = entity_types + flag_types
    duplicates = [t for i, t in enumerate(types) if t in types[:i]]
    if duplicates:
        raise InvalidArgumentError(f"Duplicate entity type(s) specified: {','.join(duplicates)}")
    allowed, connect_option = (
        (_BROKER_ENTITY_TYPES, "--bootstrap-server") if bootstrap else (ConfigType.ALL, "--zookeeper")
    )
    for entity_type in types:
        if entity_type not in allowed:
            raise InvalidArgumentError(
                f"Invalid entity type {entity_type}, the entity type must be one of {','.join(allowed)} "
                f"with the {connect_option} argument"
            )
    if not types:
        raise InvalidArgumentError("At least one entity type must be specified")
    if len(types) > 1:
        raise InvalidArgumentError("Only 'users' and 'clients' entity types may be specified together")
    entity_type = types[0]
    if entity_type not in admin_configs.SUPPORTED_ENTITY_TYPES:
        raise InvalidArgumentError(
            f"Entity type {entity_type} is not supported by kafkaops configs yet: use topics or brokers"
        )
    names = entity_names + [n for n in (topic, broker) if n is not None]
    if entity_default or broker_defaults:
        names.append("")
    if len(names) > 1:
        raise InvalidArgumentError("Only one entity name may be given for the entity type " + entity_type)
    name = names[0] if names else None
    if entity_type == ConfigType.BROKER and name:
        try:
            int(name)
        except ValueError:
            raise InvalidArgumentError(
                f"The entity name for {entity_type} must be a valid integer broker id, but it is: {name}"
            ) from None
    if alter:
        if entity_type == ConfigType.BROKER and name is None:
            raise InvalidArgumentError(
                "an entity-name or default entity must be specified with --alter of users, clients, brokers or ips"
            )
        if entity_type == ConfigType.TOPIC and not name:
            raise InvalidArgumentError(f"an entity name must be specified with --alter of {entity_type}")
    if name == "":
        if entity_type == ConfigType.TOPIC:
            raise InvalidArgumentError("The default entity is not valid for topics")
        name = DEFAULT_ENTITY_NAME
    return admin_configs.ConfigEntity(entity_type, name)


@kafka_errors()
def configs_command(
    ctx: typer.Context,
    alter: Annotated[bool, typer.Option("--alter", help="Alter the configuration for the entity.")] = False,
    describe: Annotated[bool, typer.Option("--describe", help="List configs for the given entity.")] = False,
    zookeeper_connect: ZookeeperOption = None,
    state: StateDirOption = None,
    bootstrap_server: BootstrapServerOption = None,
    command_config: CommandConfigOption = None,
    all_: Annotated[
        bool,
        typer.Option(
            "--all",
            help="List all configs for the given topic, broker, or broker-logger entity (includes static "
            "configuration when the entity type is brokers)",
        ),
    ] = False,
    entity_type: Annotated[
        list[str] | None,
        typer.Option(
            "--entity-type", metavar="<String>", help="Type of entity (topics/clients/users/brokers/broker-loggers/ips)"
        ),
    ] = None,
    entity_name: Annotated[
        list[str] | None,
        typer.Option(
            "--entity-name",
            metavar="<String>",
            help="Name of entity (topic name/client id/user principal name/broker id/ip)",
        ),
    ] = None,
    entity_default: Annotated[
        bool,
        typer.Option(
            "--entity-default",
            help="Default entity name for clients/users/brokers/ips (applies to corresponding entity type in command line)",
        ),
    ] = False,
    add_config: Annotated[
        str | None,
        typer.Option(
            "--add-config",
            metavar="<String>",
            help="Key Value pairs of configs to add. Square brackets can be used to group values which contain commas: 'k1=v1,k2=[v1,v2,v2],k3=v3'.",
        ),
    ] = None,
    add_config_file: Annotated[
        Path | None,
        typer.Option("--add-config-file", metavar="<String>", help="Path to a properties file with configs to add."),
    ] = None,
    delete_config: Annotated[
        list[str] | None, typer.Option("--delete-config", metavar="<String>", help="config keys to remove 'k1,k2'")
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Suppress console prompts")] = False,
    topic: Annotated[str | None, typer.Option("--topic", metavar="<String>", help="The topic's name.")] = None,
    broker: Annotated[str | None, typer.Option("--broker", metavar="<String>", help="The broker's ID.")] = None,
    broker_defaults: Annotated[
        bool, typer.Option("--broker-defaults", help="The config defaults for all brokers.")
    ] = False,
    output: Annotated[
        OutputFormat, typer.Option("--output", help="text: Kafka's output; json: one JSON document.")
    ] = OutputFormat.text,
) -> None:
    """Add/remove or list entity configs for topics and brokers (Kafka's kafka-configs, ZooKeeper mode)."""
    if not any(
        (
            alter,
            describe,
            zookeeper_connect,
            bootstrap_server,
            command_config,
            all_,
            entity_type,
            entity_name,
            entity_default,
            add_config,
            add_config_file,
            delete_config,
            topic,
            broker,
            broker_defaults,
            force,
        )
    ):
        raise UsageError(DESCRIPTION)
    if alter == describe:
        raise UsageError("Command must include exactly one action: --describe, --alter")
    for used, other in (("describe", "alter"), ("describe", "add-config"), ("describe", "delete-config")):
        if describe and {"alter": alter, "add-config": add_config, "delete-config": delete_config}[other]:
            raise UsageError(f'Option "[{used}]" can\'t be used with option "[{other}]"')
    check_connection(zookeeper_connect, bootstrap_server)
    if all_ and bootstrap_server is None:
        raise InvalidArgumentError("--bootstrap-server must be specified for --all")
    entity = resolve_entity(
        entity_type or [],
        entity_name or [],
        entity_default,
        topic,
        broker,
        broker_defaults,
        alter,
        bootstrap=bootstrap_server is not None,
    )
    to_add, to_delete = _changes(add_config, add_config_file, delete_config) if alter else ({}, [])
    if bootstrap_server is not None:
        with admin_client(bootstrap_server, command_config, CLIENT_ID) as (client, _):
            lines, document = _run_via_admin(client, entity, alter, to_add, to_delete, all_)
    else:
        with zookeeper(zookeeper_connect, state) as zk:
            lines, document = _run_via_zookeeper(zk, entity, alter, to_add, to_delete)
    if output is OutputFormat.json:
        print_json(document)
    else:
        print_lines(lines)


def _run_via_zookeeper(
    zk: KafkaZkClient, entity: admin_configs.ConfigEntity, alter: bool, to_add: dict[str, str], to_delete: list[str]
) -> tuple[list[str], object]:
    """Kafka's `alterConfigWithZk` / `describeConfigWithZk`, and their texts."""
    lines: list[str] = []
    if alter:
        lines.extend(_message_format_warning(to_add))
        result = admin_configs.alter_config(zk, entity, to_add, to_delete)
        lines.append(f"Completed updating config for entity: {result.entity}.")
        document: object = {
            "entity": str(result.entity),
            "entity_type": entity.entity_type,
            "entity_name": entity.name,
            "config": result.config,
        }
        return lines, document
    described = admin_configs.describe_configs(zk, entity)
    for item in described:
        lines.append(f"Configs for {item.entity} are {','.join(f'{k}={v}' for k, v in item.config)}")
    document = [{"entity": str(d.entity), **dataclasses.asdict(d.entity), "config": dict(d.config)} for d in described]
    return lines, document


def _changes(
    add_config: str | None, add_config_file: Path | None, delete_config: list[str] | None
) -> tuple[dict[str, str], list[str]]:
    """`--add-config` / `--add-config-file` and `--delete-config` (Kafka's checks and parsing)."""
    if add_config is not None and add_config_file is not None:
        raise InvalidArgumentError("Only one of --add-config or --add-config-file must be specified")
    if add_config is None and add_config_file is None and not delete_config:
        raise InvalidArgumentError(
            "At least one of --add-config, --add-config-file, or --delete-config must be specified with --alter"
        )
    to_add = {}
    if add_config_file is not None:
        to_add = admin_configs.load_properties(add_config_file)
    elif add_config is not None:
        to_add = admin_configs.parse_add_config(add_config)
    return to_add, [key.strip() for value in delete_config or [] for key in value.split(",")]


def _message_format_warning(to_add: dict[str, str]) -> list[str]:
    if "message.format.version" in to_add:
        return [MESSAGE_FORMAT_WARNING.format(to_add["message.format.version"])]
    return []


def _admin_name(entity: admin_configs.ConfigEntity) -> str | None:
    return configs_admin_ops.BROKER_DEFAULT if entity.name == DEFAULT_ENTITY_NAME else entity.name


def _run_via_admin(
    client: KafkaClient,
    entity: admin_configs.ConfigEntity,
    alter: bool,
    to_add: dict[str, str],
    to_delete: list[str],
    describe_all: bool,
) -> tuple[list[str], object]:
    """Kafka's `alterConfig` / `describeConfig` with an AdminClient, and their texts."""
    name = _admin_name(entity)
    singular = entity.entity_type.removesuffix("s")
    if alter:
        lines = _message_format_warning(to_add)
        configs_admin_ops.alter_entity(client, entity.entity_type, name or "", to_add, to_delete)
        if name:
            lines.append(f"Completed updating config for {singular} {name}.")
        else:
            lines.append(f"Completed updating default config for {entity.entity_type} in the cluster.")
        document: object = {
            "entity_type": entity.entity_type,
            "entity_name": name,
            "added": to_add,
            "deleted": to_delete,
        }
        return lines, document
    lines = []
    described = configs_admin_ops.describe_entities(client, entity.entity_type, name, describe_all)
    for item in described:
        if item.name == configs_admin_ops.BROKER_DEFAULT:
            lines.append(f"Default configs for {item.entity_type} in the cluster are:")
        else:
            lines.append(f"{'All' if describe_all else 'Dynamic'} configs for {singular} {item.name} are:")
        lines.extend(config_entry_line(e) for e in item.entries)
    document = [
        {
            "entity_type": d.entity_type,
            "entity_name": d.name,
            "configs": [
                {
                    "name": e.name,
                    "value": e.value,
                    "source": e.source.name,
                    "sensitive": e.is_sensitive,
                    "synonyms": [{"name": s.name, "value": s.value, "source": s.source.name} for s in e.synonyms],
                }
                for e in d.entries
            ],
        }
        for d in described
    ]
    return lines, document


def config_entry_line(entry: ConfigEntry) -> str:
    """ConfigCommand's `  name=value sensitive=false synonyms={SOURCE:name=value, ...}` (Java prints null)."""
    synonyms = ", ".join(f"{s.source.name}:{s.name}={_java(s.value)}" for s in entry.synonyms)
    return f"  {entry.name}={_java(entry.value)} sensitive={str(entry.is_sensitive).lower()} synonyms={{{synonyms}}}"


def _java(value: str | None) -> str:
    return "null" if value is None else value
