"""Consumer-group calls of Kafka's Admin API over a `KafkaClient` (Kafka's `KafkaAdminClient`):
listConsumerGroups, describeConsumerGroups, listConsumerGroupOffsets, alterConsumerGroupOffsets,
deleteConsumerGroups, deleteConsumerGroupOffsets, and findCoordinator under them.

    FindCoordinator (key type group) to any broker, then the call to the group's coordinator;
    COORDINATOR_LOAD_IN_PROGRESS / COORDINATOR_NOT_AVAILABLE / NOT_COORDINATOR (and an unreachable
    coordinator) are retried, with the coordinator found again, until the call's deadline, as
    `KafkaAdminClient.handleGroupRequestError` and `rescheduleFindCoordinatorTask` do.
    ListGroups goes to every live broker (each answers the groups it coordinates).

Only the standard protocol, versions negotiated. Every call takes `timeout_ms` (the tools' `--timeout`),
raises the Kafka error of the answer (`admin_calls.broker_error`: Kafka's text), RequestTimedOutError when
retriable errors outlast the deadline; nothing here prints. Clocks and sleeps are injected.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kafkaops.admin.kafka_client.admin_calls import broker_error
from kafkaops.admin.kafka_client.client import KafkaClient
from kafkaops.admin.kafka_client.connection import NotSent
from kafkaops.admin.kafka_client.consumer_protocol import PROTOCOL_TYPE, decode_assignment
from kafkaops.admin.kafka_client.metadata import BrokerNode
from kafkaops.cluster.common.errors import (
    BrokerError,
    CoordinatorLoadInProgressError,
    CoordinatorNotAvailableError,
    InvalidArgumentError,
    NetworkExceptionError,
    NotCoordinatorError,
    RequestTimedOutError,
)
from kafkaops.cluster.protocol.schemas import ApiKey
from kafkaops.cluster.zk.values import TopicPartition

GROUP_KEY_TYPE = 0
"""FindCoordinator's key type of a group (1 is a transactional id)."""

_RETRY_WITH_COORDINATOR = (CoordinatorLoadInProgressError, CoordinatorNotAvailableError, NotCoordinatorError)


@dataclass(frozen=True, slots=True)
class GroupListing:
    """Kafka's `ConsumerGroupListing`: `state` is None when the broker did not say (ListGroups < v4)."""

    group_id: str
    is_simple: bool
    state: str | None = None


@dataclass(frozen=True, slots=True)
class MemberDescription:
    member_id: str
    group_instance_id: str | None
    client_id: str
    host: str
    assignment: tuple[TopicPartition, ...]


@dataclass(frozen=True, slots=True)
class GroupDescription:
    """Kafka's `ConsumerGroupDescription`: `partition_assignor` is the protocol the group chose."""

    group_id: str
    is_simple: bool
    members: tuple[MemberDescription, ...]
    partition_assignor: str
    state: str
    coordinator: BrokerNode


@dataclass(frozen=True, slots=True)
class OffsetAndMetadata:
    offset: int
    leader_epoch: int = -1
    metadata: str = ""


class _Deadline:
    def __init__(self, timeout_ms: int, clock: Callable[[], float], sleep: Callable[[float], None]) -> None:
        self.timeout_ms, self._clock, self._sleep = timeout_ms, clock, sleep
        self._end = clock() + timeout_ms / 1000
        self.tries = 0

    def backoff(self, client: KafkaClient, call: str, cause: BaseException) -> None:
        """Wait `retry.backoff.ms` before the next try, or raise RequestTimedOutError past the deadline."""
        self.tries += 1
        pause = client.retry_backoff_ms / 1000
        if self._clock() + pause > self._end:
            # Kafka's admin TimeoutException, which has no error code of its own
            raise RequestTimedOutError(
                f"Call(callName={call}) timed out after {self.tries} attempt(s): {cause}", named=False
            ) from None
        self._sleep(pause)


def find_coordinator(
    client: KafkaClient,
    group_id: str,
    timeout_ms: int,
    *,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> BrokerNode:
    """The broker coordinating `group_id`. Raises the answer's non-retriable error, RequestTimedOutError."""
    deadline = _Deadline(timeout_ms, clock, sleep)
    while True:
        try:
            return _find_once(client, group_id)
        except (*_RETRY_WITH_COORDINATOR, NetworkExceptionError, RequestTimedOutError) as error:
            deadline.backoff(client, "findCoordinator", error)


def _find_once(client: KafkaClient, group_id: str) -> BrokerNode:
    try:
        _, answer = client.controller_request(ApiKey.FIND_COORDINATOR, {"key": group_id, "key_type": GROUP_KEY_TYPE})
    except NotSent as unsent:
        raise unsent.error from None
    if answer["error_code"]:
        raise broker_error(answer["error_code"], answer.get("error_message"))
    return BrokerNode(answer["node_id"], answer["host"], answer["port"])


def _group_error(code: int) -> BrokerError | None:
    return broker_error(code) if code else None


def coordinator_call(
    client: KafkaClient,
    group_id: str,
    call: str,
    api_key: ApiKey,
    body: Mapping[str, Any],
    error_of: Callable[[Mapping[str, Any]], int],
    timeout_ms: int,
    *,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> tuple[BrokerNode, dict[str, Any]]:
    """Send `body` to the group's coordinator until its answer's group error (`error_of`) is not one that
    asks to wait or find the coordinator again: (the coordinator, the answer). Other group errors are the
    caller's to read; an unreachable coordinator is looked up again."""
    deadline = _Deadline(timeout_ms, clock, sleep)
    while True:
        try:
            coordinator = _find_once(client, group_id)
            _, answer = client.broker_request(coordinator.node_id, api_key, body)
            error = _group_error(error_of(answer))
            if not isinstance(error, _RETRY_WITH_COORDINATOR):
                return coordinator, answer
        except NotSent as unsent:
            error = unsent.error
        except (*_RETRY_WITH_COORDINATOR, NetworkExceptionError, RequestTimedOutError) as caught:
            error = caught
        deadline.backoff(client, call, error)


# --- listConsumerGroups -------------------------------------------------------------------------------


def list_consumer_groups(client: KafkaClient, states: Iterable[str] = ()) -> list[GroupListing]:
    """Every consumer group (protocol type "consumer" or none) of every live broker, in the brokers' order;
    `states` (Kafka's names, e.g. Stable) filters on the brokers (ListGroups v4). Raises the first broker
    error, NetworkExceptionError when a broker cannot be reached."""
    wanted = list(states)
    listings: dict[str, GroupListing] = {}
    for broker_id in sorted(client.metadata([]).brokers):
        try:
            version, answer = client.broker_request(broker_id, ApiKey.LIST_GROUPS, {"states_filter": wanted})
        except NotSent as unsent:
            raise unsent.error from None
        if answer["error_code"]:
            raise broker_error(answer["error_code"])
        for group in answer["groups"]:
            if group["protocol_type"] not in (PROTOCOL_TYPE, ""):
                continue
            state = group.get("group_state") if version >= 4 else None
            listings[group["group_id"]] = GroupListing(group["group_id"], group["protocol_type"] == "", state)
    return list(listings.values())


# --- describeConsumerGroups ------------------------------------------------------------------------------


def _described_group(group: Mapping[str, Any], coordinator: BrokerNode) -> GroupDescription:
    protocol_type = group["protocol_type"]
    if protocol_type not in (PROTOCOL_TYPE, ""):
        raise InvalidArgumentError(f"GroupId {group['group_id']} is not a consumer group ({protocol_type}).")
    members = tuple(
        MemberDescription(
            member["member_id"],
            member.get("group_instance_id"),
            member["client_id"],
            member["client_host"],
            decode_assignment(member["member_assignment"]).partitions if member["member_assignment"] else (),
        )
        for member in group["members"]
    )
    return GroupDescription(
        group["group_id"], protocol_type == "", members, group["protocol_data"], group["group_state"], coordinator
    )


def describe_consumer_group(
    client: KafkaClient,
    group_id: str,
    timeout_ms: int,
    *,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> GroupDescription:
    """One group as its coordinator describes it (state "Dead" for a group it does not know). Raises the
    group's error, InvalidArgumentError for a group of another protocol type (Connect's, say)."""
    coordinator, answer = coordinator_call(
        client,
        group_id,
        "describeConsumerGroups",
        ApiKey.DESCRIBE_GROUPS,
        {"groups": [group_id], "include_authorized_operations": False},
        lambda a: int(a["groups"][0]["error_code"]) if a["groups"] else 0,
        timeout_ms,
        clock=clock,
        sleep=sleep,
    )
    for group in answer["groups"]:
        if group["group_id"] == group_id:
            if group["error_code"]:
                raise broker_error(group["error_code"])
            return _described_group(group, coordinator)
    raise NetworkExceptionError(f"The coordinator's DescribeGroups answer did not mention {group_id}")


# --- offsets -------------------------------------------------------------------------------------------


def _top_error(answer: Mapping[str, Any]) -> int:
    return int(answer.get("error_code", 0))


def list_consumer_group_offsets(
    client: KafkaClient,
    group_id: str,
    timeout_ms: int,
    *,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> dict[TopicPartition, OffsetAndMetadata]:
    """The group's committed offsets (OffsetFetch of all partitions); partitions without one are left out,
    those answering an error skipped, as Kafka's client does. Raises the group-level error."""
    _, answer = coordinator_call(
        client,
        group_id,
        "listConsumerGroupOffsets",
        ApiKey.OFFSET_FETCH,
        {"group_id": group_id, "topics": None, "require_stable": False},
        _top_error,
        timeout_ms,
        clock=clock,
        sleep=sleep,
    )
    if answer.get("error_code"):
        raise broker_error(answer["error_code"])
    found: dict[TopicPartition, OffsetAndMetadata] = {}
    for topic in answer["topics"]:
        for p in topic["partitions"]:
            if p["error_code"] == 0 and p["committed_offset"] >= 0:
                found[TopicPartition(topic["name"], p["partition_index"])] = OffsetAndMetadata(
                    p["committed_offset"], p.get("committed_leader_epoch", -1), p.get("metadata") or ""
                )
    return found


def _by_topic(partitions: Iterable[TopicPartition]) -> dict[str, list[int]]:
    grouped: dict[str, list[int]] = {}
    for tp in partitions:
        grouped.setdefault(tp.topic, []).append(tp.partition)
    return grouped


def alter_consumer_group_offsets(
    client: KafkaClient,
    group_id: str,
    offsets: Mapping[TopicPartition, int],
    timeout_ms: int,
    *,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> None:
    """Commit `offsets` for the group as an admin (generation -1, no member id): the coordinator accepts it
    only while the group has no members. Raises the first partition's error (UNKNOWN_MEMBER_ID for an
    active group), or the group's."""
    by_topic = _by_topic(offsets)
    body = {
        "group_id": group_id,
        "generation_id": -1,
        "member_id": "",
        "group_instance_id": None,
        "retention_time_ms": -1,
        "topics": [
            {
                "name": topic,
                "partitions": [
                    {
                        "partition_index": p,
                        "committed_offset": offsets[TopicPartition(topic, p)],
                        "committed_leader_epoch": -1,
                        "commit_timestamp": -1,
                        "committed_metadata": "",
                    }
                    for p in ids
                ],
            }
            for topic, ids in by_topic.items()
        ],
    }

    def first_error(answer: Mapping[str, Any]) -> int:
        codes = [p["error_code"] for t in answer["topics"] for p in t["partitions"] if p["error_code"]]
        return int(codes[0]) if codes else 0

    _, answer = coordinator_call(
        client,
        group_id,
        "alterConsumerGroupOffsets",
        ApiKey.OFFSET_COMMIT,
        body,
        first_error,
        timeout_ms,
        clock=clock,
        sleep=sleep,
    )
    code = first_error(answer)
    if code:
        raise broker_error(code)


def delete_consumer_groups(
    client: KafkaClient,
    group_ids: Sequence[str],
    timeout_ms: int,
    *,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> dict[str, BrokerError | None]:
    """Delete each group at its coordinator: per group None, or the error it answered (NON_EMPTY_GROUP for
    a group with members, GROUP_ID_NOT_FOUND, ...), in the order asked. Errors of the coordinator lookup
    (a timeout) are that group's result too, as Kafka's per-group futures carry them."""
    results: dict[str, BrokerError | None] = {}
    for group_id in group_ids:

        def group_code(answer: Mapping[str, Any], group_id: str = group_id) -> int:
            return next((int(r["error_code"]) for r in answer["results"] if r["group_id"] == group_id), 0)

        try:
            _, answer = coordinator_call(
                client,
                group_id,
                "deleteConsumerGroups",
                ApiKey.DELETE_GROUPS,
                {"groups_names": [group_id]},
                group_code,
                timeout_ms,
                clock=clock,
                sleep=sleep,
            )
        except BrokerError as error:
            results[group_id] = error
            continue
        results[group_id] = _group_error(group_code(answer))
    return results


@dataclass(frozen=True, slots=True)
class DeleteOffsetsResult:
    """OffsetDelete's answer: the group-level error code and each partition's."""

    error_code: int
    partitions: Mapping[TopicPartition, int]


def delete_consumer_group_offsets(
    client: KafkaClient,
    group_id: str,
    partitions: Iterable[TopicPartition],
    timeout_ms: int,
    *,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> DeleteOffsetsResult:
    """OffsetDelete of `partitions` for the group (refused per partition with GROUP_SUBSCRIBED_TO_TOPIC
    while a member subscribes to the topic, at the group level with GROUP_ID_NOT_FOUND, ...)."""
    body = {
        "group_id": group_id,
        "topics": [
            {"name": topic, "partitions": [{"partition_index": p} for p in ids]}
            for topic, ids in _by_topic(partitions).items()
        ],
    }
    _, answer = coordinator_call(
        client,
        group_id,
        "deleteConsumerGroupOffsets",
        ApiKey.OFFSET_DELETE,
        body,
        _top_error,
        timeout_ms,
        clock=clock,
        sleep=sleep,
    )
    return DeleteOffsetsResult(
        int(answer["error_code"]),
        {
            TopicPartition(t["name"], p["partition_index"]): int(p["error_code"])
            for t in answer["topics"]
            for p in t["partitions"]
        },
    )
