"""The membership APIs through the wire codec, every version: request bodies encoded as a client would,
decoded, handled by the group coordinator, the answers encoded at the request's version and read back."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kafkaops.cluster.broker.group_apis import GroupApis
from kafkaops.cluster.broker.group_coordinator import GroupConfig, GroupCoordinator
from kafkaops.cluster.common import errors
from kafkaops.cluster.protocol.schemas import NO_AUTHORIZED_OPERATIONS, REQUESTS, RESPONSES, ApiKey
from tests.unit.group_fakes import FakeGroupManager, ManualScheduler
from tests.unit.test_group_coordinator import subscription


def wire(key: ApiKey, version: int, body: dict[str, Any]) -> dict[str, Any]:
    """A request body as the broker decodes it after a client encoded it."""
    return REQUESTS[key].decode(REQUESTS[key].encode(body, version), version)


def answer(key: ApiKey, version: int, body: dict[str, Any]) -> dict[str, Any]:
    """A response body as a client reads it."""
    return RESPONSES[key].decode(RESPONSES[key].encode(body, version), version)


def setup() -> tuple[GroupApis, ManualScheduler, FakeGroupManager]:
    clock, manager = ManualScheduler(), FakeGroupManager()
    coordinator = GroupCoordinator(0, GroupConfig(group_initial_rebalance_delay_ms=0), manager, clock, manager.spawn)
    coordinator.startup()
    return GroupApis(coordinator), clock, manager


async def join(
    apis: GroupApis, clock: ManualScheduler, version: int, member_id: str = "", instance: str | None = None
) -> dict[str, Any]:
    body = {
        "group_id": "g",
        "session_timeout_ms": 10_000,
        "rebalance_timeout_ms": 20_000,
        "member_id": member_id,
        "group_instance_id": instance,
        "protocol_type": "consumer",
        "protocols": [{"name": "range", "metadata": subscription("t")}],
    }
    task = asyncio.ensure_future(
        apis.join_group(wire(ApiKey.JOIN_GROUP, version, body), version, "client", "/127.0.0.1")
    )
    await asyncio.sleep(0)
    clock.advance(0)
    return answer(ApiKey.JOIN_GROUP, version, await task)


@pytest.mark.parametrize("version", range(8))
def test_join_sync_heartbeat_leave_at_every_join_version(version: int) -> None:
    async def scenario() -> None:
        apis, clock, manager = setup()
        joined = await join(apis, clock, version)
        if version >= 4:
            assert joined["error_code"] == errors.MemberIdRequiredError.code
            assert joined["member_id"].startswith("client-")
            joined = await join(apis, clock, version, joined["member_id"])
        assert joined["error_code"] == errors.NONE and joined["generation_id"] == 1
        assert joined["leader"] == joined["member_id"] and joined["protocol_name"] == "range"
        assert [m["member_id"] for m in joined["members"]] == [joined["member_id"]]
        if version >= 7:
            assert joined["protocol_type"] == "consumer"
        member_id = joined["member_id"]
        sync_version = min(version, 5)
        sync = {
            "group_id": "g",
            "generation_id": 1,
            "member_id": member_id,
            "group_instance_id": None,
            "protocol_type": "consumer",
            "protocol_name": "range",
            "assignments": [{"member_id": member_id, "assignment": b"mine"}],
        }
        synced = answer(
            ApiKey.SYNC_GROUP,
            sync_version,
            await apis.sync_group(wire(ApiKey.SYNC_GROUP, sync_version, sync), sync_version),
        )
        assert (synced["error_code"], synced["assignment"]) == (errors.NONE, b"mine")
        hb_version = min(version, 4)
        beat = {"group_id": "g", "generation_id": 1, "member_id": member_id, "group_instance_id": None}
        assert (
            answer(ApiKey.HEARTBEAT, hb_version, apis.heartbeat(wire(ApiKey.HEARTBEAT, hb_version, beat)))["error_code"]
            == 0
        )
        leave_version = min(version, 4)
        leave = {
            "group_id": "g",
            "member_id": member_id,
            "members": [{"member_id": member_id, "group_instance_id": None}],
        }
        left = answer(
            ApiKey.LEAVE_GROUP,
            leave_version,
            apis.leave_group(wire(ApiKey.LEAVE_GROUP, leave_version, leave), leave_version),
        )
        assert left["error_code"] == errors.NONE
        assert manager.stored[-1][1]["members"] == []

    asyncio.run(scenario())


def test_a_v5_sync_must_name_its_protocol() -> None:
    async def scenario() -> None:
        apis, _, _ = setup()
        body = {
            "group_id": "g",
            "generation_id": 1,
            "member_id": "m",
            "group_instance_id": None,
            "protocol_type": None,
            "protocol_name": None,
            "assignments": [],
        }
        response = await apis.sync_group(wire(ApiKey.SYNC_GROUP, 5, body), 5)
        assert response["error_code"] == errors.InconsistentGroupProtocolError.code

    asyncio.run(scenario())


@pytest.mark.parametrize("version", range(5))
def test_leave_errors_go_top_level_before_v3(version: int) -> None:
    apis, _, _ = setup()
    body = {
        "group_id": "g",
        "member_id": "nobody",
        "members": [{"member_id": "nobody", "group_instance_id": None}, {"member_id": "x", "group_instance_id": None}],
    }
    left = answer(ApiKey.LEAVE_GROUP, version, apis.leave_group(wire(ApiKey.LEAVE_GROUP, version, body), version))
    if version < 3:
        assert left["error_code"] == errors.UnknownMemberIdError.code
    else:
        assert left["error_code"] == errors.NONE
        assert [m["error_code"] for m in left["members"]] == [errors.UnknownMemberIdError.code] * 2


@pytest.mark.parametrize("version", range(6))
def test_describe_and_list_and_delete_at_every_version(version: int) -> None:
    async def scenario() -> None:
        apis, clock, _ = setup()
        joined = await join(apis, clock, 3)
        member_id = joined["member_id"]
        sync = {
            "group_id": "g",
            "generation_id": 1,
            "member_id": member_id,
            "assignments": [{"member_id": member_id, "assignment": b"a"}],
        }
        await apis.sync_group(wire(ApiKey.SYNC_GROUP, 0, sync), 0)
        body = {"groups": ["g", "unknown"], "include_authorized_operations": True}
        described = answer(
            ApiKey.DESCRIBE_GROUPS, version, apis.describe_groups(wire(ApiKey.DESCRIBE_GROUPS, version, body))
        )
        group, unknown = described["groups"]
        assert (group["group_state"], group["protocol_type"], group["protocol_data"]) == ("Stable", "consumer", "range")
        member = group["members"][0]
        assert (member["member_id"], member["client_id"], member["client_host"]) == (member_id, "client", "/127.0.0.1")
        assert member["member_assignment"] == b"a" and member["member_metadata"] == subscription("t")
        assert (unknown["error_code"], unknown["group_state"], unknown["members"]) == (0, "Dead", [])
        if version >= 3:
            assert group["authorized_operations"] == NO_AUTHORIZED_OPERATIONS
        list_version = min(version, 4)
        listed = answer(
            ApiKey.LIST_GROUPS,
            list_version,
            apis.list_groups(wire(ApiKey.LIST_GROUPS, list_version, {"states_filter": []})),
        )
        assert [(g["group_id"], g["protocol_type"]) for g in listed["groups"]] == [("g", "consumer")]
        if list_version >= 4:
            assert listed["groups"][0]["group_state"] == "Stable"
            empty_only = apis.list_groups(wire(ApiKey.LIST_GROUPS, 4, {"states_filter": ["Empty"]}))
            assert empty_only["groups"] == []
        delete_version = min(version, 2)
        deleted = answer(
            ApiKey.DELETE_GROUPS,
            delete_version,
            await apis.delete_groups(wire(ApiKey.DELETE_GROUPS, delete_version, {"groups_names": ["g", "x", "g"]})),
        )
        assert [(r["group_id"], r["error_code"]) for r in deleted["results"]] == [
            ("g", errors.NonEmptyGroupError.code),
            ("x", errors.GroupIdNotFoundError.code),
        ]

    asyncio.run(scenario())
