"""Kafka's ACL vocabulary (clients' `org.apache.kafka.common.acl` and `org.apache.kafka.common.resource`):
operations, permission types, resource types and pattern types with their wire codes and names
(`SecurityUtils`), resource patterns and access control entries, their filters and how a filter matches.

Shared by the broker's authorizer, the ACL znodes' codec, the Admin API (Describe/Create/DeleteAcls) and
`kafkaops acls`. The texts (`__str__`) are Java's `toString`, which kafka-acls.sh prints.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Self

from kafkaops.cluster.common.kafka_principal import USER_TYPE, KafkaPrincipal

WILDCARD_RESOURCE = "*"
"""`ResourcePattern.WILDCARD_RESOURCE`: a literal pattern named `*` matches every resource of its type."""
WILDCARD_HOST = "*"
WILDCARD_PRINCIPAL = KafkaPrincipal(USER_TYPE, "*")
"""`AclEntry.WildcardPrincipal`: `User:*` matches every principal."""
CLUSTER_NAME = "kafka-cluster"
"""`Resource.CLUSTER_NAME`: the only name a CLUSTER resource has."""


def _pascal_case(name: str) -> str:
    """`SecurityUtils.toPascalCase`: CLUSTER_ACTION -> ClusterAction."""
    return "".join(part[:1].upper() + part[1:].lower() for part in name.split("_"))


class _AclEnum(enum.Enum):
    """A Java ACL enum: `value` is the wire code, `name` the Java name (its `toString`)."""

    def __str__(self) -> str:
        return self.name

    @property
    def code(self) -> int:
        return int(self.value)

    @property
    def pascal_name(self) -> str:
        """The name ZooKeeper and the tools use (`SecurityUtils.operationName` / `resourceTypeName`)."""
        return _pascal_case(self.name)

    @property
    def is_unknown(self) -> bool:
        return self.name == "UNKNOWN"

    @classmethod
    def from_code(cls, code: int) -> Self:
        """`fromCode`: an unknown code is UNKNOWN."""
        for member in cls:
            if member.value == code:
                return member
        return cls["UNKNOWN"]

    @classmethod
    def from_java_name(cls, name: str) -> Self:
        """`fromString`: the Java enum name in any case (`TRANSACTIONAL_ID`); anything else is UNKNOWN."""
        return cls.__members__.get(name.upper(), cls["UNKNOWN"])

    @classmethod
    def from_name(cls, name: str) -> Self:
        """`SecurityUtils.operation(name)` and its siblings: the Pascal-case name, or it in upper case
        (without underscores: `clusteraction`); anything else is UNKNOWN."""
        wanted = name.upper()
        for member in cls:
            if member.pascal_name.upper() == wanted:
                return member
        return cls["UNKNOWN"]


class AclOperation(_AclEnum):
    UNKNOWN = 0
    ANY = 1
    ALL = 2
    READ = 3
    WRITE = 4
    CREATE = 5
    DELETE = 6
    ALTER = 7
    DESCRIBE = 8
    CLUSTER_ACTION = 9
    DESCRIBE_CONFIGS = 10
    ALTER_CONFIGS = 11
    IDEMPOTENT_WRITE = 12


class AclPermissionType(_AclEnum):
    UNKNOWN = 0
    ANY = 1
    DENY = 2
    ALLOW = 3


class ResourceType(_AclEnum):
    UNKNOWN = 0
    ANY = 1
    TOPIC = 2
    GROUP = 3
    CLUSTER = 4
    TRANSACTIONAL_ID = 5
    DELEGATION_TOKEN = 6


class PatternType(_AclEnum):
    UNKNOWN = 0
    ANY = 1
    MATCH = 2
    LITERAL = 3
    PREFIXED = 4

    @property
    def is_specific(self) -> bool:
        """A pattern type of a stored ACL, not only of a filter."""
        return self in (PatternType.LITERAL, PatternType.PREFIXED)


CONCRETE_RESOURCE_TYPES = (
    ResourceType.TOPIC,
    ResourceType.GROUP,
    ResourceType.CLUSTER,
    ResourceType.TRANSACTIONAL_ID,
    ResourceType.DELEGATION_TOKEN,
)
"""`AclEntry.ResourceTypes`: the resource types ACLs are stored for."""

CONCRETE_OPERATIONS = tuple(op for op in AclOperation if op not in (AclOperation.UNKNOWN, AclOperation.ANY))
"""`AclEntry.AclOperations`."""

_SUPPORTED_OPERATIONS: dict[ResourceType, tuple[AclOperation, ...]] = {
    ResourceType.TOPIC: (
        AclOperation.READ,
        AclOperation.WRITE,
        AclOperation.CREATE,
        AclOperation.DESCRIBE,
        AclOperation.DELETE,
        AclOperation.ALTER,
        AclOperation.DESCRIBE_CONFIGS,
        AclOperation.ALTER_CONFIGS,
    ),
    ResourceType.GROUP: (AclOperation.READ, AclOperation.DESCRIBE, AclOperation.DELETE),
    ResourceType.CLUSTER: (
        AclOperation.CREATE,
        AclOperation.CLUSTER_ACTION,
        AclOperation.DESCRIBE_CONFIGS,
        AclOperation.ALTER_CONFIGS,
        AclOperation.IDEMPOTENT_WRITE,
        AclOperation.ALTER,
        AclOperation.DESCRIBE,
    ),
    ResourceType.TRANSACTIONAL_ID: (AclOperation.DESCRIBE, AclOperation.WRITE),
    ResourceType.DELEGATION_TOKEN: (AclOperation.DESCRIBE,),
}


def supported_operations(resource_type: ResourceType) -> tuple[AclOperation, ...]:
    """`AclEntry.supportedOperations`. Raises ValueError for ANY and UNKNOWN ("Not a concrete resource type")."""
    try:
        return _SUPPORTED_OPERATIONS[resource_type]
    except KeyError:
        raise ValueError("Not a concrete resource type") from None


def implied_operations(operation: AclOperation) -> tuple[AclOperation, ...]:
    """The operations whose ALLOW grants `operation` (besides ALL): Read, Write, Delete and Alter imply
    Describe; AlterConfigs implies DescribeConfigs (`AclAuthorizer.authorizeAction`)."""
    if operation is AclOperation.DESCRIBE:
        return (
            AclOperation.DESCRIBE,
            AclOperation.READ,
            AclOperation.WRITE,
            AclOperation.DELETE,
            AclOperation.ALTER,
        )
    if operation is AclOperation.DESCRIBE_CONFIGS:
        return (AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS)
    return (operation,)


def _text(value: str | None) -> str:
    return "<any>" if value is None else value


@dataclass(frozen=True, slots=True)
class ResourcePattern:
    resource_type: ResourceType
    name: str
    pattern_type: PatternType

    def __str__(self) -> str:
        return (
            f"ResourcePattern(resourceType={self.resource_type}, name={_text(self.name)}, "
            f"patternType={self.pattern_type})"
        )

    @property
    def is_unknown(self) -> bool:
        return self.resource_type.is_unknown or self.pattern_type.is_unknown

    def to_filter(self) -> ResourcePatternFilter:
        return ResourcePatternFilter(self.resource_type, self.name, self.pattern_type)


@dataclass(frozen=True, slots=True)
class ResourcePatternFilter:
    """`name` None matches any name; pattern type ANY matches any pattern type with this exact name, MATCH
    every pattern that would apply to a resource of this name (literal, wildcard and prefixes)."""

    resource_type: ResourceType
    name: str | None
    pattern_type: PatternType

    def __str__(self) -> str:
        return (
            f"ResourcePatternFilter(resourceType={self.resource_type}, name={_text(self.name)}, "
            f"patternType={self.pattern_type})"
        )

    @property
    def is_unknown(self) -> bool:
        return self.resource_type.is_unknown or self.pattern_type.is_unknown

    def matches(self, pattern: ResourcePattern) -> bool:
        if self.resource_type is not ResourceType.ANY and self.resource_type is not pattern.resource_type:
            return False
        if self.pattern_type not in (PatternType.ANY, PatternType.MATCH, pattern.pattern_type):
            return False
        if self.name is None:
            return True
        if self.pattern_type in (PatternType.ANY, pattern.pattern_type):
            return self.name == pattern.name
        if pattern.pattern_type is PatternType.LITERAL:
            return self.name == pattern.name or pattern.name == WILDCARD_RESOURCE
        if pattern.pattern_type is PatternType.PREFIXED:
            return self.name.startswith(pattern.name)
        raise ValueError(f"Unsupported PatternType: {pattern.pattern_type}")

    def find_indefinite_field(self) -> str | None:
        """Why this filter may match more than one pattern, or None (`findIndefiniteField`)."""
        if self.resource_type is ResourceType.ANY:
            return "Resource type is ANY."
        if self.resource_type is ResourceType.UNKNOWN:
            return "Resource type is UNKNOWN."
        if self.name is None:
            return "Resource name is NULL."
        if self.pattern_type is PatternType.MATCH:
            return "Resource pattern type is MATCH."
        if self.pattern_type is PatternType.UNKNOWN:
            return "Resource pattern type is UNKNOWN."
        return None

    @property
    def matches_at_most_one(self) -> bool:
        return self.find_indefinite_field() is None


ANY_RESOURCE_FILTER = ResourcePatternFilter(ResourceType.ANY, None, PatternType.ANY)


@dataclass(frozen=True, slots=True)
class AccessControlEntry:
    """One ACL: `principal` is `Type:name` text (as stored), `host` an IP address or `*`."""

    principal: str
    host: str
    operation: AclOperation
    permission_type: AclPermissionType

    def __str__(self) -> str:
        return (
            f"(principal={self.principal}, host={self.host}, operation={self.operation}, "
            f"permissionType={self.permission_type})"
        )

    @property
    def is_unknown(self) -> bool:
        return self.operation.is_unknown or self.permission_type.is_unknown

    def to_filter(self) -> AccessControlEntryFilter:
        return AccessControlEntryFilter(self.principal, self.host, self.operation, self.permission_type)


@dataclass(frozen=True, slots=True)
class AccessControlEntryFilter:
    principal: str | None
    host: str | None
    operation: AclOperation
    permission_type: AclPermissionType

    def __str__(self) -> str:
        return (
            f"(principal={_text(self.principal)}, host={_text(self.host)}, operation={self.operation}, "
            f"permissionType={self.permission_type})"
        )

    @property
    def is_unknown(self) -> bool:
        return self.operation.is_unknown or self.permission_type.is_unknown

    def matches(self, entry: AccessControlEntry) -> bool:
        if self.principal is not None and self.principal != entry.principal:
            return False
        if self.host is not None and self.host != entry.host:
            return False
        if self.operation is not AclOperation.ANY and self.operation is not entry.operation:
            return False
        return self.permission_type is AclPermissionType.ANY or self.permission_type is entry.permission_type


ANY_ENTRY_FILTER = AccessControlEntryFilter(None, None, AclOperation.ANY, AclPermissionType.ANY)


@dataclass(frozen=True, slots=True)
class AclBinding:
    pattern: ResourcePattern
    entry: AccessControlEntry

    def __str__(self) -> str:
        return f"(pattern={self.pattern}, entry={self.entry})"

    @property
    def is_unknown(self) -> bool:
        return self.pattern.is_unknown or self.entry.is_unknown


@dataclass(frozen=True, slots=True)
class AclBindingFilter:
    pattern_filter: ResourcePatternFilter
    entry_filter: AccessControlEntryFilter

    def __str__(self) -> str:
        return f"(patternFilter={self.pattern_filter}, entryFilter={self.entry_filter})"

    @property
    def is_unknown(self) -> bool:
        return self.pattern_filter.is_unknown or self.entry_filter.is_unknown

    def matches(self, binding: AclBinding) -> bool:
        return self.pattern_filter.matches(binding.pattern) and self.entry_filter.matches(binding.entry)


ANY_BINDING_FILTER = AclBindingFilter(ANY_RESOURCE_FILTER, ANY_ENTRY_FILTER)
