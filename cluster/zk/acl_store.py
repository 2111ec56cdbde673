"""The ACLs in ZooKeeper as Kafka 2.8's `AclAuthorizer` keeps them (`ZkAclStore`, `ZkAclChangeStore` and
KafkaZkClient's ACL methods): one znode per resource pattern holding all its ACLs, written only
conditionally on the version read, and a change notification per write.

Layout (znodes.py has the codecs):

    /kafka-acl/<ResourceType>/<name>                    LITERAL patterns   {"version":1,"acls":[...]}
    /kafka-acl-extended/prefixed/<ResourceType>/<name>  PREFIXED patterns
    /kafka-acl-changes/acl_changes_<seq>                a LITERAL pattern changed: `TOPIC:name`
    /kafka-acl-extended-changes/acl_changes_<seq>       a PREFIXED one: {"version":1,"resourceType":"TOPIC",...}

Shared by the brokers' authorizer and `kafkaops acls --authorizer-properties` (Kafka's tool runs an
AclAuthorizer against ZooKeeper the same way).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

from kazoo.exceptions import BadVersionError, NodeExistsError, NoNodeError

from kafkaops.cluster.common.acl import (
    CONCRETE_RESOURCE_TYPES,
    AccessControlEntry,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourceType,
)
from kafkaops.cluster.common.errors import MalformedZNodeError
from kafkaops.cluster.common.kafka_principal import KafkaPrincipal
from kafkaops.cluster.zk import znodes
from kafkaops.cluster.zk.values import AclEntry
from kafkaops.cluster.zk.zookeeper_client import ZkClient

UNKNOWN_VERSION = -2
"""Kafka's `ZkVersion.UnknownVersion`: the resource has no znode."""

_E = TypeVar("_E", ResourceType, PatternType)

STORED_PATTERN_TYPES = (PatternType.LITERAL, PatternType.PREFIXED)


@dataclass(frozen=True, slots=True)
class VersionedAcls:
    """A resource's ACLs (in the znode's order, without duplicates) and its znode's version."""

    acls: tuple[AccessControlEntry, ...]
    zk_version: int

    @property
    def exists(self) -> bool:
        return self.zk_version != UNKNOWN_VERSION


NO_ACLS = VersionedAcls((), UNKNOWN_VERSION)


def resource_path(pattern: ResourcePattern) -> str:
    """`ResourceZNode.path`."""
    return znodes.AclZNode.path(pattern.resource_type.pascal_name, pattern.name, pattern.pattern_type.name)


def _store_root(pattern_type: PatternType) -> str:
    return znodes.AclZNode.LITERAL_ROOT if pattern_type is PatternType.LITERAL else znodes.AclZNode.PREFIXED_ROOT


def create_acl_paths(zk: ZkClient) -> None:
    """`createAclPaths`: each store's resource-type znodes and both change paths."""
    zk.ensure_paths(
        [
            *(f"{_store_root(p)}/{t.pascal_name}" for p in STORED_PATTERN_TYPES for t in CONCRETE_RESOURCE_TYPES),
            znodes.AclChangeNotificationSequenceZNode.ROOT,
            znodes.ExtendedAclChangeNotificationSequenceZNode.ROOT,
        ]
    )


def encode_acls(acls: tuple[AccessControlEntry, ...]) -> bytes:
    """`ResourceZNode.encode`: principal, permissionType, operation, host per ACL."""
    return znodes.AclZNode.encode(
        AclEntry(a.principal, a.permission_type.pascal_name, a.operation.pascal_name, a.host) for a in acls
    )


def decode_acls(path: str, data: bytes | None) -> tuple[AccessControlEntry, ...]:
    """`AclEntry.fromBytes` (empty data: no ACLs). Raises MalformedZNodeError."""
    if not data:
        return ()
    acls: dict[AccessControlEntry, None] = {}
    for entry in znodes.AclZNode.decode(path, data):
        try:
            principal = KafkaPrincipal.from_string(entry.principal)
        except ValueError as error:
            raise MalformedZNodeError(path, data, str(error)) from None
        ace = AccessControlEntry(
            str(principal),
            entry.host,
            AclOperation.from_name(entry.operation),
            AclPermissionType.from_name(entry.permission_type),
        )
        acls[ace] = None
    return tuple(acls)


def get_resource_types(zk: ZkClient, pattern_type: PatternType) -> list[str]:
    return zk.get_children(_store_root(pattern_type)) or []


def get_resource_names(zk: ZkClient, pattern_type: PatternType, resource_type: ResourceType) -> list[str]:
    return zk.get_children(f"{_store_root(pattern_type)}/{resource_type.pascal_name}") or []


def get_versioned_acls(zk: ZkClient, pattern: ResourcePattern) -> VersionedAcls:
    """`getVersionedAclsForResource`. Raises MalformedZNodeError."""
    path = resource_path(pattern)
    entry = zk.get(path)
    if entry is None:
        return NO_ACLS
    return VersionedAcls(decode_acls(path, entry[0]), entry[1].version)


def conditional_set_acls(
    zk: ZkClient, pattern: ResourcePattern, acls: tuple[AccessControlEntry, ...], expected_version: int
) -> tuple[bool, int]:
    """`conditionalSetAclsForResource`: (written, new version); not written if the znode changed or went."""
    try:
        stat = zk.kazoo.set(resource_path(pattern), encode_acls(acls), version=expected_version)
    except (BadVersionError, NoNodeError):
        return False, UNKNOWN_VERSION
    return True, int(stat.version)


def create_acls_if_not_exists(
    zk: ZkClient, pattern: ResourcePattern, acls: tuple[AccessControlEntry, ...]
) -> tuple[bool, int]:
    """`createAclsForResourceIfNotExists`: (created, 0); not created if another writer was first."""
    path = resource_path(pattern)
    zk.ensure_paths([path.rsplit("/", 1)[0]])
    try:
        zk.create(path, encode_acls(acls))
    except NodeExistsError:
        return False, UNKNOWN_VERSION
    return True, 0


def conditional_delete(zk: ZkClient, pattern: ResourcePattern, expected_version: int) -> bool:
    """`conditionalDelete`: deleted (or already gone) unless it changed since `expected_version`."""
    version = -1 if expected_version == UNKNOWN_VERSION else expected_version
    try:
        zk.kazoo.delete(resource_path(pattern), version=version)
    except NoNodeError:
        return True
    except BadVersionError:
        return False
    return True


def create_change_notification(zk: ZkClient, pattern: ResourcePattern) -> None:
    """`createAclChangeNotification`: LITERAL patterns in the legacy store as `TOPIC:name` (the Java enum's
    name), the others as Kafka's `ExtendedAclChangeEvent` JSON."""
    if pattern.pattern_type is PatternType.LITERAL:
        node: type[znodes.AclChangeNotificationSequenceZNode | znodes.ExtendedAclChangeNotificationSequenceZNode]
        node, data = (
            znodes.AclChangeNotificationSequenceZNode,
            znodes.AclChangeNotificationSequenceZNode.encode(pattern.resource_type.name, pattern.name),
        )
    else:
        node, data = (
            znodes.ExtendedAclChangeNotificationSequenceZNode,
            znodes.ExtendedAclChangeNotificationSequenceZNode.encode(
                pattern.resource_type.name, pattern.name, pattern.pattern_type.name
            ),
        )
    zk.ensure_paths([node.ROOT])
    zk.create(node.path(), data, node.mode)


def decode_change_notification(root: str, data: bytes | None) -> ResourcePattern:
    """The pattern a notification under `root` names (`ZkAclChangeStore.decode`; the resource type by its
    Java or Pascal-case name). Raises MalformedZNodeError."""
    if root == znodes.AclChangeNotificationSequenceZNode.ROOT:
        type_name, name = znodes.AclChangeNotificationSequenceZNode.decode(data)
        pattern_type = PatternType.LITERAL
    else:
        type_name, name, pattern_name = znodes.ExtendedAclChangeNotificationSequenceZNode.decode(data)
        pattern_type = _enum_from_java_name(PatternType, pattern_name, root, data)
    resource_type = _enum_from_java_name(ResourceType, type_name, root, data)
    return ResourcePattern(resource_type, name, pattern_type)


def _enum_from_java_name(kind: type[_E], name: str, root: str, data: bytes | None) -> _E:
    """`ResourceType.fromString` / `PatternType.fromString`: the enum name in any case; UNKNOWN is an error."""
    member = kind.from_java_name(name)
    if member.is_unknown:
        raise MalformedZNodeError(root, data, f"unknown {kind.__name__} {name}")
    return member


CHANGE_ROOTS = (
    znodes.AclChangeNotificationSequenceZNode.ROOT,
    znodes.ExtendedAclChangeNotificationSequenceZNode.ROOT,
)
"""`ZkAclChangeStore.stores`' paths, both watched by every broker."""
