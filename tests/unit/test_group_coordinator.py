"""The group coordinator's rules (Kafka 2.8's GroupCoordinator, GroupMetadata), with a manual clock and an
in-memory GroupMetadataManager: every state transition, the fencing errors, static members, group.max.size,
the delayed joins and the session expiries."""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

import pytest

from kafkaops.cluster.broker.group_coordinator import GroupConfig, GroupCoordinator
from kafkaops.cluster.broker.group_metadata import (
    VALID_PREVIOUS_STATES,
    GroupMetadata,
    GroupState,
    IllegalStateError,
    JoinGroupResult,
    JoinRequest,
    MemberIdentity,
    MemberMetadata,
    SyncGroupResult,
    subscribed_topics,
)
from kafkaops.cluster.common import errors
from tests.unit.group_fakes import FakeGroupManager, ManualScheduler

SESSION_MS = 10_000
REBALANCE_MS = 30_000


def subscription(*topics: str) -> bytes:
    """A consumer protocol subscription, version 0, without user data."""
    body = struct.pack(">hi", 0, len(topics))
    for topic in topics:
        body += struct.pack(">h", len(topic)) + topic.encode()
    return body + struct.pack(">i", -1)


RANGE = [("range", subscription("t"))]


@dataclass
class Member:
    """One client of the tests: its id, generation and every answer it got."""

    coordinator: GroupCoordinator
    client_id: str
    group_id: str = "g"
    instance_id: str | None = None
    member_id: str = ""
    generation: int = -1
    joins: list[JoinGroupResult] = field(default_factory=list)
    syncs: list[SyncGroupResult] = field(default_factory=list)

    def join(self, protocols: list[tuple[str, bytes]] = RANGE, version: int = 7, session_ms: int = SESSION_MS) -> None:
        request = JoinRequest(
            self.group_id,
            self.member_id,
            self.instance_id,
            version >= 4 and self.instance_id is None,
            self.client_id,
            "/127.0.0.1",
            REBALANCE_MS,
            session_ms,
            "consumer",
            protocols,
        )
        self.coordinator.handle_join_group(request, self._joined)

    def _joined(self, result: JoinGroupResult) -> None:
        self.joins.append(result)
        if result.error in (errors.NONE, errors.MemberIdRequiredError.code):
            self.member_id = result.member_id
        if result.error == errors.NONE:
            self.generation = result.generation_id

    def join_with_id(self) -> None:
        """The two-step join of v4+: MEMBER_ID_REQUIRED, then again with the id."""
        self.join()
        assert self.joins[-1].error == errors.MemberIdRequiredError.code
        self.join()

    def sync(self, assignment: dict[str, bytes] | None = None) -> None:
        self.coordinator.handle_sync_group(
            self.group_id,
            self.generation,
            self.member_id,
            "consumer",
            None,
            self.instance_id,
            assignment or {},
            self.syncs.append,
        )

    def heartbeat(self) -> int:
        return self.coordinator.handle_heartbeat(self.group_id, self.member_id, self.instance_id, self.generation)


@pytest.fixture
def clock() -> ManualScheduler:
    return ManualScheduler()


@pytest.fixture
def manager() -> FakeGroupManager:
    return FakeGroupManager()


def make_coordinator(clock: ManualScheduler, manager: FakeGroupManager, **settings: int) -> GroupCoordinator:
    config = GroupConfig(**{"group_initial_rebalance_delay_ms": 0, "group_min_session_timeout_ms": 1000, **settings})
    coordinator = GroupCoordinator(1, config, manager, clock, manager.spawn)
    coordinator.startup()
    return coordinator


@pytest.fixture
def coordinator(clock: ManualScheduler, manager: FakeGroupManager) -> GroupCoordinator:
    return make_coordinator(clock, manager)


def stable_group(coordinator: GroupCoordinator, clock: ManualScheduler, *names: str) -> list[Member]:
    """Members that joined together and synced: the group is Stable at generation 1."""
    members = [Member(coordinator, name) for name in names]
    for member in members:
        member.join()  # MEMBER_ID_REQUIRED
    for member in members:
        member.join()
    clock.advance(0)
    leader = next(m for m in members if m.joins[-1].members)
    for member in members:
        member.sync({m.member_id: m.client_id.encode() for m in members} if member is leader else None)
    assert coordinator.groups["g"].state is GroupState.STABLE
    return members


# --- GroupMetadata ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("target", list(GroupState))
@pytest.mark.parametrize("source", list(GroupState))
def test_transitions_follow_kafkas_valid_previous_states(source: GroupState, target: GroupState) -> None:
    group = GroupMetadata("g", source, lambda: 42)
    if source in VALID_PREVIOUS_STATES[target]:
        group.transition_to(target)
        assert group.state is target
        assert group.current_state_timestamp == 42
    else:
        with pytest.raises(IllegalStateError, match=f"before moving to {target.value} state"):
            group.transition_to(target)
        assert group.state is source


def test_the_valid_previous_states_are_kafkas() -> None:
    table = {target.value: sorted(s.value for s in sources) for target, sources in VALID_PREVIOUS_STATES.items()}
    assert table == {
        "PreparingRebalance": ["CompletingRebalance", "Empty", "Stable"],
        "CompletingRebalance": ["PreparingRebalance"],
        "Stable": ["CompletingRebalance"],
        "Dead": ["CompletingRebalance", "Dead", "Empty", "PreparingRebalance", "Stable"],
        "Empty": ["PreparingRebalance"],
    }


def _member(member_id: str, protocols: list[tuple[str, bytes]]) -> MemberMetadata:
    return MemberMetadata(member_id, None, "c", "h", 1000, 1000, "consumer", protocols)


def test_protocol_selection_is_a_vote_among_the_protocols_all_members_support() -> None:
    group = GroupMetadata("g", GroupState.EMPTY, lambda: 0)
    group.add(_member("a", [("roundrobin", b""), ("range", b""), ("sticky", b"")]))
    group.transition_to(GroupState.PREPARING_REBALANCE)
    group.add(_member("b", [("range", b""), ("roundrobin", b"")]))
    group.add(_member("c", [("range", b""), ("roundrobin", b""), ("sticky", b"")]))
    assert group.candidate_protocols() == {"range", "roundrobin"}
    assert group.select_protocol() == "range"  # two votes to one
    assert group.supports_protocols("consumer", {"sticky", "range"})
    assert not group.supports_protocols("consumer", {"sticky"})
    assert not group.supports_protocols("connect", {"range"})


def test_member_ids_are_client_id_or_instance_id_then_a_uuid() -> None:
    dynamic = GroupMetadata.generate_member_id("consumer-1", None)
    static = GroupMetadata.generate_member_id("consumer-1", "instance-a")
    assert dynamic.startswith("consumer-1-") and len(dynamic) == len("consumer-1-") + 36
    assert static.startswith("instance-a-") and len(static) == len("instance-a-") + 36


def test_a_subscription_names_its_topics() -> None:
    assert subscribed_topics(subscription("a", "b")) == {"a", "b"}
    with pytest.raises(ValueError):
        subscribed_topics(b"\x00")


# --- JoinGroup and SyncGroup -------------------------------------------------------------------------------


def test_a_v4_join_gets_a_member_id_first_then_joins_with_it(
    coordinator: GroupCoordinator, clock: ManualScheduler
) -> None:
    member = Member(coordinator, "consumer-1")
    member.join()
    first = member.joins[0]
    assert first.error == errors.MemberIdRequiredError.code and first.member_id.startswith("consumer-1-")
    assert coordinator.groups["g"].pending_members == {first.member_id}
    member.join()
    clock.advance(0)
    result = member.joins[-1]
    assert (result.error, result.member_id, result.generation_id) == (errors.NONE, first.member_id, 1)
    assert result.leader_id == first.member_id and result.protocol_name == "range"
    assert [m.member_id for m in result.members] == [first.member_id]
    assert coordinator.groups["g"].state is GroupState.COMPLETING_REBALANCE


def test_an_old_join_version_is_added_at_once(coordinator: GroupCoordinator, clock: ManualScheduler) -> None:
    member = Member(coordinator, "old")
    member.join(version=3)
    clock.advance(0)
    assert member.joins[-1].error == errors.NONE and member.generation == 1


def test_the_leader_relays_the_assignment_and_the_group_is_stored(
    coordinator: GroupCoordinator, clock: ManualScheduler, manager: FakeGroupManager
) -> None:
    a, b = Member(coordinator, "a"), Member(coordinator, "b")
    for m in (a, b, a, b):
        m.join()
    clock.advance(0)
    leader, follower = (a, b) if a.joins[-1].members else (b, a)
    assert follower.joins[-1].members == ()
    follower.sync()
    assert follower.syncs == []  # waits for the leader's assignment
    leader.sync({leader.member_id: b"L", follower.member_id: b"F"})
    assert [s.assignment for s in leader.syncs + follower.syncs] == [b"L", b"F"]
    assert all(s.error == errors.NONE and s.protocol_name == "range" for s in leader.syncs + follower.syncs)
    assert coordinator.groups["g"].state is GroupState.STABLE
    group_id, value = manager.stored[-1]
    assert (group_id, value["generation"], value["protocol"], value["leader"]) == ("g", 1, "range", leader.member_id)
    assert {m["member_id"]: m["assignment"] for m in value["members"]} == {
        leader.member_id: b"L",
        follower.member_id: b"F",
    }
    assert value["members"][0]["subscription"] == RANGE[0][1]
    # a SyncGroup of a Stable group answers the current assignment again
    follower.sync()
    assert follower.syncs[-1].assignment == b"F"


def test_members_the_leader_leaves_out_get_an_empty_assignment(
    coordinator: GroupCoordinator, clock: ManualScheduler
) -> None:
    a, b = stable_group(coordinator, clock, "a", "b")
    group = coordinator.groups["g"]
    assert {m.assignment for m in group.members.values()} == {b"a", b"b"}
    c = Member(coordinator, "c")
    c.join_with_id()
    for m in (a, b):
        assert m.heartbeat() == errors.RebalanceInProgressError.code
        m.join()
    clock.advance(0)
    leader = next(m for m in (a, b, c) if m.joins[-1].members)
    leader.sync({leader.member_id: b"only"})
    assert group.get(c.member_id).assignment == b"" or c is leader


def test_a_failed_store_answers_the_error_and_rebalances(
    coordinator: GroupCoordinator, clock: ManualScheduler, manager: FakeGroupManager
) -> None:
    member = Member(coordinator, "a")
    member.join_with_id()
    clock.advance(0)
    manager.store_error = errors.NotCoordinatorError.code
    member.sync({member.member_id: b"x"})
    assert member.syncs[-1].error == errors.NotCoordinatorError.code and member.syncs[-1].protocol_name is None
    assert coordinator.groups["g"].state is GroupState.PREPARING_REBALANCE


def test_a_join_during_completing_rebalance_fails_waiting_syncs(
    coordinator: GroupCoordinator, clock: ManualScheduler, manager: FakeGroupManager
) -> None:
    a = Member(coordinator, "a")
    a.join_with_id()
    clock.advance(0)
    manager.hold = True  # the leader's store has not returned yet
    a.sync({a.member_id: b"x"})
    b = Member(coordinator, "b")
    b.join_with_id()
    assert a.syncs[-1].error == errors.RebalanceInProgressError.code
    manager.release()  # the store's answer comes for an older generation's rebalance: ignored
    assert coordinator.groups["g"].state is GroupState.PREPARING_REBALANCE


def test_rejoins_in_stable_and_completing_rebalance(coordinator: GroupCoordinator, clock: ManualScheduler) -> None:
    a, b = stable_group(coordinator, clock, "a", "b")
    group = coordinator.groups["g"]
    follower = b if group.is_leader(a.member_id) else a
    leader = a if follower is b else b
    follower.join()  # same metadata: the current generation, no rebalance
    assert follower.joins[-1].generation_id == 1 and group.state is GroupState.STABLE
    leader.join()  # the leader's join always rebalances
    assert group.state is GroupState.PREPARING_REBALANCE
    follower.join()
    clock.advance(0)
    assert group.state is GroupState.COMPLETING_REBALANCE and group.generation_id == 2
    follower.join()  # lost its answer: gets the same generation again
    assert follower.joins[-1].generation_id == 2
    follower.join([("range", subscription("t", "u"))])  # new metadata: rebalance
    assert group.state is GroupState.PREPARING_REBALANCE


def test_join_errors(coordinator: GroupCoordinator, clock: ManualScheduler, manager: FakeGroupManager) -> None:
    a = Member(coordinator, "a")
    a.join(session_ms=999)
    assert a.joins[-1].error == errors.InvalidSessionTimeoutError.code
    a.join(session_ms=1_800_001)
    assert a.joins[-1].error == errors.InvalidSessionTimeoutError.code
    stranger = Member(coordinator, "s", member_id="s-1")
    stranger.join()
    assert stranger.joins[-1].error == errors.UnknownMemberIdError.code
    assert "g" not in coordinator.groups  # nothing was created for them
    a.join_with_id()
    other = Member(coordinator, "o")
    other.join(protocols=[("sticky", b"")])
    assert other.joins[-1].error == errors.InconsistentGroupProtocolError.code
    manager.foreign.add("elsewhere")
    manager.loading.add("loading")
    for group_id, error in (
        ("elsewhere", errors.NotCoordinatorError.code),
        ("loading", errors.CoordinatorLoadInProgressError.code),
        ("", errors.InvalidGroupIdError.code),
    ):
        m = Member(coordinator, "x", group_id=group_id)
        m.join()
        assert m.joins[-1].error == error


def test_group_max_size(clock: ManualScheduler, manager: FakeGroupManager) -> None:
    coordinator = make_coordinator(clock, manager, group_max_size=2)
    stable_group(coordinator, clock, "a", "b")
    c = Member(coordinator, "c")
    c.join()
    assert c.joins[-1].error == errors.GroupMaxSizeReachedError.code and c.joins[-1].member_id == ""


def test_the_initial_rebalance_delay_waits_for_new_members(clock: ManualScheduler, manager: FakeGroupManager) -> None:
    coordinator = make_coordinator(clock, manager, group_initial_rebalance_delay_ms=3000)
    a, b = Member(coordinator, "a"), Member(coordinator, "b")
    a.join_with_id()
    clock.advance(2000)
    b.join_with_id()  # restarts the delay
    clock.advance(1000)
    assert a.generation == -1 and b.generation == -1
    clock.advance(2999)
    assert a.generation == -1
    clock.advance(1)
    assert a.generation == b.generation == 1


def test_the_initial_delay_ends_at_the_rebalance_timeout(clock: ManualScheduler, manager: FakeGroupManager) -> None:
    coordinator = make_coordinator(clock, manager, group_initial_rebalance_delay_ms=20_000)
    members = [Member(coordinator, f"m{i}") for i in range(3)]
    members[0].join_with_id()
    clock.advance(15_000)
    members[1].join_with_id()  # the delay starts again at 20 s, for the 10 s left of the rebalance timeout
    clock.advance(10_000)
    members[2].join_with_id()  # comes within it, but no time is left after it
    clock.advance(4_999)
    assert all(m.generation == -1 for m in members)
    clock.advance(1)  # 30 s, the rebalance timeout, after the first join
    assert all(m.generation == 1 for m in members)


# --- sessions and rebalance timeouts ---------------------------------------------------------------------


def test_a_member_without_heartbeats_is_removed_after_its_session(
    coordinator: GroupCoordinator, clock: ManualScheduler
) -> None:
    a, b = stable_group(coordinator, clock, "a", "b")
    group = coordinator.groups["g"]
    clock.advance(SESSION_MS // 2)
    assert a.heartbeat() == errors.NONE
    clock.advance(SESSION_MS // 2 - 1)
    assert group.has(b.member_id) and a.heartbeat() == errors.NONE
    clock.advance(1)
    assert not group.has(b.member_id) and group.state is GroupState.PREPARING_REBALANCE
    assert a.heartbeat() == errors.RebalanceInProgressError.code
    a.join()
    clock.advance(0)
    assert a.joins[-1].generation_id == 2 and [m.member_id for m in a.joins[-1].members] == [a.member_id]


def test_members_that_do_not_rejoin_in_the_rebalance_timeout_are_dropped(
    coordinator: GroupCoordinator, clock: ManualScheduler
) -> None:
    a, b = stable_group(coordinator, clock, "a", "b")
    a.join([("range", subscription("t", "u"))])
    for _ in range(REBALANCE_MS // 5000):
        clock.advance(5000)
        b.heartbeat()  # alive, but does not rejoin
    assert a.generation == 2 and not coordinator.groups["g"].has(b.member_id)
    assert b.heartbeat() == errors.UnknownMemberIdError.code


def test_a_pending_member_id_expires_after_the_session(coordinator: GroupCoordinator, clock: ManualScheduler) -> None:
    a = Member(coordinator, "a")
    a.join()
    assert coordinator.groups["g"].pending_members
    clock.advance(SESSION_MS)
    assert "g" not in coordinator.groups or not coordinator.groups["g"].pending_members


def test_heartbeat_errors(coordinator: GroupCoordinator, clock: ManualScheduler, manager: FakeGroupManager) -> None:
    a, _ = stable_group(coordinator, clock, "a", "b")
    assert a.heartbeat() == errors.NONE
    assert coordinator.handle_heartbeat("g", "nobody", None, 1) == errors.UnknownMemberIdError.code
    assert coordinator.handle_heartbeat("g", a.member_id, None, 7) == errors.IllegalGenerationError.code
    assert coordinator.handle_heartbeat("other", "x", None, 1) == errors.UnknownMemberIdError.code
    manager.loading.add("g")
    assert a.heartbeat() == errors.NONE  # answered blindly while loading
    a.sync()
    assert a.syncs[-1].error == errors.RebalanceInProgressError.code


def test_sync_errors(coordinator: GroupCoordinator, clock: ManualScheduler) -> None:
    a, _ = stable_group(coordinator, clock, "a", "b")
    for generation, member_id, protocol_type, error in (
        (1, "nobody", "consumer", errors.UnknownMemberIdError.code),
        (9, a.member_id, "consumer", errors.IllegalGenerationError.code),
        (1, a.member_id, "connect", errors.InconsistentGroupProtocolError.code),
    ):
        results: list[SyncGroupResult] = []
        coordinator.handle_sync_group("g", generation, member_id, protocol_type, None, None, {}, results.append)
        assert results[-1].error == error


# --- LeaveGroup -------------------------------------------------------------------------------------------


def test_leave_group_with_several_members(
    coordinator: GroupCoordinator, clock: ManualScheduler, manager: FakeGroupManager
) -> None:
    a, b = stable_group(coordinator, clock, "a", "b")
    result = coordinator.handle_leave_group("g", [MemberIdentity(b.member_id), MemberIdentity("nobody")])
    assert result.top_level_error == errors.NONE
    assert [r.error for r in result.member_responses] == [errors.NONE, errors.UnknownMemberIdError.code]
    group = coordinator.groups["g"]
    assert group.state is GroupState.PREPARING_REBALANCE and not group.has(b.member_id)
    coordinator.handle_leave_group("g", [MemberIdentity(a.member_id)])
    assert group.state is GroupState.EMPTY and group.generation_id == 2
    assert manager.stored[-1][1]["members"] == [] and manager.stored[-1][1]["protocol"] is None
    unknown = coordinator.handle_leave_group("nothing", [MemberIdentity("x")])
    assert [r.error for r in unknown.member_responses] == [errors.UnknownMemberIdError.code]


def test_a_pending_member_may_leave(coordinator: GroupCoordinator) -> None:
    a = Member(coordinator, "a")
    a.join()
    result = coordinator.handle_leave_group("g", [MemberIdentity(a.member_id)])
    assert result.member_responses[0].error == errors.NONE


# --- static membership (KIP-345) ----------------------------------------------------------------------------


def static_group(coordinator: GroupCoordinator, clock: ManualScheduler) -> tuple[Member, Member]:
    a = Member(coordinator, "a", instance_id="ia")
    b = Member(coordinator, "b", instance_id="ib")
    a.join()
    b.join()
    clock.advance(0)
    leader = a if a.joins[-1].members else b
    for m in (a, b):
        m.sync({a.member_id: b"A", b.member_id: b"B"} if m is leader else None)
    assert a.member_id.startswith("ia-") and a.syncs[-1].assignment == b"A"
    return a, b


def test_a_static_member_rejoins_without_a_rebalance(
    coordinator: GroupCoordinator, clock: ManualScheduler, manager: FakeGroupManager
) -> None:
    a, b = static_group(coordinator, clock)
    group = coordinator.groups["g"]
    stores = len(manager.stored)
    old_id = a.member_id
    restarted = Member(coordinator, "a", instance_id="ia")
    restarted.join()
    result = restarted.joins[-1]
    assert result.error == errors.NONE and result.member_id != old_id and result.generation_id == 1
    assert result.leader_id == group.leader_id or result.leader_id != result.member_id
    assert group.state is GroupState.STABLE and group.generation_id == 1
    assert len(manager.stored) == stores + 1  # the new member id is persisted
    restarted.sync()
    assert restarted.syncs[-1].assignment == b"A"
    # the old incarnation is fenced everywhere
    assert a.heartbeat() == errors.FencedInstanceIdError.code
    a.sync()
    assert a.syncs[-1].error == errors.FencedInstanceIdError.code
    assert coordinator.validate_commit("g", old_id, 1, "ia") == errors.FencedInstanceIdError.code
    leave = coordinator.handle_leave_group("g", [MemberIdentity(old_id, "ia")])
    assert leave.member_responses[0].error == errors.FencedInstanceIdError.code
    assert b.heartbeat() == errors.NONE


def test_a_failed_store_reverts_the_static_member(
    coordinator: GroupCoordinator, clock: ManualScheduler, manager: FakeGroupManager
) -> None:
    a, _ = static_group(coordinator, clock)
    manager.store_error = errors.CoordinatorNotAvailableError.code
    restarted = Member(coordinator, "a", instance_id="ia")
    restarted.join()
    assert restarted.joins[-1].error == errors.CoordinatorNotAvailableError.code
    assert coordinator.groups["g"].static_members["ia"] == a.member_id
    assert a.heartbeat() == errors.NONE


def test_static_members_stay_through_a_rebalance_they_miss(
    coordinator: GroupCoordinator, clock: ManualScheduler
) -> None:
    a, b = static_group(coordinator, clock)
    a.join([("range", subscription("t", "u"))])
    for _ in range(REBALANCE_MS // 5000):
        clock.advance(5000)
        b.heartbeat()
    group = coordinator.groups["g"]
    assert group.has(b.member_id) and group.generation_id == 2  # kept, unlike a dynamic member


def test_a_static_member_leaves_by_instance_id(coordinator: GroupCoordinator, clock: ManualScheduler) -> None:
    a, _ = static_group(coordinator, clock)
    result = coordinator.handle_leave_group("g", [MemberIdentity("", "ia")])
    assert result.member_responses[0].error == errors.NONE
    assert not coordinator.groups["g"].has(a.member_id)


def test_a_static_member_with_an_unknown_instance_id_must_rejoin(
    coordinator: GroupCoordinator, clock: ManualScheduler
) -> None:
    a, _ = static_group(coordinator, clock)
    impostor = Member(coordinator, "x", instance_id="unknown", member_id=a.member_id)
    impostor.join()
    assert impostor.joins[-1].error == errors.UnknownMemberIdError.code


# --- OffsetCommit fencing ---------------------------------------------------------------------------------


def test_commit_fencing(coordinator: GroupCoordinator, clock: ManualScheduler, manager: FakeGroupManager) -> None:
    assert coordinator.validate_commit("standalone", "", -1, None) is None
    assert coordinator.validate_commit("standalone", "m", 3, None) == errors.IllegalGenerationError.code
    a, b = stable_group(coordinator, clock, "a", "b")
    assert coordinator.validate_commit("g", a.member_id, 1, None) is None
    assert coordinator.validate_commit("g", a.member_id, 0, None) == errors.IllegalGenerationError.code
    assert coordinator.validate_commit("g", "nobody", 1, None) == errors.UnknownMemberIdError.code
    assert coordinator.validate_commit("g", "", -1, None) == errors.UnknownMemberIdError.code
    c = Member(coordinator, "c")
    c.join_with_id()  # PreparingRebalance: the previous generation may still commit
    assert coordinator.validate_commit("g", a.member_id, 1, None) is None
    a.join()
    b.join()
    clock.advance(0)
    assert coordinator.groups["g"].state is GroupState.COMPLETING_REBALANCE
    assert coordinator.validate_commit("g", a.member_id, 2, None) == errors.RebalanceInProgressError.code
    assert not coordinator.group_is_empty_or_absent("g") and coordinator.group_is_empty_or_absent("standalone")


def test_a_commit_keeps_a_member_alive(coordinator: GroupCoordinator, clock: ManualScheduler) -> None:
    a, b = stable_group(coordinator, clock, "a", "b")
    for _ in range(3):
        clock.advance(SESSION_MS // 2)
        a.heartbeat()
        assert coordinator.validate_commit("g", b.member_id, 1, None) is None
    assert coordinator.groups["g"].has(b.member_id)


# --- ListGroups, DescribeGroups, DeleteGroups --------------------------------------------------------------


def test_list_and_describe(coordinator: GroupCoordinator, clock: ManualScheduler) -> None:
    a, _ = stable_group(coordinator, clock, "a", "b")
    other = Member(coordinator, "o", group_id="other")
    other.join_with_id()
    error, groups = coordinator.handle_list_groups()
    assert error == errors.NONE
    assert sorted((g.group_id, g.protocol_type, g.state) for g in groups) == [
        ("g", "consumer", "Stable"),
        ("other", "consumer", "PreparingRebalance"),
    ]
    assert [g.group_id for g in coordinator.handle_list_groups(["Stable", "Empty"])[1]] == ["g"]
    error, summary = coordinator.handle_describe_group("g")
    assert (error, summary.state, summary.protocol_type, summary.protocol) == (
        errors.NONE,
        "Stable",
        "consumer",
        "range",
    )
    described = {m.member_id: m for m in summary.members}
    assert described[a.member_id].assignment == b"a" and described[a.member_id].metadata == RANGE[0][1]
    assert described[a.member_id].client_host == "/127.0.0.1"
    _, rebalancing = coordinator.handle_describe_group("other")
    assert rebalancing.protocol == "" and rebalancing.members[0].metadata == b""
    assert coordinator.handle_describe_group("nothing")[1].state == "Dead"


def test_delete_groups(coordinator: GroupCoordinator, clock: ManualScheduler, manager: FakeGroupManager) -> None:
    import asyncio

    a, b = stable_group(coordinator, clock, "a", "b")
    gone = Member(coordinator, "x", group_id="gone")
    gone.join_with_id()
    clock.advance(0)
    coordinator.handle_leave_group("gone", [MemberIdentity(gone.member_id)])
    manager.offsets["standalone"] = {("t", 0): 5}
    results = asyncio.run(coordinator.handle_delete_groups(["g", "gone", "standalone", "never"]))
    assert results == {
        "g": errors.NonEmptyGroupError.code,
        "gone": errors.NONE,
        "standalone": errors.NONE,
        "never": errors.GroupIdNotFoundError.code,
    }
    assert manager.deleted == ["gone", "standalone"] and "gone" not in coordinator.groups


# --- coordinator failover --------------------------------------------------------------------------------


def test_a_loaded_group_is_stable_and_its_members_expire_unless_they_heartbeat(
    coordinator: GroupCoordinator, clock: ManualScheduler, manager: FakeGroupManager
) -> None:
    a, b = stable_group(coordinator, clock, "a", "b")
    value = manager.stored[-1][1]
    other_clock = ManualScheduler()
    successor = make_coordinator(other_clock, FakeGroupManager())
    successor.on_group_loaded("g", value)
    group = successor.groups["g"]
    assert (group.state, group.generation_id, group.protocol_name) == (GroupState.STABLE, 1, "range")
    assert group.get(a.member_id).assignment == b"a" and group.subscribed_topics == {"t"}
    a.coordinator = successor
    b.coordinator = successor
    a.sync()
    assert a.syncs[-1].assignment == b"a"
    other_clock.advance(SESSION_MS // 2)
    assert a.heartbeat() == errors.NONE
    other_clock.advance(SESSION_MS // 2)
    assert not group.has(b.member_id) and group.state is GroupState.PREPARING_REBALANCE


def test_an_unloaded_group_tells_its_waiting_members(coordinator: GroupCoordinator, clock: ManualScheduler) -> None:
    a, b = stable_group(coordinator, clock, "a", "b")
    a.join([("range", subscription("t", "u"))])  # waits for b
    coordinator.on_group_unloaded("g")
    assert a.joins[-1].error == errors.NotCoordinatorError.code
    assert "g" not in coordinator.groups
    clock.advance(REBALANCE_MS * 2)  # no timer of the group is left to act
    assert clock.pending() == 0


def test_a_group_of_standalone_commits_is_listed_and_described_empty(
    coordinator: GroupCoordinator, manager: FakeGroupManager
) -> None:
    manager.offsets["standalone"] = {("t", 0): 5}
    assert [(g.group_id, g.protocol_type, g.state) for g in coordinator.handle_list_groups()[1]] == [
        ("standalone", "", "Empty")
    ]
    assert coordinator.handle_list_groups(["Stable"])[1] == []
    summary = coordinator.handle_describe_group("standalone")[1]
    assert (summary.state, summary.protocol_type, summary.members) == ("Empty", "", ())


def test_a_group_whose_partition_moved_unstored_is_unloaded_at_its_next_request(
    coordinator: GroupCoordinator, clock: ManualScheduler, manager: FakeGroupManager
) -> None:
    a, b = stable_group(coordinator, clock, "a", "b")
    a.join([("range", subscription("t", "u"))])  # waits for b
    manager.foreign.add("g")
    assert coordinator.handle_list_groups()[1] == []
    assert b.heartbeat() == errors.NotCoordinatorError.code
    assert a.joins[-1].error == errors.NotCoordinatorError.code and "g" not in coordinator.groups


def test_while_rebalancing_the_last_to_rejoin_are_turned_away_at_the_max_size(
    clock: ManualScheduler, manager: FakeGroupManager
) -> None:
    coordinator = make_coordinator(clock, manager, group_max_size=2)
    a, b = stable_group(coordinator, clock, "a", "b")
    a.join([("range", subscription("t", "u"))])  # rebalance: one member awaiting
    c = Member(coordinator, "c")
    c.join(version=3)  # a new member still fits among those awaiting
    assert coordinator.groups["g"].num_members_awaiting_join == 2
    b.join()
    assert b.joins[-1].error == errors.GroupMaxSizeReachedError.code
    assert not coordinator.groups["g"].has(b.member_id)
    clock.advance(0)
    assert a.generation == c.generation == 2


def test_a_loaded_group_over_the_max_size_rebalances(clock: ManualScheduler, manager: FakeGroupManager) -> None:
    stable_group(make_coordinator(clock, manager), clock, "a", "b")
    small = make_coordinator(ManualScheduler(), FakeGroupManager(), group_max_size=1)
    small.on_group_loaded("g", manager.stored[-1][1])
    assert small.groups["g"].state is GroupState.PREPARING_REBALANCE


def test_offset_delete_checks(coordinator: GroupCoordinator, clock: ManualScheduler, manager: FakeGroupManager) -> None:
    from kafkaops.cluster.zk.values import TopicPartition

    stable_group(coordinator, clock, "a", "b")
    consumed, other = TopicPartition("t", 0), TopicPartition("u", 0)
    assert coordinator.offset_delete_check("g", [consumed, other]) == (
        errors.NONE,
        {consumed: errors.GroupSubscribedToTopicError.code},
    )
    assert coordinator.offset_delete_check("never", [other]) == (errors.GroupIdNotFoundError.code, {})
    manager.offsets["standalone"] = {other: 1}
    assert coordinator.offset_delete_check("standalone", [other]) == (errors.NONE, {})


def test_a_reload_in_a_new_epoch_keeps_the_live_group(
    coordinator: GroupCoordinator, clock: ManualScheduler, manager: FakeGroupManager
) -> None:
    a, b = stable_group(coordinator, clock, "a", "b")
    stale = manager.stored[0][1] if manager.stored else {}
    live = coordinator.groups["g"]
    a.join([("range", subscription("t", "u"))])  # a rebalance the record does not know of
    coordinator.on_group_loaded("g", {**stale, "generation": 0})
    assert coordinator.groups["g"] is live and a.joins[-1].error == errors.NONE
