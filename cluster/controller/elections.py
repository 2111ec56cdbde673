"""Leader elections, the controller's ISR removal and auto leader rebalance, as pure functions.

Kafka 2.8 `Election.scala`, `PartitionLeaderElectionAlgorithms`, `ZkPartitionStateMachine`,
`ZkReplicaStateMachine.doRemoveReplicasFromIsr`, `KafkaController.checkAndTriggerAutoLeaderRebalance`
(kafka-reference.md §5.3, §5.4, §5.6). Every function takes the facts it decides on and returns a
result object: no I/O, no clock reads, no metrics. An election returns the new `LeaderAndIsr` with
the leader epoch already bumped and the zk_version untouched (the caller writes it conditionally and
learns the new version from ZooKeeper), plus the brokers that must receive the LeaderAndIsr request;
or a failure carrying the text of Kafka's StateChangeFailedException.

"live" arguments are the brokers whose replica of *that* partition is online: the live brokers,
without shutting-down ones, minus replicas in offline log dirs (`ControllerContext.online_replicas`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence, Set
from dataclasses import dataclass

from kafkaops.cluster.common.jvm_text import scala_immutable_set, scala_mutable_hash_order
from kafkaops.cluster.controller.state_machines import PartitionState
from kafkaops.cluster.zk.values import (
    INITIAL_LEADER_EPOCH,
    INITIAL_PARTITION_EPOCH,
    NO_LEADER,
    LeaderAndIsr,
    LeaderIsrAndControllerEpoch,
    TopicPartition,
)

# --- strategies ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class OfflinePartitionLeaderElectionStrategy:
    """New and offline partitions. `allow_unclean` is the caller's override (an UNCLEAN admin election);
    a topic whose `unclean.leader.election.enable` is true allows it without changing this name."""

    allow_unclean: bool = False

    def __str__(self) -> str:
        # a Scala case class with a Boolean field
        return f"OfflinePartitionLeaderElectionStrategy({'true' if self.allow_unclean else 'false'})"


@dataclass(frozen=True)
class ReassignPartitionLeaderElectionStrategy:
    def __str__(self) -> str:
        return "ReassignPartitionLeaderElectionStrategy"


@dataclass(frozen=True)
class PreferredReplicaPartitionLeaderElectionStrategy:
    def __str__(self) -> str:
        return "PreferredReplicaPartitionLeaderElectionStrategy"


@dataclass(frozen=True)
class ControlledShutdownPartitionLeaderElectionStrategy:
    def __str__(self) -> str:
        return "ControlledShutdownPartitionLeaderElectionStrategy"


ElectionStrategy = (
    OfflinePartitionLeaderElectionStrategy
    | ReassignPartitionLeaderElectionStrategy
    | PreferredReplicaPartitionLeaderElectionStrategy
    | ControlledShutdownPartitionLeaderElectionStrategy
)

# --- results -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Elected:
    """A leader was found. `recipients` get the LeaderAndIsr request (requests to brokers that are
    neither live nor shutting down are dropped at send time, as Kafka does)."""

    partition: TopicPartition
    leader_and_isr: LeaderAndIsr
    recipients: tuple[int, ...]
    unclean: bool = False
    """The leader came from outside the ISR (Kafka counts these in UncleanLeaderElectionsPerSec)."""


@dataclass(frozen=True)
class ElectionFailed:
    """No leader could be chosen; `reason` is the message of Kafka's StateChangeFailedException."""

    partition: TopicPartition
    reason: str


ElectionResult = Elected | ElectionFailed


def _failed(partition: TopicPartition, strategy: ElectionStrategy) -> ElectionFailed:
    return ElectionFailed(partition, f"Failed to elect leader for partition {partition} under strategy {strategy}")


def election_precondition_failure(
    partition: TopicPartition,
    state: LeaderIsrAndControllerEpoch | None,
    *,
    controller_id: int,
    controller_epoch: int,
    partition_state: PartitionState,
) -> ElectionFailed | None:
    """Kafka's checks on the state znode just read, before any election (`doElectLeaderForPartitions`).

    A missing state znode cannot be elected from; one written by a controller with a higher epoch
    means this controller has been replaced and must not overwrite it (§5.1 fencing).
    """
    if state is None:
        return ElectionFailed(
            partition, f"LeaderAndIsr information doesn't exist for partition {partition} in {partition_state} state"
        )
    if state.controller_epoch > controller_epoch:
        return ElectionFailed(
            partition,
            f"Aborted leader election for partition {partition} since the LeaderAndIsr path was already written by "
            f"another controller. This probably means that the current controller {controller_id} went through a "
            f"soft failure and another controller was elected with epoch {state.controller_epoch}.",
        )
    return None


# --- the five elections --------------------------------------------------------------------------


def live_isr(leader_and_isr: LeaderAndIsr, live: Set[int]) -> tuple[int, ...]:
    """ISR members that are online, in ISR order. When empty, an offline election can only be
    unclean, so the caller must find out (from the topic config) whether that is allowed."""
    return tuple(r for r in leader_and_isr.isr if r in live)


def elect_offline(
    partition: TopicPartition,
    assignment: Sequence[int],
    leader_and_isr: LeaderAndIsr,
    live: Set[int],
    *,
    strategy: OfflinePartitionLeaderElectionStrategy = OfflinePartitionLeaderElectionStrategy(),
    unclean_enabled_by_topic: bool = False,
) -> ElectionResult:
    """OfflinePartitionLeaderElectionStrategy (new/offline partitions, broker failure, UNCLEAN elections).

    Leader: the first replica in assignment order that is live and in the ISR; failing that, if unclean
    election is allowed (by the strategy or the topic's config), the first live replica. The new ISR is
    the live part of the old one if the leader came from it, else just the leader.
    """
    isr = leader_and_isr.isr
    leader = next((r for r in assignment if r in live and r in isr), None)
    unclean = False
    if leader is None and (strategy.allow_unclean or unclean_enabled_by_topic):
        leader = next((r for r in assignment if r in live), None)
        unclean = leader is not None
    if leader is None:
        return _failed(partition, strategy)
    new_isr = tuple(r for r in isr if r in live) if leader in isr else (leader,)
    recipients = tuple(r for r in assignment if r in live)
    return Elected(partition, leader_and_isr.new_leader_and_isr(leader, new_isr), recipients, unclean)


def elect_reassign(
    partition: TopicPartition,
    target_replicas: Sequence[int],
    leader_and_isr: LeaderAndIsr,
    live: Set[int],
) -> ElectionResult:
    """ReassignPartitionLeaderElectionStrategy: the first target replica that is live and in the ISR;
    the ISR is unchanged; every target replica receives the request."""
    leader = next((r for r in target_replicas if r in live and r in leader_and_isr.isr), None)
    if leader is None:
        return _failed(partition, ReassignPartitionLeaderElectionStrategy())
    return Elected(partition, leader_and_isr.new_leader(leader), tuple(target_replicas))


def elect_preferred(
    partition: TopicPartition,
    assignment: Sequence[int],
    leader_and_isr: LeaderAndIsr,
    live: Set[int],
) -> ElectionResult:
    """PreferredReplicaPartitionLeaderElectionStrategy: the head of the assignment, only if it is live
    and in the ISR; the ISR is unchanged; every assigned replica receives the request."""
    preferred = assignment[0] if assignment else None
    if preferred is None or preferred not in live or preferred not in leader_and_isr.isr:
        return _failed(partition, PreferredReplicaPartitionLeaderElectionStrategy())
    return Elected(partition, leader_and_isr.new_leader(preferred), tuple(assignment))


def elect_controlled_shutdown(
    partition: TopicPartition,
    assignment: Sequence[int],
    leader_and_isr: LeaderAndIsr,
    live_or_shutting_down: Set[int],
    shutting_down: Set[int],
) -> ElectionResult:
    """ControlledShutdownPartitionLeaderElectionStrategy: the first replica in assignment order that is
    live-or-shutting-down, in the ISR and not shutting down; the shutting-down brokers leave the ISR.
    The shutting-down broker still receives the request (it must learn it is now a follower)."""
    isr = leader_and_isr.isr
    leader = next(
        (r for r in assignment if r in live_or_shutting_down and r in isr and r not in shutting_down),
        None,
    )
    if leader is None:
        return _failed(partition, ControlledShutdownPartitionLeaderElectionStrategy())
    new_isr = tuple(r for r in isr if r not in shutting_down)
    recipients = tuple(r for r in assignment if r in live_or_shutting_down)
    return Elected(partition, leader_and_isr.new_leader_and_isr(leader, new_isr), recipients)


def elect_initial(
    partition: TopicPartition,
    assignment: Sequence[int],
    live: Set[int],
    *,
    controller_id: int,
    controller_epoch: int,
    live_brokers: Iterable[int],
) -> ElectionResult:
    """NewPartition → OnlinePartition (`initializeLeaderAndIsrForPartitions`): the first live assigned
    replica leads, every live assigned replica is in the ISR, leader epoch and zk_version start at 0;
    the ISR receives the request.

    `live_brokers` only feeds the failure text, which prints Kafka's `liveBrokerIds` Scala Set. Kafka
    2.8 prints the (empty) live replica list as "assigned replicas"; this prints the assignment.
    """
    replicas = tuple(r for r in assignment if r in live)
    if not replicas:
        brokers = scala_immutable_set(scala_mutable_hash_order(live_brokers))
        return ElectionFailed(
            partition,
            f"Controller {controller_id} epoch {controller_epoch} encountered error during state change of "
            f"partition {partition} from New to Online, assigned replicas are [{','.join(map(str, assignment))}], "
            f"live brokers are [{brokers}]. No assigned replica is alive.",
        )
    leader_and_isr = LeaderAndIsr(replicas[0], INITIAL_LEADER_EPOCH, replicas, INITIAL_PARTITION_EPOCH)
    return Elected(partition, leader_and_isr, replicas)


# --- a replica going offline (§5.4) --------------------------------------------------------------


def remove_replica_from_isr(leader_and_isr: LeaderAndIsr, replica: int) -> LeaderAndIsr | None:
    """`doRemoveReplicasFromIsr` for one partition: None when the replica is not in the ISR (nothing
    to write). A leader that leaves makes the partition leaderless (-1); an ISR of one is kept as it
    is, so that the last in-sync replica stays known for a later clean election. The epoch is bumped.
    """
    if replica not in leader_and_isr.isr:
        return None
    leader = NO_LEADER if leader_and_isr.leader == replica else leader_and_isr.leader
    isr = leader_and_isr.isr if len(leader_and_isr.isr) == 1 else tuple(r for r in leader_and_isr.isr if r != replica)
    return leader_and_isr.new_leader_and_isr(leader, isr)


# --- auto leader rebalance (§5.6) ----------------------------------------------------------------


@dataclass(frozen=True)
class PreferredLeaderImbalance:
    """One preferred broker's share of the partitions it should lead but does not."""

    broker: int
    preferred_partitions: int
    not_led: tuple[TopicPartition, ...]

    @property
    def ratio(self) -> float:
        return len(self.not_led) / self.preferred_partitions


@dataclass(frozen=True)
class AutoRebalanceSelection:
    imbalances: tuple[PreferredLeaderImbalance, ...]
    """Every preferred broker, ascending by id."""
    to_elect: tuple[TopicPartition, ...]
    """Partitions to move to their preferred leader (PREFERRED election, AutoTriggered)."""


def select_auto_rebalance(
    assignments: Mapping[TopicPartition, Sequence[int]],
    leaders: Mapping[TopicPartition, LeaderAndIsr],
    live_brokers: Set[int],
    *,
    imbalance_percentage: int,
    topics_queued_for_deletion: Set[str] = frozenset(),
    reassignment_in_progress: bool = False,
    replicas_on_offline_dirs: Mapping[int, Set[TopicPartition]] | None = None,
) -> AutoRebalanceSelection:
    """`checkAndTriggerAutoLeaderRebalance`: group the partitions not queued for deletion by preferred
    replica (head of the assignment); a broker whose ratio of partitions led by someone else exceeds
    `leader.imbalance.per.broker.percentage`/100 gets those partitions back, provided no reassignment
    is in progress anywhere and the preferred replica is online and in the ISR.

    `assignments` holds every existing partition; `leaders` their current leader and ISR (a partition
    without one does not count as imbalanced, as in Kafka).
    """
    offline_dirs = replicas_on_offline_dirs or {}

    def online(broker: int, partition: TopicPartition) -> bool:
        return broker in live_brokers and partition not in offline_dirs.get(broker, frozenset())

    by_preferred: dict[int, list[TopicPartition]] = {}
    for partition, replicas in assignments.items():
        if replicas and partition.topic not in topics_queued_for_deletion:
            by_preferred.setdefault(replicas[0], []).append(partition)

    imbalances = []
    to_elect: list[TopicPartition] = []
    threshold = imbalance_percentage / 100
    for broker in sorted(by_preferred):
        partitions = by_preferred[broker]
        not_led = tuple(p for p in partitions if p in leaders and leaders[p].leader != broker)
        imbalance = PreferredLeaderImbalance(broker, len(partitions), not_led)
        imbalances.append(imbalance)
        if imbalance.ratio > threshold and not reassignment_in_progress:
            to_elect.extend(p for p in not_led if online(broker, p) and broker in leaders[p].isr)
    return AutoRebalanceSelection(tuple(imbalances), tuple(to_elect))
