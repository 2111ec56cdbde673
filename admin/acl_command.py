"""The library behind `kafkaops acls` (Kafka 2.8's `kafka.admin.AclCommand`): the options' checks with
Kafka's messages, the ACLs the options ask for (`--producer` and `--consumer` included) per resource
pattern or filter, and the two ways to reach the ACLs: ZooKeeper through an AclAuthorizer
(`--authorizer-properties zookeeper.connect=...`, as Kafka's tool does) or the Admin API
(`--bootstrap-server`). Never prints; the texts are the CLI's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from kafkaops.admin.acl_authorizer import AclAuthorizer
from kafkaops.admin.acl_matching import group_by_pattern
from kafkaops.admin.kafka_client import acl_admin
from kafkaops.admin.kafka_client.client import KafkaClient
from kafkaops.cluster.common.acl import (
    ANY_ENTRY_FILTER,
    CLUSTER_NAME,
    WILDCARD_HOST,
    AccessControlEntry,
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourcePatternFilter,
    ResourceType,
    supported_operations,
)
from kafkaops.cluster.common.errors import InvalidArgumentError, UsageError
from kafkaops.cluster.common.kafka_principal import KafkaPrincipal

ACL_AUTHORIZER = "kafka.security.authorizer.AclAuthorizer"
KNOWN_AUTHORIZERS = (ACL_AUTHORIZER, "kafka.security.auth.SimpleAclAuthorizer")
CLUSTER_RESOURCE_FILTER = ResourcePatternFilter(ResourceType.CLUSTER, CLUSTER_NAME, PatternType.LITERAL)

ResourceAcls = dict[ResourcePattern, list[AccessControlEntry]]
FilterAcls = dict[ResourcePatternFilter, list[AccessControlEntry]]


@dataclass
class AclCommandOptions:
    """The command line as Kafka's `AclCommandOptions` has it: None for an option not given; a list for
    each repeatable one."""

    add: bool = False
    remove: bool = False
    list_: bool = False
    bootstrap_server: str | None = None
    command_config: str | None = None
    authorizer: str | None = None
    authorizer_properties: list[str] | None = None
    topics: list[str] = field(default_factory=list)
    groups: list[str] = field(default_factory=list)
    transactional_ids: list[str] = field(default_factory=list)
    delegation_tokens: list[str] = field(default_factory=list)
    cluster: bool = False
    idempotent: bool = False
    resource_pattern_type: str | None = None
    operations: list[str] | None = None
    allow_principals: list[str] | None = None
    deny_principals: list[str] | None = None
    list_principals: list[str] | None = None
    allow_hosts: list[str] | None = None
    deny_hosts: list[str] | None = None
    producer: bool = False
    consumer: bool = False
    force: bool = False

    @property
    def pattern_type(self) -> PatternType:
        """`--resource-pattern-type` (default literal). Raises UsageError for an unknown one."""
        if self.resource_pattern_type is None:
            return PatternType.LITERAL
        found = PatternType.from_java_name(self.resource_pattern_type)
        if found.is_unknown:
            raise UsageError(f"Unknown resource-pattern-type: {self.resource_pattern_type}")
        return found


def _invalid_with(used: str, others: Sequence[tuple[str, bool]]) -> None:
    """`CommandLineUtils.checkInvalidArgs`."""
    for name, given in others:
        if given:
            raise UsageError(f'Option "[{used}]" can\'t be used with option "[{name}]"')


def check_args(opts: AclCommandOptions) -> None:
    """`AclCommandOptions.checkArgs`. Raises UsageError with Kafka's message."""
    _ = opts.pattern_type  # Kafka's parser refuses an unknown pattern type first
    if opts.bootstrap_server is not None and opts.authorizer is not None:
        raise UsageError("Only one of --bootstrap-server or --authorizer must be specified")
    if opts.bootstrap_server is None and opts.authorizer_properties is None:
        raise UsageError('Missing required argument "[authorizer-properties]"')
    if opts.command_config is not None and opts.bootstrap_server is None:
        raise UsageError("The --command-config option can only be used with --bootstrap-server option")
    if opts.authorizer_properties is not None and opts.bootstrap_server is not None:
        raise UsageError("The --authorizer-properties option can only be used with --authorizer option")
    if sum((opts.add, opts.remove, opts.list_)) != 1:
        raise UsageError("Command must include exactly one action: --list, --add, --remove. ")
    principals_and_hosts = [
        ("allow-host", opts.allow_hosts is not None),
        ("allow-principal", opts.allow_principals is not None),
        ("deny-host", opts.deny_hosts is not None),
        ("deny-principal", opts.deny_principals is not None),
    ]
    if opts.list_:
        _invalid_with("list", [("producer", opts.producer), ("consumer", opts.consumer), *principals_and_hosts])
    denied = [("operation", opts.operations is not None), *principals_and_hosts[2:]]
    if opts.producer:
        _invalid_with("producer", denied)
    if opts.consumer:
        _invalid_with("consumer", denied)
    if opts.list_principals is not None and not opts.list_:
        raise UsageError("The --principal option is only available if --list is set")
    if opts.producer and not opts.topics:
        raise UsageError("With --producer you must specify a --topic")
    if opts.idempotent and not opts.producer:
        raise UsageError("The --idempotent option is only available if --producer is set")
    if opts.consumer and (
        not opts.topics or not opts.groups or (not opts.producer and (opts.cluster or bool(opts.transactional_ids)))
    ):
        raise UsageError(
            "With --consumer you must specify a --topic and a --group and no --cluster or "
            "--transactional-id option should be specified."
        )


def parse_principal(text: str) -> KafkaPrincipal:
    """`SecurityUtils.parseKafkaPrincipal`. Raises InvalidArgumentError with Kafka's message."""
    try:
        return KafkaPrincipal.from_string(text.strip())
    except ValueError as error:
        raise InvalidArgumentError(str(error)) from None


def principals(values: list[str] | None) -> list[KafkaPrincipal]:
    return list(dict.fromkeys(parse_principal(v) for v in values or []))


def _hosts(hosts: list[str] | None, principals_given: list[str] | None) -> list[str]:
    """`getHosts`: the hosts given, else `*` when principals are."""
    if hosts is not None:
        return list(dict.fromkeys(h.strip() for h in hosts))
    return [WILDCARD_HOST] if principals_given is not None else []


def acls_for(opts: AclCommandOptions, operations: Sequence[AclOperation]) -> list[AccessControlEntry]:
    """`getAcl`: every allowed principal x operation x allowed host, then the same for deny."""
    entries: list[AccessControlEntry] = []
    sides = (
        (opts.allow_principals, opts.allow_hosts, AclPermissionType.ALLOW),
        (opts.deny_principals, opts.deny_hosts, AclPermissionType.DENY),
    )
    for principal_values, host_values, permission in sides:
        hosts = _hosts(host_values, principal_values)
        for principal in principals(principal_values):
            for operation in operations:
                entries.extend(AccessControlEntry(str(principal), h, operation, permission) for h in hosts)
    return list(dict.fromkeys(entries))


def resource_filters(opts: AclCommandOptions, die_if_none: bool = True) -> list[ResourcePatternFilter]:
    """`getResourceFilter`. Raises UsageError when no resource is given and `die_if_none`."""
    pattern_type = opts.pattern_type
    filters = [ResourcePatternFilter(ResourceType.TOPIC, t.strip(), pattern_type) for t in opts.topics]
    if pattern_type is PatternType.LITERAL and (opts.cluster or opts.idempotent):
        filters.append(CLUSTER_RESOURCE_FILTER)
    filters.extend(ResourcePatternFilter(ResourceType.GROUP, g.strip(), pattern_type) for g in opts.groups)
    filters.extend(
        ResourcePatternFilter(ResourceType.TRANSACTIONAL_ID, t, pattern_type) for t in opts.transactional_ids
    )
    filters.extend(
        ResourcePatternFilter(ResourceType.DELEGATION_TOKEN, t.strip(), pattern_type) for t in opts.delegation_tokens
    )
    if not filters and die_if_none:
        raise UsageError(
            "You must provide at least one resource: --topic <topic> or --cluster or --group <group> or "
            "--delegation-token <Delegation Token ID>"
        )
    return list(dict.fromkeys(filters))


def _producer_acls(opts: AclCommandOptions) -> FilterAcls:
    """Write, Describe, Create on the topics; Write, Describe on the transactional ids; IdempotentWrite on
    the cluster with --idempotent."""
    result: FilterAcls = {}
    for resource_filter in resource_filters(opts):
        if resource_filter.resource_type is ResourceType.TOPIC:
            result[resource_filter] = acls_for(opts, (AclOperation.WRITE, AclOperation.DESCRIBE, AclOperation.CREATE))
        elif resource_filter.resource_type is ResourceType.TRANSACTIONAL_ID:
            result[resource_filter] = acls_for(opts, (AclOperation.WRITE, AclOperation.DESCRIBE))
    if opts.idempotent:
        result[CLUSTER_RESOURCE_FILTER] = acls_for(opts, (AclOperation.IDEMPOTENT_WRITE,))
    return result


def _consumer_acls(opts: AclCommandOptions) -> FilterAcls:
    """Read, Describe on the topics; Read on the groups."""
    result: FilterAcls = {}
    for resource_filter in resource_filters(opts):
        if resource_filter.resource_type is ResourceType.TOPIC:
            result[resource_filter] = acls_for(opts, (AclOperation.READ, AclOperation.DESCRIBE))
        elif resource_filter.resource_type is ResourceType.GROUP:
            result[resource_filter] = acls_for(opts, (AclOperation.READ,))
    return result


def resource_filter_to_acls(opts: AclCommandOptions) -> FilterAcls:
    """`getResourceFilterToAcls`. Raises UsageError (no resource, an operation the type does not support)
    and InvalidArgumentError (a principal not `Type:name`)."""
    result: FilterAcls = {}
    if not opts.producer and not opts.consumer:
        operations = [AclOperation.from_name(o.strip()) for o in opts.operations or ["All"]]
        entries = acls_for(opts, list(dict.fromkeys(operations)))
        result.update(dict.fromkeys(resource_filters(opts), entries))
    if opts.producer:
        result.update(_producer_acls(opts))
    if opts.consumer:
        for resource_filter, entries in _consumer_acls(opts).items():
            result[resource_filter] = list(dict.fromkeys([*entries, *result.get(resource_filter, [])]))
    for resource_filter, entries in result.items():
        valid = (*supported_operations(resource_filter.resource_type), AclOperation.ALL)
        if any(e.operation not in valid for e in entries):
            raise UsageError(
                f"ResourceType {resource_filter.resource_type} only supports operations {','.join(map(str, valid))}"
            )
    return result


def resource_to_acls(opts: AclCommandOptions) -> ResourceAcls:
    """`getResourceToAcls` for --add. Raises UsageError."""
    pattern_type = opts.pattern_type
    if not pattern_type.is_specific:
        raise UsageError(f"A '--resource-pattern-type' value of '{pattern_type}' is not valid when adding acls.")
    result = {
        ResourcePattern(f.resource_type, f.name or "", f.pattern_type): entries
        for f, entries in resource_filter_to_acls(opts).items()
    }
    if any(not entries for entries in result.values()):
        raise UsageError("You must specify one of: --allow-principal, --deny-principal when trying to add ACLs.")
    return result


def authorizer_connect(properties: list[str]) -> str:
    """`zookeeper.connect` of `--authorizer-properties key=value ...` (`parseKeyValueArgs`). Raises
    InvalidArgumentError when it is missing or a pair has no value."""
    parsed: dict[str, str] = {}
    for pair in properties:
        key, sep, value = pair.partition("=")
        if not sep or not value:
            raise InvalidArgumentError(f"Missing value for key {key}" if sep else f"Invalid key-value pair {pair}")
        parsed[key.strip()] = value.strip()
    connect = parsed.get("authorizer.zookeeper.url") or parsed.get("zookeeper.connect")
    if not connect:
        raise InvalidArgumentError("Missing required configuration `zookeeper.connect` which has no default value.")
    return connect


class AclService(Protocol):
    """Kafka's `AclCommandService` backends: errors of add/remove come back as texts to print."""

    def create(self, bindings: Sequence[AclBinding]) -> list[str]: ...

    def delete(self, filters: Sequence[AclBindingFilter]) -> list[str]: ...

    def describe(self, binding_filter: AclBindingFilter) -> list[AclBinding]: ...


class AuthorizerService:
    """Through ZooKeeper, with an AclAuthorizer as Kafka's `AuthorizerService`."""

    def __init__(self, authorizer: AclAuthorizer) -> None:
        self.authorizer = authorizer

    def create(self, bindings: Sequence[AclBinding]) -> list[str]:
        return [str(error) for error in self.authorizer.create_acls(bindings) if error is not None]

    def delete(self, filters: Sequence[AclBindingFilter]) -> list[str]:
        return [str(error) for result in self.authorizer.delete_acls(filters) for _, error in result if error]

    def describe(self, binding_filter: AclBindingFilter) -> list[AclBinding]:
        return self.authorizer.acls(binding_filter)


class AdminClientService:
    """Through the Admin API, as Kafka's `AdminClientService` (a failure raises AdminOperationError)."""

    def __init__(self, client: KafkaClient) -> None:
        self.client = client

    def create(self, bindings: Sequence[AclBinding]) -> list[str]:
        acl_admin.create_acls(self.client, bindings)
        return []

    def delete(self, filters: Sequence[AclBindingFilter]) -> list[str]:
        acl_admin.delete_acls(self.client, filters)
        return []

    def describe(self, binding_filter: AclBindingFilter) -> list[AclBinding]:
        return acl_admin.describe_acls(self.client, binding_filter)


def list_acls(service: AclService, opts: AclCommandOptions) -> ResourceAcls:
    """`getAcls` over the resource filters given (every ACL when none), grouped by resource pattern."""
    filters = resource_filters(opts, die_if_none=False)
    if not filters:
        bindings = service.describe(
            AclBindingFilter(ResourcePatternFilter(ResourceType.ANY, None, PatternType.ANY), ANY_ENTRY_FILTER)
        )
    else:
        bindings = [b for f in filters for b in service.describe(AclBindingFilter(f, ANY_ENTRY_FILTER))]
    return group_by_pattern(bindings)


def remove_filters(
    resource_filter: ResourcePatternFilter, entries: Sequence[AccessControlEntry]
) -> list[AclBindingFilter]:
    """`removeAcls`: the given ACLs of the filter's patterns, or all of them when none are given."""
    if not entries:
        return [AclBindingFilter(resource_filter, ANY_ENTRY_FILTER)]
    return [AclBindingFilter(resource_filter, entry.to_filter()) for entry in entries]
