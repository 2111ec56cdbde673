"""The broker's authorizer (Kafka's `authorizer.class.name`, `AuthHelper` and the ACL change listeners).

`create_authorizer`: with `authorizer.class.name=kafka.security.authorizer.AclAuthorizer` the broker runs
admin's `AclAuthorizer` on its ZooKeeper session, with `super.users` and
`allow.everyone.if.no.acl.found`; empty (the default), no authorizer: every request is allowed, as Kafka.

`AclChangeListener` (Kafka's `ZkNodeChangeNotificationListener` on both ACL change paths): every new
`acl_changes_*` names a resource whose ACLs another broker or a tool changed; its znode is re-read, so a
new ACL applies on every broker without a restart. Threads: the watch fires on kazoo's thread, which
reads ZooKeeper and replaces the authorizer's snapshot (requests read it without locking).

`AuthHelper`: what the request handlers ask (`authorize`, `filter_by_authorized`,
`authorize_by_resource_type`, `authorized_operations`), all answering yes without an authorizer.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Iterable

from kazoo.exceptions import NoNodeError

from kafkaops.admin.acl_authorizer import AclAuthorizer
from kafkaops.admin.acl_matching import AuthorizerSettings, parse_super_users
from kafkaops.cluster.broker.config import BrokerConfig
from kafkaops.cluster.broker.request_channel import RequestContext
from kafkaops.cluster.common.acl import (
    CLUSTER_NAME,
    AclOperation,
    PatternType,
    ResourcePattern,
    ResourceType,
    supported_operations,
)
from kafkaops.cluster.common.errors import InvalidConfigurationError, KafkaOpsError
from kafkaops.cluster.zk import acl_store
from kafkaops.cluster.zk.zookeeper_client import ZkClient

log = logging.getLogger("kafkaops.authorizer")


def authorizer_settings(config: BrokerConfig) -> AuthorizerSettings:
    """Raises InvalidConfigurationError for a `super.users` entry that is not `Type:name`."""
    try:
        super_users = parse_super_users(config.super_users)
    except ValueError as error:
        raise InvalidConfigurationError(f"Invalid value for super.users: {error}") from None
    return AuthorizerSettings(super_users, config.allow_everyone_if_no_acl_found)


def create_authorizer(config: BrokerConfig, zk: ZkClient, stopped: Callable[[], bool]) -> AclAuthorizer | None:
    """The broker's authorizer, configured and listening for ACL changes; None without one."""
    if not config.authorizer_class_name:
        return None
    authorizer = AclAuthorizer(zk, authorizer_settings(config))
    acl_store.create_acl_paths(zk)
    AclChangeListener(zk, authorizer, stopped).start()  # first, so that no change falls before the load
    authorizer.configure()
    return authorizer


CHANGE_EXPIRATION_MS = 15 * 60 * 1000
"""`ZkNodeChangeNotificationListener.changeExpirationMs`: older notifications are deleted (every broker has
long applied them)."""


class AclChangeListener:
    def __init__(
        self,
        zk: ZkClient,
        authorizer: AclAuthorizer,
        stopped: Callable[[], bool],
        clock_ms: Callable[[], int] = lambda: int(time.time() * 1000),
    ) -> None:
        self.zk = zk
        self.authorizer = authorizer
        self.stopped = stopped
        self.clock_ms = clock_ms

    def start(self) -> None:
        for root in acl_store.CHANGE_ROOTS:
            self._watch(root)

    def _watch(self, root: str) -> None:
        seen = set(self.zk.get_children(root) or [])

        def changed(children: list[str]) -> bool:
            if self.stopped():
                return False
            for child in sorted(set(children) - seen):
                seen.add(child)
                self._process(root, child)
            self._purge_obsolete(root, children)
            return True

        self.zk.kazoo.ChildrenWatch(root, changed)

    def _purge_obsolete(self, root: str, children: list[str]) -> None:
        """`purgeObsoleteNotifications`: delete the notifications created more than 15 minutes ago."""
        now = self.clock_ms()
        for path, entry in self.zk.get_many(f"{root}/{child}" for child in children).items():
            if entry is not None and now - entry[1].ctime > CHANGE_EXPIRATION_MS:
                with contextlib.suppress(NoNodeError):  # another broker purged it first
                    self.zk.kazoo.delete(path)

    def _process(self, root: str, child: str) -> None:
        entry = self.zk.get(f"{root}/{child}")
        if entry is None:
            return
        try:
            pattern = acl_store.decode_change_notification(root, entry[0])
        except KafkaOpsError as error:
            log.error("Ignoring ACL change notification %s/%s: %s", root, child, error)
            return
        self.authorizer.process_acl_change_notification(pattern)


class AuthHelper:
    """Kafka's `AuthHelper` over the broker's authorizer (None: authorization is off)."""

    def __init__(self, authorizer: AclAuthorizer | None) -> None:
        self.authorizer = authorizer

    def authorize(
        self,
        context: RequestContext,
        operation: AclOperation,
        resource_type: ResourceType,
        name: str,
        log_if_denied: bool = True,
    ) -> bool:
        """Whether the request's principal, from its host, may; a refusal of what was asked for is logged
        (Kafka's authorizer log, INFO)."""
        if self.authorizer is None:
            return True
        resource = ResourcePattern(resource_type, name, PatternType.LITERAL)
        allowed = self.authorizer.authorize(context.principal, context.client_host, operation, resource)
        if not allowed and log_if_denied:
            log.info(
                "Principal = %s is Denied Operation = %s from host = %s on resource = %s:LITERAL:%s",
                context.principal,
                operation.pascal_name,
                context.client_host,
                resource_type.pascal_name,
                name,
            )
        return allowed

    def authorize_cluster(self, context: RequestContext, operation: AclOperation) -> bool:
        return self.authorize(context, operation, ResourceType.CLUSTER, CLUSTER_NAME)

    def filter_by_authorized(
        self,
        context: RequestContext,
        operation: AclOperation,
        resource_type: ResourceType,
        names: Iterable[str],
        log_if_denied: bool = True,
    ) -> set[str]:
        """The names (each asked once) the principal may do `operation` on."""
        return {name for name in set(names) if self.authorize(context, operation, resource_type, name, log_if_denied)}

    def authorize_by_resource_type(
        self, context: RequestContext, operation: AclOperation, resource_type: ResourceType
    ) -> bool:
        if self.authorizer is None:
            return True
        return self.authorizer.authorize_by_resource_type(
            context.principal, context.client_host, operation, resource_type
        )

    def authorized_operations(self, context: RequestContext, resource_type: ResourceType, name: str) -> int:
        """`authorizedOperations`: the bit field of the supported operations the principal may do."""
        resource = ResourcePattern(resource_type, name, PatternType.LITERAL)
        field = 0
        for operation in supported_operations(resource_type):
            authorizer = self.authorizer
            if authorizer is None or authorizer.authorize(context.principal, context.client_host, operation, resource):
                field |= 1 << operation.code
        return field
