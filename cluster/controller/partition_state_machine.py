"""The partition state machine (Kafka 2.8 `PartitionStateMachine` / `ZkPartitionStateMachine`, §4.3).

The states and the table of valid previous states are in `state_machines.py` (the context and the
elections read them too). A batch of requested transitions is split into valid and invalid ones before
any I/O; each invalid one is logged; the valid ones are written to ZooKeeper in one pipelined round
(new partitions' state znodes, elected leaders) and told to the brokers through one request batch.
Elections are pure functions (`elections.py`), chosen by the typed strategy the caller passes.

Owned by the controller's event thread, like the context it changes.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence, Set

from kazoo.exceptions import NodeExistsError, NoNodeError

from kafkaops.cluster.common.errors import MalformedZNodeError
from kafkaops.cluster.controller import elections
from kafkaops.cluster.controller.channel import ControllerBrokerRequestBatch, ControllerChannel, StateChangeSink
from kafkaops.cluster.controller.context import ControllerContext
from kafkaops.cluster.controller.controller_zk_client import PartitionStateZkClient
from kafkaops.cluster.controller.elections import (
    ControlledShutdownPartitionLeaderElectionStrategy,
    ElectionStrategy,
    OfflinePartitionLeaderElectionStrategy,
    PreferredReplicaPartitionLeaderElectionStrategy,
    ReassignPartitionLeaderElectionStrategy,
)
from kafkaops.cluster.controller.state_machines import PartitionState, TransitionSplit
from kafkaops.cluster.state_change_log import ControllerLog, ErrorTrace, Level, StateChangeEntry
from kafkaops.cluster.zk.client import PartitionStateRead
from kafkaops.cluster.zk.values import LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition

log = logging.getLogger("kafkaops.controller")

OFFLINE_ELECTION = OfflinePartitionLeaderElectionStrategy()
"""The strategy for new and offline partitions; unclean only where the topic's config allows it."""

Split = TransitionSplit[TopicPartition, PartitionState]


class PartitionStateMachine:
    """Moves partitions between NewPartition, OnlinePartition, OfflinePartition and NonExistentPartition."""

    def __init__(
        self,
        controller_id: int,
        context: ControllerContext,
        zk: PartitionStateZkClient,
        channel: ControllerChannel,
        log: ControllerLog,
        sink: StateChangeSink,
        *,
        unclean_leader_election_enable: bool = False,
    ) -> None:
        self.controller_id = controller_id
        self.context = context
        self.zk = zk
        self.channel = channel
        self.log = log
        self.sink = sink
        self.unclean_leader_election_enable = unclean_leader_election_enable
        """The broker's `unclean.leader.election.enable`, for topics that do not override it."""

    def startup(self, batch: ControllerBrokerRequestBatch | None = None) -> None:
        """Kafka's `startup` at failover: each partition's state from its leader (none: NewPartition; a
        dead one: OfflinePartition), then every New or Offline partition brought online."""
        ctx = self.context
        live = ctx.live_broker_ids
        for tp in ctx.all_partitions():
            info = ctx.partition_leadership_info(tp)
            if info is None:
                ctx.put_partition_state(tp, PartitionState.NEW)
            elif info.leader_and_isr.leader in live:
                ctx.put_partition_state(tp, PartitionState.ONLINE)
            else:
                ctx.put_partition_state(tp, PartitionState.OFFLINE)
        self.trigger_online_partition_state_change(batch=batch)

    def trigger_online_partition_state_change(
        self, topics: set[str] | None = None, batch: ControllerBrokerRequestBatch | None = None
    ) -> None:
        """Every New or Offline partition (of `topics`, if given) not queued for deletion → Online."""
        ctx = self.context
        candidates = [
            tp
            for tp in ctx.partitions_in_states(PartitionState.NEW, PartitionState.OFFLINE)
            if not ctx.is_topic_queued_up_for_deletion(tp.topic) and (topics is None or tp.topic in topics)
        ]
        if candidates:
            self.handle_state_changes(sorted(candidates), PartitionState.ONLINE, OFFLINE_ELECTION, batch)

    def handle_state_changes(
        self,
        partitions: Sequence[TopicPartition],
        target: PartitionState,
        strategy: ElectionStrategy = OFFLINE_ELECTION,
        batch: ControllerBrokerRequestBatch | None = None,
    ) -> dict[TopicPartition, str]:
        """Move `partitions` to `target` (electing leaders with `strategy` for OnlinePartition); returns
        the failures (partition → reason). Sends the batch unless the caller passed its own.

        Raises what ZooKeeper raises (ControllerMovedError when a newer controller exists): the states of
        the partitions not yet written are then left as they were."""
        own_batch = batch is None
        if batch is None:
            batch = self.channel.new_batch()
        split = self.context.split_partition_transitions(partitions, target)
        for invalid in split.invalid:
            self._write(
                self.log.partition_state_change_failed(
                    invalid.key, invalid.current, target, ErrorTrace.illegal_state(invalid.reason)
                )
            )
        failures: dict[TopicPartition, str] = {}
        if target is PartitionState.NEW:
            self._to_new(split)
        elif target is PartitionState.ONLINE:
            failures = self._to_online(split, strategy, batch)
        else:
            self._in_memory_only(split, target)
        if own_batch:
            self.channel.send(batch)
        return failures

    def _to_new(self, split: Split) -> None:
        ctx = self.context
        for tp in split.valid:
            ctx.put_partition_state(tp, PartitionState.NEW)
            self._write(self.log.new_partition(tp, split.current[tp], ctx.partition_replica_assignment(tp)))

    def _to_online(
        self, split: Split, strategy: ElectionStrategy, batch: ControllerBrokerRequestBatch
    ) -> dict[TopicPartition, str]:
        uninitialized = [tp for tp in split.valid if split.current[tp] is PartitionState.NEW]
        to_elect = [tp for tp in split.valid if split.current[tp] in (PartitionState.OFFLINE, PartitionState.ONLINE)]
        failures = self._initialize_leader_and_isr(uninitialized, batch)
        for tp in uninitialized:
            if tp not in failures:
                self._online(tp, split.current[tp])
        if to_elect:
            elected, failed = self._elect_leaders(to_elect, strategy, batch)
            failures.update(failed)
            for tp in elected:
                self._online(tp, split.current[tp])
        for tp, reason in failures.items():
            self._write(
                self.log.partition_state_change_failed(
                    tp, split.current[tp], PartitionState.ONLINE, ErrorTrace.state_change_failed(reason)
                )
            )
        return failures

    def _online(self, tp: TopicPartition, previous: PartitionState) -> None:
        info = self.context.partition_leadership_info(tp)
        if info is not None:  # written by this very change
            self._write(self.log.partition_online(tp, previous, info.leader_and_isr))
        self.context.put_partition_state(tp, PartitionState.ONLINE)

    def _in_memory_only(self, split: Split, target: PartitionState) -> None:
        """OfflinePartition, NonExistentPartition: nothing to write."""
        ctx = self.context
        trace = self.sink.enabled(Level.TRACE)  # these lines are TRACE: do not build them for nothing
        for tp in split.valid:
            ctx.put_partition_state(tp, target)
            if trace:
                self._write(self.log.partition_state_changed(tp, split.current[tp], target))

    def _initialize_leader_and_isr(
        self, partitions: Sequence[TopicPartition], batch: ControllerBrokerRequestBatch
    ) -> dict[TopicPartition, str]:
        """NewPartition → Online: create each partition's state znode (fenced), in one pipelined round."""
        ctx = self.context
        failures: dict[TopicPartition, str] = {}
        planned: list[tuple[TopicPartition, LeaderIsrAndControllerEpoch, tuple[int, ...]]] = []
        live = ctx.live_broker_ids
        for tp in partitions:
            result = elections.elect_initial(
                tp,
                ctx.partition_replica_assignment(tp),
                live,
                controller_id=self.controller_id,
                controller_epoch=ctx.epoch,
                live_brokers=live,
            )
            if isinstance(result, elections.ElectionFailed):
                failures[tp] = result.reason
                continue
            planned.append((tp, LeaderIsrAndControllerEpoch(result.leader_and_isr, ctx.epoch), result.recipients))
        if not planned:
            return failures
        outcomes = self.zk.create_topic_partition_states(
            [(tp, state) for tp, state, _ in planned], ctx.epoch_zk_version
        )
        for (tp, state, recipients), outcome in zip(planned, outcomes, strict=True):
            if outcome is not None:
                what = "it already exists" if isinstance(outcome, NodeExistsError) else type(outcome).__name__
                failures[tp] = f"Failed to create the state znode of partition {tp}: {what}"
                continue
            ctx.put_partition_leadership_info(tp, state)
            batch.add_leader_and_isr(recipients, tp, state, ctx.partition_full_replica_assignment(tp), is_new=True)
        return failures

    def _elect_leaders(
        self, partitions: Sequence[TopicPartition], strategy: ElectionStrategy, batch: ControllerBrokerRequestBatch
    ) -> tuple[list[TopicPartition], dict[TopicPartition, str]]:
        """Kafka's `electLeaderForPartitions`: elect, write conditionally, read again and retry BADVERSION.

        Kafka reads every state znode first. The first round here elects from the states this controller
        holds (each with the zkVersion it wrote or read), and reads only those it does not hold: the write
        is conditional on that version, so a state changed meanwhile (a leader's ISR write) or gone fails
        its write alone and is read again, on the session that writes, like any lost race. An election
        that fails on a held state is not trusted either (the ISR a reassignment waits for may have grown
        since): that partition is read and elected again. So every outcome rests on what ZooKeeper holds.
        At 10,000 partitions the read was ~0.2-0.3 s of the controller's election."""
        ctx = self.context
        elected: list[TopicPartition] = []
        failures: dict[TopicPartition, str] = {}
        remaining = list(partitions)
        first_round = True
        unclean_by_topic: dict[str, bool] = {}  # Kafka reads each topic's config once per election round
        while remaining:
            current: Mapping[TopicPartition, PartitionStateRead]
            held: Set[TopicPartition] = frozenset()  # states not read from ZooKeeper in this round
            if first_round:
                current, held = self._held_states(remaining)
            else:
                current = self.zk.get_topic_partition_states(remaining, fresh=True)
            writes: list[tuple[TopicPartition, elections.Elected]] = []
            again: list[TopicPartition] = []
            for tp in remaining:
                state = current.get(tp)
                if isinstance(state, MalformedZNodeError):
                    failures[tp] = str(state)
                    continue
                problem = elections.election_precondition_failure(
                    tp,
                    state,
                    controller_id=self.controller_id,
                    controller_epoch=ctx.epoch,
                    partition_state=ctx.partition_state(tp),
                )
                if problem is not None or state is None:
                    if tp in held:
                        again.append(tp)
                    else:
                        failures[tp] = problem.reason if problem is not None else f"No state for {tp}"
                    continue
                result = self._elect(tp, state.leader_and_isr, strategy, unclean_by_topic)
                if isinstance(result, elections.Elected):
                    writes.append((tp, result))
                elif tp in held:
                    again.append(tp)
                else:
                    failures[tp] = result.reason
            written = self.zk.update_leader_and_isr(
                [(tp, result.leader_and_isr) for tp, result in writes], ctx.epoch, ctx.epoch_zk_version
            )
            # someone (the leader, shrinking ISR) wrote first, or a held state did not elect: read again
            remaining = written.partitions_to_retry + again
            for tp, result in writes:
                outcome = written.finished.get(tp)
                if outcome is None:
                    continue
                if first_round and isinstance(outcome, NoNodeError):
                    remaining.append(tp)  # gone since this controller saw it: the read says so in Kafka's words
                    continue
                if isinstance(outcome, Exception):
                    failures[tp] = f"Failed to update the state of partition {tp}: {type(outcome).__name__}"
                    continue
                new_state = LeaderIsrAndControllerEpoch(outcome, ctx.epoch)
                ctx.put_partition_leadership_info(tp, new_state)
                batch.add_leader_and_isr(result.recipients, tp, new_state, ctx.partition_full_replica_assignment(tp))
                elected.append(tp)
            first_round = False
        return elected, failures

    def _held_states(
        self, partitions: Sequence[TopicPartition]
    ) -> tuple[dict[TopicPartition, PartitionStateRead], set[TopicPartition]]:
        """The states the context holds (and which those are), with a read of the others (a bulk one for a
        big set)."""
        leadership = self.context.partitions_leadership_info
        states: dict[TopicPartition, PartitionStateRead] = {}
        unheld: list[TopicPartition] = []
        for tp in partitions:
            state = leadership.get(tp)
            if state is None:
                unheld.append(tp)
            else:
                states[tp] = state
        held = set(states)
        if unheld:
            states.update(self.zk.get_topic_partition_states(unheld))
        return states, held

    def _elect(
        self,
        tp: TopicPartition,
        current: LeaderAndIsr,
        strategy: ElectionStrategy,
        unclean_by_topic: dict[str, bool],
    ) -> elections.ElectionResult:
        ctx = self.context
        assignment = ctx.partition_replica_assignment(tp)
        online = set(ctx.online_replicas(tp))
        match strategy:
            case PreferredReplicaPartitionLeaderElectionStrategy():
                return elections.elect_preferred(tp, assignment, current, online)
            case ControlledShutdownPartitionLeaderElectionStrategy():
                # the shutting-down brokers leave the ISR in this same write and still get the LeaderAndIsr
                # (they must learn they follow now): one write and one request per partition. Made a
                # follower, a shutting-down broker adds no fetcher (ReplicaManager, as Kafka's
                # makeFollowers): fetching, a 2.8 leader would take it back into the ISR.
                return elections.elect_controlled_shutdown(
                    tp,
                    assignment,
                    current,
                    ctx.online_replicas(tp, include_shutting_down=True),
                    frozenset(ctx.shutting_down_broker_ids),
                )
            case ReassignPartitionLeaderElectionStrategy():
                target = ctx.partition_full_replica_assignment(tp).target_replicas
                return elections.elect_reassign(tp, target, current, online & ctx.live_broker_ids)
            case OfflinePartitionLeaderElectionStrategy(allow_unclean=True):
                # an operator's explicit unclean election overrides the topic config; its failure text
                # names the default strategy, as it always has
                return elections.elect_offline(tp, assignment, current, online, unclean_enabled_by_topic=True)
            case OfflinePartitionLeaderElectionStrategy():
                # one ZooKeeper read per partition without a live ISR member made a large election worse
                # than linear (~4,700 reads at 10,000 partitions)
                unclean = False
                if not elections.live_isr(current, online):
                    if tp.topic not in unclean_by_topic:
                        unclean_by_topic[tp.topic] = self._unclean_enabled(tp.topic)
                    unclean = unclean_by_topic[tp.topic]
                return elections.elect_offline(tp, assignment, current, online, unclean_enabled_by_topic=unclean)

    def _unclean_enabled(self, topic: str) -> bool:
        value = self.zk.get_topic_config(topic).get("unclean.leader.election.enable")
        if value is None:
            return self.unclean_leader_election_enable
        return value.strip().lower() == "true"

    def _write(self, entry: StateChangeEntry) -> None:
        self.sink.write(entry)
