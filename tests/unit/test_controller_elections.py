"""Leader election strategies, the offline-replica ISR rule and auto rebalance (reference §5.3 – §5.6)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kafkaops.cluster.controller.elections import (
    ControlledShutdownPartitionLeaderElectionStrategy,
    Elected,
    ElectionFailed,
    OfflinePartitionLeaderElectionStrategy,
    PreferredReplicaPartitionLeaderElectionStrategy,
    ReassignPartitionLeaderElectionStrategy,
    elect_controlled_shutdown,
    elect_initial,
    elect_offline,
    elect_preferred,
    elect_reassign,
    election_precondition_failure,
    live_isr,
    remove_replica_from_isr,
    select_auto_rebalance,
)
from kafkaops.cluster.controller.state_machines import PartitionState
from kafkaops.cluster.zk.values import LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition

FOO0 = TopicPartition("foo", 0)


def lai(leader: int, isr: tuple[int, ...], epoch: int = 4, zk_version: int = 7) -> LeaderAndIsr:
    return LeaderAndIsr(leader, epoch, isr, zk_version)


def elected(result: Elected | ElectionFailed) -> Elected:
    assert isinstance(result, Elected), result
    return result


def failed(result: Elected | ElectionFailed) -> str:
    assert isinstance(result, ElectionFailed), result
    assert result.partition == FOO0
    return result.reason


# --- strategy names ------------------------------------------------------------------------------------


def test_strategy_names_are_scalas() -> None:
    assert str(OfflinePartitionLeaderElectionStrategy()) == "OfflinePartitionLeaderElectionStrategy(false)"
    assert str(OfflinePartitionLeaderElectionStrategy(True)) == "OfflinePartitionLeaderElectionStrategy(true)"
    assert str(ReassignPartitionLeaderElectionStrategy()) == "ReassignPartitionLeaderElectionStrategy"
    assert str(PreferredReplicaPartitionLeaderElectionStrategy()) == "PreferredReplicaPartitionLeaderElectionStrategy"
    assert (
        str(ControlledShutdownPartitionLeaderElectionStrategy()) == "ControlledShutdownPartitionLeaderElectionStrategy"
    )


# --- offline ---------------------------------------------------------------------------------------------


def test_offline_picks_first_live_isr_member_in_assignment_order() -> None:
    # 1 is live but out of sync, 2 is in sync but dead: 3 leads; the ISR keeps its live members
    result = elected(elect_offline(FOO0, [1, 2, 3], lai(2, (2, 3)), {1, 3}))
    assert result.leader_and_isr == LeaderAndIsr(3, 5, (3,), 7)
    assert result.recipients == (1, 3)
    assert not result.unclean


def test_offline_keeps_isr_order() -> None:
    result = elected(elect_offline(FOO0, [1, 2, 3], lai(9, (3, 2, 1)), {2, 3}))
    assert result.leader_and_isr.leader == 2
    assert result.leader_and_isr.isr == (3, 2)


def test_offline_without_live_isr_fails_with_kafkas_text() -> None:
    result = elect_offline(FOO0, [1, 2, 3], lai(1, (1,)), {2, 3})
    assert failed(result) == (
        "Failed to elect leader for partition foo-0 under strategy OfflinePartitionLeaderElectionStrategy(false)"
    )


def test_offline_unclean_allowed_by_topic_config() -> None:
    result = elected(elect_offline(FOO0, [1, 2, 3], lai(1, (1,)), {3, 2}, unclean_enabled_by_topic=True))
    assert result.leader_and_isr == LeaderAndIsr(2, 5, (2,), 7)
    assert result.unclean
    assert result.recipients == (2, 3)


def test_offline_unclean_allowed_by_strategy() -> None:
    strategy = OfflinePartitionLeaderElectionStrategy(allow_unclean=True)
    assert elected(elect_offline(FOO0, [1, 2], lai(1, (1,)), {2}, strategy=strategy)).leader_and_isr.leader == 2
    assert failed(elect_offline(FOO0, [1, 2], lai(1, (1,)), set(), strategy=strategy)).endswith(
        "OfflinePartitionLeaderElectionStrategy(true)"
    )


def test_offline_prefers_clean_even_when_unclean_allowed() -> None:
    result = elected(elect_offline(FOO0, [1, 2, 3], lai(1, (3,)), {2, 3}, unclean_enabled_by_topic=True))
    assert result.leader_and_isr.leader == 3
    assert not result.unclean


def test_live_isr() -> None:
    assert live_isr(lai(1, (3, 1, 2)), {1, 2}) == (1, 2)
    assert live_isr(lai(1, (3,)), {1, 2}) == ()


# --- reassign, preferred, controlled shutdown ---------------------------------------------------------------


def test_reassign_leader_from_target_isr_unchanged() -> None:
    current = lai(1, (1, 2, 3, 4, 5, 6))
    result = elected(elect_reassign(FOO0, [4, 5, 6], current, {1, 2, 3, 4, 5, 6}))
    assert result.leader_and_isr == LeaderAndIsr(4, 5, (1, 2, 3, 4, 5, 6), 7)
    assert result.recipients == (4, 5, 6)
    # 4 is dead, 5 not in sync: 6
    assert elected(elect_reassign(FOO0, [4, 5, 6], lai(1, (1, 4, 6)), {5, 6})).leader_and_isr.leader == 6
    assert failed(elect_reassign(FOO0, [4, 5], lai(1, (1,)), {4, 5})) == (
        "Failed to elect leader for partition foo-0 under strategy ReassignPartitionLeaderElectionStrategy"
    )


def test_preferred_only_the_head() -> None:
    result = elected(elect_preferred(FOO0, [2, 1, 3], lai(1, (1, 2, 3)), {1, 2, 3}))
    assert result.leader_and_isr == LeaderAndIsr(2, 5, (1, 2, 3), 7)
    assert result.recipients == (2, 1, 3)
    text = "Failed to elect leader for partition foo-0 under strategy PreferredReplicaPartitionLeaderElectionStrategy"
    assert failed(elect_preferred(FOO0, [2, 1, 3], lai(1, (1, 3)), {1, 2, 3})) == text  # head not in sync
    assert failed(elect_preferred(FOO0, [2, 1, 3], lai(1, (1, 2, 3)), {1, 3})) == text  # head dead
    assert failed(elect_preferred(FOO0, [], lai(1, (1,)), {1})) == text


def test_controlled_shutdown_moves_away_and_shrinks_isr() -> None:
    result = elected(elect_controlled_shutdown(FOO0, [1, 2, 3], lai(1, (1, 2, 3)), {1, 2, 3}, {1}))
    assert result.leader_and_isr == LeaderAndIsr(2, 5, (2, 3), 7)
    assert result.recipients == (1, 2, 3)  # the shutting-down broker learns it follows now
    # 2 is not live at all: skipped, and not a recipient
    result = elected(elect_controlled_shutdown(FOO0, [1, 2, 3], lai(1, (1, 2, 3)), {1, 3}, {1}))
    assert result.leader_and_isr.leader == 3
    assert result.recipients == (1, 3)
    assert failed(elect_controlled_shutdown(FOO0, [1, 2], lai(1, (1,)), {1, 2}, {1})) == (
        "Failed to elect leader for partition foo-0 under strategy ControlledShutdownPartitionLeaderElectionStrategy"
    )


# --- initial -------------------------------------------------------------------------------------------------


def test_initial_election() -> None:
    result = elected(elect_initial(FOO0, [3, 1, 2], {1, 2}, controller_id=0, controller_epoch=1, live_brokers={1, 2}))
    assert result.leader_and_isr == LeaderAndIsr(1, 0, (1, 2), 0)
    assert result.recipients == (1, 2)


def test_initial_election_without_live_replica() -> None:
    result = elect_initial(FOO0, [1, 2], set(), controller_id=0, controller_epoch=1, live_brokers={3})
    assert failed(result) == (
        "Controller 0 epoch 1 encountered error during state change of partition foo-0 from New to Online, "
        "assigned replicas are [1,2], live brokers are [Set(3)]. No assigned replica is alive."
    )
    many = elect_initial(FOO0, [9], set(), controller_id=0, controller_epoch=1, live_brokers=range(6))
    assert "live brokers are [HashSet(0, 5, 1, 2, 3, 4)]" in failed(many)


# --- preconditions ---------------------------------------------------------------------------------------------


def test_precondition_failures() -> None:
    state = LeaderIsrAndControllerEpoch(lai(1, (1,)), controller_epoch=3)
    assert (
        election_precondition_failure(
            FOO0, state, controller_id=0, controller_epoch=3, partition_state=PartitionState.OFFLINE
        )
        is None
    )
    missing = election_precondition_failure(
        FOO0, None, controller_id=0, controller_epoch=3, partition_state=PartitionState.OFFLINE
    )
    assert missing == ElectionFailed(
        FOO0, "LeaderAndIsr information doesn't exist for partition foo-0 in OfflinePartition state"
    )
    fenced = election_precondition_failure(
        FOO0, state, controller_id=0, controller_epoch=2, partition_state=PartitionState.ONLINE
    )
    assert fenced is not None
    assert fenced.reason == (
        "Aborted leader election for partition foo-0 since the LeaderAndIsr path was already written by another "
        "controller. This probably means that the current controller 0 went through a soft failure and another "
        "controller was elected with epoch 3."
    )


# --- a replica going offline -----------------------------------------------------------------------------------


def test_remove_replica_from_isr() -> None:
    assert remove_replica_from_isr(lai(1, (1, 2)), 3) is None
    assert remove_replica_from_isr(lai(1, (1, 2, 3)), 2) == LeaderAndIsr(1, 5, (1, 3), 7)
    assert remove_replica_from_isr(lai(1, (1, 2)), 1) == LeaderAndIsr(-1, 5, (2,), 7)
    # the last in-sync replica stays in the ISR; the partition is leaderless
    assert remove_replica_from_isr(lai(1, (1,)), 1) == LeaderAndIsr(-1, 5, (1,), 7)


# --- auto leader rebalance ----------------------------------------------------------------------------------------


def tp(topic: str, partition: int) -> TopicPartition:
    return TopicPartition(topic, partition)


def test_auto_rebalance_selects_imbalanced_brokers_only() -> None:
    assignments = {
        tp("a", 0): [1, 2],
        tp("a", 1): [1, 2],
        tp("a", 2): [1, 2],
        tp("a", 3): [2, 1],
        tp("b", 0): [2, 1],
        tp("b", 1): [2, 1],
        tp("b", 2): [2, 1],
        tp("b", 3): [2, 1],
        tp("b", 4): [2, 1],
        tp("b", 5): [2, 1],
        tp("b", 6): [2, 1],
        tp("b", 7): [2, 1],
        tp("b", 8): [2, 1],
        tp("b", 9): [2, 1],
    }
    leaders = {p: lai(r[0], (1, 2)) for p, r in assignments.items()}
    leaders[tp("a", 0)] = lai(2, (1, 2))  # broker 1: 1 of 3 not led → 33% > 10%
    leaders[tp("b", 0)] = lai(1, (1, 2))  # broker 2: 1 of 11 not led → 9.1% ≤ 10%
    selection = select_auto_rebalance(assignments, leaders, {1, 2}, imbalance_percentage=10)
    assert [(i.broker, i.preferred_partitions, i.not_led) for i in selection.imbalances] == [
        (1, 3, (tp("a", 0),)),
        (2, 11, (tp("b", 0),)),
    ]
    assert round(selection.imbalances[0].ratio, 3) == 0.333
    assert selection.to_elect == (tp("a", 0),)


def test_auto_rebalance_threshold_is_strict() -> None:
    assignments = {tp("a", p): [1, 2] for p in range(10)}
    leaders = {p: lai(1, (1, 2)) for p in assignments}
    leaders[tp("a", 0)] = lai(2, (1, 2))  # exactly 10%
    assert select_auto_rebalance(assignments, leaders, {1, 2}, imbalance_percentage=10).to_elect == ()
    assert select_auto_rebalance(assignments, leaders, {1, 2}, imbalance_percentage=9).to_elect == (tp("a", 0),)


def test_auto_rebalance_candidates_must_be_electable() -> None:
    assignments = {tp("a", 0): [1, 2], tp("a", 1): [1, 2], tp("a", 2): [1, 2], tp("d", 0): [1, 2]}
    leaders = {
        tp("a", 0): lai(2, (1, 2)),
        tp("a", 1): lai(2, (2,)),  # preferred replica out of sync
        tp("d", 0): lai(2, (1, 2)),  # topic being deleted: not even counted
    }  # a-2 has no leader yet: not counted as imbalanced

    def select(live: frozenset[int] = frozenset({1, 2}), **kwargs: object) -> tuple[TopicPartition, ...]:
        return select_auto_rebalance(
            assignments, leaders, live, imbalance_percentage=10, topics_queued_for_deletion={"d"}, **kwargs
        ).to_elect

    selection = select_auto_rebalance(
        assignments, leaders, {1, 2}, imbalance_percentage=10, topics_queued_for_deletion={"d"}
    )
    assert selection.imbalances[0].preferred_partitions == 3
    assert selection.imbalances[0].not_led == (tp("a", 0), tp("a", 1))
    assert selection.to_elect == (tp("a", 0),) == select()
    # preferred broker dead, or its replica in an offline log dir, or a reassignment anywhere: nothing
    assert select(frozenset({2})) == ()
    assert select(replicas_on_offline_dirs={1: {tp("a", 0)}}) == ()
    assert select(reassignment_in_progress=True) == ()
    # without the deletion queue, d-0 counts and is elected too
    assert select_auto_rebalance(assignments, leaders, {1, 2}, imbalance_percentage=10).to_elect == (
        tp("a", 0),
        tp("d", 0),
    )


# --- properties -------------------------------------------------------------------------------------------------------

BROKERS = st.integers(min_value=0, max_value=7)


@st.composite
def partition_facts(draw: st.DrawFn) -> tuple[list[int], LeaderAndIsr, set[int]]:
    assignment = draw(st.lists(BROKERS, min_size=1, max_size=5, unique=True))
    isr = draw(st.lists(st.sampled_from(assignment), min_size=1, max_size=len(assignment), unique=True))
    leader = draw(st.sampled_from([*isr, -1]))
    current = LeaderAndIsr(leader, draw(st.integers(0, 1000)), tuple(isr), draw(st.integers(0, 1000)))
    live = draw(st.sets(BROKERS))
    return assignment, current, live


@given(partition_facts(), st.booleans(), st.booleans())
def test_offline_election_properties(
    facts: tuple[list[int], LeaderAndIsr, set[int]], unclean_strategy: bool, unclean_topic: bool
) -> None:
    assignment, current, live = facts
    result = elect_offline(
        FOO0,
        assignment,
        current,
        live,
        strategy=OfflinePartitionLeaderElectionStrategy(unclean_strategy),
        unclean_enabled_by_topic=unclean_topic,
    )
    if isinstance(result, ElectionFailed):
        # no live ISR member, and no live replica at all when unclean election is allowed
        assert not live_isr(current, live)
        assert not (unclean_strategy or unclean_topic) or not live.intersection(assignment)
        return
    new = result.leader_and_isr
    assert new.leader in live and new.leader in assignment
    assert set(new.isr) <= live and new.leader in new.isr
    assert new.leader_epoch == current.leader_epoch + 1
    assert new.zk_version == current.zk_version
    assert result.recipients == tuple(r for r in assignment if r in live)
    assert result.unclean == (new.leader not in current.isr)
    if not (unclean_strategy or unclean_topic):
        assert new.leader in current.isr


@given(partition_facts(), st.sets(BROKERS))
def test_controlled_shutdown_properties(facts: tuple[list[int], LeaderAndIsr, set[int]], shutting: set[int]) -> None:
    assignment, current, live = facts
    result = elect_controlled_shutdown(FOO0, assignment, current, live | shutting, shutting)
    if isinstance(result, Elected):
        new = result.leader_and_isr
        assert new.leader not in shutting and new.leader in current.isr
        assert not set(new.isr) & shutting
        assert new.leader_epoch == current.leader_epoch + 1


@given(partition_facts(), st.data())
def test_every_strategy_elects_a_live_isr_member_with_a_new_epoch(
    facts: tuple[list[int], LeaderAndIsr, set[int]], data: st.DataObject
) -> None:
    assignment, current, live = facts
    target = data.draw(st.lists(BROKERS, min_size=1, max_size=4, unique=True))
    for result in (
        elect_offline(FOO0, assignment, current, live),
        elect_reassign(FOO0, target, current, live),
        elect_preferred(FOO0, assignment, current, live),
    ):
        if isinstance(result, Elected):
            assert result.leader_and_isr.leader in live
            assert result.leader_and_isr.leader in current.isr
            assert result.leader_and_isr.leader_epoch > current.leader_epoch


@given(partition_facts())
def test_initial_election_properties(facts: tuple[list[int], LeaderAndIsr, set[int]]) -> None:
    assignment, _, live = facts
    result = elect_initial(FOO0, assignment, live, controller_id=0, controller_epoch=1, live_brokers=live)
    if isinstance(result, Elected):
        assert result.leader_and_isr.isr == tuple(r for r in assignment if r in live)
        assert result.leader_and_isr.leader == result.leader_and_isr.isr[0]
        assert result.leader_and_isr.leader_epoch == 0
    else:
        assert not live.intersection(assignment)
