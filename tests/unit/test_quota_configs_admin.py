"""kafka-configs --bootstrap-server for users and clients, its pure parts: the DescribeClientQuotas filter
of the entity types and names, the Admin client's order of the entities, and ConfigCommand's checks."""

from __future__ import annotations

import pytest

from kafkaops.admin.client_quotas import CLIENT_ID, MATCH_ANY, MATCH_DEFAULT, MATCH_EXACT, USER, FilterComponent
from kafkaops.admin.configs_admin_ops import admin_client_order, check_quota_changes, quota_filter
from kafkaops.cluster.common.errors import InvalidArgumentError


def java_hash(text: str) -> int:
    h = 0
    for char in text:
        h = (31 * h + ord(char)) & 0xFFFFFFFF
    return h


def test_quota_filter_zips_types_and_names() -> None:
    assert quota_filter(["users", "clients"], ["u", ""]) == [
        FilterComponent(USER, MATCH_EXACT, "u"),
        FilterComponent(CLIENT_ID, MATCH_DEFAULT),
    ]
    assert quota_filter(["clients", "users"], ["c"]) == [
        FilterComponent(CLIENT_ID, MATCH_EXACT, "c"),
        FilterComponent(USER, MATCH_ANY),
    ]
    with pytest.raises(InvalidArgumentError, match="^More entity names specified than entity types$"):
        quota_filter(["users"], ["a", "b"])


def test_entities_in_the_admin_clients_hash_map_order() -> None:
    # Objects.hash(entries) = 31 + sum(key hash ^ value hash); HashMap(3) has 4 buckets
    c1 = (31 + (java_hash("client-id") ^ java_hash("c1"))) & 0xFFFFFFFF
    assert (c1 ^ (c1 >> 16)) & 3 == 3
    described = [({CLIENT_ID: "c1"}, {}), ({CLIENT_ID: None}, {}), ({CLIENT_ID: "c2"}, {})]
    assert admin_client_order(described) == [described[2], described[1], described[0]]


@pytest.mark.parametrize(
    ("types", "names", "add", "delete", "message"),
    [
        (
            ["users"],
            ["u"],
            {"a": "1", "b": "2", "producer_byte_rate": "1"},
            [],
            "Only quota and SCRAM credential configs can be added for 'users' using --bootstrap-server. "
            "Unexpected config names: Set(a, b)",
        ),
        (
            ["users", "clients"],
            ["u", "c"],
            {"SCRAM-SHA-512": "x", "z": "1"},
            [],
            "Only quota configs can be added for 'clients' using --bootstrap-server. "
            "Unexpected config names: Set(z, SCRAM-SHA-512)",
        ),
        (
            ["users"],
            [""],
            {},
            ["SCRAM-SHA-256"],
            "The use of --entity-default or --user-defaults is not allowed with User SCRAM Credentials using "
            "--bootstrap-server.",
        ),
    ],
)
def test_kafkas_checks(
    types: list[str], names: list[str], add: dict[str, str], delete: list[str], message: str
) -> None:
    with pytest.raises(InvalidArgumentError) as refused:
        check_quota_changes(types, names, add, delete)
    assert str(refused.value) == message


def test_quota_changes_pass() -> None:
    check_quota_changes(["clients"], [""], {"producer_byte_rate": "1"}, ["consumer_byte_rate"])
