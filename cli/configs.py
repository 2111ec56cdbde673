"""`kafkaops configs`: Kafka 2.8's kafka-configs for topics, brokers, users and clients, ZooKeeper mode (§2.2)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated

import typer
from typer._click.exceptions import ClickException
from typer.core import TyperCommand

from kafkaops.admin import client_quotas, configs_admin_ops
from kafkaops.admin import configs as admin_configs
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
from kafkaops.cluster.common.jvm_text import java_double_string, java_hash_map_order, java_string_hash
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
    flags: list[tuple[str, str]],
    alter: bool,
    bootstrap: bool = False,
) -> admin_configs.ConfigEntity:
    """Kafka's `ConfigCommandOptions.checkArgs` entity rules and `parseEntity`.

    `entity_names` are the `--entity-name` values in command-line order with "" for each
    `--entity-default`; `flags` the (entity type, name) of the entity flags given (`--topic t`,
    `--user u`, `--client-defaults` as ("clients", "")), in Kafka's order; the entity types allowed
    depend on the connection (`bootstrap` for --bootstrap-server)."""
    if (entity_types or entity_names) and flags:
        raise InvalidArgumentError(
            "--entity-{type,name,default} should not be used in conjunction with specific entity flags"
        )
    types = entity_types + [t for t, _ in flags]
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
    if len(types) > 1 and set(types) != {ConfigType.USER, ConfigType.CLIENT}:
        raise InvalidArgumentError("Only 'users' and 'clients' entity types may be specified together")
    entity_type = types[0]
    if entity_type not in admin_configs.SUPPORTED_ENTITY_TYPES:
        raise InvalidArgumentError(
            f"Entity type {entity_type} is not supported by kafkaops configs yet: use topics, brokers, users or clients"
        )
    names = entity_names + [n for _, n in flags]
    if entity_type == ConfigType.BROKER:
        for broker_id in names:
            if broker_id:
                try:
                    int(broker_id)
                except ValueError:
                    raise InvalidArgumentError(
                        f"The entity name for {entity_type} must be a valid integer broker id, but it is: {broker_id}"
                    ) from None
    if alter:
        if entity_type != ConfigType.TOPIC and not names:
            raise InvalidArgumentError(
                "an entity-name or default entity must be specified with --alter of users, clients, brokers or ips"
            )
        if entity_type == ConfigType.TOPIC and not any(names):
            raise InvalidArgumentError(f"an entity name must be specified with --alter of {entity_type}")
    if entity_type in (ConfigType.USER, ConfigType.CLIENT):
        if bootstrap and alter and len(names) != len(types):
            # ConfigCommand.processCommand's check, before parseClientQuotaEntity's (ZooKeeper mode only)
            raise InvalidArgumentError("An entity name must be specified for every entity type")
        return admin_configs.parse_client_quota_entity(types, names, alter)
    if len(names) > 1:
        raise InvalidArgumentError("Only one entity name may be given for the entity type " + entity_type)
    name = names[0] if names else None
    if name == "":
        if entity_type == ConfigType.TOPIC:
            raise InvalidArgumentError("The default entity is not valid for topics")
        return admin_configs.ConfigEntity(entity_type, DEFAULT_ENTITY_NAME)
    return admin_configs.ConfigEntity(entity_type, name)


ORDERED_ENTITY_NAMES = "kafkaops.configs.entity_names"
"""`ctx.meta` key: the `--entity-name` values and `--entity-default`s ("") in command-line order."""


class ConfigsCommand(TyperCommand):
    """Keeps the command-line order of `--entity-name` and `--entity-default`, which Kafka pairs with the
    `--entity-type`s in order (`--entity-type users --entity-default --entity-type clients --entity-name c`);
    Click's parsed values keep each option's own order only."""

    def parse_args(self, ctx: typer.Context, args: list[str]) -> list[str]:  # type: ignore[override]  # typer.Context is click's, narrowed
        try:
            opts, _, order = self.make_parser(ctx).parse_args(args=list(args))
        except ClickException:
            pass  # the parse below reports it
        else:
            values = iter(opts.get("entity_name") or [])
            ctx.meta[ORDERED_ENTITY_NAMES] = [
                next(values, "") if param.name == "entity_name" else ""
                for param in order
                if param.name in ("entity_name", "entity_default")
            ]
        return super().parse_args(ctx, args)


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
    client: Annotated[str | None, typer.Option("--client", metavar="<String>", help="The client's ID.")] = None,
    client_defaults: Annotated[
        bool, typer.Option("--client-defaults", help="The config defaults for all clients.")
    ] = False,
    user: Annotated[str | None, typer.Option("--user", metavar="<String>", help="The user's principal name.")] = None,
    user_defaults: Annotated[bool, typer.Option("--user-defaults", help="The config defaults for all users.")] = False,
    broker: Annotated[str | None, typer.Option("--broker", metavar="<String>", help="The broker's ID.")] = None,
    broker_defaults: Annotated[
        bool, typer.Option("--broker-defaults", help="The config defaults for all brokers.")
    ] = False,
    output: Annotated[
        OutputFormat, typer.Option("--output", help="text: Kafka's output; json: one JSON document.")
    ] = OutputFormat.text,
) -> None:
    """Add/remove or list entity configs for topics, brokers, users and clients (Kafka's kafka-configs, ZooKeeper mode)."""
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
            client,
            client_defaults,
            user,
            user_defaults,
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
    # Kafka's entityFlags then entityDefaultsFlags, in that order
    named = (
        (ConfigType.TOPIC, topic),
        (ConfigType.CLIENT, client),
        (ConfigType.USER, user),
        (ConfigType.BROKER, broker),
    )
    defaults = (
        (ConfigType.CLIENT, client_defaults),
        (ConfigType.USER, user_defaults),
        (ConfigType.BROKER, broker_defaults),
    )
    flags = [(t, n) for t, n in named if n is not None] + [(t, "") for t, given in defaults if given]
    names = ctx.meta.get(ORDERED_ENTITY_NAMES, (entity_name or []) + [""] * entity_default)
    entity = resolve_entity(entity_type or [], names, flags, alter, bootstrap=bootstrap_server is not None)
    to_add, to_delete = _changes(add_config, add_config_file, delete_config) if alter else ({}, [])
    if bootstrap_server is not None:
        with admin_client(bootstrap_server, command_config, CLIENT_ID, state) as (admin, _):
            if entity.entity_type in configs_admin_ops.QUOTA_ENTITY_TYPES:
                # Kafka passes the types and names as given (their order too) to the Admin API
                types = (entity_type or []) + [t for t, _ in flags]
                lines, document = _run_quotas_via_admin(
                    admin, types, list(names) + [n for _, n in flags], alter, to_add, to_delete
                )
            else:
                lines, document = _run_via_admin(admin, entity, alter, to_add, to_delete, all_)
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
        lines.append(completed_text(entity.entity_type, name or ""))
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


def completed_text(entity_type: str, name: str) -> str:
    """`alterConfig`'s last line with an AdminClient: the first entity type and name given ("" a default)."""
    if name:
        return f"Completed updating config for {entity_type.removesuffix('s')} {name}."
    return f"Completed updating default config for {entity_type} in the cluster."


def _run_quotas_via_admin(
    client: KafkaClient,
    entity_types: list[str],
    entity_names: list[str],
    alter: bool,
    to_add: dict[str, str],
    to_delete: list[str],
) -> tuple[list[str], object]:
    """Kafka's `alterConfig` / `describeClientQuotaAndUserScramCredentialConfigs` of users and clients with an
    AdminClient, and their texts (SCRAM credentials through Describe/AlterUserScramCredentials)."""
    if alter:
        configs_admin_ops.alter_quota_entity(client, entity_types, entity_names, to_add, to_delete)
        document: object = {
            "entity_types": entity_types,
            "entity_names": [n or None for n in entity_names],
            # a SCRAM password is never shown
            "added": {k: "[hidden]" if k in client_quotas.SCRAM_MECHANISMS else v for k, v in to_add.items()},
            "deleted": to_delete,
        }
        return [completed_text(entity_types[0], entity_names[0])], document
    described = configs_admin_ops.describe_quota_entities(client, entity_types, entity_names)
    lines = [quota_configs_text(entity, values) for entity, values in described]
    items: list[dict[str, object]] = [{"entity": entity, "configs": values} for entity, values in described]
    # SCRAM credentials only without clients and without a default (Kafka's condition)
    if ConfigType.CLIENT not in entity_types and "" not in entity_names:
        scram = configs_admin_ops.user_scram_credential_lines(client, entity_names)
        lines.extend(scram)
        items.extend({"scram_credentials": line} for line in scram)
    return lines, items


def config_entry_line(entry: ConfigEntry) -> str:
    """ConfigCommand's `  name=value sensitive=false synonyms={SOURCE:name=value, ...}` (Java prints null)."""
    synonyms = ", ".join(f"{s.source.name}:{s.name}={_java(s.value)}" for s in entry.synonyms)
    return f"  {entry.name}={_java(entry.value)} sensitive={str(entry.is_sensitive).lower()} synonyms={{{synonyms}}}"


def _java(value: str | None) -> str:
    return "null" if value is None else value


def quota_configs_text(entity: Mapping[str, str | None], values: Mapping[str, float]) -> str:
    """Kafka 2.8's `describeQuotaConfigs` line for one entity of a DescribeClientQuotas answer (the
    `--bootstrap-server` describe of users and clients): `Quota configs for user-principal 'u', the
    default client-id are producer_byte_rate=1024.0, request_percentage=50.5`."""
    names = {client_quotas.USER: "user-principal", client_quotas.CLIENT_ID: "client-id", client_quotas.IP: "ip"}
    parts = [
        f"{names[t]} '{entity[t]}'" if entity[t] is not None else f"the default {names[t]}"
        for t in (client_quotas.USER, client_quotas.CLIENT_ID, client_quotas.IP)
        if t in entity
    ]
    # DescribeClientQuotasResponse's `new HashMap<String, Double>(size)`: its keys' hash order at that
    # capacity, values as Double.toString
    order = java_hash_map_order(values, java_string_hash, len(values))
    shown = ", ".join(f"{key}={java_double_string(values[key])}" for key in order)
    return f"Quota configs for {', '.join(parts)} are {shown}"
