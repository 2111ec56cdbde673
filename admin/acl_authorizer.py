"""Kafka 2.8's `AclAuthorizer` over ZooKeeper: the ACL cache loaded from the ACL znodes, kept current by
the change notifications, and the writes (`createAcls`, `deleteAcls`) that update a resource's znode
conditionally on the version read, retrying when another writer was first, and leave a change
notification for every broker.

The brokers run one (cluster/broker/authorizer.py wires the watches and the request handlers);
`kafkaops acls --authorizer-properties zookeeper.connect=...` runs one for a command, as Kafka's tool
does. The decisions are acl_matching.py's pure functions over the current snapshot.

Threads: any thread may call; writes and notification processing hold one lock (Kafka's `lock`); the
snapshot is replaced whole, so `authorize` never locks.
"""

from __future__ import annotations

import functools
import logging
import random
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from kafkaops.admin.acl_matching import AclSnapshot, AuthorizerSettings, authorize, authorize_by_resource_type
from kafkaops.cluster.common import errors
from kafkaops.cluster.common.acl import (
    AccessControlEntry,
    AclBinding,
    AclBindingFilter,
    AclOperation,
    PatternType,
    ResourcePattern,
    ResourcePatternFilter,
    ResourceType,
)
from kafkaops.cluster.common.errors import KafkaOpsError
from kafkaops.cluster.common.kafka_principal import KafkaPrincipal
from kafkaops.cluster.zk import acl_store
from kafkaops.cluster.zk.acl_store import NO_ACLS, VersionedAcls
from kafkaops.cluster.zk.zookeeper_client import ZkClient

log = logging.getLogger("kafkaops.authorizer")

MAX_UPDATE_RETRIES = 10
RETRY_BACKOFF_MS = 100
RETRY_BACKOFF_JITTER_MS = 50


@dataclass(frozen=True, slots=True)
class AclApiError:
    """An ACL operation's failure as the Admin API answers it (`ApiError`: code and message)."""

    code: int
    message: str | None

    def __str__(self) -> str:
        return self.message or ""


FAILED_TO_CREATE = AclApiError(errors.InvalidRequestError.code, "Failed to create ACL")


class AclAuthorizer:
    """`settings`: super users and allow.everyone.if.no.acl.found. `sleep` is injected for the retries."""

    def __init__(
        self,
        zk: ZkClient,
        settings: AuthorizerSettings | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.zk = zk
        self.settings = settings or AuthorizerSettings()
        self._sleep = sleep
        self._lock = threading.RLock()
        self._versions: dict[ResourcePattern, VersionedAcls] = {}
        self.snapshot = AclSnapshot()

    # --- start-up and notifications ------------------------------------------------------------------

    def configure(self) -> None:
        """`configure`: the ACL paths, then every stored ACL (the caller starts the change listeners first,
        as Kafka does, so that no change falls between the load and the watch)."""
        acl_store.create_acl_paths(self.zk)
        self.load_cache()

    def load_cache(self) -> None:
        with self._lock:
            for pattern_type in acl_store.STORED_PATTERN_TYPES:
                for type_name in acl_store.get_resource_types(self.zk, pattern_type):
                    resource_type = ResourceType.from_name(type_name)
                    if resource_type.is_unknown:
                        log.warning("Ignoring unknown ResourceType: %s", type_name)
                        continue
                    for name in acl_store.get_resource_names(self.zk, pattern_type, resource_type):
                        self._refresh(ResourcePattern(resource_type, name, pattern_type), notified=False)

    def process_acl_change_notification(self, pattern: ResourcePattern) -> None:
        """Re-read one resource's ACLs (another broker or a tool changed them)."""
        with self._lock:
            self._refresh(pattern)

    def _refresh(self, pattern: ResourcePattern, notified: bool = True) -> None:
        try:
            versioned = acl_store.get_versioned_acls(self.zk, pattern)
        except KafkaOpsError as error:
            log.error("Ignoring the ACLs of %s: %s", pattern, error)
            return
        if notified:
            log.info("Processing Acl change notification for %s, zkVersion : %s", pattern, versioned.zk_version)
        self._update_cache(pattern, versioned)

    def _update_cache(self, pattern: ResourcePattern, versioned: VersionedAcls) -> None:
        if versioned.acls:
            self._versions[pattern] = versioned
        else:
            self._versions.pop(pattern, None)
        self.snapshot = self.snapshot.updated(pattern, versioned.acls)

    # --- decisions -----------------------------------------------------------------------------------

    def authorize(
        self, principal: KafkaPrincipal, host: str, operation: AclOperation, resource: ResourcePattern
    ) -> bool:
        return authorize(self.snapshot, self.settings, principal, host, operation, resource)

    def authorize_by_resource_type(
        self, principal: KafkaPrincipal, host: str, operation: AclOperation, resource_type: ResourceType
    ) -> bool:
        return authorize_by_resource_type(self.snapshot, self.settings, principal, host, operation, resource_type)

    def acls(self, binding_filter: AclBindingFilter) -> list[AclBinding]:
        return self.snapshot.bindings(binding_filter)

    # --- writes --------------------------------------------------------------------------------------

    def create_acls(self, bindings: Sequence[AclBinding]) -> list[AclApiError | None]:
        """`createAcls`: per binding, None or its error. Bindings of one resource are written together."""
        results: list[AclApiError | None] = [None] * len(bindings)
        by_pattern: dict[ResourcePattern, list[int]] = {}
        for index, binding in enumerate(bindings):
            if binding.is_unknown:
                results[index] = FAILED_TO_CREATE
                continue
            try:  # Kafka's `new AclEntry(ace)` parses it: a principal that is not `Type:name` is refused
                KafkaPrincipal.from_string(binding.entry.principal)
            except ValueError as error:
                results[index] = AclApiError(errors.UnknownServerError.code, str(error))
                continue
            by_pattern.setdefault(binding.pattern, []).append(index)
        with self._lock:
            for pattern, indexes in by_pattern.items():
                new = tuple(bindings[i].entry for i in indexes)
                try:
                    self._update_resource_acls(pattern, functools.partial(_ordered_union, new=new))
                except KafkaOpsError as error:
                    for index in indexes:
                        results[index] = AclApiError(errors.UnknownServerError.code, str(error))
        return results

    def delete_acls(self, filters: Sequence[AclBindingFilter]) -> list[list[tuple[AclBinding, AclApiError | None]]]:
        """`deleteAcls`: per filter, the bindings it deleted (each with its error if the write failed). A
        binding matched by several filters is reported by the first."""
        deleted: dict[AclBinding, int] = {}
        failures: dict[AclBinding, AclApiError] = {}
        with self._lock:
            candidates = dict.fromkeys(self._versions)
            for binding_filter in filters:
                if binding_filter.pattern_filter.matches_at_most_one:
                    candidates.update(dict.fromkeys(_filter_to_resources(binding_filter.pattern_filter)))
            for pattern in candidates:
                matching = [(f, i) for i, f in enumerate(filters) if f.pattern_filter.matches(pattern)]
                if matching:
                    self._delete_from(pattern, matching, deleted, failures)
        results: list[list[tuple[AclBinding, AclApiError | None]]] = [[] for _ in filters]
        for binding, index in deleted.items():
            results[index].append((binding, failures.get(binding)))
        return results

    def _delete_from(
        self,
        pattern: ResourcePattern,
        matching: list[tuple[AclBindingFilter, int]],
        deleted: dict[AclBinding, int],
        failures: dict[AclBinding, AclApiError],
    ) -> None:
        being_deleted: dict[AclBinding, int] = {}

        def remove(current: tuple[AccessControlEntry, ...]) -> tuple[AccessControlEntry, ...]:
            kept = []
            for entry in current:
                index = next((i for f, i in matching if f.entry_filter.matches(entry)), None)
                if index is None:
                    kept.append(entry)
                else:
                    binding = AclBinding(pattern, entry)
                    deleted.setdefault(binding, index)
                    being_deleted.setdefault(binding, index)
            return tuple(kept)

        try:
            self._update_resource_acls(pattern, remove)
        except KafkaOpsError as error:
            for binding in being_deleted:
                failures.setdefault(binding, AclApiError(errors.UnknownServerError.code, str(error)))

    def _update_resource_acls(
        self,
        pattern: ResourcePattern,
        new_acls: Callable[[tuple[AccessControlEntry, ...]], tuple[AccessControlEntry, ...]],
    ) -> bool:
        """`updateResourceAcls`: write `new_acls(current)` conditionally on the version read (delete the
        znode when none are left), re-reading and retrying when another writer was first; then the cache and
        a change notification. Whether the ACLs changed. Raises ZNodeVersionConflictError after the retries."""
        current = self._versions.get(pattern) or acl_store.get_versioned_acls(self.zk, pattern)
        for _ in range(MAX_UPDATE_RETRIES + 1):
            acls = new_acls(current.acls)
            if acls:
                if current.exists:
                    written, version = acl_store.conditional_set_acls(self.zk, pattern, acls, current.zk_version)
                else:
                    written, version = acl_store.create_acls_if_not_exists(self.zk, pattern, acls)
            else:
                written, version = acl_store.conditional_delete(self.zk, pattern, current.zk_version), 0
            if written:
                break
            self._sleep((RETRY_BACKOFF_MS + random.randrange(RETRY_BACKOFF_JITTER_MS)) / 1000)  # noqa: S311
            current = acl_store.get_versioned_acls(self.zk, pattern)
        else:
            raise errors.ZNodeVersionConflictError(
                f"Failed to update ACLs for {pattern} after trying a maximum of {MAX_UPDATE_RETRIES} times"
            )
        updated = VersionedAcls(acls, version) if acls else NO_ACLS
        self._update_cache(pattern, updated)
        changed = set(acls) != set(current.acls)
        if changed:
            acl_store.create_change_notification(self.zk, pattern)
        return changed


def _ordered_union(
    current: tuple[AccessControlEntry, ...], new: Iterable[AccessControlEntry]
) -> tuple[AccessControlEntry, ...]:
    return tuple(dict.fromkeys((*current, *new)))


def _filter_to_resources(pattern_filter: ResourcePatternFilter) -> list[ResourcePattern]:
    """`filterToResources`: the patterns a filter that matches at most one pattern names."""
    name = pattern_filter.name or ""
    if pattern_filter.pattern_type is PatternType.ANY:
        return [
            ResourcePattern(pattern_filter.resource_type, name, PatternType.LITERAL),
            ResourcePattern(pattern_filter.resource_type, name, PatternType.PREFIXED),
        ]
    return [ResourcePattern(pattern_filter.resource_type, name, pattern_filter.pattern_type)]
