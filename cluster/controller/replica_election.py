"""Leader elections asked for from outside the state machines (Kafka 2.8 `KafkaController.onReplicaElection`
and its triggers; reference §5.6, §5.7): `/admin/preferred_replica_election`, ElectLeaders requests
(preferred or unclean) and the auto leader rebalance. What to elect is decided by pure functions
(`elections.py`); the elections themselves are the partition state machine's OnlinePartition → Online.

Owned by the controller's event thread.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from kazoo.exceptions import NoNodeError

from kafkaops.cluster.common import errors
from kafkaops.cluster.common.errors import MalformedZNodeError
from kafkaops.cluster.controller import elections
from kafkaops.cluster.controller.context import ControllerContext
from kafkaops.cluster.controller.controller_zk_client import ReplicaElectionZkClient
from kafkaops.cluster.controller.elections import (
    ElectionStrategy,
    OfflinePartitionLeaderElectionStrategy,
    PreferredReplicaPartitionLeaderElectionStrategy,
)
from kafkaops.cluster.controller.partition_state_machine import PartitionStateMachine
from kafkaops.cluster.controller.state_machines import PartitionState
from kafkaops.cluster.protocol.schemas import ElectionType
from kafkaops.cluster.zk.values import TopicPartition

log = logging.getLogger("kafkaops.controller")

PREFERRED_ELECTION = PreferredReplicaPartitionLeaderElectionStrategy()
UNCLEAN_ELECTION = OfflinePartitionLeaderElectionStrategy(allow_unclean=True)


class ReplicaElectionHandler:
    def __init__(
        self,
        context: ControllerContext,
        zk: ReplicaElectionZkClient,
        partition_state_machine: PartitionStateMachine,
        *,
        leader_imbalance_per_broker_percentage: int = 10,
    ) -> None:
        self.context = context
        self.zk = zk
        self.partition_state_machine = partition_state_machine
        self.leader_imbalance_per_broker_percentage = leader_imbalance_per_broker_percentage

    def process_preferred_replica_election(self) -> None:
        """`/admin/preferred_replica_election` (`kafka-preferred-replica-election --zookeeper`): the named
        partitions that exist, are not being deleted and are not led by their preferred replica are
        elected; the znode is then deleted (a malformed one too)."""
        ctx = self.context
        requested = self.zk.get_preferred_replica_election()
        if requested is None:
            return
        if isinstance(requested, MalformedZNodeError):
            log.error("Removing a malformed preferred replica election request: %s", requested)
            requested = set()
        valid = sorted(tp for tp in requested if self._preferred_election_needed(tp))
        if valid:
            self.elect_preferred(valid)
        outcome = self.zk.delete_preferred_replica_election(ctx.epoch_zk_version)
        if outcome is not None and not isinstance(outcome, NoNodeError):
            log.error("Could not delete the preferred replica election znode: %r", outcome)

    def _preferred_election_needed(self, tp: TopicPartition) -> bool:
        ctx = self.context
        if tp.topic not in ctx.all_topics or tp not in set(ctx.partitions_for_topic(tp.topic)):
            return False
        if ctx.is_topic_queued_up_for_deletion(tp.topic):
            return False
        info = ctx.partition_leadership_info(tp)
        return info is not None and info.leader_and_isr.leader != ctx.partition_replica_assignment(tp)[0]

    def process_replica_leader_election(
        self, election_type: ElectionType, requested: Sequence[TopicPartition] | None
    ) -> dict[TopicPartition, tuple[int, str | None]]:
        """`processReplicaLeaderElection` (an ElectLeaders request): per partition (error code, message).
        Unknown partitions and topics being deleted are refused, those whose leader is already right
        need no election, the others are elected (preferred: the first replica; unclean: any live
        replica when no live one is in the ISR)."""
        ctx = self.context
        known_partitions = set(ctx.all_partitions())
        partitions = sorted(set(requested) if requested is not None else known_partitions)
        results: dict[TopicPartition, tuple[int, str | None]] = {}
        electable: list[TopicPartition] = []
        for tp in partitions:
            if tp not in known_partitions:
                log.info(
                    "Skipping replica leader election (%s) for partition %s by AdminClientTriggered since it "
                    "doesn't exist.",
                    election_type.name,
                    tp,
                )
                results[tp] = (errors.UnknownTopicOrPartitionError.code, "The partition does not exist.")
            elif ctx.is_topic_queued_up_for_deletion(tp.topic):
                results[tp] = (errors.InvalidTopicError.code, "The topic is being deleted")
            elif self._election_needed(tp, election_type):
                electable.append(tp)
            else:
                results[tp] = (errors.ElectionNotNeededError.code, None)
        if electable:
            strategy: ElectionStrategy
            match election_type:
                case ElectionType.PREFERRED:
                    strategy, failed_code = PREFERRED_ELECTION, errors.PreferredLeaderNotAvailableError.code
                case ElectionType.UNCLEAN:
                    strategy, failed_code = UNCLEAN_ELECTION, errors.EligibleLeadersNotAvailableError.code
            failures = self.partition_state_machine.handle_state_changes(electable, PartitionState.ONLINE, strategy)
            for tp in electable:
                results[tp] = (failed_code, failures[tp]) if tp in failures else (errors.NONE, None)
        return results

    def _election_needed(self, tp: TopicPartition, election_type: ElectionType) -> bool:
        ctx = self.context
        info = ctx.partition_leadership_info(tp)
        leader = info.leader_and_isr.leader if info is not None else -1
        match election_type:
            case ElectionType.PREFERRED:
                return leader != ctx.partition_replica_assignment(tp)[0]
            case ElectionType.UNCLEAN:
                return leader == -1 or leader not in ctx.live_broker_ids

    def elect_preferred(self, partitions: Sequence[TopicPartition]) -> dict[TopicPartition, str]:
        return self.partition_state_machine.handle_state_changes(partitions, PartitionState.ONLINE, PREFERRED_ELECTION)

    def check_and_trigger_auto_leader_rebalance(self) -> None:
        """Kafka's `checkAndTriggerAutoLeaderRebalance` (the caller schedules the next one): nothing while
        a reassignment is in progress; otherwise the partitions `select_auto_rebalance` picks."""
        ctx = self.context
        if ctx.reassignment_in_progress:
            return
        assignments = {
            tp: ctx.partition_replica_assignment(tp)
            for tp in ctx.all_partitions()
            if not ctx.is_topic_queued_up_for_deletion(tp.topic)
        }
        leaders = {tp: info.leader_and_isr for tp, info in ctx.partitions_leadership_info.items()}
        selection = elections.select_auto_rebalance(
            assignments,
            leaders,
            ctx.live_broker_ids,
            imbalance_percentage=self.leader_imbalance_per_broker_percentage,
        )
        if selection.to_elect:
            self.elect_preferred(sorted(selection.to_elect))
