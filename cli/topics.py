"""`kafkaops topics`: Kafka 2.8's kafka-topics in ZooKeeper mode (kafka-reference.md §2.1)."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Annotated

import typer

from kafkaops.admin import topics as admin_topics
from kafkaops.admin.assignment import parse_replica_assignment
from kafkaops.cli.common import (
    ONLY_ONE_CONNECTION,
    BootstrapServerOption,
    CommandConfigOption,
    StateDirOption,
    ZookeeperOption,
    admin_client,
    zookeeper,
)
from kafkaops.cli.output import OutputFormat, kafka_errors, print_json, print_lines
from kafkaops.cluster.common.errors import UsageError
from kafkaops.cluster.zk.client import KafkaZkClient

if TYPE_CHECKING:
    from kafkaops.admin.kafka_client.client import KafkaClient
    from kafkaops.admin.kafka_client.client_config import AdminClientConfig

DESCRIPTION = "Create, delete, describe, or change a topic."
ERROR_PREFIX = "Error while executing topic command : "
CLIENT_ID = "kafkaops-topics"

COLLISION_WARNING = (
    "WARNING: Due to limitations in metric names, topics with a period ('.') or underscore ('_') could collide. "
    "To avoid issues it is best to use either, but not both."
)
MESSAGE_FORMAT_WARNING = (
    "WARNING: The configuration message.format.version={} is specified. This configuration will be ignored "
    "if the version is newer than the inter.broker.protocol.version specified in the broker."
)
ALTER_CONFIG_WARNING = [
    "WARNING: Altering topic configuration from this script has been deprecated and may be removed in future releases.",
    "         Going forward, please use kafka-configs.sh for this functionality",
]
ADD_PARTITIONS_WARNING = (
    "WARNING: If partitions are increased for a topic that has a key, the partition logic or ordering of the "
    "messages will be affected"
)

_ACTIONS = ("create", "list", "alter", "describe", "delete")
_REPORTS = (
    "under-replicated-partitions",
    "under-min-isr-partitions",
    "at-min-isr-partitions",
    "unavailable-partitions",
)


def check_args(given: set[str], has_args: bool) -> None:
    """Kafka 2.8 `TopicCommandOptions.checkArgs`, in its order, with jopt-simple's texts.

    `given` holds the long names of the options on the command line. With --zookeeper defaulted
    (from the environment, a config file or the local cluster) it is not required here.
    """
    if not has_args:
        raise UsageError(DESCRIPTION)
    if sum(a in given for a in _ACTIONS) != 1:
        raise UsageError("Command must include exactly one action: --list, --describe, --create, --alter or --delete")
    bootstrap = "bootstrap-server" in given
    if bootstrap and "zookeeper" in given:
        raise UsageError(ONLY_ONE_CONNECTION)
    if "describe" in given and "if-exists" in given:
        _require(given, "topic")
    if "list" not in given and "describe" not in given:
        _require(given, "topic")
    if "create" in given and "replica-assignment" not in given and not bootstrap:
        _require(given, "partitions", "replication-factor")
    if bootstrap and "alter" in given:
        if "config" in given:
            raise UsageError(
                'Option combination "[bootstrap-server],[config]" can\'t be used with option "[alter]"'
                " (the kafka-configs CLI supports altering topic configs with a --bootstrap-server option)"
            )
        _require(given, "partitions")
    actions = set(_ACTIONS)
    _invalid(given, "config", actions - {"alter", "create"})
    _invalid(given, "delete-config", actions - {"alter"} | {"bootstrap-server"})
    _invalid(given, "partitions", actions - {"alter", "create"})
    _invalid(given, "replication-factor", actions - {"create"})
    _invalid(given, "replica-assignment", actions - {"create", "alter"})
    if "create" in given:
        _invalid(given, "replica-assignment", {"partitions", "replication-factor"})
    for report in _REPORTS:
        _invalid(given, report, (actions - {"describe"}) | (set(_REPORTS) - {report}) | {"topics-with-overrides"})
    _invalid(given, "if-exists", actions - {"alter", "delete", "describe"})
    _invalid(given, "if-not-exists", actions - {"create"})
    _invalid(given, "exclude-internal", actions - {"list", "describe"})


def _require(given: set[str], *names: str) -> None:
    for name in names:
        if name not in given:
            raise UsageError(f'Missing required argument "[{name}]"')


def _invalid(given: set[str], used: str, invalid: set[str]) -> None:
    if used in given:
        for name in sorted(invalid):
            if name in given:
                raise UsageError(f'Option "[{used}]" can\'t be used with option "[{name}]"')


@kafka_errors(ERROR_PREFIX)
def topics_command(
    ctx: typer.Context,
    create: Annotated[bool, typer.Option("--create", help="Create a new topic.")] = False,
    list_: Annotated[bool, typer.Option("--list", help="List all available topics.")] = False,
    alter: Annotated[
        bool,
        typer.Option(
            "--alter", help="Alter the number of partitions, replica assignment, and/or configuration for the topic."
        ),
    ] = False,
    describe: Annotated[bool, typer.Option("--describe", help="List details for the given topics.")] = False,
    delete: Annotated[bool, typer.Option("--delete", help="Delete a topic")] = False,
    zookeeper_connect: ZookeeperOption = None,
    state: StateDirOption = None,
    bootstrap_server: BootstrapServerOption = None,
    command_config: CommandConfigOption = None,
    topic: Annotated[
        str | None,
        typer.Option(
            "--topic",
            metavar="<topic>",
            help="The topic to create, alter, describe or delete. It also accepts a regular expression, except for --create option.",
        ),
    ] = None,
    config: Annotated[
        list[str] | None,
        typer.Option(
            "--config",
            metavar="<name=value>",
            help="A topic configuration override for the topic being created or altered.",
        ),
    ] = None,
    delete_config: Annotated[
        list[str] | None,
        typer.Option(
            "--delete-config",
            metavar="<name>",
            help="A topic configuration override to be removed for an existing topic.",
        ),
    ] = None,
    partitions: Annotated[
        int | None,
        typer.Option(
            "--partitions",
            metavar="<Integer: # of partitions>",
            help="The number of partitions for the topic being created or altered.",
        ),
    ] = None,
    replication_factor: Annotated[
        int | None,
        typer.Option(
            "--replication-factor",
            metavar="<Integer: replication factor>",
            help="The replication factor for each partition in the topic being created.",
        ),
    ] = None,
    replica_assignment: Annotated[
        str | None,
        typer.Option(
            "--replica-assignment",
            metavar="<broker_id_for_part1_replica1:broker_id_for_part1_replica2,...>",
            help="A list of manual partition-to-broker assignments for the topic being created or altered.",
        ),
    ] = None,
    under_replicated: Annotated[
        bool,
        typer.Option(
            "--under-replicated-partitions", help="If set when describing topics, only show under replicated partitions"
        ),
    ] = False,
    unavailable: Annotated[
        bool,
        typer.Option(
            "--unavailable-partitions",
            help="If set when describing topics, only show partitions whose leader is not available",
        ),
    ] = False,
    under_min_isr: Annotated[
        bool,
        typer.Option(
            "--under-min-isr-partitions",
            help="If set when describing topics, only show partitions whose isr count is less than the configured minimum.",
        ),
    ] = False,
    at_min_isr: Annotated[
        bool,
        typer.Option(
            "--at-min-isr-partitions",
            help="If set when describing topics, only show partitions whose isr count is equal to the configured minimum.",
        ),
    ] = False,
    topics_with_overrides: Annotated[
        bool,
        typer.Option(
            "--topics-with-overrides",
            help="If set when describing topics, only show topics that have overridden configs",
        ),
    ] = False,
    if_exists: Annotated[
        bool,
        typer.Option(
            "--if-exists",
            help="If set when altering or deleting or describing topics, the action will only execute if the topic exists.",
        ),
    ] = False,
    if_not_exists: Annotated[
        bool,
        typer.Option(
            "--if-not-exists",
            help="If set when creating topics, the action will only execute if the topic does not already exist.",
        ),
    ] = False,
    disable_rack_aware: Annotated[
        bool, typer.Option("--disable-rack-aware", help="Disable rack aware replica assignment")
    ] = False,
    force: Annotated[bool, typer.Option("--force", help="Suppress console prompts")] = False,
    exclude_internal: Annotated[
        bool, typer.Option("--exclude-internal", help="exclude internal topics when running list or describe command.")
    ] = False,
    output: Annotated[
        OutputFormat, typer.Option("--output", help="text: Kafka's output; json: one JSON document.")
    ] = OutputFormat.text,
) -> None:
    """Create, delete, describe, or change a topic (Kafka's kafka-topics, ZooKeeper mode)."""
    given = {
        name
        for name, value in {
            "create": create,
            "list": list_,
            "alter": alter,
            "describe": describe,
            "delete": delete,
            "zookeeper": zookeeper_connect,
            "bootstrap-server": bootstrap_server,
            "topic": topic,
            "config": config,
            "delete-config": delete_config,
            "partitions": partitions,
            "replication-factor": replication_factor,
            "replica-assignment": replica_assignment,
            "under-replicated-partitions": under_replicated,
            "unavailable-partitions": unavailable,
            "under-min-isr-partitions": under_min_isr,
            "at-min-isr-partitions": at_min_isr,
            "topics-with-overrides": topics_with_overrides,
            "if-exists": if_exists,
            "if-not-exists": if_not_exists,
            "disable-rack-aware": disable_rack_aware,
            "force": force,
            "exclude-internal": exclude_internal,
        }.items()
        # an empty --replica-assignment counts as not given, as in Kafka (and 0 is a given number)
        if not (value is None or value is False or value == [] or value == "")
    }
    check_args(given, has_args=bool(given) or command_config is not None)
    request = _TopicRequest(
        action=next(a for a, on in zip(_ACTIONS, (create, list_, alter, describe, delete), strict=True) if on),
        topic=topic,
        name=topic or "",  # check_args made sure a topic is given wherever it is needed
        config=admin_topics.parse_topic_configs(config or []) if create or alter else {},
        delete_config=delete_config or [],
        partitions=partitions,
        replication_factor=replication_factor,
        assignment=parse_replica_assignment(replica_assignment) if replica_assignment else None,
        filters=admin_topics.DescribeFilters(
            under_replicated=under_replicated,
            unavailable=unavailable,
            under_min_isr=under_min_isr,
            at_min_isr=at_min_isr,
            topics_with_overrides=topics_with_overrides,
        ),
        rack_aware=not disable_rack_aware,
        if_exists=if_exists,
        if_not_exists=if_not_exists,
        exclude_internal=exclude_internal,
    )
    if bootstrap_server is not None:
        with admin_client(bootstrap_server, command_config, CLIENT_ID, state) as (client, client_config):
            lines, document = _run_via_admin(client, client_config, request)
    else:
        with zookeeper(zookeeper_connect, state) as zk:
            lines, document = _run_via_zookeeper(zk, request)
    if output is OutputFormat.json:
        print_json(document)
    else:
        print_lines(lines)


Rendered = tuple[list[str], object]
"""What an action prints: Kafka's text lines, and the document `--output json` prints instead."""


@dataclasses.dataclass(frozen=True)
class _TopicRequest:
    """The parsed command line of one action."""

    action: str
    topic: str | None
    name: str
    config: dict[str, str]
    delete_config: list[str]
    partitions: int | None
    replication_factor: int | None
    assignment: dict[int, list[int]] | None
    filters: admin_topics.DescribeFilters
    rack_aware: bool
    if_exists: bool
    if_not_exists: bool
    exclude_internal: bool


def _run_via_zookeeper(zk: KafkaZkClient, r: _TopicRequest) -> Rendered:
    match r.action:
        case "create":
            return _create(
                zk, r.name, r.partitions, r.replication_factor, r.assignment, r.config, r.rack_aware, r.if_not_exists
            )
        case "list":
            return _list(zk, r.topic, r.exclude_internal)
        case "alter":
            return _alter(
                zk, r.name, r.config, r.delete_config, r.partitions, r.assignment, r.if_exists, r.exclude_internal
            )
        case "delete":
            return _delete(zk, r.name, r.if_exists, r.exclude_internal)
        case _:
            return _describe(zk, r.topic, r.filters, r.if_exists, r.exclude_internal)


def _run_via_admin(client: KafkaClient, client_config: AdminClientConfig, r: _TopicRequest) -> Rendered:
    """Kafka's AdminClientTopicService: --alter and --delete print nothing there."""
    from kafkaops.admin import topics_admin_ops  # the Kafka client's modules, for this mode only

    match r.action:
        case "create":
            return _create_via_admin(
                client,
                client_config,
                r.name,
                r.partitions,
                r.replication_factor,
                r.assignment,
                r.config,
                r.if_not_exists,
            )
        case "list":
            return _list_via_admin(client, r.topic, r.exclude_internal)
        case "alter":
            altered = topics_admin_ops.alter_topics(
                client, client_config, r.name, r.partitions or 0, r.assignment, r.if_exists, r.exclude_internal
            )
            return [], [{"topic": t, "partitions": r.partitions} for t in altered]
        case "delete":
            deleted = topics_admin_ops.delete_topic_names(
                client, client_config, r.name, r.if_exists, r.exclude_internal
            )
            return [], [{"topic": t, "already_marked": False} for t in deleted]
        case _:
            descriptions = topics_admin_ops.describe(client, r.topic, r.filters, r.if_exists, r.exclude_internal)
            return [line for d in descriptions for line in describe_lines(d)], [
                _description_document(d) for d in descriptions
            ]


def _create(
    zk: KafkaZkClient,
    name: str,
    partitions: int | None,
    replication_factor: int | None,
    assignment: dict[int, list[int]] | None,
    topic_config: dict[str, str],
    rack_aware: bool,
    if_not_exists: bool,
) -> Rendered:
    lines = [COLLISION_WARNING] if admin_topics.has_collision_chars(name) else []
    lines.extend(_message_format_warning(topic_config))
    result = admin_topics.create_topic(
        zk,
        name,
        partitions,
        replication_factor,
        assignment,
        topic_config,
        rack_aware=rack_aware,
        if_not_exists=if_not_exists,
    )
    if result.created:
        lines.append(f"Created topic {name}.")
    return lines, dataclasses.asdict(result)


def _create_via_admin(
    client: KafkaClient,
    client_config: AdminClientConfig,
    name: str,
    partitions: int | None,
    replication_factor: int | None,
    assignment: dict[int, list[int]] | None,
    topic_config: dict[str, str],
    if_not_exists: bool,
) -> Rendered:
    """Kafka's AdminClient createTopic: the same warnings and line as through ZooKeeper; the broker's
    defaults for a partition count or replication factor left out."""
    from kafkaops.admin import topics_admin_ops

    lines = [COLLISION_WARNING] if admin_topics.has_collision_chars(name) else []
    lines.extend(_message_format_warning(topic_config))
    created = topics_admin_ops.create_topic(
        client, client_config, name, partitions, replication_factor, assignment, topic_config, if_not_exists
    )
    if created:
        lines.append(f"Created topic {name}.")
    return lines, {"topic": name, "created": created, "config": topic_config}


def _list_via_admin(client: KafkaClient, topic: str | None, exclude_internal: bool) -> Rendered:
    """Kafka's AdminClient listTopics prints the names joined by newlines in one println: an empty
    listing is one empty line."""
    from kafkaops.admin import topics_admin_ops

    listing = topics_admin_ops.list_topic_names(client, topic, exclude_internal)
    return ["\n".join(t.topic for t in listing)], [dataclasses.asdict(t) for t in listing]


def _list(zk: KafkaZkClient, topic: str | None, exclude_internal: bool) -> Rendered:
    listing = admin_topics.list_topics(zk, topic, exclude_internal)
    lines = [t.topic + (" - marked for deletion" if t.marked_for_deletion else "") for t in listing]
    return lines, [dataclasses.asdict(t) for t in listing]


def _alter(
    zk: KafkaZkClient,
    name: str,
    topic_config: dict[str, str],
    delete_config: list[str],
    partitions: int | None,
    assignment: dict[int, list[int]] | None,
    if_exists: bool,
    exclude_internal: bool,
) -> Rendered:
    lines = _message_format_warning(topic_config)
    results = admin_topics.alter_topics(
        zk,
        name,
        topic_config,
        delete_config,
        partitions,
        assignment,
        if_exists=if_exists,
        exclude_internal=exclude_internal,
    )
    for altered in results:
        if altered.config_changed:
            lines.extend(ALTER_CONFIG_WARNING)
            lines.append(f"Updated config for topic {altered.topic}.")
        if partitions is not None:
            lines.append(ADD_PARTITIONS_WARNING)
            lines.append("Adding partitions succeeded!")
    return lines, [dataclasses.asdict(r) for r in results]


def _delete(zk: KafkaZkClient, name: str, if_exists: bool, exclude_internal: bool) -> Rendered:
    deleted = admin_topics.delete_topics(zk, name, if_exists=if_exists, exclude_internal=exclude_internal)
    lines: list[str] = []
    for result in deleted:
        if result.already_marked:
            lines.append(f"Topic {result.topic} is already marked for deletion.")
        else:
            lines.append(f"Topic {result.topic} is marked for deletion.")
            lines.append("Note: This will have no impact if delete.topic.enable is not set to true.")
    return lines, [dataclasses.asdict(r) for r in deleted]


def _describe(
    zk: KafkaZkClient,
    topic: str | None,
    filters: admin_topics.DescribeFilters,
    if_exists: bool,
    exclude_internal: bool,
) -> Rendered:
    descriptions = admin_topics.describe_topics(zk, topic, filters, if_exists, exclude_internal)
    lines = [line for description in descriptions for line in describe_lines(description)]
    return lines, [_description_document(d) for d in descriptions]


def _message_format_warning(topic_config: dict[str, str]) -> list[str]:
    if "message.format.version" in topic_config:
        return [MESSAGE_FORMAT_WARNING.format(topic_config["message.format.version"])]
    return []


def describe_lines(description: admin_topics.TopicDescription) -> list[str]:
    """Kafka 2.8's describe text (ZooKeeper mode), tab-separated."""
    if not description.exists:
        return [f"Topic {description.topic} doesn't exist!"]
    lines = []
    deletion = "\tMarkedForDeletion: true" if description.marked_for_deletion else ""
    if description.show_topic_line:
        topic_id = f"\tTopicId: {description.topic_id}" if description.topic_id else ""
        configs = ",".join(f"{k}={v}" for k, v in description.configs)
        lines.append(
            f"Topic: {description.topic}{topic_id}\tPartitionCount: {description.partition_count}\t"
            f"ReplicationFactor: {description.replication_factor}\tConfigs: {configs}{deletion}"
        )
    for p in description.partitions:
        leader = "none" if p.leader is None else str(p.leader)
        lines.append(
            f"\tTopic: {p.topic}\tPartition: {p.partition}\tLeader: {leader}\t"
            f"Replicas: {','.join(map(str, p.replicas))}\tIsr: {','.join(map(str, p.isr))}{_reassigning(p)}{deletion}"
        )
    return lines


def _reassigning(p: admin_topics.PartitionDescription) -> str:
    if not p.show_reassignment:
        return ""
    return (
        f"\tAdding Replicas: {','.join(map(str, p.adding_replicas))}"
        f"\tRemoving Replicas: {','.join(map(str, p.removing_replicas))}"
    )


def _description_document(description: admin_topics.TopicDescription) -> dict[str, object]:
    document = dataclasses.asdict(description)
    document["configs"] = dict(description.configs)
    for partition, source in zip(document["partitions"], description.partitions, strict=True):
        partition["under_replicated"] = source.under_replicated
        partition["unavailable"] = source.unavailable
    return document
