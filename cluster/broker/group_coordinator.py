"""The group coordinator in every broker (Kafka 2.8's `GroupCoordinator`): group membership for the
groups whose `__consumer_offsets` partition this broker leads.

JoinGroup, SyncGroup, Heartbeat, LeaveGroup, ListGroups, DescribeGroups, DeleteGroups follow Kafka's
`handle*` methods, their state transitions and their error choices; OffsetCommit's generation fencing is
`validate_commit`. The assignment itself stays with the clients: the leader's SyncGroup carries every
member's assignment and the coordinator only relays it (range, round-robin, sticky, cooperative-sticky
alike).

Storage is the GroupMetadataManager's (`GroupManager` below, the offsets slice's `__consumer_offsets`):
the coordinator persists a group when a rebalance completes (the leader's SyncGroup, CompletingRebalance
-> Stable, as Kafka's `storeGroup`) and when a rebalance empties it, and rebuilds a group from its record
when the manager loads a partition (`on_group_loaded`; its members then expire by session timeout unless
they heartbeat, as in Kafka).

Answers that wait (JoinGroup until the join phase ends, SyncGroup until the leader's assignment is
stored) go through callbacks, as in Kafka; `kafka_apis` turns them into futures.

Threads: the broker's event loop only; the delayed operations' timers run there too.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from kafkaops.cluster.broker.config import BrokerConfig
from kafkaops.cluster.broker.group_delayed_operations import (
    DelayedHeartbeat,
    DelayedJoin,
    InitialDelayedJoin,
    Scheduler,
)
from kafkaops.cluster.broker.group_metadata import (
    CONSUMER_PROTOCOL_TYPE,
    DEAD_GROUP,
    EMPTY_GROUP,
    NO_PROTOCOL_TYPE,
    OFFSETS_ONLY_GROUP,
    UNKNOWN_MEMBER_ID,
    GroupMetadata,
    GroupOverview,
    GroupState,
    GroupSummary,
    IllegalStateError,
    JoinCallback,
    JoinGroupResult,
    JoinRequest,
    LeaveGroupResult,
    LeaveMemberResponse,
    MemberIdentity,
    MemberMetadata,
    Protocols,
    SyncCallback,
    SyncGroupResult,
)
from kafkaops.cluster.common import errors
from kafkaops.cluster.protocol.schemas import ApiKey
from kafkaops.cluster.zk.values import TopicPartition

log = logging.getLogger("kafkaops.broker.group_coordinator")

NEW_MEMBER_JOIN_TIMEOUT_MS = 5 * 60 * 1000
"""Kafka's `NewMemberJoinTimeoutMs`: how long a new member's first JoinGroup may wait."""

Empty, PreparingRebalance, CompletingRebalance, Stable, Dead = (
    GroupState.EMPTY,
    GroupState.PREPARING_REBALANCE,
    GroupState.COMPLETING_REBALANCE,
    GroupState.STABLE,
    GroupState.DEAD,
)

# the APIs that accept an empty group id (Kafka's isValidGroupId: old offset-commit clients, and so that
# users can see and delete that group)
_EMPTY_GROUP_ID_APIS = frozenset(
    {ApiKey.OFFSET_COMMIT, ApiKey.OFFSET_FETCH, ApiKey.DESCRIBE_GROUPS, ApiKey.DELETE_GROUPS}
)


@dataclass(frozen=True, slots=True)
class GroupConfig:
    """Kafka's `GroupConfig`: the broker's group.* settings."""

    group_min_session_timeout_ms: int = 6000
    group_max_session_timeout_ms: int = 1800000
    group_max_size: int = 2**31 - 1
    group_initial_rebalance_delay_ms: int = 3000

    @classmethod
    def from_broker_config(cls, config: BrokerConfig) -> GroupConfig:
        return cls(
            config.group_min_session_timeout_ms,
            config.group_max_session_timeout_ms,
            config.group_max_size,
            config.group_initial_rebalance_delay_ms,
        )


class GroupManager(Protocol):
    """The part of the GroupMetadataManager (`__consumer_offsets`) the coordinator uses; the coordinator
    sets the manager's callbacks (`on_group_loaded`, ...) in `startup`."""

    def partition_for(self, group_id: str) -> int:
        """The `__consumer_offsets` partition of `group_id`."""

    def is_group_local(self, group_id: str) -> bool:
        """Whether this broker leads the group's partition and has loaded it."""

    def is_group_loading(self, group_id: str) -> bool:
        """Whether the group's partition is being loaded."""

    def store_group(self, group_id: str, value: dict[str, Any]) -> Awaitable[Any]:
        """Append the group's GroupMetadataValue; resolves to an error code (or error), NONE when stored."""

    def delete_group(self, group_id: str) -> Awaitable[Any]:
        """Write the group's tombstones (metadata and offsets); resolves to the number of offsets removed
        (Kafka's cleanupGroupMetadata: the deletion itself is not refused)."""

    def get_offsets(self, group_id: str, partitions: Any) -> Any:
        """The group's committed offsets (None: all)."""

    def current_groups(self) -> list[str]:
        """The groups it holds records of (offsets or metadata)."""

    def group_not_exists(self, group_id: str) -> bool:
        """Kafka's `groupNotExists`: the group's partition is here and loaded, the group is not in it."""


def error_code(error: Any) -> int:
    """An error as the manager may give it (None, a code, a BrokerError class or instance) as a code."""
    if error is None:
        return errors.NONE
    if isinstance(error, int):
        return error
    code = getattr(error, "code", None)
    return code if isinstance(code, int) else errors.UnknownServerError.code


def _spawn_on_loop(coroutine: Coroutine[Any, Any, None]) -> None:
    task = asyncio.get_running_loop().create_task(coroutine)
    _TASKS.add(task)
    task.add_done_callback(_TASKS.discard)


_TASKS: set[asyncio.Task[None]] = set()


class GroupCoordinator:
    """Kafka's `GroupCoordinator` for one broker. `spawn` runs the storage coroutines (the loop's tasks in
    the broker; tests may run them at once)."""

    def __init__(
        self,
        broker_id: int,
        config: GroupConfig,
        manager: GroupManager,
        scheduler: Scheduler,
        spawn: Callable[[Coroutine[Any, Any, None]], None] = _spawn_on_loop,
    ) -> None:
        self.broker_id = broker_id
        self.config = config
        self.manager = manager
        self.scheduler = scheduler
        self._spawn = spawn
        self.groups: dict[str, GroupMetadata] = {}
        self._joins: dict[str, DelayedJoin] = {}
        self._heartbeats: dict[tuple[str, str], DelayedHeartbeat] = {}
        self.is_active = False

    # --- life cycle -----------------------------------------------------------------------------------

    def startup(self) -> None:
        """Plug the coordinator's callbacks into the manager and start answering."""
        manager: Any = self.manager
        manager.on_group_loaded = self.on_group_loaded
        manager.on_group_unloaded = self.on_group_unloaded
        manager.group_is_empty_or_absent = self.group_is_empty_or_absent
        manager.validate_commit = self.validate_commit
        manager.offset_delete_check = self.offset_delete_check
        self.is_active = True
        log.info("[GroupCoordinator %s]: Startup complete.", self.broker_id)

    def shutdown(self) -> None:
        self.is_active = False
        for operation in self._joins.values():
            operation.cancel()
        for heartbeat in self._heartbeats.values():
            heartbeat.cancel()
        self._joins.clear()
        self._heartbeats.clear()

    # --- checks ---------------------------------------------------------------------------------------

    def validate_group_status(self, group_id: str | None, api: ApiKey) -> int | None:
        """Kafka's `validateGroupStatus`: the error for a group this coordinator cannot serve, or None."""
        if group_id is None or (not group_id and api not in _EMPTY_GROUP_ID_APIS):
            return errors.InvalidGroupIdError.code
        if not self.is_active:
            return errors.CoordinatorNotAvailableError.code
        if self.manager.is_group_loading(group_id):
            return errors.CoordinatorLoadInProgressError.code
        if not self.manager.is_group_local(group_id):
            if group_id in self.groups:
                # its partition moved before the group was ever stored (the manager unloads the groups it
                # knows): whoever waits in it hears NOT_COORDINATOR now
                self.on_group_unloaded(group_id)
            return errors.NotCoordinatorError.code
        return None

    def _accept_joining_member(self, group: GroupMetadata, member_id: str) -> bool:
        """Kafka's `acceptJoiningMember`: group.max.size counts the members awaiting a join while
        rebalancing (so the last to rejoin are the ones turned away), the members otherwise."""
        max_size = self.config.group_max_size
        match group.state:
            case GroupState.EMPTY | GroupState.DEAD:
                return True
            case GroupState.PREPARING_REBALANCE:
                return (
                    group.has(member_id) and group.get(member_id).is_awaiting_join
                ) or group.num_members_awaiting_join < max_size
            case GroupState.COMPLETING_REBALANCE | GroupState.STABLE:
                return group.has(member_id) or group.size < max_size

    # --- JoinGroup ------------------------------------------------------------------------------------

    def handle_join_group(self, request: JoinRequest, callback: JoinCallback) -> None:
        error = self.validate_group_status(request.group_id, ApiKey.JOIN_GROUP)
        if error is not None:
            callback(JoinGroupResult(request.member_id, error))
            return
        config = self.config
        timeout_ms = request.session_timeout_ms
        if not config.group_min_session_timeout_ms <= timeout_ms <= config.group_max_session_timeout_ms:
            callback(JoinGroupResult(request.member_id, errors.InvalidSessionTimeoutError.code))
            return
        is_unknown_member = request.member_id == UNKNOWN_MEMBER_ID
        group = self.groups.get(request.group_id)
        if group is None:
            if not is_unknown_member:
                callback(JoinGroupResult(request.member_id, errors.UnknownMemberIdError.code))
                return
            group = self.groups[request.group_id] = GroupMetadata(request.group_id, Empty, self.scheduler.now_ms)
        if not self._accept_joining_member(group, request.member_id):
            group.remove(request.member_id)
            callback(JoinGroupResult(UNKNOWN_MEMBER_ID, errors.GroupMaxSizeReachedError.code))
        elif is_unknown_member:
            self._do_unknown_join_group(group, request, callback)
        else:
            self._do_join_group(group, request, callback)
        if group.is_(PreparingRebalance):
            self._check_join(group)
        self._forget_if_unused(group)

    def _forget_if_unused(self, group: GroupMetadata) -> None:
        """A group a failed first JoinGroup created and left without members is not kept (Kafka keeps it
        Empty until its offsets expire; it has none)."""
        unused = group.is_(Empty) and not group.members and group.generation_id == 0 and not group.pending_members
        if unused and self.groups.get(group.group_id) is group:
            del self.groups[group.group_id]

    def _do_unknown_join_group(self, group: GroupMetadata, request: JoinRequest, callback: JoinCallback) -> None:
        instance_id = request.group_instance_id
        if group.is_(Dead):
            callback(JoinGroupResult(UNKNOWN_MEMBER_ID, errors.CoordinatorNotAvailableError.code))
        elif not group.supports_protocols(request.protocol_type, request.protocol_names()):
            callback(JoinGroupResult(UNKNOWN_MEMBER_ID, errors.InconsistentGroupProtocolError.code))
        else:
            new_member_id = group.generate_member_id(request.client_id, instance_id)
            if instance_id is not None and group.has_static_member(instance_id):
                self._update_static_member_and_rebalance(group, new_member_id, instance_id, request.protocols, callback)
            elif request.require_known_member_id:
                # KIP-394: a dynamic member gets its id first and joins with it, so that a client that
                # times out and retries cannot leave defunct members behind
                group.pending_members.add(new_member_id)
                self._add_pending_member_expiration(group, new_member_id, request.session_timeout_ms)
                callback(JoinGroupResult(new_member_id, errors.MemberIdRequiredError.code))
            else:
                kind = "Static" if instance_id is not None else "Dynamic"
                log.info(f"{kind} Member with unknown member id joins group {group.group_id} in {group.state} state. "
                         f"Created a new member id {new_member_id} for this member and add to the group.")  # fmt: skip
                self._add_member_and_rebalance(group, new_member_id, request, callback)

    def _do_join_group(self, group: GroupMetadata, request: JoinRequest, callback: JoinCallback) -> None:
        member_id, instance_id = request.member_id, request.group_instance_id
        if group.is_(Dead):
            callback(JoinGroupResult(member_id, errors.CoordinatorNotAvailableError.code))
        elif not group.supports_protocols(request.protocol_type, request.protocol_names()):
            callback(JoinGroupResult(member_id, errors.InconsistentGroupProtocolError.code))
        elif group.is_pending_member(member_id):
            if instance_id is not None:
                raise IllegalStateError(
                    f"the static member {instance_id} was not expected to be assigned into pending member "
                    f"bucket with member id {member_id}"
                )
            self._add_member_and_rebalance(group, member_id, request, callback)
        elif group.is_static_member_fenced(member_id, instance_id):
            callback(JoinGroupResult(member_id, errors.FencedInstanceIdError.code))
        elif not group.has(member_id) or (instance_id is not None and not group.has_static_member(instance_id)):
            callback(JoinGroupResult(member_id, errors.UnknownMemberIdError.code))
        else:
            self._rejoin(group, group.get(member_id), request.protocols, callback)

    def _rejoin(
        self, group: GroupMetadata, member: MemberMetadata, protocols: Protocols, callback: JoinCallback
    ) -> None:
        """A known member's JoinGroup, by the group's state."""
        member_id = member.member_id
        match group.state:
            case GroupState.PREPARING_REBALANCE:
                self._update_member_and_rebalance(group, member, protocols, callback)
            case GroupState.COMPLETING_REBALANCE:
                if member.matches(protocols):
                    # it missed its JoinGroup answer: the current generation again
                    callback(self._join_result(group, member_id, with_members=group.is_leader(member_id)))
                else:
                    self._update_member_and_rebalance(group, member, protocols, callback)
            case GroupState.STABLE:
                # the leader's JoinGroup always rebalances: it may have seen a change the members' metadata
                # does not show (a topic's new partitions)
                if group.is_leader(member_id) or not member.matches(protocols):
                    self._update_member_and_rebalance(group, member, protocols, callback)
                else:
                    callback(self._join_result(group, member_id, with_members=False))
            case GroupState.EMPTY | GroupState.DEAD:
                log.warning(f"Attempt to add rejoining member {member_id} of group {group.group_id} in unexpected "
                            f"group state {group.state}")  # fmt: skip
                callback(JoinGroupResult(member_id, errors.UnknownMemberIdError.code))

    @staticmethod
    def _join_result(group: GroupMetadata, member_id: str, with_members: bool) -> JoinGroupResult:
        return JoinGroupResult(
            member_id=member_id,
            error=errors.NONE,
            generation_id=group.generation_id,
            protocol_type=group.protocol_type,
            protocol_name=group.protocol_name,
            leader_id=group.leader_id or "",
            members=group.current_member_metadata() if with_members else (),
        )

    def _add_member_and_rebalance(
        self, group: GroupMetadata, member_id: str, request: JoinRequest, callback: JoinCallback
    ) -> None:
        instance_id = request.group_instance_id
        member = MemberMetadata(
            member_id,
            instance_id,
            request.client_id,
            request.client_host,
            request.rebalance_timeout_ms,
            request.session_timeout_ms,
            request.protocol_type,
            list(request.protocols),
            is_new=True,
        )
        # the initial delayed join waits again for each new member of a first generation
        if group.is_(PreparingRebalance) and group.generation_id == 0:
            group.new_member_added = True
        group.add(member, callback)
        # a new member cannot heartbeat before it has its id, and its connection is muted while its
        # JoinGroup waits: a generous timeout for its join, after which a live client retries
        self._complete_and_schedule_next_expiration(group, member, NEW_MEMBER_JOIN_TIMEOUT_MS)
        if instance_id is not None:
            group.static_members[instance_id] = member_id
        else:
            group.pending_members.discard(member_id)
        self._maybe_prepare_rebalance(group, f"Adding new member {member_id} with group instance id {instance_id}")

    def _update_static_member_and_rebalance(
        self,
        group: GroupMetadata,
        new_member_id: str,
        group_instance_id: str,
        protocols: Protocols,
        callback: JoinCallback,
    ) -> None:
        """KIP-345: a known group.instance.id joining without a member id takes over its member under a new
        id; the old id is fenced. A Stable group whose protocol choice does not change needs no rebalance:
        the group is stored with the new id and the member keeps its assignment."""
        old_member_id = group.static_members[group_instance_id]
        log.info(f"Static member {group_instance_id} of group {group.group_id} with unknown member id rejoins, "
                 f"assigning new member id {new_member_id}, while old member id {old_member_id} "
                 "will be removed.")  # fmt: skip
        current_leader = group.leader_id or ""
        member = group.replace_group_instance(old_member_id, new_member_id, group_instance_id)
        self._complete_and_schedule_next_heartbeat_expiration(group, member)
        old_protocols = list(member.supported_protocols)
        group.update_member(member, protocols, callback)
        match group.state:
            case GroupState.STABLE:
                if group.protocol_name == group.select_protocol():
                    assignment = {m.member_id: m.assignment for m in group.members.values()}
                    generation_id = group.generation_id

                    def stored(error: int) -> None:
                        self._static_member_stored(
                            group, member, old_member_id, new_member_id, group_instance_id, old_protocols,
                            current_leader, callback, error, generation_id,
                        )  # fmt: skip

                    self._store_group(group, assignment, stored)
                else:
                    self._maybe_prepare_rebalance(
                        group,
                        f"Group's selectedProtocol will change because static member {member.member_id} with "
                        f"instance id {group_instance_id} joined with change of protocol",
                    )
            case GroupState.COMPLETING_REBALANCE:
                # the leader may be assigning to the old member id: start over
                self._prepare_rebalance(
                    group,
                    f"Updating metadata for static member {member.member_id} with instance id {group_instance_id}",
                )
            case GroupState.EMPTY | GroupState.DEAD:
                raise IllegalStateError(
                    f"Group {group.group_id} was not supposed to be in the state {group.state} when the unknown "
                    f"static member {group_instance_id} rejoins."
                )
            case GroupState.PREPARING_REBALANCE:
                pass

    def _static_member_stored(
        self,
        group: GroupMetadata,
        member: MemberMetadata,
        old_member_id: str,
        new_member_id: str,
        group_instance_id: str,
        old_protocols: Protocols,
        current_leader: str,
        callback: JoinCallback,
        error: int,
        generation_id: int,
    ) -> None:
        if error != errors.NONE:
            log.warning("Failed to persist metadata for group %s: %s", group.group_id, errors.KAFKA_MESSAGES.get(error))
            # the new member id is not stored: back to the old one
            group.update_member(member, old_protocols, None)
            old = group.replace_group_instance(new_member_id, old_member_id, group_instance_id)
            self._complete_and_schedule_next_heartbeat_expiration(group, old)
            callback(
                JoinGroupResult(
                    member_id=UNKNOWN_MEMBER_ID,
                    error=error,
                    generation_id=group.generation_id,
                    protocol_type=group.protocol_type,
                    protocol_name=group.protocol_name,
                    leader_id=current_leader,
                )
            )
            return
        # the old leader id, so that the current leader does not take itself for the new one and assign
        # to a Stable group that would not pass the assignment on
        group.maybe_invoke_join_callback(
            member,
            JoinGroupResult(
                member_id=new_member_id,
                error=errors.NONE,
                generation_id=group.generation_id,
                protocol_type=group.protocol_type,
                protocol_name=group.protocol_name,
                leader_id=current_leader,
            ),
        )

    def _update_member_and_rebalance(
        self, group: GroupMetadata, member: MemberMetadata, protocols: Protocols, callback: JoinCallback
    ) -> None:
        group.update_member(member, protocols, callback)
        self._maybe_prepare_rebalance(group, f"Member {member.member_id} joining group during {group.state}")

    def _maybe_prepare_rebalance(self, group: GroupMetadata, reason: str) -> None:
        if group.can_rebalance():
            self._prepare_rebalance(group, reason)

    def _prepare_rebalance(self, group: GroupMetadata, reason: str) -> None:
        if group.is_(CompletingRebalance):
            # the members awaiting their assignment rejoin instead
            self._reset_and_propagate_assignment_error(group, errors.RebalanceInProgressError.code)
        delayed: DelayedJoin
        if group.is_(Empty):
            delay = self.config.group_initial_rebalance_delay_ms
            delayed = InitialDelayedJoin(self, group, delay, delay, max(group.rebalance_timeout_ms() - delay, 0))
        else:
            delayed = DelayedJoin(self, group, group.rebalance_timeout_ms())
        group.transition_to(PreparingRebalance)
        partition = self.manager.partition_for(group.group_id)
        log.info(f"Preparing to rebalance group {group.group_id} in state {group.state} with old generation "
                 f"{group.generation_id} (__consumer_offsets-{partition}) (reason: {reason})")  # fmt: skip
        self.watch_join(delayed)

    # --- the join phase (DelayedJoin) ------------------------------------------------------------------

    def watch_join(self, operation: DelayedJoin) -> None:
        if operation.try_complete():
            return
        previous = self._joins.get(operation.group.group_id)
        if previous is not None and previous is not operation:
            previous.cancel()
        self._joins[operation.group.group_id] = operation
        operation.start(self.scheduler)

    def _check_join(self, group: GroupMetadata) -> None:
        """Kafka's `joinPurgatory.checkAndComplete(GroupKey)`."""
        operation = self._joins.get(group.group_id)
        if operation is not None and not operation.completed:
            operation.try_complete()

    def try_complete_join(self, group: GroupMetadata) -> bool:
        return group.has_all_members_joined()

    def on_complete_join(self, group: GroupMetadata) -> None:
        """The join phase ends: members that did not rejoin are dropped (static ones are kept), the next
        generation starts and every waiting JoinGroup is answered; the leader's answer lists the members."""
        if self._joins.get(group.group_id) is not None and self._joins[group.group_id].completed:
            del self._joins[group.group_id]
        for failed in [m for m in group.not_yet_rejoined_members() if not m.is_static_member]:
            self._remove_heartbeat_for_leaving_member(group, failed)
            group.remove(failed.member_id)
        if group.is_(Dead):
            log.info("Group %s is dead, skipping rebalance stage", group.group_id)
        elif not group.maybe_elect_new_joined_leader() and group.members:
            # nobody rejoined: wait another rebalance timeout, until the sessions remove the members
            log.error("Group %s could not complete rebalance because no members rejoined", group.group_id)
            self.watch_join(DelayedJoin(self, group, group.rebalance_timeout_ms()))
        else:
            group.init_next_generation()
            if group.is_(Empty):
                log.info("Group %s with generation %s is now empty", group.group_id, group.generation_id)
                self._store_group(group, {}, lambda error: self._empty_group_stored(group, error))
            else:
                log.info(
                    f"Stabilized group {group.group_id} generation {group.generation_id} with {group.size} members"
                )
                for member in list(group.members.values()):
                    result = self._join_result(group, member.member_id, with_members=group.is_leader(member.member_id))
                    group.maybe_invoke_join_callback(member, result)
                    self._complete_and_schedule_next_heartbeat_expiration(group, member)
                    member.is_new = False

    @staticmethod
    def _empty_group_stored(group: GroupMetadata, error: int) -> None:
        if error != errors.NONE:
            # safe: the previous generation in the log has no live members, they time out after a failover
            log.warning("Failed to write empty metadata for group %s: %s", group.group_id, error)

    # --- SyncGroup ------------------------------------------------------------------------------------

    def handle_sync_group(
        self,
        group_id: str,
        generation_id: int,
        member_id: str,
        protocol_type: str | None,
        protocol_name: str | None,
        group_instance_id: str | None,
        group_assignment: Mapping[str, bytes],
        callback: SyncCallback,
    ) -> None:
        error = self.validate_group_status(group_id, ApiKey.SYNC_GROUP)
        if error == errors.CoordinatorLoadInProgressError.code:
            # the rebalance's state is lost with the old coordinator: rejoin (older clients do not expect
            # COORDINATOR_LOAD_IN_PROGRESS here)
            callback(SyncGroupResult(errors.RebalanceInProgressError.code))
            return
        if error is not None:
            callback(SyncGroupResult(error))
            return
        group = self.groups.get(group_id)
        if group is None:
            callback(SyncGroupResult(errors.UnknownMemberIdError.code))
            return
        self._do_sync_group(
            group, generation_id, member_id, protocol_type, protocol_name, group_instance_id, group_assignment, callback
        )

    def _do_sync_group(
        self,
        group: GroupMetadata,
        generation_id: int,
        member_id: str,
        protocol_type: str | None,
        protocol_name: str | None,
        group_instance_id: str | None,
        group_assignment: Mapping[str, bytes],
        callback: SyncCallback,
    ) -> None:
        if group.is_(Dead):
            callback(SyncGroupResult(errors.CoordinatorNotAvailableError.code))
        elif group.is_static_member_fenced(member_id, group_instance_id):
            callback(SyncGroupResult(errors.FencedInstanceIdError.code))
        elif not group.has(member_id):
            callback(SyncGroupResult(errors.UnknownMemberIdError.code))
        elif generation_id != group.generation_id:
            callback(SyncGroupResult(errors.IllegalGenerationError.code))
        elif (protocol_type is not None and group.protocol_type != protocol_type) or (
            protocol_name is not None and group.protocol_name != protocol_name
        ):
            callback(SyncGroupResult(errors.InconsistentGroupProtocolError.code))
        else:
            match group.state:
                case GroupState.EMPTY:
                    callback(SyncGroupResult(errors.UnknownMemberIdError.code))
                case GroupState.PREPARING_REBALANCE:
                    callback(SyncGroupResult(errors.RebalanceInProgressError.code))
                case GroupState.COMPLETING_REBALANCE:
                    group.get(member_id).awaiting_sync_callback = callback
                    if group.is_leader(member_id):
                        self._leader_assignment(group, member_id, group_assignment)
                case GroupState.STABLE:
                    member = group.get(member_id)
                    callback(SyncGroupResult(errors.NONE, group.protocol_type, group.protocol_name, member.assignment))
                    self._complete_and_schedule_next_heartbeat_expiration(group, member)
                case GroupState.DEAD:
                    raise IllegalStateError(f"Reached unexpected condition for Dead group {group.group_id}")

    def _leader_assignment(self, group: GroupMetadata, member_id: str, group_assignment: Mapping[str, bytes]) -> None:
        """The leader's SyncGroup: store the group with its assignment, then answer every member."""
        log.info(f"Assignment received from leader for group {group.group_id} for generation {group.generation_id}. "
                 f"The group has {group.size} members, {len(group.static_members)} of which are static.")  # fmt: skip
        # members the leader left out get an empty assignment
        assignment = {m: bytes(group_assignment.get(m, b"")) for m in group.members}
        missing = [m for m in group.members if m not in group_assignment]
        if missing:
            log.warning(f"Setting empty assignments for members {missing} of {group.group_id} for generation "
                        f"{group.generation_id}")  # fmt: skip
        generation_id = group.generation_id

        def stored(error: int) -> None:
            # a member may have joined meanwhile: only the same generation, still completing, goes on
            if group.is_(CompletingRebalance) and group.generation_id == generation_id:
                if error != errors.NONE:
                    self._reset_and_propagate_assignment_error(group, error)
                    self._maybe_prepare_rebalance(
                        group, f"error when storing group assignment during SyncGroup (member: {member_id})"
                    )
                else:
                    self._set_and_propagate_assignment(group, assignment)
                    group.transition_to(Stable)

        self._store_group(group, assignment, stored)

    def _store_group(self, group: GroupMetadata, assignment: Mapping[str, bytes], then: Callable[[int], None]) -> None:
        """Kafka's `storeGroup`: the record is built now, appended by the manager, `then` gets its error."""
        value = group.to_value_dict(assignment)
        manager = self.manager

        async def store() -> None:
            try:
                result = await manager.store_group(group.group_id, value)
            except Exception:  # noqa: BLE001 - a failed append is an error for the group, not for the loop
                log.exception("Storing group %s failed", group.group_id)
                result = errors.UnknownServerError.code
            then(error_code(result))

        self._spawn(store())

    def _set_and_propagate_assignment(self, group: GroupMetadata, assignment: Mapping[str, bytes]) -> None:
        for member in group.members.values():
            member.assignment = assignment[member.member_id]
        self._propagate_assignment(group, errors.NONE)

    def _reset_and_propagate_assignment_error(self, group: GroupMetadata, error: int) -> None:
        for member in group.members.values():
            member.assignment = b""
        self._propagate_assignment(group, error)

    def _propagate_assignment(self, group: GroupMetadata, error: int) -> None:
        protocol_type, protocol_name = (
            (group.protocol_type, group.protocol_name) if error == errors.NONE else (None, None)
        )
        for member in list(group.members.values()):
            result = SyncGroupResult(error, protocol_type, protocol_name, member.assignment)
            if group.maybe_invoke_sync_callback(member, result):
                # a session that expired while the member waited for its assignment was ignored: start anew
                self._complete_and_schedule_next_heartbeat_expiration(group, member)

    # --- Heartbeat ------------------------------------------------------------------------------------

    def handle_heartbeat(self, group_id: str, member_id: str, group_instance_id: str | None, generation_id: int) -> int:
        error = self.validate_group_status(group_id, ApiKey.HEARTBEAT)
        if error is not None:
            # a loading coordinator answers blindly: the member finds out at its next join
            return errors.NONE if error == errors.CoordinatorLoadInProgressError.code else error
        group = self.groups.get(group_id)
        if group is None:
            return errors.UnknownMemberIdError.code
        if group.is_(Dead):
            return errors.CoordinatorNotAvailableError.code
        if group.is_static_member_fenced(member_id, group_instance_id):
            return errors.FencedInstanceIdError.code
        if not group.has(member_id):
            return errors.UnknownMemberIdError.code
        if generation_id != group.generation_id:
            return errors.IllegalGenerationError.code
        if group.is_(Empty):
            return errors.UnknownMemberIdError.code
        self._complete_and_schedule_next_heartbeat_expiration(group, group.get(member_id))
        if group.is_(PreparingRebalance):
            return errors.RebalanceInProgressError.code
        return errors.NONE

    # --- LeaveGroup -----------------------------------------------------------------------------------

    def handle_leave_group(self, group_id: str, leaving: Sequence[MemberIdentity]) -> LeaveGroupResult:
        error = self.validate_group_status(group_id, ApiKey.LEAVE_GROUP)
        if error is not None:
            return LeaveGroupResult(error)
        group = self.groups.get(group_id)
        if group is None:
            return LeaveGroupResult(
                errors.NONE,
                tuple(
                    LeaveMemberResponse(m.member_id, m.group_instance_id, errors.UnknownMemberIdError.code)
                    for m in leaving
                ),
            )
        if group.is_(Dead):
            return LeaveGroupResult(errors.CoordinatorNotAvailableError.code)
        return LeaveGroupResult(
            errors.NONE,
            tuple(LeaveMemberResponse(m.member_id, m.group_instance_id, self._leave(group, m)) for m in leaving),
        )

    def _leave(self, group: GroupMetadata, leaving: MemberIdentity) -> int:
        member_id, instance_id = leaving.member_id, leaving.group_instance_id
        if member_id != UNKNOWN_MEMBER_ID and group.is_static_member_fenced(member_id, instance_id):
            return errors.FencedInstanceIdError.code
        if group.is_pending_member(member_id):
            if instance_id is not None:
                raise IllegalStateError(
                    f"the static member {instance_id} was not expected to be leaving from pending member bucket "
                    f"with member id {member_id}"
                )
            log.info("Pending member %s is leaving group %s.", member_id, group.group_id)
            self._remove_pending_member_and_update_group(group, member_id)
            self._cancel_heartbeat(group, member_id)
            return errors.NONE
        if not group.has(member_id) and not group.has_static_member(instance_id):
            return errors.UnknownMemberIdError.code
        member = group.get(group.static_members.get(instance_id, member_id) if instance_id is not None else member_id)
        self._remove_heartbeat_for_leaving_member(group, member)
        log.info(f"Member[group.instance.id {member.group_instance_id}, member.id {member.member_id}] in group "
                 f"{group.group_id} has left, removing it from the group")  # fmt: skip
        self._remove_member_and_update_group(group, member, f"removing member {member_id} on LeaveGroup")
        return errors.NONE

    def _remove_member_and_update_group(self, group: GroupMetadata, member: MemberMetadata, reason: str) -> None:
        # a new member may still wait for its first JoinGroup: it retries when told UNKNOWN_MEMBER_ID
        group.maybe_invoke_join_callback(member, JoinGroupResult(UNKNOWN_MEMBER_ID, errors.UnknownMemberIdError.code))
        group.remove(member.member_id)
        match group.state:
            case GroupState.STABLE | GroupState.COMPLETING_REBALANCE:
                self._maybe_prepare_rebalance(group, reason)
            case GroupState.PREPARING_REBALANCE:
                self._check_join(group)
            case GroupState.EMPTY | GroupState.DEAD:
                pass

    def _remove_pending_member_and_update_group(self, group: GroupMetadata, member_id: str) -> None:
        group.pending_members.discard(member_id)
        if group.is_(PreparingRebalance):
            self._check_join(group)
        self._forget_if_unused(group)

    # --- sessions (DelayedHeartbeat) -------------------------------------------------------------------

    def _complete_and_schedule_next_heartbeat_expiration(self, group: GroupMetadata, member: MemberMetadata) -> None:
        self._complete_and_schedule_next_expiration(group, member, member.session_timeout_ms)

    def _complete_and_schedule_next_expiration(
        self, group: GroupMetadata, member: MemberMetadata, timeout_ms: int
    ) -> None:
        """The member is alive: its current session expectation is met, the next one starts now."""
        member.heartbeat_satisfied = True
        self._cancel_heartbeat(group, member.member_id)
        member.heartbeat_satisfied = False
        self._watch_heartbeat(DelayedHeartbeat(group, member.member_id, False, self._on_expire_heartbeat), timeout_ms)

    def _add_pending_member_expiration(self, group: GroupMetadata, member_id: str, timeout_ms: int) -> None:
        self._watch_heartbeat(DelayedHeartbeat(group, member_id, True, self._on_expire_heartbeat), timeout_ms)

    def _watch_heartbeat(self, heartbeat: DelayedHeartbeat, timeout_ms: int) -> None:
        self._heartbeats[(heartbeat.group.group_id, heartbeat.member_id)] = heartbeat
        heartbeat.start(self.scheduler, timeout_ms)

    def _cancel_heartbeat(self, group: GroupMetadata, member_id: str) -> None:
        heartbeat = self._heartbeats.pop((group.group_id, member_id), None)
        if heartbeat is not None:
            heartbeat.cancel()

    def _remove_heartbeat_for_leaving_member(self, group: GroupMetadata, member: MemberMetadata) -> None:
        member.is_leaving = True
        self._cancel_heartbeat(group, member.member_id)

    def _on_expire_heartbeat(self, heartbeat: DelayedHeartbeat) -> None:
        group, member_id = heartbeat.group, heartbeat.member_id
        key = (group.group_id, member_id)
        if self._heartbeats.get(key) is heartbeat:
            del self._heartbeats[key]
        if group.is_(Dead):
            log.info("Received notification of heartbeat expiration for member %s after group %s had already "
                     "been unloaded or deleted.", member_id, group.group_id)  # fmt: skip
        elif heartbeat.is_pending:
            log.info("Pending member %s in group %s has been removed after session timeout expiration.",
                     member_id, group.group_id)  # fmt: skip
            self._remove_pending_member_and_update_group(group, member_id)
        elif group.has(member_id):
            member = group.get(member_id)
            if not member.has_satisfied_heartbeat:
                log.info("Member %s in group %s has failed, removing it from the group", member_id, group.group_id)
                self._remove_member_and_update_group(
                    group, member, f"removing member {member_id} on heartbeat expiration"
                )

    # --- OffsetCommit's fencing (the GroupMetadataManager asks) -----------------------------------------

    def validate_commit(
        self, group_id: str, member_id: str, generation_id: int, group_instance_id: str | None
    ) -> int | None:
        """Kafka's `handleCommitOffsets`/`doCommitOffsets` checks: the error code an OffsetCommit of this
        member and generation gets, or None to store it. A commit of a live member counts as a heartbeat."""
        group = self.groups.get(group_id)
        if group is None:
            # no group management (generation -1): a standalone consumer's commit; else an older generation's
            return None if generation_id < 0 else errors.IllegalGenerationError.code
        if group.is_(Dead):
            return errors.CoordinatorNotAvailableError.code
        if group.is_static_member_fenced(member_id, group_instance_id):
            return errors.FencedInstanceIdError.code
        if generation_id < 0 and group.is_(Empty):
            return None
        if not group.has(member_id):
            return errors.UnknownMemberIdError.code
        if generation_id != group.generation_id:
            return errors.IllegalGenerationError.code
        if group.is_(CompletingRebalance):
            # it has the new generation from its JoinGroup but not its assignment yet
            return errors.RebalanceInProgressError.code
        # Stable, or PreparingRebalance: the previous generation may still commit; a heartbeat tells it
        self._complete_and_schedule_next_heartbeat_expiration(group, group.get(member_id))
        return None

    def offset_delete_check(
        self, group_id: str, partitions: Sequence[TopicPartition]
    ) -> tuple[int, dict[TopicPartition, int]]:
        """Kafka's `handleDeleteOffsets` checks: the group's error, and the partitions refused because the
        group consumes their topic (GROUP_SUBSCRIBED_TO_TOPIC); offsets of an Empty group all go."""
        group = self.groups.get(group_id)
        if group is None or group.is_(Dead):
            if self._has_offsets_only(group_id):
                return errors.NONE, {}
            missing = (
                errors.GroupIdNotFoundError if self.manager.group_not_exists(group_id) else errors.NotCoordinatorError
            )
            return missing.code, {}
        if group.is_(Empty):
            return errors.NONE, {}
        if group.protocol_type == CONSUMER_PROTOCOL_TYPE:
            subscribed = errors.GroupSubscribedToTopicError.code
            return errors.NONE, {tp: subscribed for tp in partitions if group.is_subscribed_to_topic(tp.topic)}
        return errors.NonEmptyGroupError.code, {}

    def group_is_empty_or_absent(self, group_id: str) -> bool:
        """Whether the group has no members here (its offsets may expire, it may be deleted)."""
        group = self.groups.get(group_id)
        return group is None or group.is_(Empty) or group.is_(Dead)

    # --- ListGroups, DescribeGroups, DeleteGroups -----------------------------------------------------

    def handle_list_groups(self, states: Iterable[str] = ()) -> tuple[int, list[GroupOverview]]:
        """Every group this coordinator has (in one of `states` when given)."""
        if not self.is_active:
            return errors.CoordinatorNotAvailableError.code, []
        wanted = set(states)
        overviews = [group.overview() for group in self.groups.values() if self.manager.is_group_local(group.group_id)]
        # a group of standalone commits has only offsets: Kafka lists it Empty, without a protocol type
        overviews += [
            GroupOverview(group_id, NO_PROTOCOL_TYPE, str(Empty))
            for group_id in self.manager.current_groups()
            if group_id not in self.groups and self._has_offsets_only(group_id)
        ]
        return errors.NONE, [overview for overview in overviews if not wanted or overview.state in wanted]

    def _has_offsets_only(self, group_id: str) -> bool:
        return group_id not in self.groups and bool(self.manager.get_offsets(group_id, None))

    def handle_describe_group(self, group_id: str) -> tuple[int, GroupSummary]:
        error = self.validate_group_status(group_id, ApiKey.DESCRIBE_GROUPS)
        if error is not None:
            return error, EMPTY_GROUP
        group = self.groups.get(group_id)
        if group is not None:
            return errors.NONE, group.summary()
        return errors.NONE, OFFSETS_ONLY_GROUP if self._has_offsets_only(group_id) else DEAD_GROUP

    async def handle_delete_groups(self, group_ids: Iterable[str]) -> dict[str, int]:
        """Empty groups become Dead and their records tombstones; groups with members are NON_EMPTY_GROUP."""
        results: dict[str, int] = {}
        deletable: list[str] = []
        for group_id in group_ids:
            error = self.validate_group_status(group_id, ApiKey.DELETE_GROUPS)
            if error is not None:
                results[group_id] = error
                continue
            group = self.groups.get(group_id)
            if group is None:
                if self._has_offsets_only(group_id):
                    deletable.append(group_id)
                else:
                    results[group_id] = errors.GroupIdNotFoundError.code
            elif group.is_(Dead):
                results[group_id] = errors.GroupIdNotFoundError.code
            elif group.is_(Empty):
                group.transition_to(Dead)
                del self.groups[group_id]
                deletable.append(group_id)
            else:
                results[group_id] = errors.NonEmptyGroupError.code
        for group_id in deletable:
            try:
                await self.manager.delete_group(group_id)  # resolves to the count of offsets it removed
                results[group_id] = errors.NONE
            except Exception:  # noqa: BLE001 - answered as Kafka's unexpected-error code
                log.exception("Deleting group %s failed", group_id)
                results[group_id] = errors.UnknownServerError.code
        if deletable:
            log.info("The following groups were deleted: %s.", ", ".join(deletable))
        return results

    # --- coordinator failover (the GroupMetadataManager calls) -------------------------------------------

    def on_group_loaded(self, group_id: str, value: Mapping[str, Any] | None) -> None:
        """A group read back from `__consumer_offsets` by a new coordinator: Stable with its members (who
        must heartbeat within their sessions) or Empty; over group.max.size it rebalances at once. None (its
        tombstone was the last record) forgets the group."""
        current = self.groups.get(group_id)
        if current is not None:
            # leader again in a new epoch without having resigned: the live group is newer than its record
            # (Kafka's loadGroup keeps the cached group)
            log.info(f"Attempt to load group {group_id} from log failed because there is already a cached group "
                     f"with generation {current.generation_id}")  # fmt: skip
            return
        if value is None:
            return
        group = GroupMetadata.load(group_id, value, self.scheduler.now_ms)
        self.groups[group_id] = group
        log.info("Loading group metadata for %s with generation %s", group_id, group.generation_id)
        if group.size > self.config.group_max_size:
            self._prepare_rebalance(
                group,
                f"Freshly-loaded group is over capacity ({self.config.group_max_size}). Rebalacing in order to "
                "give a chance for consumers to commit offsets",
            )
        for member in list(group.members.values()):
            self._complete_and_schedule_next_heartbeat_expiration(group, member)

    def on_group_unloaded(self, group_id: str) -> None:
        """This broker no longer coordinates the group: Dead, and whoever waits is told NOT_COORDINATOR."""
        group = self.groups.pop(group_id, None)
        if group is None:
            return
        log.info("Unloading group metadata for %s with generation %s", group_id, group.generation_id)
        previous = group.state
        group.transition_to(Dead)
        operation = self._joins.pop(group_id, None)
        if operation is not None:
            operation.cancel()
        for member in list(group.members.values()):
            if previous is PreparingRebalance:
                group.maybe_invoke_join_callback(
                    member, JoinGroupResult(member.member_id, errors.NotCoordinatorError.code)
                )
            elif previous in (Stable, CompletingRebalance):
                group.maybe_invoke_sync_callback(member, SyncGroupResult(errors.NotCoordinatorError.code))
            self._cancel_heartbeat(group, member.member_id)
        for member_id in group.pending_members:
            self._cancel_heartbeat(group, member_id)
