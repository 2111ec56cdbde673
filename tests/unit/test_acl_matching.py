"""Kafka 2.8 AclAuthorizer's decisions (acl_matching.py) and the ACL vocabulary (cluster/common/acl.py),
case by case, after Kafka's AclAuthorizerTest."""

from __future__ import annotations

import pytest

from kafkaops.admin.acl_matching import (
    AclSnapshot,
    AuthorizerSettings,
    authorize,
    authorize_by_resource_type,
    parse_super_users,
)
from kafkaops.cluster.common.acl import (
    ANY_BINDING_FILTER,
    ANY_ENTRY_FILTER,
    AccessControlEntry,
    AccessControlEntryFilter,
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
from kafkaops.cluster.common.kafka_principal import KafkaPrincipal

ALICE = KafkaPrincipal("User", "alice")
BOB = KafkaPrincipal("User", "bob")
HOST = "192.168.0.1"
TOPIC = ResourcePattern(ResourceType.TOPIC, "orders", PatternType.LITERAL)
ALLOW, DENY = AclPermissionType.ALLOW, AclPermissionType.DENY
Op = AclOperation
DEFAULTS = AuthorizerSettings()


def ace(
    principal: str = "User:alice", op: AclOperation = Op.READ, permission: AclPermissionType = ALLOW, host: str = "*"
) -> AccessControlEntry:
    return AccessControlEntry(principal, host, op, permission)


def snapshot(*pairs: tuple[ResourcePattern, list[AccessControlEntry]]) -> AclSnapshot:
    return AclSnapshot({pattern: tuple(entries) for pattern, entries in pairs})


def allowed(
    snap: AclSnapshot,
    op: AclOperation,
    resource: ResourcePattern = TOPIC,
    principal: KafkaPrincipal = ALICE,
    host: str = HOST,
    settings: AuthorizerSettings = DEFAULTS,
) -> bool:
    return authorize(snap, settings, principal, host, op, resource)


def prefixed(name: str, resource_type: ResourceType = ResourceType.TOPIC) -> ResourcePattern:
    return ResourcePattern(resource_type, name, PatternType.PREFIXED)


def literal(name: str, resource_type: ResourceType = ResourceType.TOPIC) -> ResourcePattern:
    return ResourcePattern(resource_type, name, PatternType.LITERAL)


# --- no ACLs, super users ----------------------------------------------------------------------------


def test_no_acls_denies_unless_allow_everyone() -> None:
    assert not allowed(AclSnapshot(), Op.READ)
    assert allowed(AclSnapshot(), Op.READ, settings=AuthorizerSettings(allow_everyone_if_no_acl_found=True))


def test_allow_everyone_only_when_the_resource_has_no_acls() -> None:
    snap = snapshot((TOPIC, [ace("User:bob")]))
    assert not allowed(snap, Op.READ, settings=AuthorizerSettings(allow_everyone_if_no_acl_found=True))


def test_super_user_may_do_anything_even_denied() -> None:
    snap = snapshot((TOPIC, [ace(op=Op.ALL, permission=DENY)]))
    settings = AuthorizerSettings(super_users=frozenset({ALICE}))
    assert allowed(snap, Op.WRITE, settings=settings)
    assert not allowed(snap, Op.WRITE, principal=BOB, settings=settings)


def test_parse_super_users() -> None:
    assert parse_super_users("User:admin; User:broker") == {
        KafkaPrincipal("User", "admin"),
        KafkaPrincipal("User", "broker"),
    }
    assert parse_super_users("") == frozenset()
    with pytest.raises(ValueError, match="principalType:principalName"):
        parse_super_users("admin")


# --- allow, deny, principals, hosts ---------------------------------------------------------------------


def test_allow_matches_principal_operation_and_host() -> None:
    snap = snapshot((TOPIC, [ace(op=Op.READ, host=HOST)]))
    assert allowed(snap, Op.READ)
    assert not allowed(snap, Op.WRITE)
    assert not allowed(snap, Op.READ, principal=BOB)
    assert not allowed(snap, Op.READ, host="10.0.0.1")


def test_deny_wins_over_allow() -> None:
    snap = snapshot((TOPIC, [ace(op=Op.READ), ace(op=Op.READ, permission=DENY)]))
    assert not allowed(snap, Op.READ)


def test_deny_on_one_host_only() -> None:
    snap = snapshot((TOPIC, [ace(op=Op.READ), ace(op=Op.READ, permission=DENY, host=HOST)]))
    assert not allowed(snap, Op.READ)
    assert allowed(snap, Op.READ, host="10.0.0.2")


def test_wildcard_principal_and_host() -> None:
    snap = snapshot((TOPIC, [ace("User:*", Op.WRITE)]))
    assert allowed(snap, Op.WRITE)
    assert allowed(snap, Op.WRITE, principal=BOB, host="10.1.1.1")


def test_deny_all_users_denies_even_a_named_allow() -> None:
    snap = snapshot((TOPIC, [ace(op=Op.READ), ace("User:*", Op.READ, DENY)]))
    assert not allowed(snap, Op.READ)


def test_all_operation_allows_every_operation() -> None:
    snap = snapshot((TOPIC, [ace(op=Op.ALL)]))
    for op in supported_operations(ResourceType.TOPIC):
        assert allowed(snap, op)


def test_all_operation_deny_denies_every_operation() -> None:
    snap = snapshot((TOPIC, [ace(op=Op.ALL), ace(op=Op.ALL, permission=DENY)]))
    assert not allowed(snap, Op.DESCRIBE)


def test_principal_type_matters() -> None:
    snap = snapshot((TOPIC, [ace("Group:alice", Op.READ)]))
    assert not allowed(snap, Op.READ)


# --- implications --------------------------------------------------------------------------------------


@pytest.mark.parametrize("granted", [Op.READ, Op.WRITE, Op.DELETE, Op.ALTER, Op.DESCRIBE])
def test_describe_is_implied_by(granted: AclOperation) -> None:
    assert allowed(snapshot((TOPIC, [ace(op=granted)])), Op.DESCRIBE)


@pytest.mark.parametrize("granted", [Op.CREATE, Op.DESCRIBE_CONFIGS, Op.ALTER_CONFIGS, Op.IDEMPOTENT_WRITE])
def test_describe_is_not_implied_by(granted: AclOperation) -> None:
    assert not allowed(snapshot((TOPIC, [ace(op=granted)])), Op.DESCRIBE)


def test_describe_configs_implied_by_alter_configs() -> None:
    snap = snapshot((TOPIC, [ace(op=Op.ALTER_CONFIGS)]))
    assert allowed(snap, Op.DESCRIBE_CONFIGS)
    assert allowed(snap, Op.ALTER_CONFIGS)
    assert not allowed(snap, Op.DESCRIBE)


def test_implication_is_one_way() -> None:
    snap = snapshot((TOPIC, [ace(op=Op.DESCRIBE)]))
    assert not allowed(snap, Op.READ)
    assert not allowed(snapshot((TOPIC, [ace(op=Op.DESCRIBE_CONFIGS)])), Op.ALTER_CONFIGS)


def test_deny_read_does_not_deny_describe_granted_by_write() -> None:
    snap = snapshot((TOPIC, [ace(op=Op.WRITE), ace(op=Op.READ, permission=DENY)]))
    assert allowed(snap, Op.DESCRIBE)
    assert not allowed(snap, Op.READ)


def test_deny_describe_wins_over_implied_describe() -> None:
    snap = snapshot((TOPIC, [ace(op=Op.WRITE), ace(op=Op.DESCRIBE, permission=DENY)]))
    assert not allowed(snap, Op.DESCRIBE)
    assert allowed(snap, Op.WRITE)


# --- wildcard and prefixed resources -------------------------------------------------------------------


def test_wildcard_resource_applies_to_every_name() -> None:
    snap = snapshot((literal("*"), [ace(op=Op.READ)]))
    assert allowed(snap, Op.READ, literal("anything"))
    assert not allowed(snap, Op.READ, literal("anything", ResourceType.GROUP))


def test_wildcard_deny_wins_over_literal_allow() -> None:
    snap = snapshot((literal("*"), [ace(op=Op.READ, permission=DENY)]), (TOPIC, [ace(op=Op.READ)]))
    assert not allowed(snap, Op.READ)


def test_prefixed_pattern_applies_to_names_starting_with_it() -> None:
    snap = snapshot((prefixed("ord"), [ace(op=Op.WRITE)]))
    assert allowed(snap, Op.WRITE, literal("orders"))
    assert allowed(snap, Op.WRITE, literal("ord"))
    assert not allowed(snap, Op.WRITE, literal("or"))
    assert not allowed(snap, Op.WRITE, literal("payments"))


def test_prefixed_deny_wins_over_literal_allow() -> None:
    snap = snapshot((prefixed("ord"), [ace(op=Op.WRITE, permission=DENY)]), (TOPIC, [ace(op=Op.WRITE)]))
    assert not allowed(snap, Op.WRITE)


def test_longer_and_shorter_prefixes_both_apply() -> None:
    snap = snapshot(
        (prefixed("o"), [ace(op=Op.READ)]),
        (prefixed("orders-eu"), [ace(op=Op.READ, permission=DENY)]),
    )
    assert allowed(snap, Op.READ, literal("orders-us"))
    assert not allowed(snap, Op.READ, literal("orders-eu-1"))


def test_prefixed_name_is_not_a_glob() -> None:
    snap = snapshot((prefixed("*"), [ace(op=Op.READ)]))
    assert not allowed(snap, Op.READ, literal("orders"))
    assert allowed(snap, Op.READ, literal("*x"))


def test_literal_star_is_only_the_wildcard_pattern() -> None:
    snap = snapshot((literal("orders*"), [ace(op=Op.READ)]))
    assert not allowed(snap, Op.READ, literal("orders-1"))


def test_cluster_and_group_resources() -> None:
    cluster = literal("kafka-cluster", ResourceType.CLUSTER)
    group = literal("g1", ResourceType.GROUP)
    snap = snapshot((cluster, [ace(op=Op.CLUSTER_ACTION)]), (group, [ace(op=Op.READ)]))
    assert allowed(snap, Op.CLUSTER_ACTION, cluster)
    assert not allowed(snap, Op.ALTER, cluster)
    assert allowed(snap, Op.DESCRIBE, group)
    assert not allowed(snap, Op.READ, literal("g1"))  # a topic of that name has no ACLs


def test_only_literal_resources_are_authorized() -> None:
    with pytest.raises(ValueError, match="Only literal resources are supported. Got: PREFIXED"):
        allowed(AclSnapshot(), Op.READ, prefixed("x"))


def test_snapshot_updated_removes_empty_patterns() -> None:
    snap = snapshot((TOPIC, [ace()])).updated(TOPIC, ())
    assert snap.acls == {}
    assert not allowed(snap, Op.READ)


# --- authorize by resource type (KIP-679) ------------------------------------------------------------


def by_type(snap: AclSnapshot, settings: AuthorizerSettings = DEFAULTS) -> bool:
    return authorize_by_resource_type(snap, settings, ALICE, HOST, Op.WRITE, ResourceType.TOPIC)


def test_by_type_no_acls() -> None:
    assert not by_type(AclSnapshot())
    assert by_type(AclSnapshot(), AuthorizerSettings(allow_everyone_if_no_acl_found=True))


def test_by_type_any_allowed_literal_or_prefix() -> None:
    assert by_type(snapshot((literal("t1"), [ace(op=Op.WRITE)])))
    assert by_type(snapshot((prefixed("t"), [ace(op=Op.ALL)])))
    assert not by_type(snapshot((literal("t1"), [ace(op=Op.READ)])))


def test_by_type_wildcard_deny_denies_all() -> None:
    snap = snapshot((literal("t1"), [ace(op=Op.WRITE)]), (literal("*"), [ace(op=Op.WRITE, permission=DENY)]))
    assert not by_type(snap, AuthorizerSettings(allow_everyone_if_no_acl_found=True))


def test_by_type_deny_shadows_the_same_literal_and_longer_prefixes() -> None:
    deny_t1 = (literal("t1"), [ace(op=Op.WRITE, permission=DENY), ace(op=Op.WRITE)])
    assert not by_type(snapshot(deny_t1))
    deny_prefix = (prefixed("t"), [ace(op=Op.WRITE, permission=DENY)])
    assert not by_type(snapshot(deny_prefix, (literal("t1"), [ace(op=Op.WRITE)]), (prefixed("tx"), [ace(op=Op.WRITE)])))
    assert by_type(snapshot(deny_prefix, (literal("u1"), [ace(op=Op.WRITE)])))


def test_by_type_super_user() -> None:
    assert by_type(AclSnapshot(), AuthorizerSettings(super_users=frozenset({ALICE})))


# --- filters -------------------------------------------------------------------------------------------


def test_resource_filter_match_applies_literal_wildcard_and_prefixes() -> None:
    match = ResourcePatternFilter(ResourceType.TOPIC, "orders", PatternType.MATCH)
    assert match.matches(literal("orders"))
    assert match.matches(literal("*"))
    assert match.matches(prefixed("ord"))
    assert not match.matches(prefixed("orders-"))
    assert not match.matches(literal("order"))


def test_resource_filter_any_and_specific() -> None:
    any_type = ResourcePatternFilter(ResourceType.TOPIC, "orders", PatternType.ANY)
    assert any_type.matches(literal("orders")) and any_type.matches(prefixed("orders"))
    assert not any_type.matches(literal("*"))
    lit = ResourcePatternFilter(ResourceType.TOPIC, "orders", PatternType.LITERAL)
    assert lit.matches(literal("orders")) and not lit.matches(prefixed("orders"))
    assert ResourcePatternFilter(ResourceType.ANY, None, PatternType.ANY).matches(prefixed("x", ResourceType.GROUP))
    assert lit.matches_at_most_one and not any_type.find_indefinite_field()
    assert match_field() == "Resource pattern type is MATCH."


def match_field() -> str | None:
    return ResourcePatternFilter(ResourceType.TOPIC, "x", PatternType.MATCH).find_indefinite_field()


def test_entry_filter() -> None:
    entry = ace(op=Op.WRITE, host=HOST)
    assert ANY_ENTRY_FILTER.matches(entry)
    assert AccessControlEntryFilter("User:alice", None, Op.ANY, AclPermissionType.ANY).matches(entry)
    assert not AccessControlEntryFilter("User:bob", None, Op.ANY, AclPermissionType.ANY).matches(entry)
    assert not AccessControlEntryFilter(None, "*", Op.ANY, AclPermissionType.ANY).matches(entry)
    assert not AccessControlEntryFilter(None, None, Op.READ, AclPermissionType.ANY).matches(entry)
    assert not AccessControlEntryFilter(None, None, Op.ANY, DENY).matches(entry)


def test_bindings_in_kafka_resource_order() -> None:
    snap = snapshot(
        (literal("g", ResourceType.GROUP), [ace()]),
        (prefixed("a"), [ace()]),
        (literal("a"), [ace()]),
        (literal("b"), [ace(), ace("User:bob")]),
    )
    patterns = [b.pattern for b in snap.bindings(ANY_BINDING_FILTER)]
    assert patterns == [literal("b"), literal("b"), literal("a"), prefixed("a"), literal("g", ResourceType.GROUP)]
    only_bob = AclBindingFilter(
        ResourcePatternFilter(ResourceType.ANY, None, PatternType.ANY), ace("User:bob").to_filter()
    )
    assert snap.bindings(only_bob) == [AclBinding(literal("b"), ace("User:bob"))]


# --- names and texts (Java's toString, SecurityUtils) -------------------------------------------------


def test_texts_as_kafka_prints_them() -> None:
    assert str(literal("t")) == "ResourcePattern(resourceType=TOPIC, name=t, patternType=LITERAL)"
    assert str(ace(op=Op.WRITE)) == "(principal=User:alice, host=*, operation=WRITE, permissionType=ALLOW)"
    assert str(ResourcePatternFilter(ResourceType.ANY, None, PatternType.MATCH)) == (
        "ResourcePatternFilter(resourceType=ANY, name=<any>, patternType=MATCH)"
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Read", Op.READ),
        ("read", Op.READ),
        ("ClusterAction", Op.CLUSTER_ACTION),
        ("clusteraction", Op.CLUSTER_ACTION),
        ("CLUSTER_ACTION", Op.UNKNOWN),
        ("IdempotentWrite", Op.IDEMPOTENT_WRITE),
        ("nonsense", Op.UNKNOWN),
    ],
)
def test_operation_names(text: str, expected: AclOperation) -> None:
    assert AclOperation.from_name(text) is expected


def test_pascal_names_and_codes() -> None:
    assert ResourceType.TRANSACTIONAL_ID.pascal_name == "TransactionalId"
    assert Op.DESCRIBE_CONFIGS.pascal_name == "DescribeConfigs"
    assert ResourceType.from_java_name("transactional_id") is ResourceType.TRANSACTIONAL_ID
    assert Op.from_code(12) is Op.IDEMPOTENT_WRITE and Op.from_code(99) is Op.UNKNOWN
    assert PatternType.from_code(4) is PatternType.PREFIXED
    assert supported_operations(ResourceType.GROUP) == (Op.READ, Op.DESCRIBE, Op.DELETE)
