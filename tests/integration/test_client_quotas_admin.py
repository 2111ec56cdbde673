"""The library behind DescribeClientQuotas / AlterClientQuotas (Kafka's ZkAdminManager) on a real ZooKeeper:
the znodes `kafkaops configs` writes are what the Admin API reads, and the other way round."""

from __future__ import annotations

import json

import pytest

from kafkaops.admin import client_quotas as cq
from kafkaops.cluster.common.errors import InvalidRequestError, UnknownServerError, UnsupportedVersionError


@pytest.fixture
def quotas(zk, run_cli):
    """clients c1, <default>; users u1, u2's clients c1 and <default>; <default> user's client c2."""
    for entity, config in [
        (["--entity-type", "clients", "--entity-name", "c1"], "producer_byte_rate=100"),
        (["--entity-type", "clients", "--entity-default"], "consumer_byte_rate=200"),
        (["--entity-type", "users", "--entity-name", "u1"], "request_percentage=50.5"),
        (["--user", "u2", "--client", "c1"], "producer_byte_rate=300"),
        (["--user", "u2", "--client-defaults"], "producer_byte_rate=400"),
        (["--user-defaults", "--client", "c2"], "producer_byte_rate=500"),
    ]:
        result = run_cli("configs", "--alter", *entity, "--add-config", config)
        assert result.exit_code == 0, result.stderr


def describe(zk, *components, strict=False):
    """(entity as sorted items, values) pairs, in a stable order (`ordered`)."""
    return ordered(
        (sorted(entity.items(), key=str), values)
        for entity, values in cq.describe_client_quotas(zk, list(components), strict)
    )


def ordered(entries):
    return sorted(entries, key=repr)


def test_describe_everything(zk, quotas):
    assert describe(zk) == ordered(
        [
            ([("client-id", "c1")], {"producer_byte_rate": 100.0}),
            ([("client-id", None)], {"consumer_byte_rate": 200.0}),
            ([("user", "u1")], {"request_percentage": 50.5}),
            ([("client-id", "c1"), ("user", "u2")], {"producer_byte_rate": 300.0}),
            ([("client-id", None), ("user", "u2")], {"producer_byte_rate": 400.0}),
            ([("client-id", "c2"), ("user", None)], {"producer_byte_rate": 500.0}),
        ]
    )


def test_describe_filters(zk, quotas):
    exact_u2 = cq.FilterComponent(cq.USER, cq.MATCH_EXACT, "u2")
    any_client = cq.FilterComponent(cq.CLIENT_ID, cq.MATCH_ANY)
    default_client = cq.FilterComponent(cq.CLIENT_ID, cq.MATCH_DEFAULT)
    assert describe(zk, exact_u2, any_client, strict=True) == ordered(
        [
            ([("client-id", "c1"), ("user", "u2")], {"producer_byte_rate": 300.0}),
            ([("client-id", None), ("user", "u2")], {"producer_byte_rate": 400.0}),
        ]
    )
    assert describe(zk, default_client, strict=True) == [([("client-id", None)], {"consumer_byte_rate": 200.0})]
    assert describe(zk, exact_u2, default_client, strict=True) == [
        ([("client-id", None), ("user", "u2")], {"producer_byte_rate": 400.0})
    ]
    # not strict: every entity with a client-id component that is c1, with or without a user
    assert describe(zk, cq.FilterComponent(cq.CLIENT_ID, cq.MATCH_EXACT, "c1")) == ordered(
        [
            ([("client-id", "c1")], {"producer_byte_rate": 100.0}),
            ([("client-id", "c1"), ("user", "u2")], {"producer_byte_rate": 300.0}),
        ]
    )
    assert describe(zk, cq.FilterComponent(cq.USER, cq.MATCH_EXACT, "nobody"), strict=True) == []


@pytest.mark.parametrize(
    "components, error, message",
    [
        (
            [cq.FilterComponent(cq.USER, cq.MATCH_ANY), cq.FilterComponent(cq.USER, cq.MATCH_ANY)],
            InvalidRequestError,
            "Duplicate user filter component entity type",
        ),
        ([cq.FilterComponent("", cq.MATCH_ANY)], InvalidRequestError, "Unexpected empty filter component entity type"),
        (
            [cq.FilterComponent("group", cq.MATCH_ANY)],
            UnsupportedVersionError,
            "Custom entity type 'group' not supported",
        ),
    ],
)
def test_describe_bad_filter(zk, components, error, message):
    with pytest.raises(error) as raised:
        cq.describe_client_quotas(zk, components, False)
    assert raised.value.message == message


def test_alter_writes_what_configs_writes(zk, zk_tree):
    entity = {cq.USER: "CN=a b", cq.CLIENT_ID: None}
    results = cq.alter_client_quotas(
        zk, [cq.QuotaAlteration(entity, (("producer_byte_rate", 1024.0), ("request_percentage", 12.5)))], False
    )
    assert results == [(entity, None)]
    assert json.loads(zk.get("/config/users/CN%3Da%20b/clients/<default>")[0]) == {
        "version": 1,
        "config": {"request_percentage": "12.5", "producer_byte_rate": "1024"},
    }
    changes = sorted(zk.get_children("/config/changes"))
    assert json.loads(zk.get("/config/changes/" + changes[-1])[0]) == {
        "version": 2,
        "entity_path": "users/CN%3Da%20b/clients/<default>",
    }
    removed = cq.alter_client_quotas(zk, [cq.QuotaAlteration(entity, (("request_percentage", None),))], False)
    assert removed == [(entity, None)]
    assert json.loads(zk.get("/config/users/CN%3Da%20b/clients/<default>")[0])["config"] == {
        "producer_byte_rate": "1024"
    }
    before = zk_tree()
    assert cq.alter_client_quotas(zk, [cq.QuotaAlteration({cq.CLIENT_ID: "x"}, (("producer_byte_rate", 1.0),))], True)
    assert zk_tree() == before  # validate_only writes nothing


@pytest.mark.parametrize(
    "entity, ops, error, message",
    [
        ({}, (("producer_byte_rate", 1.0),), InvalidRequestError, "Invalid empty client quota entity"),
        ({cq.CLIENT_ID: "c"}, (("bogus", 1.0),), InvalidRequestError, "Invalid configuration key bogus"),
        (
            {cq.CLIENT_ID: "c"},
            (("producer_byte_rate", 1.5),),
            InvalidRequestError,
            "Configuration producer_byte_rate must be a LONG value",
        ),
        ({cq.USER: "u"}, (("SCRAM-SHA-256", 1.0),), UnknownServerError, "Unexpected config type STRING"),
        (
            {"group": "g"},
            (("producer_byte_rate", 1.0),),
            InvalidRequestError,
            "Unhandled client quota entity type: group",
        ),
    ],
)
def test_alter_bad_input_changes_nothing(zk, zk_tree, entity, ops, error, message):
    before = zk_tree()
    [(_, raised)] = cq.alter_client_quotas(zk, [cq.QuotaAlteration(entity, ops)], False)
    assert isinstance(raised, error)
    assert raised.message == message
    assert zk_tree() == before


def test_broker_handlers(zk):
    """KafkaApis' DescribeClientQuotas / AlterClientQuotas handlers on wire-shaped bodies, on a real ZooKeeper."""
    import asyncio

    from kafkaops.cluster.broker.kafka_apis import KafkaApis
    from kafkaops.cluster.broker.metadata_cache import MetadataCache
    from kafkaops.cluster.protocol.messages import RequestHeader
    from kafkaops.cluster.protocol.schemas import ApiKey
    from tests.unit.test_broker_kafka_apis import FakeReplicaManager  # the handlers here never reach it

    apis = KafkaApis(0, "cluster", zk, FakeReplicaManager(), MetadataCache(), None, lambda: 0)  # type: ignore[arg-type]
    header = RequestHeader(ApiKey.METADATA, 0, 1, "admin")  # the handlers do not read the header
    alter = cq.alter_request_to_wire(
        [
            cq.QuotaAlteration({cq.USER: "u", cq.CLIENT_ID: "c"}, (("producer_byte_rate", 2048.0),)),
            cq.QuotaAlteration({cq.CLIENT_ID: "c"}, (("bogus", 1.0),)),
        ],
        False,
    )
    answer = asyncio.run(apis.handle_alter_client_quotas_request(header, alter))
    assert [(e["error_code"], e["error_message"]) for e in answer["entries"]] == [
        (0, None),
        (42, "Invalid configuration key bogus"),
    ]
    assert json.loads(zk.get("/config/users/u/clients/c")[0])["config"] == {"producer_byte_rate": "2048"}
    describe = cq.describe_request_to_wire([cq.FilterComponent(cq.USER, cq.MATCH_EXACT, "u")], False)
    answer = asyncio.run(apis.handle_describe_client_quotas_request(header, describe))
    assert answer == {
        "throttle_time_ms": 0,
        "error_code": 0,
        "error_message": None,
        "entries": [
            {
                "entity": [
                    {"entity_type": "client-id", "entity_name": "c"},
                    {"entity_type": "user", "entity_name": "u"},
                ],
                "values": [{"key": "producer_byte_rate", "value": 2048.0}],
            }
        ],
    }
    bad = cq.describe_request_to_wire([cq.FilterComponent("", cq.MATCH_ANY)], False)
    answer = asyncio.run(apis.handle_describe_client_quotas_request(header, bad))
    assert (answer["error_code"], answer["error_message"], answer["entries"]) == (
        42,
        "Unexpected empty filter component entity type",
        None,
    )
