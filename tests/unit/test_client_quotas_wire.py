"""DescribeClientQuotas / AlterClientQuotas bodies ↔ the admin library's values, both ways (the broker
reads requests and writes responses with them, the client the other way round)."""

from __future__ import annotations

from kafkaops.admin import client_quotas as cq
from kafkaops.cluster.common.errors import InvalidRequestError, UnknownServerError, ZNodeVersionConflictError


def test_describe_request_both_ways() -> None:
    components = [cq.FilterComponent(cq.USER, cq.MATCH_EXACT, "u"), cq.FilterComponent(cq.CLIENT_ID, cq.MATCH_ANY)]
    body = cq.describe_request_to_wire(components, True)
    assert body == {
        "components": [
            {"entity_type": "user", "match_type": 0, "match": "u"},
            {"entity_type": "client-id", "match_type": 2, "match": None},
        ],
        "strict": True,
    }
    assert cq.describe_request_from_wire(body) == (components, True)


def test_describe_response_both_ways() -> None:
    entries = [({cq.USER: "u", cq.CLIENT_ID: None}, {"producer_byte_rate": 1024.0})]
    body = cq.describe_response_to_wire(entries)
    # the entity's types in Kafka's java.util.HashMap order
    assert body["entries"][0]["entity"] == [
        {"entity_type": "client-id", "entity_name": None},
        {"entity_type": "user", "entity_name": "u"},
    ]
    assert (body["error_code"], body["error_message"]) == (0, None)
    assert cq.describe_response_from_wire(body) == entries


def test_describe_error_response() -> None:
    body = cq.describe_response_to_wire(None, InvalidRequestError("Duplicate user filter component entity type"))
    assert body == {
        "throttle_time_ms": 0,
        "error_code": 42,
        "error_message": "Duplicate user filter component entity type",
        "entries": None,
    }
    try:
        cq.describe_response_from_wire(body)
    except InvalidRequestError as error:
        assert error.message == "Duplicate user filter component entity type"
    else:
        raise AssertionError("the response's error was not raised")


def test_alter_both_ways() -> None:
    alterations = [
        cq.QuotaAlteration({cq.CLIENT_ID: "c"}, (("producer_byte_rate", 10.0), ("request_percentage", None)))
    ]
    body = cq.alter_request_to_wire(alterations, False)
    assert body["entries"][0]["ops"] == [
        {"key": "producer_byte_rate", "value": 10.0, "remove": False},
        {"key": "request_percentage", "value": 0.0, "remove": True},
    ]
    assert cq.alter_request_from_wire(body) == (alterations, False)
    results = [
        ({cq.CLIENT_ID: "c"}, None),
        ({cq.USER: None}, InvalidRequestError("Invalid configuration key x")),
        ({cq.USER: "u"}, ZNodeVersionConflictError("changed while it was being updated")),
    ]
    response = cq.alter_response_to_wire(results)
    assert [(e["error_code"], e["error_message"]) for e in response["entries"]] == [
        (0, None),
        (42, "Invalid configuration key x"),
        (UnknownServerError.code, "changed while it was being updated"),
    ]
    back = cq.alter_response_from_wire(response)
    assert [entity for entity, _ in back] == [entity for entity, _ in results]
    assert back[0][1] is None
    assert isinstance(back[1][1], InvalidRequestError)
