"""KafkaApis with an authorizer (Kafka 2.8's `authorize` calls per handler), the ACLs held in memory: the
requests go through the codec both ways, with the connection's principal and host in the context."""

from __future__ import annotations

import asyncio
from typing import Any

from kafkaops.admin import acl_wire
from kafkaops.admin.acl_authorizer import AclAuthorizer
from kafkaops.admin.acl_matching import AclSnapshot, AuthorizerSettings
from kafkaops.cluster.broker.kafka_apis import KafkaApis
from kafkaops.cluster.broker.metadata_cache import MetadataCache
from kafkaops.cluster.broker.request_channel import RequestContext
from kafkaops.cluster.common.acl import (
    ANY_ENTRY_FILTER,
    CLUSTER_NAME,
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
from kafkaops.cluster.protocol.messages import RequestHeader, decode_request, decode_response, encode_request
from kafkaops.cluster.protocol.messages import encode_response as encode
from kafkaops.cluster.protocol.schemas import ApiKey
from tests.unit.test_broker_kafka_apis import FakeController, FakeReplicaManager

ALICE = KafkaPrincipal("User", "alice")
CLUSTER = ResourcePattern(ResourceType.CLUSTER, CLUSTER_NAME, PatternType.LITERAL)


def allow(principal: str, operation: AclOperation) -> AccessControlEntry:
    return AccessControlEntry(principal, "*", operation, AclPermissionType.ALLOW)


def topic(name: str) -> ResourcePattern:
    return ResourcePattern(ResourceType.TOPIC, name, PatternType.LITERAL)


def apis_with(
    acls: dict[ResourcePattern, tuple[AccessControlEntry, ...]] | None,
) -> tuple[KafkaApis, FakeReplicaManager]:
    """KafkaApis with an authorizer holding `acls` (None: no authorizer)."""
    authorizer = None
    if acls is not None:
        authorizer = AclAuthorizer(None, AuthorizerSettings(super_users=frozenset({KafkaPrincipal("User", "admin")})))  # type: ignore[arg-type] - no ZooKeeper is reached
        authorizer.snapshot = AclSnapshot(acls)
    manager = FakeReplicaManager()
    apis = KafkaApis(
        0,
        "cluster-id",
        None,  # type: ignore[arg-type]
        manager,  # type: ignore[arg-type]
        MetadataCache(),
        FakeController(active=False),  # type: ignore[arg-type]
        lambda: 1,
        authorizer=authorizer,
    )
    return apis, manager


def call(
    apis: KafkaApis, key: ApiKey, version: int, body: dict[str, Any], principal: KafkaPrincipal = ALICE
) -> dict[str, Any] | None:
    request = decode_request(encode_request(RequestHeader(key, version, 9, "test"), body))
    context = RequestContext(principal=principal, client_host="10.0.0.1")
    response = asyncio.run(apis.handle(request, context))
    if response is None:
        return None
    return decode_response(key, version, encode(key, version, 9, response))[1]


PRODUCE = {
    "transactional_id": None,
    "acks": 1,
    "timeout_ms": 1,
    "topic_data": [{"name": "t", "partition_data": [{"index": 0, "records": b""}]}],
}


def test_produce_without_write_is_refused_before_the_replica_manager() -> None:
    apis, manager = apis_with({topic("t"): (allow("User:alice", AclOperation.READ),)})
    answer = call(apis, ApiKey.PRODUCE, 8, PRODUCE)
    assert answer is not None
    assert answer["responses"][0]["partition_responses"][0]["error_code"] == 29
    assert manager.calls == []


def test_produce_with_write_reaches_the_replica_manager() -> None:
    apis, manager = apis_with({topic("t"): (allow("User:alice", AclOperation.WRITE),)})
    answer = call(apis, ApiKey.PRODUCE, 8, PRODUCE)
    assert answer is not None and answer["responses"][0]["partition_responses"][0]["error_code"] == 0
    assert manager.calls[0][0] == "produce"


def test_transactional_produce_needs_write_on_the_transactional_id() -> None:
    apis, manager = apis_with({topic("t"): (allow("User:alice", AclOperation.WRITE),)})
    answer = call(apis, ApiKey.PRODUCE, 8, {**PRODUCE, "transactional_id": "tx"})
    assert answer is not None and answer["responses"][0]["partition_responses"][0]["error_code"] == 53
    assert manager.calls == []


def test_inter_broker_requests_need_cluster_action() -> None:
    apis, _ = apis_with({})
    body = {
        "controller_id": 1,
        "controller_epoch": 1,
        "broker_epoch": 1,
        "delete_partitions": False,
        "topic_states": [],
    }
    answer = call(apis, ApiKey.STOP_REPLICA, 1, body)
    assert answer is not None and answer["error_code"] == 31
    apis, _ = apis_with({CLUSTER: (allow("User:alice", AclOperation.CLUSTER_ACTION),)})
    answer = call(apis, ApiKey.STOP_REPLICA, 1, body)
    assert answer is not None and answer["error_code"] == 0


def test_super_user_needs_no_acl() -> None:
    apis, _ = apis_with({})
    body = {
        "controller_id": 1,
        "controller_epoch": 1,
        "broker_epoch": 1,
        "delete_partitions": False,
        "topic_states": [],
    }
    answer = call(apis, ApiKey.STOP_REPLICA, 1, body, principal=KafkaPrincipal("User", "admin"))
    assert answer is not None and answer["error_code"] == 0


def test_without_an_authorizer_everything_is_allowed_and_acl_apis_say_security_disabled() -> None:
    apis, manager = apis_with(None)
    answer = call(apis, ApiKey.PRODUCE, 8, PRODUCE)
    assert answer is not None and answer["responses"][0]["partition_responses"][0]["error_code"] == 0
    described = call(
        apis,
        ApiKey.DESCRIBE_ACLS,
        1,
        acl_wire.filter_to_wire(
            AclBindingFilter(ResourcePatternFilter(ResourceType.ANY, None, PatternType.ANY), ANY_ENTRY_FILTER)
        ),
    )
    assert described is not None
    assert (described["error_code"], described["error_message"]) == (54, "No Authorizer is configured on the broker")
    created = call(
        apis,
        ApiKey.CREATE_ACLS,
        1,
        {"creations": [acl_wire.creation_to_wire(AclBinding(topic("t"), allow("User:a", AclOperation.READ)))]},
    )
    assert created is not None and created["results"][0]["error_code"] == 54


def test_describe_acls_needs_describe_on_the_cluster_and_filters() -> None:
    acls = {topic("t"): (allow("User:alice", AclOperation.READ),), topic("u"): (allow("User:bob", AclOperation.WRITE),)}
    any_filter = AclBindingFilter(ResourcePatternFilter(ResourceType.ANY, None, PatternType.ANY), ANY_ENTRY_FILTER)
    apis, _ = apis_with(acls)
    refused = call(apis, ApiKey.DESCRIBE_ACLS, 2, acl_wire.filter_to_wire(any_filter))
    assert refused is not None and refused["error_code"] == 31
    apis, _ = apis_with({**acls, CLUSTER: (allow("User:alice", AclOperation.ALTER),)})  # Alter implies Describe
    bob_only = AclBindingFilter(any_filter.pattern_filter, allow("User:bob", AclOperation.WRITE).to_filter())
    answer = call(apis, ApiKey.DESCRIBE_ACLS, 2, acl_wire.filter_to_wire(bob_only))
    assert answer is not None and answer["error_code"] == 0
    assert acl_wire.bindings_from_describe_response(answer) == [
        AclBinding(topic("u"), allow("User:bob", AclOperation.WRITE))
    ]


def test_idempotent_producer_id_needs_idempotent_write_or_write_on_some_topic() -> None:
    body = {"transactional_id": None, "transaction_timeout_ms": 1000, "producer_id": -1, "producer_epoch": -1}
    apis, _ = apis_with({topic("t"): (allow("User:alice", AclOperation.READ),)})
    answer = call(apis, ApiKey.INIT_PRODUCER_ID, 4, body)
    assert answer is not None and answer["error_code"] == 31
    apis, _ = apis_with({CLUSTER: (allow("User:alice", AclOperation.IDEMPOTENT_WRITE),)})
    assert apis.auth.authorize(
        RequestContext(principal=ALICE), AclOperation.IDEMPOTENT_WRITE, ResourceType.CLUSTER, CLUSTER_NAME
    )
    assert (
        apis.auth.authorize_by_resource_type(RequestContext(principal=ALICE), AclOperation.WRITE, ResourceType.TOPIC)
        is False
    )


def test_list_offsets_and_delete_records_refuse_per_topic() -> None:
    apis, manager = apis_with({topic("t"): (allow("User:alice", AclOperation.DESCRIBE),)})
    body = {
        "replica_id": -1,
        "isolation_level": 0,
        "topics": [
            {"name": "t", "partitions": [{"partition_index": 0, "timestamp": -1, "current_leader_epoch": -1}]},
            {"name": "u", "partitions": [{"partition_index": 0, "timestamp": -1, "current_leader_epoch": -1}]},
        ],
    }
    answer = call(apis, ApiKey.LIST_OFFSETS, 5, body)
    assert answer is not None
    assert [(t["name"], t["partitions"][0]["error_code"]) for t in answer["topics"]] == [("t", 0), ("u", 29)]
    deleted = call(
        apis,
        ApiKey.DELETE_RECORDS,
        1,
        {"topics": [{"name": "t", "partitions": [{"partition_index": 0, "offset": 1}]}], "timeout_ms": 1},
    )
    assert deleted is not None and deleted["topics"][0]["partitions"][0]["error_code"] == 29


def test_authorized_operations_bit_field() -> None:
    apis, _ = apis_with(
        {CLUSTER: (allow("User:alice", AclOperation.DESCRIBE), allow("User:alice", AclOperation.ALTER))}
    )
    field = apis.auth.authorized_operations(RequestContext(principal=ALICE), ResourceType.CLUSTER, CLUSTER_NAME)
    assert field == (1 << AclOperation.DESCRIBE.code) | (1 << AclOperation.ALTER.code)
