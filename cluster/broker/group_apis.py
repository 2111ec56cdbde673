"""The membership APIs' wire side (Kafka 2.8's `KafkaApis.handleJoinGroupRequest`, `handleSyncGroupRequest`,
`handleHeartbeatRequest`, `handleLeaveGroupRequest`, `handleListGroupsRequest`, `handleDescribeGroupRequest`,
`handleDeleteGroupsRequest`): decoded bodies in, the group coordinator's answers as response bodies out,
per version as Kafka writes them.

JoinGroup and SyncGroup wait: the coordinator answers through a callback, which completes the future the
handler awaits (a request whose connection went away leaves a future nobody reads).

Versions: JoinGroup 0–7 (MEMBER_ID_REQUIRED from v4 for members without group.instance.id), SyncGroup 0–5
(v5+ must name the protocol type and name), Heartbeat 0–4, LeaveGroup 0–4 (one member before v3, whose error
goes top-level), ListGroups 0–4 (the states filter from v4), DescribeGroups 0–5 (no authorizer: authorized
operations are "not provided"), DeleteGroups 0–2.

Threads: the broker's event loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from kafkaops.cluster.broker.group_coordinator import GroupCoordinator
from kafkaops.cluster.broker.group_metadata import (
    NO_PROTOCOL,
    JoinGroupResult,
    JoinRequest,
    LeaveGroupResult,
    MemberIdentity,
    SyncGroupResult,
)
from kafkaops.cluster.common import errors
from kafkaops.cluster.protocol.schemas import NO_AUTHORIZED_OPERATIONS

Body = Mapping[str, Any]
Response = dict[str, Any]


def join_group_response(result: JoinGroupResult, version: int) -> Response:
    return {
        "throttle_time_ms": 0,
        "error_code": result.error,
        "generation_id": result.generation_id,
        "protocol_type": result.protocol_type,
        # before v7 the protocol name is not nullable: "" when there is none
        "protocol_name": result.protocol_name if version >= 7 else (result.protocol_name or NO_PROTOCOL),
        "leader": result.leader_id,
        "member_id": result.member_id,
        "members": [
            {"member_id": m.member_id, "group_instance_id": m.group_instance_id, "metadata": m.metadata}
            for m in result.members
        ],
    }


def sync_group_response(result: SyncGroupResult) -> Response:
    return {
        "throttle_time_ms": 0,
        "error_code": result.error,
        "protocol_type": result.protocol_type,
        "protocol_name": result.protocol_name,
        "assignment": result.assignment,
    }


def leave_group_response(result: LeaveGroupResult, version: int) -> Response:
    """Kafka's `LeaveGroupResponse(memberResponses, topLevelError, throttle, version)`: before v3 the first
    member error goes top-level."""
    if version <= 2:
        code = result.top_level_error
        if code == errors.NONE:
            code = next((m.error for m in result.member_responses if m.error != errors.NONE), errors.NONE)
        return {"throttle_time_ms": 0, "error_code": code, "members": []}
    return {
        "throttle_time_ms": 0,
        "error_code": result.top_level_error,
        "members": [
            {"member_id": m.member_id, "group_instance_id": m.group_instance_id, "error_code": m.error}
            for m in result.member_responses
        ],
    }


class GroupApis:
    """The handlers' bodies over one coordinator."""

    def __init__(self, coordinator: GroupCoordinator) -> None:
        self.coordinator = coordinator

    async def join_group(self, body: Body, version: int, client_id: str, client_host: str) -> Response:
        instance_id = body.get("group_instance_id")
        request = JoinRequest(
            group_id=body["group_id"],
            member_id=body["member_id"],
            group_instance_id=instance_id,
            require_known_member_id=version >= 4 and instance_id is None,
            client_id=client_id,
            client_host=client_host,
            # v0 has no rebalance timeout: the session timeout serves as it (Kafka's JoinGroupRequest)
            rebalance_timeout_ms=body["rebalance_timeout_ms"] if version >= 1 else body["session_timeout_ms"],
            session_timeout_ms=body["session_timeout_ms"],
            protocol_type=body["protocol_type"],
            protocols=[(p["name"], bytes(p["metadata"])) for p in body["protocols"]],
        )
        future: asyncio.Future[JoinGroupResult] = asyncio.get_running_loop().create_future()
        self.coordinator.handle_join_group(request, lambda result: _set(future, result))
        return join_group_response(await future, version)

    async def sync_group(self, body: Body, version: int) -> Response:
        protocol_type, protocol_name = body.get("protocol_type"), body.get("protocol_name")
        if version >= 5 and (protocol_type is None or protocol_name is None):
            # v5+ must name them (Kafka's areMandatoryProtocolTypeAndNamePresent)
            return sync_group_response(SyncGroupResult(errors.InconsistentGroupProtocolError.code))
        future: asyncio.Future[SyncGroupResult] = asyncio.get_running_loop().create_future()
        self.coordinator.handle_sync_group(
            body["group_id"],
            body["generation_id"],
            body["member_id"],
            protocol_type,
            protocol_name,
            body.get("group_instance_id"),
            {a["member_id"]: bytes(a["assignment"]) for a in body["assignments"]},
            lambda result: _set(future, result),
        )
        return sync_group_response(await future)

    def heartbeat(self, body: Body) -> Response:
        error = self.coordinator.handle_heartbeat(
            body["group_id"], body["member_id"], body.get("group_instance_id"), body["generation_id"]
        )
        return {"throttle_time_ms": 0, "error_code": error}

    def leave_group(self, body: Body, version: int) -> Response:
        if version <= 2:
            leaving = [MemberIdentity(body["member_id"])]
        else:
            leaving = [MemberIdentity(m["member_id"], m.get("group_instance_id")) for m in body["members"]]
        return leave_group_response(self.coordinator.handle_leave_group(body["group_id"], leaving), version)

    def list_groups(self, body: Body) -> Response:
        error, groups = self.coordinator.handle_list_groups(body.get("states_filter") or ())
        return {
            "throttle_time_ms": 0,
            "error_code": error,
            "groups": [
                {"group_id": g.group_id, "protocol_type": g.protocol_type, "group_state": g.state} for g in groups
            ],
        }

    def describe_groups(self, body: Body) -> Response:
        described = []
        for group_id in body["groups"]:
            error, summary = self.coordinator.handle_describe_group(group_id)
            described.append(
                {
                    "error_code": error,
                    "group_id": group_id,
                    "group_state": summary.state,
                    "protocol_type": summary.protocol_type,
                    "protocol_data": summary.protocol,
                    "members": [
                        {
                            "member_id": m.member_id,
                            "group_instance_id": m.group_instance_id,
                            "client_id": m.client_id,
                            "client_host": m.client_host,
                            "member_metadata": m.metadata,
                            "member_assignment": m.assignment,
                        }
                        for m in summary.members
                    ],
                    "authorized_operations": NO_AUTHORIZED_OPERATIONS,
                }
            )
        return {"throttle_time_ms": 0, "groups": described}

    async def delete_groups(self, body: Body) -> Response:
        names = list(dict.fromkeys(body["groups_names"]))  # Kafka: distinct, in order
        results = await self.coordinator.handle_delete_groups(names)
        return {
            "throttle_time_ms": 0,
            "results": [{"group_id": name, "error_code": results[name]} for name in names],
        }


def _set(future: asyncio.Future[Any], result: Any) -> None:
    if not future.done():
        future.set_result(result)
