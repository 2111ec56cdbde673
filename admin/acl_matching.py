"""Kafka 2.8 `AclAuthorizer`'s decisions as pure functions over an immutable snapshot of the ACLs.

`authorize`: super users may do anything; otherwise the ACLs that apply to a (literal) resource are those
of its literal pattern, of the wildcard pattern `*` of its type, and of every prefixed pattern its name
starts with. With none, `allow.everyone.if.no.acl.found` decides. Else a matching DENY refuses, whatever
allows; a matching ALLOW of the operation (or of one that implies it: Read/Write/Delete/Alter imply
Describe, AlterConfigs implies DescribeConfigs; ALL implies everything) grants. An ACL matches the
principal if it names it or `User:*`, the host if it names the client's address or `*`.

`authorize_by_resource_type` (KIP-679, used for idempotent producers without IdempotentWrite): may the
principal do `operation` on at least one resource of the type, with Kafka's reasoning over names and
prefixes (a literal `*` deny refuses all; a prefix deny shadows longer names and prefixes).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from kafkaops.cluster.common.acl import (
    WILDCARD_HOST,
    WILDCARD_PRINCIPAL,
    WILDCARD_RESOURCE,
    AccessControlEntry,
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourceType,
    implied_operations,
)
from kafkaops.cluster.common.kafka_principal import KafkaPrincipal

_WILDCARD_PRINCIPAL_TEXT = str(WILDCARD_PRINCIPAL)


def pattern_order(pattern: ResourcePattern) -> tuple[int, int, _Reversed]:
    """`AclAuthorizer.ResourceOrdering`: by resource type, then pattern type, then name in reverse."""
    return (pattern.resource_type.value, pattern.pattern_type.value, _Reversed(pattern.name))


@dataclass(frozen=True, slots=True)
class _Reversed:
    text: str

    def __lt__(self, other: _Reversed) -> bool:
        return self.text > other.text


@dataclass(frozen=True)
class AclSnapshot:
    """Every resource pattern's ACLs at one moment; never mutated (a change makes a new snapshot, so a
    request sees one consistent view while the ACLs change)."""

    acls: Mapping[ResourcePattern, tuple[AccessControlEntry, ...]] = field(default_factory=dict)
    _prefixed: dict[ResourceType, dict[str, tuple[AccessControlEntry, ...]]] = field(
        init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        prefixed: dict[ResourceType, dict[str, tuple[AccessControlEntry, ...]]] = {}
        for pattern, entries in self.acls.items():
            if pattern.pattern_type is PatternType.PREFIXED and entries:
                prefixed.setdefault(pattern.resource_type, {})[pattern.name] = entries
        object.__setattr__(self, "_prefixed", prefixed)

    def updated(self, pattern: ResourcePattern, entries: tuple[AccessControlEntry, ...]) -> AclSnapshot:
        """This snapshot with `pattern`'s ACLs replaced (none: the pattern is gone)."""
        acls = dict(self.acls)
        if entries:
            acls[pattern] = entries
        else:
            acls.pop(pattern, None)
        return AclSnapshot(acls)

    def matching_acls(self, resource_type: ResourceType, name: str) -> list[AccessControlEntry]:
        """`matchingAcls`: the prefixed patterns `name` starts with, the wildcard, the literal."""
        found: list[AccessControlEntry] = []
        prefixes = self._prefixed.get(resource_type)
        if prefixes:
            for end in range(len(name), 0, -1):
                found.extend(prefixes.get(name[:end], ()))
        found.extend(self.acls.get(ResourcePattern(resource_type, WILDCARD_RESOURCE, PatternType.LITERAL), ()))
        found.extend(self.acls.get(ResourcePattern(resource_type, name, PatternType.LITERAL), ()))
        return found

    def bindings(self, binding_filter: AclBindingFilter) -> list[AclBinding]:
        """`AclAuthorizer.acls(filter)`: in Kafka's resource order."""
        return [
            binding
            for pattern in sorted(self.acls, key=pattern_order)
            for entry in self.acls[pattern]
            if binding_filter.matches(binding := AclBinding(pattern, entry))
        ]


@dataclass(frozen=True, slots=True)
class AuthorizerSettings:
    """`super.users` (parsed) and `allow.everyone.if.no.acl.found`."""

    super_users: frozenset[KafkaPrincipal] = frozenset()
    allow_everyone_if_no_acl_found: bool = False


def parse_super_users(text: str | None) -> frozenset[KafkaPrincipal]:
    """`super.users`: principals separated by ';'. Raises ValueError for one not `Type:name`."""
    if not text:
        return frozenset()
    return frozenset(KafkaPrincipal.from_string(part.strip()) for part in text.split(";"))


def _matches(
    entry: AccessControlEntry,
    operation: AclOperation,
    principal: str,
    host: str,
    permission_type: AclPermissionType,
) -> bool:
    return (
        entry.permission_type is permission_type
        and entry.principal in (principal, _WILDCARD_PRINCIPAL_TEXT)
        and entry.operation in (operation, AclOperation.ALL)
        and entry.host in (host, WILDCARD_HOST)
    )


def authorize(
    snapshot: AclSnapshot,
    settings: AuthorizerSettings,
    principal: KafkaPrincipal,
    host: str,
    operation: AclOperation,
    resource: ResourcePattern,
) -> bool:
    """`AclAuthorizer.authorizeAction`. Raises ValueError for a resource pattern that is not LITERAL."""
    if resource.pattern_type is not PatternType.LITERAL:
        raise ValueError(f"Only literal resources are supported. Got: {resource.pattern_type}")
    if principal in settings.super_users:
        return True
    acls = snapshot.matching_acls(resource.resource_type, resource.name)
    if not acls:
        return settings.allow_everyone_if_no_acl_found
    who = str(principal)
    if any(_matches(acl, operation, who, host, AclPermissionType.DENY) for acl in acls):
        return False
    return any(
        _matches(acl, allowed, who, host, AclPermissionType.ALLOW)
        for allowed in implied_operations(operation)
        for acl in acls
    )


def _names(
    snapshot: AclSnapshot,
    principal: str,
    host: str,
    operation: AclOperation,
    permission_type: AclPermissionType,
    resource_type: ResourceType,
    pattern_type: PatternType,
) -> set[str]:
    """The names of the patterns of this type with an ACL for this principal, host and operation (or their
    wildcards: Kafka's `matchingResources` over its resource cache)."""
    return {
        pattern.name
        for pattern, entries in snapshot.acls.items()
        if pattern.resource_type is resource_type
        and pattern.pattern_type is pattern_type
        and any(
            acl.permission_type is permission_type
            and acl.principal in (principal, _WILDCARD_PRINCIPAL_TEXT)
            and acl.host in (host, WILDCARD_HOST)
            and acl.operation in (operation, AclOperation.ALL)
            for acl in entries
        )
    }


def _has_dominant_prefixed_deny(name: str, deny_prefixes: set[str]) -> bool:
    return any(name[:end] in deny_prefixes for end in range(1, len(name) + 1))


def authorize_by_resource_type(
    snapshot: AclSnapshot,
    settings: AuthorizerSettings,
    principal: KafkaPrincipal,
    host: str,
    operation: AclOperation,
    resource_type: ResourceType,
) -> bool:
    """`AclAuthorizer.authorizeByResourceType`. Raises ValueError for ANY/UNKNOWN arguments."""
    if resource_type in (ResourceType.ANY, ResourceType.UNKNOWN) or operation in (
        AclOperation.ANY,
        AclOperation.UNKNOWN,
    ):
        raise ValueError("Must specify a non-filter resource type and operation for authorizeByResourceType")
    if principal in settings.super_users:
        return True
    who = str(principal)

    def names(permission_type: AclPermissionType, pattern_type: PatternType) -> set[str]:
        return _names(snapshot, who, host, operation, permission_type, resource_type, pattern_type)

    deny_literals = names(AclPermissionType.DENY, PatternType.LITERAL)
    if WILDCARD_RESOURCE in deny_literals:
        return False
    if settings.allow_everyone_if_no_acl_found:
        return True
    deny_prefixes = names(AclPermissionType.DENY, PatternType.PREFIXED)
    allow_prefixes = names(AclPermissionType.ALLOW, PatternType.PREFIXED)
    allow_literals = names(AclPermissionType.ALLOW, PatternType.LITERAL)
    if not deny_literals and not deny_prefixes:
        return bool(allow_prefixes or allow_literals)
    if any(not _has_dominant_prefixed_deny(prefix, deny_prefixes) for prefix in allow_prefixes):
        return True
    return any(
        literal == WILDCARD_RESOURCE
        or (literal not in deny_literals and not _has_dominant_prefixed_deny(literal, deny_prefixes))
        for literal in allow_literals
    )


def group_by_pattern(bindings: Iterable[AclBinding]) -> dict[ResourcePattern, list[AccessControlEntry]]:
    """Bindings as each pattern's entries, in first-seen order (DescribeAcls' `aclsResources`, the tool's
    listing)."""
    grouped: dict[ResourcePattern, list[AccessControlEntry]] = {}
    for binding in bindings:
        entries = grouped.setdefault(binding.pattern, [])
        if binding.entry not in entries:
            entries.append(binding.entry)
    return grouped
