"""`kafkaops acls`: Kafka 2.8's kafka-acls.sh (`AclCommand`): add, remove and list ACLs through ZooKeeper
(`--authorizer-properties zookeeper.connect=host:port`, an AclAuthorizer as Kafka's tool runs one; left
out, the local cluster's ZooKeeper) or through the Admin API (`--bootstrap-server`, `--command-config`).
The texts are Kafka's, `--output json` is ours.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Annotated, Any

import typer

from kafkaops.admin import acl_command
from kafkaops.admin.acl_authorizer import AclAuthorizer
from kafkaops.admin.acl_command import AclCommandOptions, AclService, AdminClientService, AuthorizerService
from kafkaops.cli.common import StateDirOption, admin_client, optional_zookeeper, zookeeper
from kafkaops.cli.output import OutputFormat, fail, print_json, usage_text
from kafkaops.cluster.common.acl import AccessControlEntry, AclBinding, ResourcePattern
from kafkaops.cluster.common.errors import KafkaOpsError, UsageError
from kafkaops.cluster.common.kafka_principal import KafkaPrincipal

DESCRIPTION = "This tool helps to manage acls on kafka."
DEFAULT_CLIENT_ID = "adminclient-1"


def _block(lead: str, entries: Sequence[object]) -> str:
    """Kafka's `s"$lead: $Newline ${acls.map("\\t" + _).mkString(Newline)} $Newline"`."""
    return f"{lead}: \n " + "\n".join(f"\t{e}" for e in entries) + " \n"


def _print(text: str) -> None:
    sys.stdout.write(text + "\n")


def _confirm(opts: AclCommandOptions, message: str) -> bool:
    if opts.force:
        return True
    _print(message)
    sys.stdout.flush()
    answer = sys.stdin.readline()
    return answer.strip().lower() == "y"


def _print_acls(resource_acls: dict[ResourcePattern, list[AccessControlEntry]], opts: AclCommandOptions) -> None:
    principals: list[KafkaPrincipal] = acl_command.principals(opts.list_principals) if opts.list_principals else []
    if not principals:
        for resource, entries in resource_acls.items():
            _print(_block(f"Current ACLs for resource `{resource}`", entries))
        return
    for principal in principals:
        _print(f"ACLs for principal `{principal}`")
        for resource, entries in resource_acls.items():
            mine = [e for e in entries if e.principal == str(principal)]
            if mine:
                _print(_block(f"Current ACLs for resource `{resource}`", mine))


def _json(resource_acls: dict[ResourcePattern, list[AccessControlEntry]]) -> dict[str, Any]:
    return {
        "acls": [
            {
                "resourceType": str(resource.resource_type),
                "name": resource.name,
                "patternType": str(resource.pattern_type),
                "acls": [
                    {
                        "principal": e.principal,
                        "host": e.host,
                        "operation": str(e.operation),
                        "permissionType": str(e.permission_type),
                    }
                    for e in entries
                ],
            }
            for resource, entries in resource_acls.items()
        ]
    }


@contextmanager
def _service(opts: AclCommandOptions) -> Iterator[AclService]:
    if opts.bootstrap_server is not None:
        with admin_client(opts.bootstrap_server, opts.command_config, DEFAULT_CLIENT_ID) as (client, _):
            yield AdminClientService(client)
        return
    if opts.authorizer is not None and opts.authorizer not in acl_command.KNOWN_AUTHORIZERS:
        raise KafkaOpsError(opts.authorizer)  # Kafka: ClassNotFoundException naming the class
    connect = acl_command.authorizer_connect(opts.authorizer_properties or [])
    with zookeeper(connect) as zk:
        authorizer = AclAuthorizer(zk)
        authorizer.configure()
        yield AuthorizerService(authorizer)


def _add(service: AclService, resource_acls: dict[ResourcePattern, list[AccessControlEntry]], text: bool) -> None:
    for resource, entries in resource_acls.items():
        if text:
            _print(_block(f"Adding ACLs for resource `{resource}`", entries))
        for error in service.create([AclBinding(resource, e) for e in entries]):
            _print(f"Error while adding ACLs: {error}")


def _remove(service: AclService, opts: AclCommandOptions) -> None:
    for resource_filter, entries in acl_command.resource_filter_to_acls(opts).items():
        if not entries:
            question = f"Are you sure you want to delete all ACLs for resource filter `{resource_filter}`? (y/n)"
        else:
            question = (
                _block("Are you sure you want to remove ACLs", entries)
                + f" from resource filter `{resource_filter}`? (y/n)"
            )
        if _confirm(opts, question):
            for error in service.delete(acl_command.remove_filters(resource_filter, entries)):
                _print(f"Error while removing ACLs: {error}")


def acls_command(
    ctx: typer.Context,
    add: Annotated[bool, typer.Option("--add", help="Indicates you are trying to add ACLs.")] = False,
    remove: Annotated[bool, typer.Option("--remove", help="Indicates you are trying to remove ACLs.")] = False,
    list_: Annotated[
        bool,
        typer.Option(
            "--list",
            help="List ACLs for the specified resource, use --topic <topic> or --group <group> or --cluster to "
            "specify a resource.",
        ),
    ] = False,
    bootstrap_server: Annotated[
        str | None,
        typer.Option(
            "--bootstrap-server",
            metavar="<server to connect to>",
            help="A list of host/port pairs to use for establishing the connection to the Kafka cluster. This list "
            "should be in the form host1:port1,host2:port2,... This config is required for acl management using "
            "admin client API.",
        ),
    ] = None,
    command_config: Annotated[
        str | None,
        typer.Option(
            "--command-config",
            metavar="<command-config>",
            help="A property file containing configs to be passed to Admin Client.",
        ),
    ] = None,
    authorizer: Annotated[
        str | None,
        typer.Option(
            "--authorizer",
            metavar="<authorizer>",
            help="Fully qualified class name of the authorizer, defaults to kafka.security.authorizer.AclAuthorizer.",
        ),
    ] = None,
    authorizer_properties: Annotated[
        list[str] | None,
        typer.Option(
            "--authorizer-properties",
            metavar="<authorizer-properties>",
            help="REQUIRED: properties required to configure an instance of Authorizer. These are key=val pairs. "
            "For the default authorizer the example values are: zookeeper.connect=localhost:2181 (default: the "
            "local cluster's ZooKeeper).",
        ),
    ] = None,
    topic: Annotated[
        list[str] | None,
        typer.Option(
            "--topic",
            metavar="<topic>",
            help="topic to which ACLs should be added or removed. A value of * indicates ACL should apply to all "
            "topics.",
        ),
    ] = None,
    cluster: Annotated[bool, typer.Option("--cluster", help="Add/Remove cluster ACLs.")] = False,
    group: Annotated[
        list[str] | None,
        typer.Option(
            "--group",
            metavar="<group>",
            help="Consumer Group to which the ACLs should be added or removed. A value of * indicates the ACLs "
            "should apply to all groups.",
        ),
    ] = None,
    transactional_id: Annotated[
        list[str] | None,
        typer.Option(
            "--transactional-id",
            metavar="<transactional-id>",
            help="The transactionalId to which ACLs should be added or removed. A value of * indicates the ACLs "
            "should apply to all transactionalIds.",
        ),
    ] = None,
    delegation_token: Annotated[
        list[str] | None,
        typer.Option(
            "--delegation-token",
            metavar="<delegation-token>",
            help="Delegation token to which ACLs should be added or removed. A value of * indicates ACL should apply "
            "to all tokens.",
        ),
    ] = None,
    idempotent: Annotated[
        bool,
        typer.Option(
            "--idempotent",
            help="Enable idempotence for the producer. This should be used in combination with the --producer "
            "option. Note that idempotence is enabled automatically if the producer is authorized to a particular "
            "transactional-id.",
        ),
    ] = False,
    resource_pattern_type: Annotated[
        str | None,
        typer.Option(
            "--resource-pattern-type",
            metavar="<ANY|MATCH|LITERAL|PREFIXED>",
            help="The type of the resource pattern or pattern filter. When adding acls, this should be a specific "
            "pattern type, e.g. 'literal' or 'prefixed'. When listing or removing acls, a specific pattern type can "
            "be used to list or remove acls from specific resource patterns, or use the filter values of 'any' or "
            "'match', where 'any' will match any pattern type, but will match the resource name exactly, where as "
            "'match' will perform pattern matching to list or remove all acls that affect the supplied "
            "resource(s). WARNING: 'match', when used in combination with the '--remove' switch, should be used "
            "with care. (default: LITERAL)",
        ),
    ] = None,
    operation: Annotated[
        list[str] | None,
        typer.Option(
            "--operation",
            help="Operation that is being allowed or denied. Valid operation names are: All, Read, Write, Create, "
            "Delete, Alter, Describe, ClusterAction, DescribeConfigs, AlterConfigs, IdempotentWrite (default: All)",
        ),
    ] = None,
    allow_principal: Annotated[
        list[str] | None,
        typer.Option(
            "--allow-principal",
            metavar="<allow-principal>",
            help="principal is in principalType:name format. Note that principalType must be supported by the "
            "Authorizer being used. For example, User:* is the wild card indicating all users.",
        ),
    ] = None,
    deny_principal: Annotated[
        list[str] | None,
        typer.Option(
            "--deny-principal",
            metavar="<deny-principal>",
            help="principal is in principalType:name format. By default anyone not added through --allow-principal "
            "is denied access. You only need to use this option as negation to already allowed set. "
            "AND PLEASE REMEMBER DENY RULES TAKES PRECEDENCE OVER ALLOW RULES.",
        ),
    ] = None,
    principal: Annotated[
        list[str] | None,
        typer.Option(
            "--principal",
            metavar="<principal>",
            help="List ACLs for the specified principal. principal is in principalType:name format. Multiple "
            "--principal option can be passed.",
        ),
    ] = None,
    allow_host: Annotated[
        list[str] | None,
        typer.Option(
            "--allow-host",
            metavar="<allow-host>",
            help="Host from which principals listed in --allow-principal will have access. If you have specified "
            "--allow-principal then the default for this option will be set to * which allows access from all hosts.",
        ),
    ] = None,
    deny_host: Annotated[
        list[str] | None,
        typer.Option(
            "--deny-host",
            metavar="<deny-host>",
            help="Host from which principals listed in --deny-principal will be denied access. If you have "
            "specified --deny-principal then the default for this option will be set to * which denies access "
            "from all hosts.",
        ),
    ] = None,
    producer: Annotated[
        bool,
        typer.Option(
            "--producer",
            help="Convenience option to add/remove ACLs for producer role. This will generate ACLs that allows "
            "WRITE,DESCRIBE and CREATE on topic.",
        ),
    ] = False,
    consumer: Annotated[
        bool,
        typer.Option(
            "--consumer",
            help="Convenience option to add/remove ACLs for consumer role. This will generate ACLs that allows "
            "READ,DESCRIBE on topic and READ on group.",
        ),
    ] = False,
    force: Annotated[bool, typer.Option("--force", help="Assume Yes to all queries and do not prompt.")] = False,
    output: Annotated[
        OutputFormat, typer.Option("--output", help="text: Kafka's output; json: the ACLs as one JSON document.")
    ] = OutputFormat.text,
    state: StateDirOption = None,
) -> None:
    """This tool helps to manage acls on kafka."""
    opts = AclCommandOptions(
        add=add,
        remove=remove,
        list_=list_,
        bootstrap_server=bootstrap_server,
        command_config=command_config,
        authorizer=authorizer,
        authorizer_properties=authorizer_properties,
        topics=topic or [],
        groups=group or [],
        transactional_ids=transactional_id or [],
        delegation_tokens=delegation_token or [],
        cluster=cluster,
        idempotent=idempotent,
        resource_pattern_type=resource_pattern_type,
        operations=operation,
        allow_principals=allow_principal,
        deny_principals=deny_principal,
        list_principals=principal,
        allow_hosts=allow_host,
        deny_hosts=deny_host,
        producer=producer,
        consumer=consumer,
        force=force,
    )
    try:
        if opts.bootstrap_server is None and opts.authorizer_properties is None:
            local = optional_zookeeper(state)
            if local is not None:
                opts.authorizer_properties = [f"zookeeper.connect={local}"]
        acl_command.check_args(opts)
        to_add = acl_command.resource_to_acls(opts) if opts.add else {}
        with _service(opts) as service:
            if opts.add:
                _add(service, to_add, output is OutputFormat.text)
            elif opts.remove:
                _remove(service, opts)
            listed = acl_command.list_acls(service, opts)
    except UsageError as error:
        raise fail(str(error), usage=usage_text(ctx)) from None
    except KafkaOpsError as error:
        _print(f"Error while executing ACL command: {error}")
        raise typer.Exit(1) from None
    if output is OutputFormat.json:
        print_json(_json(listed))
    else:
        _print_acls(listed, opts)
