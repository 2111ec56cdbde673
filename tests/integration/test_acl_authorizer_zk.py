"""admin's AclAuthorizer on a real ZooKeeper: writes conditional on the version read (a stale cache loses
the race, re-reads and retries, so nobody's ACL is lost), deletes by filter, and the notifications another
authorizer applies."""

from __future__ import annotations

import json

from kafkaops.admin.acl_authorizer import AclAuthorizer
from kafkaops.cluster.common.acl import (
    ANY_BINDING_FILTER,
    AccessControlEntry,
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourcePatternFilter,
    ResourceType,
)
from kafkaops.cluster.common.kafka_principal import KafkaPrincipal
from kafkaops.cluster.zk import acl_store
from kafkaops.cluster.zk.client import KafkaZkClient

TOPIC = ResourcePattern(ResourceType.TOPIC, "t", PatternType.LITERAL)


def entry(principal: str, operation: AclOperation = AclOperation.READ) -> AccessControlEntry:
    return AccessControlEntry(principal, "*", operation, AclPermissionType.ALLOW)


def test_a_stale_writer_retries_on_the_version_and_keeps_both(zk: KafkaZkClient, zk_connect: str) -> None:
    sleeps: list[float] = []
    first = AclAuthorizer(zk, sleep=sleeps.append)
    first.configure()
    first.create_acls([AclBinding(TOPIC, entry("User:a"))])
    with KafkaZkClient(zk_connect) as other_session:
        second = AclAuthorizer(other_session)
        second.configure()
        assert second.create_acls([AclBinding(TOPIC, entry("User:b"))]) == [None]
    # `first` still caches version 0: its conditional write fails once, it re-reads and writes version 2
    assert first.create_acls([AclBinding(TOPIC, entry("User:c"))]) == [None]
    assert len(sleeps) == 1
    stored = zk.get("/kafka-acl/Topic/t")
    assert stored is not None and stored[1].version == 2
    assert [a["principal"] for a in json.loads(stored[0])["acls"]] == ["User:a", "User:b", "User:c"]


def test_notifications_update_another_authorizer(zk: KafkaZkClient, zk_connect: str) -> None:
    watcher = AclAuthorizer(zk)
    watcher.configure()
    with KafkaZkClient(zk_connect) as other_session:
        writer = AclAuthorizer(other_session)
        writer.configure()
        writer.create_acls([AclBinding(TOPIC, entry("User:a", AclOperation.WRITE))])
    alice = KafkaPrincipal("User", "a")
    assert not watcher.authorize(alice, "10.0.0.1", AclOperation.WRITE, TOPIC)  # nothing applied yet
    [notification] = zk.get_children("/kafka-acl-changes") or []
    data = zk.get(f"/kafka-acl-changes/{notification}")
    assert data is not None
    watcher.process_acl_change_notification(acl_store.decode_change_notification("/kafka-acl-changes", data[0]))
    assert watcher.authorize(alice, "10.0.0.1", AclOperation.WRITE, TOPIC)
    assert watcher.authorize(alice, "10.0.0.1", AclOperation.DESCRIBE, TOPIC)


def test_delete_by_filter_reports_what_each_filter_deleted(zk: KafkaZkClient) -> None:
    authorizer = AclAuthorizer(zk)
    authorizer.configure()
    prefixed = ResourcePattern(ResourceType.TOPIC, "t", PatternType.PREFIXED)
    authorizer.create_acls(
        [AclBinding(TOPIC, entry("User:a")), AclBinding(TOPIC, entry("User:b")), AclBinding(prefixed, entry("User:a"))]
    )
    only_a = AclBindingFilter(
        ResourcePatternFilter(ResourceType.TOPIC, "t", PatternType.ANY), entry("User:a").to_filter()
    )
    nothing = AclBindingFilter(
        ResourcePatternFilter(ResourceType.GROUP, "g", PatternType.LITERAL), entry("User:a").to_filter()
    )
    results = authorizer.delete_acls([only_a, nothing])
    assert sorted(str(b.pattern.pattern_type) for b, error in results[0] if error is None) == ["LITERAL", "PREFIXED"]
    assert results[1] == []
    assert authorizer.acls(ANY_BINDING_FILTER) == [AclBinding(TOPIC, entry("User:b"))]
    assert not zk.exists("/kafka-acl-extended/prefixed/Topic/t")
    assert acl_store.get_versioned_acls(zk, TOPIC).acls == (entry("User:b"),)


def test_a_principal_that_is_not_type_colon_name_is_refused(zk: KafkaZkClient) -> None:
    authorizer = AclAuthorizer(zk)
    authorizer.configure()
    [error] = authorizer.create_acls([AclBinding(TOPIC, entry("alice"))])
    assert (
        error is not None and error.message == "expected a string in format principalType:principalName but got alice"
    )
    assert not zk.exists("/kafka-acl/Topic/t")
