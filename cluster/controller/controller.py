"""The controller (Kafka 2.8 `KafkaController`, ZooKeeper mode; reference §5).

Every broker runs one. All of them compete for `/controller`; the winner bumps `/controller_epoch`
in the same multi, loads the cluster from ZooKeeper and then turns intents into decisions: topics
come online, leaders move off dead brokers, deleted topics disappear, preferred leaders return,
partitions move to the replicas `/admin/reassign_partitions` asks for (decisions in `reassignment.py`).

Threading: the state (`ControllerContext`) is owned by the event thread. kazoo watch callbacks,
timers, send-thread response callbacks and the broker's request handlers only `put` events. Every
ZooKeeper write is fenced on the `/controller_epoch` version (`fenced_multi`); a failed check means a
newer controller exists, and the handler resigns. When the ZooKeeper session is lost the controller
stops acting at once (`_active` is cleared on kazoo's thread, before any event can run).
"""

from __future__ import annotations

import contextlib
import gc
import logging
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from kazoo.exceptions import BadVersionError, NodeExistsError, NoNodeError
from kazoo.protocol.states import KazooState, WatchedEvent
from kazoo.recipe.watchers import ChildrenWatch, DataWatch

from kafkaops.cluster.controller import elections
from kafkaops.cluster.controller import reassignment as reassign
from kafkaops.cluster.controller.channel import ControllerBrokerRequestBatch, ControllerChannelManager
from kafkaops.cluster.controller.context import ControllerContext
from kafkaops.cluster.controller.event_manager import ControllerEventManager
from kafkaops.cluster.controller.state_machines import PartitionReplica, PartitionState, ReplicaState
from kafkaops.cluster.errors import ControllerMovedError, KafkaOpsError, MalformedZNodeError
from kafkaops.cluster.protocol import errors
from kafkaops.cluster.protocol.errors import BrokerNotAvailableError, NotControllerError, StaleBrokerEpochError
from kafkaops.cluster.state_change_log import ControllerLog, ErrorTrace, Level, StateChangeLogFile
from kafkaops.cluster.zk import znodes
from kafkaops.cluster.zk.client import KafkaZkClient, Op
from kafkaops.cluster.zk.pipelined import PipelinedReader
from kafkaops.cluster.zk.values import (
    NO_LEADER,
    LeaderAndIsr,
    LeaderIsrAndControllerEpoch,
    ReplicaAssignment,
    TopicAssignment,
    TopicPartition,
    new_kafka_uuid,
)

log = logging.getLogger("kafkaops.controller")

AUTO_REBALANCE_FIRST_DELAY_S = 5.0
BULK_READ_THRESHOLD = 200
"""From this many partitions on, state znodes are read with multiRead on a bulk connection."""


# --- events (small, immutable; handlers re-read ZooKeeper) ---------------------------------------


@dataclass(frozen=True)
class Startup:
    pass


@dataclass(frozen=True)
class ControllerChange:
    pass


@dataclass(frozen=True)
class Reelect:
    pass


@dataclass(frozen=True)
class Expire:
    pass


@dataclass(frozen=True)
class BrokerChange:
    pass


@dataclass(frozen=True)
class TopicChange:
    pass


@dataclass(frozen=True)
class PartitionModifications:
    topic: str


@dataclass(frozen=True)
class TopicDeletion:
    pass


@dataclass(frozen=True)
class IsrChangeNotification:
    pass


@dataclass(frozen=True)
class PreferredReplicaLeaderElection:
    pass


@dataclass(frozen=True)
class ReplicaLeaderElection:
    """An ElectLeaders request (`kafka-leader-election --bootstrap-server`): `partitions` None = all."""

    election_type: str
    partitions: tuple[TopicPartition, ...] | None
    result: Future  # type: ignore[type-arg]


@dataclass(frozen=True)
class LogDirEventNotification:
    """A child of `/log_dir_event_notification`: a broker lost a log dir."""


@dataclass(frozen=True)
class LeaderAndIsrResponseReceived:
    """A LeaderAndIsr answer naming replicas on offline log dirs (KAFKA_STORAGE_ERROR) or from a broker
    that had some."""

    broker_id: int
    partition_errors: tuple[tuple[TopicPartition, int], ...]


@dataclass(frozen=True)
class ZkPartitionReassignment:
    """`/admin/reassign_partitions` was created, changed or deleted."""


@dataclass(frozen=True)
class PartitionReassignmentIsrChange:
    """The state znodes of partitions being reassigned changed (Kafka's watch when AlterIsr is off); the
    partitions wait in `KafkaController._reassignment_isr_changed`."""


@dataclass(frozen=True)
class AutoPreferredReplicaLeaderElection:
    generation: int


@dataclass(frozen=True)
class TopicDeletionStopReplicaResponseReceived:
    broker_id: int
    partition_errors: tuple[tuple[TopicPartition, int], ...]
    error_code: int


@dataclass(frozen=True)
class ControlledShutdown:
    broker_id: int
    broker_epoch: int
    result: Future  # type: ignore[type-arg]


@dataclass(frozen=True)
class ShutdownController:
    done: threading.Event


@dataclass(frozen=True)
class ControllerSettings:
    """The broker configs the controller acts on (Kafka's names in comments)."""

    broker_id: int
    delete_topic_enable: bool = True  # delete.topic.enable
    unclean_leader_election_enable: bool = False  # unclean.leader.election.enable
    auto_leader_rebalance_enable: bool = True  # auto.leader.rebalance.enable
    leader_imbalance_per_broker_percentage: int = 10  # leader.imbalance.per.broker.percentage
    leader_imbalance_check_interval_s: float = 300.0  # leader.imbalance.check.interval.seconds
    zookeeper_connect: str = ""


class KafkaController:
    """One broker's controller component: an elector, and when elected the cluster's controller."""

    def __init__(
        self,
        settings: ControllerSettings,
        zk: KafkaZkClient,
        state_change_log: StateChangeLogFile,
        clock: Callable[[], float] = time.time,
        on_controller_change: Callable[[int | None], None] = lambda controller_id: None,
    ) -> None:
        self.settings = settings
        self.broker_id = settings.broker_id
        self.zk = zk
        self.sink = state_change_log
        self.clock = clock
        self.on_controller_change = on_controller_change
        self.active_controller_id: int | None = None
        self.context = ControllerContext()
        self.scl = ControllerLog(self.broker_id)
        self.channel: ControllerChannelManager | None = None
        self._active = False
        self.failover_completed_at: float | None = None
        """Monotonic time at which the last failover finished loading and acting (benchmarks read it)."""
        self._watch_generation = 0
        self._rebalance_generation = 0
        self._isr_watch_lock = threading.Lock()
        self._reassignment_isr_changed: set[TopicPartition] = set()
        """Partitions being reassigned whose state znode changed since the last look (filled on kazoo's
        thread, hence the lock)."""
        self.events = ControllerEventManager(self._process, f"controller-{self.broker_id}-event-thread")

    # --- public, thread-safe -------------------------------------------------------------------

    @property
    def is_active(self) -> bool:
        return self._active

    def startup(self) -> None:
        self.zk.kazoo.add_listener(self._session_state_changed)
        DataWatch(self.zk.kazoo, znodes.ControllerZNode.path(), self._controller_znode_changed)
        self.events.start()
        self.events.put(Startup())

    def shutdown(self) -> None:
        done = threading.Event()
        self.events.put(ShutdownController(done))
        done.wait(30)
        self.events.close()

    def elect_leaders(
        self, election_type: str, partitions: Sequence[TopicPartition] | None, timeout_s: float = 60.0
    ) -> dict[TopicPartition, tuple[int, str | None]]:
        """Kafka's `processReplicaLeaderElection` for an ElectLeaders request ("preferred" or "unclean"):
        per partition (error code, message), 0 for a new leader (blocks the caller). Raises TimeoutError
        and NotControllerError."""
        result: Future[dict[TopicPartition, tuple[int, str | None]]] = Future()
        self.events.put(
            ReplicaLeaderElection(election_type, tuple(partitions) if partitions is not None else None, result)
        )
        return result.result(timeout_s)

    def controlled_shutdown(self, broker_id: int, broker_epoch: int, timeout_s: float = 30.0) -> set[TopicPartition]:
        """The partitions `broker_id` still leads after moving what it can (blocks the caller)."""
        result: Future[set[TopicPartition]] = Future()
        self.events.put(ControlledShutdown(broker_id, broker_epoch, result))
        return result.result(timeout_s)

    # --- watch callbacks (kazoo's thread: enqueue only) ----------------------------------------

    def _session_state_changed(self, state: str) -> None:
        if state == KazooState.LOST:
            self._active = False  # stop acting before anything else can run
            self.events.put(Expire())
        elif state == KazooState.CONNECTED and self.active_controller_id is None:
            self.events.put(Reelect())

    def _controller_znode_changed(self, data: bytes | None, stat: Any, event: Any = None) -> bool:
        self.events.put(ControllerChange())
        return True

    def _watch(self, generation: int, event: object) -> Callable[..., bool]:
        def callback(*_: Any) -> bool:
            if generation != self._watch_generation:
                return False  # a resigned controller's watch: stop it
            self.events.put(event)
            return True

        return callback

    # --- the event loop ------------------------------------------------------------------------

    def _process(self, event: object) -> None:
        try:
            if isinstance(event, (Startup, Reelect, ControllerChange)):
                self._maybe_elect(event)
            elif isinstance(event, Expire):
                self._resign("ZooKeeper session expired")
            elif isinstance(event, ShutdownController):
                self._resign("broker shutting down")
                event.done.set()
            elif isinstance(event, ControlledShutdown):
                self._on_controlled_shutdown(event)
            elif isinstance(event, ReplicaLeaderElection):
                self._on_replica_leader_election(event)
            elif not self._active:
                return
            elif isinstance(event, BrokerChange):
                self._on_broker_change()
            elif isinstance(event, TopicChange):
                self._on_topic_change()
            elif isinstance(event, PartitionModifications):
                self._on_partition_modifications(event.topic)
            elif isinstance(event, TopicDeletion):
                self._on_topic_deletion()
            elif isinstance(event, TopicDeletionStopReplicaResponseReceived):
                self._on_stop_replica_deleted(event)
            elif isinstance(event, IsrChangeNotification):
                self._on_isr_change_notification()
            elif isinstance(event, PreferredReplicaLeaderElection):
                self._on_preferred_replica_election_znode()
            elif isinstance(event, LogDirEventNotification):
                self._on_log_dir_event_notification()
            elif isinstance(event, LeaderAndIsrResponseReceived):
                self._on_leader_and_isr_response(event)
            elif isinstance(event, ZkPartitionReassignment):
                self._on_zk_partition_reassignment(resume=False)
            elif isinstance(event, PartitionReassignmentIsrChange):
                self._on_partition_reassignment_isr_change()
            elif (
                isinstance(event, AutoPreferredReplicaLeaderElection) and event.generation == self._rebalance_generation
            ):
                self._on_auto_rebalance()
        except ControllerMovedError:
            self._resign("controller moved")
            self.events.put(Reelect())
        finally:
            self.sink.flush()

    # --- election, failover, resignation (§5.1, §5.2) -------------------------------------------

    def _maybe_elect(self, event: object) -> None:
        current = self._read_controller_id()
        self.active_controller_id = current
        if isinstance(event, ControllerChange) and self._active and current != self.broker_id:
            self._resign("another broker became controller")
        if current is not None:
            self.on_controller_change(current)
            return
        try:
            epoch, version = self.zk.register_controller_and_increment_controller_epoch(
                self.broker_id, int(self.clock() * 1000)
            )
        except ControllerMovedError:
            self.active_controller_id = self._read_controller_id()
            self.on_controller_change(self.active_controller_id)
            return
        self.active_controller_id = self.broker_id
        self.context = ControllerContext()
        self.context.epoch, self.context.epoch_zk_version = epoch, version
        self.scl = ControllerLog(self.broker_id, epoch)
        self._active = True
        log.info("Broker %s elected controller with epoch %s", self.broker_id, epoch)
        try:
            with _collector_paused():
                self._on_controller_failover()
        except ControllerMovedError:
            raise
        except Exception:
            log.exception("Controller failover failed; resigning")
            self._resign("failover failed")
            self.zk.kazoo.delete(znodes.ControllerZNode.path())
            return
        self.on_controller_change(self.broker_id)

    def _read_controller_id(self) -> int | None:
        try:
            return self.zk.get_controller_id()
        except MalformedZNodeError:
            return -1  # unreadable: someone holds it; do not fight over it

    def _resign(self, why: str) -> None:
        if not self._active and self.channel is None:
            return
        log.info("Controller %s resigning: %s", self.broker_id, why)
        self._active = False
        self._watch_generation += 1
        self._rebalance_generation += 1
        with self._isr_watch_lock:
            self._reassignment_isr_changed.clear()
        if self.channel is not None:
            self.channel.shutdown()
            self.channel = None
        self.context = ControllerContext()

    def _on_controller_failover(self) -> None:
        started = time.monotonic()
        zk = self.zk
        self._watch_generation += 1
        generation = self._watch_generation
        zk.ensure_paths(znodes.PERSISTENT_PATHS + (znodes.AdminZNode.path(),))
        ChildrenWatch(zk.kazoo, znodes.BrokerIdsZNode.path(), self._watch(generation, BrokerChange()), send_event=True)
        ChildrenWatch(zk.kazoo, znodes.TopicsZNode.path(), self._watch(generation, TopicChange()), send_event=True)
        ChildrenWatch(
            zk.kazoo, znodes.DeleteTopicsZNode.path(), self._watch(generation, TopicDeletion()), send_event=True
        )
        ChildrenWatch(
            zk.kazoo,
            znodes.LogDirEventNotificationZNode.path(),
            self._watch(generation, LogDirEventNotification()),
            send_event=True,
        )
        ChildrenWatch(
            zk.kazoo,
            znodes.IsrChangeNotificationZNode.path(),
            self._watch(generation, IsrChangeNotification()),
            send_event=True,
        )
        DataWatch(
            zk.kazoo,
            znodes.PreferredReplicaElectionZNode.path(),
            self._watch(generation, PreferredReplicaLeaderElection()),
        )
        DataWatch(zk.kazoo, znodes.ReassignPartitionsZNode.path(), self._watch(generation, ZkPartitionReassignment()))
        # stale notifications: the full reload below covers them
        self._delete_children(znodes.IsrChangeNotificationZNode.path())
        self._delete_children(znodes.LogDirEventNotificationZNode.path())
        self._initialize_context(generation)
        self.channel = ControllerChannelManager(self.broker_id)
        for broker in self.context.live_or_shutting_down_brokers:
            self.channel.add_broker(broker)
        # One round of requests for the whole start-up (Kafka sends one per step): the brokers' work on
        # them then does not compete with the rest of the failover.
        batch = self._new_batch()
        batch.add_update_metadata(self.context.live_broker_ids, self.context.all_partitions())
        self._replica_state_machine_startup(batch)
        self._partition_state_machine_startup(batch)
        self._send(batch)
        self._initialize_partition_reassignments()
        self._try_topic_deletion()
        self._on_preferred_replica_election_znode()
        if self.settings.auto_leader_rebalance_enable:
            self._schedule_auto_rebalance(AUTO_REBALANCE_FIRST_DELAY_S)
        self.failover_completed_at = time.monotonic()
        log.info(
            "Controller %s epoch %s ready in %.3f s: %d brokers, %d topics, %d partitions",
            self.broker_id,
            self.context.epoch,
            time.monotonic() - started,
            len(self.context.live_broker_ids),
            len(self.context.all_topics),
            len(self.context.all_partitions()),
        )

    def _initialize_context(self, generation: int) -> None:
        ctx = self.context
        ctx.set_live_brokers(self._read_brokers_and_epochs())
        topics = self.zk.get_all_topics()
        with PipelinedReader(self._connect_string()) as reader:
            # topic znodes are big (one entry per partition): fewer of them per multiRead
            topic_data = reader.get_data_many([znodes.TopicZNode.path(t) for t in topics], ops_per_request=50)
            assignments = {}
            for topic, entry in zip(topics, topic_data, strict=True):
                if entry is None:
                    continue
                try:
                    assignments[topic] = znodes.TopicZNode.decode(topic, entry[0])
                except MalformedZNodeError as error:
                    log.error("Ignoring topic %s: %s", topic, error)
            partitions = [TopicPartition(t, p) for t, a in assignments.items() for p in sorted(a.partitions)]
            states = reader.get_data_many(
                [znodes.TopicPartitionStateZNode.path(tp.topic, tp.partition) for tp in partitions]
            )
        ctx.set_all_topics(assignments)
        for topic, assignment in assignments.items():
            if assignment.topic_id:
                ctx.topic_ids[topic] = assignment.topic_id
            for partition, replica_assignment in assignment.partitions.items():
                tp = TopicPartition(topic, partition)
                ctx.update_partition_full_replica_assignment(tp, replica_assignment)
                if replica_assignment.is_being_reassigned:
                    ctx.partitions_being_reassigned.add(tp)
            DataWatch(
                self.zk.kazoo, znodes.TopicZNode.path(topic), self._watch(generation, PartitionModifications(topic))
            )
        for tp, entry in zip(partitions, states, strict=True):
            if entry is None:
                continue
            try:
                state = znodes.TopicPartitionStateZNode.decode(tp.topic, tp.partition, entry[0], entry[1].version)
            except MalformedZNodeError as error:
                log.error("Ignoring the state of %s: %s", tp, error)
                continue
            ctx.put_partition_leadership_info(tp, state)
        self._assign_topic_ids(list(assignments))
        deleting = set(self.zk.get_children(znodes.DeleteTopicsZNode.path()) or [])
        if self.settings.delete_topic_enable:
            ctx.queue_topic_deletion(t for t in deleting if t in ctx.all_topics)
            offline = {r.partition.topic for r in ctx.online_and_offline_replicas()[1]}
            halted = offline | {tp.topic for tp in ctx.partitions_being_reassigned}
            ctx.mark_topics_ineligible_for_deletion(t for t in ctx.topics_to_be_deleted if t in halted)

    def _read_brokers_and_epochs(self) -> list[tuple[Any, int]]:
        ids = self.zk.get_sorted_broker_ids()
        found = self.zk.get_many(znodes.BrokerIdZNode.path(b) for b in ids)
        result = []
        for broker_id in ids:
            entry = found[znodes.BrokerIdZNode.path(broker_id)]
            if entry is None:
                continue
            try:
                result.append((znodes.BrokerIdZNode.decode(broker_id, entry[0]), int(entry[1].czxid)))
            except MalformedZNodeError as error:
                log.error("Ignoring broker %s: %s", broker_id, error)
        return result

    def _assign_topic_ids(self, topics: Iterable[str]) -> None:
        """Kafka 2.8 (IBP 2.8) gives every topic a topic id; `kafka-topics --zookeeper` creates none."""
        for topic in topics:
            if topic in self.context.topic_ids:
                continue
            entry = self.zk.get(znodes.TopicZNode.path(topic))
            if entry is None:
                continue
            try:
                assignment = znodes.TopicZNode.decode(topic, entry[0])
            except MalformedZNodeError:
                continue
            topic_id = new_kafka_uuid()
            try:
                self.zk.fenced_multi(
                    [
                        Op.set(
                            znodes.TopicZNode.path(topic),
                            znodes.TopicZNode.encode(assignment.partitions, topic_id),
                            entry[1].version,
                        )
                    ],
                    self.context.epoch_zk_version,
                )
                self.context.topic_ids[topic] = topic_id
            except (BadVersionError, NoNodeError):
                pass  # changed meanwhile: its modification event comes next

    def _delete_children(self, path: str) -> None:
        children = self.zk.get_children(path) or []
        if children:
            self.zk.fenced_multi_many(
                [[Op.delete(f"{path}/{child}")] for child in children], self.context.epoch_zk_version
            )

    # --- state machines at startup (§5.2) ----------------------------------------------------------

    def _replica_state_machine_startup(self, batch) -> None:
        ctx = self.context
        live = ctx.live_broker_ids
        for tp in ctx.all_partitions():
            for replica in ctx.partition_replica_assignment(tp):
                state = ReplicaState.ONLINE if replica in live else ReplicaState.DELETION_INELIGIBLE
                ctx.put_replica_state(PartitionReplica(tp, replica), state)
        replicas = self._all_replicas()
        self._handle_replica_state_changes(
            [r for r in replicas if ctx.replica_state(r) is ReplicaState.ONLINE], ReplicaState.ONLINE, batch
        )
        # Kafka's "Triggering offline replica state changes": a broker that died with the previous
        # controller must still leave every ISR, or acks=all waits for it until the leaders shrink it.
        offline = [
            r
            for r in replicas
            if ctx.replica_state(r) is ReplicaState.DELETION_INELIGIBLE
            and not ctx.is_topic_queued_up_for_deletion(r.partition.topic)
        ]
        if offline:
            self._handle_replica_state_changes(offline, ReplicaState.OFFLINE, batch)

    def _partition_state_machine_startup(self, batch) -> None:
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
        self._trigger_online_partition_state_change(batch=batch)

    def _all_replicas(self) -> list[PartitionReplica]:
        ctx = self.context
        return [PartitionReplica(tp, r) for tp in ctx.all_partitions() for r in ctx.partition_replica_assignment(tp)]

    def _trigger_online_partition_state_change(self, topics: set[str] | None = None, batch=None) -> None:
        ctx = self.context
        candidates = [
            tp
            for tp in ctx.partitions_in_states(PartitionState.NEW, PartitionState.OFFLINE)
            if not ctx.is_topic_queued_up_for_deletion(tp.topic) and (topics is None or tp.topic in topics)
        ]
        if candidates:
            self._handle_partition_state_changes(
                sorted(candidates, key=_tp_order), PartitionState.ONLINE, "offline", batch=batch
            )

    # --- partition state machine (Kafka's ZkPartitionStateMachine) -------------------------------

    def _handle_partition_state_changes(
        self, partitions: Sequence[TopicPartition], target: PartitionState, strategy: str = "offline", batch=None
    ) -> dict[TopicPartition, str]:
        """Move `partitions` to `target`; returns the failures (partition → reason). Sends the batch
        unless the caller passed its own."""
        ctx = self.context
        own_batch = batch is None
        batch = batch or self._new_batch()
        split = ctx.split_partition_transitions(partitions, target)
        for invalid in split.invalid:
            self._write(
                self.scl.partition_state_change_failed(
                    invalid.key, invalid.current, target, ErrorTrace.illegal_state(invalid.reason)
                )
            )
        failures: dict[TopicPartition, str] = {}
        if target is PartitionState.NEW:
            for tp in split.valid:
                ctx.put_partition_state(tp, PartitionState.NEW)
                self._write(self.scl.new_partition(tp, split.current[tp], ctx.partition_replica_assignment(tp)))
        elif target is PartitionState.ONLINE:
            uninitialized = [tp for tp in split.valid if split.current[tp] is PartitionState.NEW]
            to_elect = [
                tp for tp in split.valid if split.current[tp] in (PartitionState.OFFLINE, PartitionState.ONLINE)
            ]
            for tp, reason in self._initialize_leader_and_isr(uninitialized, batch).items():
                failures[tp] = reason
            for tp in uninitialized:
                if tp not in failures:
                    self._write(
                        self.scl.partition_online(
                            tp, split.current[tp], ctx.partition_leadership_info(tp).leader_and_isr
                        )
                    )
                    ctx.put_partition_state(tp, PartitionState.ONLINE)
            if to_elect:
                elected, failed = self._elect_leaders(to_elect, strategy, batch)
                failures.update(failed)
                for tp in elected:
                    self._write(
                        self.scl.partition_online(
                            tp, split.current[tp], ctx.partition_leadership_info(tp).leader_and_isr
                        )
                    )
                    ctx.put_partition_state(tp, PartitionState.ONLINE)
            for tp, reason in failures.items():
                self._write(
                    self.scl.partition_state_change_failed(
                        tp, split.current[tp], target, ErrorTrace.state_change_failed(reason)
                    )
                )
        else:  # Offline, NonExistent: memory only
            trace = self.sink.enabled(Level.TRACE)  # these lines are TRACE: do not build them for nothing
            for tp in split.valid:
                ctx.put_partition_state(tp, target)
                if trace:
                    self._write(self.scl.partition_state_changed(tp, split.current[tp], target))
        if own_batch:
            self._send(batch)
        return failures

    def _initialize_leader_and_isr(self, partitions: Sequence[TopicPartition], batch) -> dict[TopicPartition, str]:
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
                controller_id=self.broker_id,
                controller_epoch=ctx.epoch,
                live_brokers=live,
            )
            if isinstance(result, elections.ElectionFailed):
                failures[tp] = result.reason
                continue
            planned.append((tp, LeaderIsrAndControllerEpoch(result.leader_and_isr, ctx.epoch), result.recipients))
        if not planned:
            return failures
        # parents first (null data, Kafka's createTopicPartitions), then the states
        parents = sorted({znodes.TopicPartitionsZNode.path(tp.topic) for tp, _, _ in planned})
        self._create_ignoring_existing(parents)
        self._create_ignoring_existing(
            [znodes.TopicPartitionZNode.path(tp.topic, tp.partition) for tp, _, _ in planned]
        )
        outcomes = self.zk.fenced_multi_many(
            [
                [
                    Op.create(
                        znodes.TopicPartitionStateZNode.path(tp.topic, tp.partition),
                        znodes.TopicPartitionStateZNode.encode(state),
                    )
                ]
                for tp, state, _ in planned
            ],
            ctx.epoch_zk_version,
        )
        for (tp, state, recipients), outcome in zip(planned, outcomes, strict=True):
            if isinstance(outcome, NodeExistsError):
                failures[tp] = f"Failed to create the state znode of partition {tp}: it already exists"
                continue
            if isinstance(outcome, Exception):
                failures[tp] = f"Failed to create the state znode of partition {tp}: {type(outcome).__name__}"
                continue
            ctx.put_partition_leadership_info(tp, state)
            batch.add_leader_and_isr(recipients, tp, state, ctx.partition_full_replica_assignment(tp), is_new=True)
        return failures

    def _create_ignoring_existing(self, paths: Sequence[str]) -> None:
        outcomes = self.zk.fenced_multi_many([[Op.create(p, b"")] for p in paths], self.context.epoch_zk_version)
        for path, outcome in zip(paths, outcomes, strict=True):
            if isinstance(outcome, Exception) and not isinstance(outcome, NodeExistsError):
                raise KafkaOpsError(f"Could not create {path}: {outcome!r}")

    def _elect_leaders(
        self, partitions: Sequence[TopicPartition], strategy: str, batch, shutting_down: set[int] | None = None
    ) -> tuple[list[TopicPartition], dict[TopicPartition, str]]:
        """Kafka's `electLeaderForPartitions`: read states, elect, write conditionally, retry BADVERSION."""
        ctx = self.context
        elected: list[TopicPartition] = []
        failures: dict[TopicPartition, str] = {}
        remaining = list(partitions)
        fresh = False
        while remaining:
            current = self._read_partition_states(remaining, fresh)
            fresh = True  # after a BADVERSION, read on the session that writes
            writes: list[tuple[TopicPartition, elections.Elected]] = []
            for tp in remaining:
                state = current.get(tp)
                problem = elections.election_precondition_failure(
                    tp,
                    state,
                    controller_id=self.broker_id,
                    controller_epoch=ctx.epoch,
                    partition_state=ctx.partition_state(tp),
                )
                if problem is not None or state is None:
                    failures[tp] = problem.reason if problem is not None else f"No state for {tp}"
                    continue
                result = self._elect_one(tp, state.leader_and_isr, strategy, shutting_down or set())
                if isinstance(result, elections.ElectionFailed):
                    failures[tp] = result.reason
                else:
                    writes.append((tp, result))
            outcomes = self.zk.fenced_multi_many(
                [
                    [
                        Op.set(
                            znodes.TopicPartitionStateZNode.path(tp.topic, tp.partition),
                            znodes.TopicPartitionStateZNode.encode(
                                LeaderIsrAndControllerEpoch(result.leader_and_isr, ctx.epoch)
                            ),
                            result.leader_and_isr.zk_version,
                        )
                    ]
                    for tp, result in writes
                ],
                ctx.epoch_zk_version,
            )
            remaining = []
            for (tp, result), outcome in zip(writes, outcomes, strict=True):
                if isinstance(outcome, BadVersionError):
                    remaining.append(tp)  # someone (the leader, shrinking ISR) wrote first: re-read
                    continue
                if isinstance(outcome, Exception):
                    failures[tp] = f"Failed to update the state of partition {tp}: {type(outcome).__name__}"
                    continue
                new_state = LeaderIsrAndControllerEpoch(
                    result.leader_and_isr.with_zk_version(outcome[0].version), ctx.epoch
                )
                ctx.put_partition_leadership_info(tp, new_state)
                batch.add_leader_and_isr(result.recipients, tp, new_state, ctx.partition_full_replica_assignment(tp))
                elected.append(tp)
        return elected, failures

    def _elect_one(
        self, tp: TopicPartition, current: LeaderAndIsr, strategy: str, shutting_down: set[int]
    ) -> elections.ElectionResult:
        ctx = self.context
        assignment = ctx.partition_replica_assignment(tp)
        live = ctx.live_broker_ids
        online = set(ctx.online_replicas(tp))
        if strategy == "preferred":
            return elections.elect_preferred(tp, assignment, current, online)
        if strategy == "controlled-shutdown":
            return elections.elect_controlled_shutdown(
                tp, assignment, current, online | (set(assignment) & shutting_down), shutting_down
            )
        if strategy == "reassign":
            return elections.elect_reassign(
                tp, ctx.partition_full_replica_assignment(tp).target_replicas, current, online & live
            )
        if strategy == "unclean":  # an operator's explicit unclean election overrides the topic config
            return elections.elect_offline(tp, assignment, current, online, unclean_enabled_by_topic=True)
        unclean = self._unclean_enabled(tp.topic) if not elections.live_isr(current, online) else False
        return elections.elect_offline(tp, assignment, current, online, unclean_enabled_by_topic=unclean)

    def _unclean_enabled(self, topic: str) -> bool:
        overrides, _ = self.zk.get_entity_config(znodes.ConfigType.TOPIC, topic)
        value = overrides.get("unclean.leader.election.enable")
        if value is None:
            return self.settings.unclean_leader_election_enable
        return value.strip().lower() == "true"

    # --- replica state machine (Kafka's ZkReplicaStateMachine) ------------------------------------

    def _handle_replica_state_changes(
        self, replicas: Sequence[PartitionReplica], target: ReplicaState, batch=None
    ) -> None:
        ctx = self.context
        own_batch = batch is None
        batch = batch or self._new_batch()
        split = ctx.split_replica_transitions(replicas, target)
        for invalid in split.invalid:
            self._write(
                self.scl.replica_state_change_failed(
                    invalid.key.replica,
                    invalid.key.partition,
                    invalid.current,
                    target,
                    ErrorTrace.illegal_state(invalid.reason),
                )
            )
        valid = list(split.valid)
        if target is ReplicaState.ONLINE:
            recipients: dict[TopicPartition, list[int]] = defaultdict(list)  # one batch entry per partition
            for replica in valid:
                if split.current[replica] is not ReplicaState.NEW:
                    recipients[replica.partition].append(replica.replica)
            for tp, brokers in recipients.items():
                info = ctx.partition_leadership_info(tp)
                if info is not None:
                    batch.add_leader_and_isr(brokers, tp, info, ctx.partition_full_replica_assignment(tp))
        elif target is ReplicaState.NEW:
            for replica in valid:
                info = ctx.partition_leadership_info(replica.partition)
                if info is not None and info.leader_and_isr.leader == replica.replica:
                    self._write(
                        self.scl.replica_state_change_failed(
                            replica.replica,
                            replica.partition,
                            split.current[replica],
                            target,
                            ErrorTrace.state_change_failed(
                                f"Replica {replica.replica} for partition {replica.partition} cannot be moved to "
                                "NewReplica state as it is being requested to become leader"
                            ),
                        )
                    )
                    continue
                if info is not None:
                    batch.add_leader_and_isr(
                        [replica.replica],
                        replica.partition,
                        info,
                        ctx.partition_full_replica_assignment(replica.partition),
                        is_new=True,
                    )
        elif target is ReplicaState.OFFLINE:
            self._replicas_offline(valid, batch)
        elif target is ReplicaState.DELETION_STARTED:
            for replica in valid:
                batch.add_stop_replica([replica.replica], replica.partition, delete=True)
        trace = self.sink.enabled(Level.TRACE)  # one TRACE line per replica: only when it is kept
        for replica in valid:
            if target is ReplicaState.NON_EXISTENT:
                ctx.remove_replica_state(replica)
            else:
                ctx.put_replica_state(replica, target)
            if trace:
                self._write(
                    self.scl.replica_state_changed(replica.replica, replica.partition, split.current[replica], target)
                )
        if own_batch:
            self._send(batch)

    def _replicas_offline(self, replicas: Sequence[PartitionReplica], batch) -> None:
        """StopReplica(delete=false), then each replica leaves its partition's ISR (conditional writes)."""
        ctx = self.context
        by_partition: dict[TopicPartition, list[int]] = defaultdict(list)
        for replica in replicas:
            batch.add_stop_replica([replica.replica], replica.partition, delete=False)
            by_partition[replica.partition].append(replica.replica)
        remaining = dict(by_partition)
        first = True
        while remaining:
            # First try with what the controller knows (it has just written many of these states);
            # a lost race (BADVERSION, e.g. a leader changed the ISR) re-reads from ZooKeeper.
            if first:
                current = {tp: ctx.partition_leadership_info(tp) for tp in remaining}
            else:
                current = self._read_partition_states(list(remaining), fresh=True)
            first = False
            writes = []
            # Kafka removes one replica at a time (a write each) and logs each step's state; one write
            # here, with the same final state, and each step logged as Kafka would have
            steps: dict[TopicPartition, list[tuple[int, LeaderAndIsr]]] = {}
            for tp, removed in remaining.items():
                state = current.get(tp)
                if state is None:
                    continue
                new = state.leader_and_isr
                steps[tp] = []
                for replica_id in removed:
                    new = elections.remove_replica_from_isr(new, replica_id) or new
                    steps[tp].append((replica_id, new))
                if new != state.leader_and_isr:
                    writes.append((tp, new, state.leader_and_isr.zk_version))
            outcomes = self.zk.fenced_multi_many(
                [
                    [
                        Op.set(
                            znodes.TopicPartitionStateZNode.path(tp.topic, tp.partition),
                            znodes.TopicPartitionStateZNode.encode(LeaderIsrAndControllerEpoch(new, ctx.epoch)),
                            version,
                        )
                    ]
                    for tp, new, version in writes
                ],
                ctx.epoch_zk_version,
            )
            retry = {}
            for (tp, new, _), outcome in zip(writes, outcomes, strict=True):
                if isinstance(outcome, BadVersionError):
                    retry[tp] = remaining[tp]
                    continue
                if isinstance(outcome, Exception):
                    continue
                state = LeaderIsrAndControllerEpoch(new.with_zk_version(outcome[0].version), ctx.epoch)
                ctx.put_partition_leadership_info(tp, state)
                for replica_id, step in steps[tp]:
                    self._write(
                        self.scl.replica_removed_from_isr(tp, LeaderIsrAndControllerEpoch(step, ctx.epoch), replica_id)
                    )
                if not ctx.is_topic_queued_up_for_deletion(tp.topic):
                    others = [r for r in ctx.partition_replica_assignment(tp) if r not in remaining[tp]]
                    batch.add_leader_and_isr(others, tp, state, ctx.partition_full_replica_assignment(tp))
            remaining = retry

    # --- brokers coming and going (§5.4) -----------------------------------------------------------

    def _on_broker_change(self) -> None:
        ctx = self.context
        registered = dict((b.broker_id, (b, epoch)) for b, epoch in self._read_brokers_and_epochs())
        known = ctx.live_broker_epochs
        new = sorted(b for b in registered if b not in known)
        dead = sorted(b for b in known if b not in registered)
        bounced = sorted(b for b in registered if b in known and registered[b][1] > known[b])
        if dead or bounced:
            for broker_id in dead + bounced:
                if self.channel is not None:
                    self.channel.remove_broker(broker_id)
            ctx.remove_live_brokers(dead + bounced)
            self._on_broker_failure(dead + bounced)
        if new or bounced:
            ctx.add_live_brokers(registered[b] for b in new + bounced)
            for broker_id in new + bounced:
                if self.channel is not None:
                    self.channel.add_broker(registered[broker_id][0])
            self._on_broker_startup(new + bounced)

    def _on_broker_startup(self, broker_ids: list[int]) -> None:
        ctx = self.context
        batch = self._new_batch()
        batch.add_update_metadata(ctx.live_broker_ids, ctx.all_partitions())
        self._send(batch)
        replicas = [r for r in ctx.replicas_on_brokers(broker_ids)]
        self._handle_replica_state_changes(sorted(replicas, key=_replica_order), ReplicaState.ONLINE)
        self._trigger_online_partition_state_change()
        # reassignments waiting for a target replica on a broker that just came (back)
        started = set(broker_ids)
        self._maybe_resume_reassignments(lambda tp, assignment: any(r in started for r in assignment.target_replicas))
        topics_to_retry = {
            r.partition.topic for r in replicas if ctx.is_topic_queued_up_for_deletion(r.partition.topic)
        }
        if topics_to_retry:
            ctx.resume_deletion_for_topics(topics_to_retry)
            self._try_topic_deletion()

    def _on_broker_failure(self, broker_ids: list[int]) -> None:
        ctx = self.context
        ctx.shutting_down_broker_ids.difference_update(broker_ids)
        led = [
            tp
            for b in broker_ids
            for tp in ctx.partitions_led_by(b)
            if not ctx.is_topic_queued_up_for_deletion(tp.topic)
        ]
        # One batch for the whole failure: new leaders, then the dead replicas leaving the ISR, reach
        # each broker as one LeaderAndIsr and one UpdateMetadata (Kafka sends a round per step).
        batch = self._new_batch()
        self._handle_partition_state_changes(sorted(set(led), key=_tp_order), PartitionState.OFFLINE, batch=batch)
        self._trigger_online_partition_state_change(batch=batch)
        replicas = sorted(ctx.replicas_on_brokers(broker_ids), key=_replica_order)
        deleting = [r for r in replicas if ctx.is_topic_queued_up_for_deletion(r.partition.topic)]
        self._handle_replica_state_changes([r for r in replicas if r not in set(deleting)], ReplicaState.OFFLINE, batch)
        if deleting:
            self._handle_replica_state_changes(deleting, ReplicaState.DELETION_INELIGIBLE, batch)
            ctx.mark_topics_ineligible_for_deletion({r.partition.topic for r in deleting})
        batch.add_update_metadata(ctx.live_broker_ids, [])
        self._send(batch)

    def _on_controlled_shutdown(self, event: ControlledShutdown) -> None:
        ctx = self.context
        if not self._active:
            event.result.set_exception(NotControllerError(f"Broker {self.broker_id} is not the controller"))
            return
        if event.broker_id not in ctx.live_broker_ids and event.broker_id not in ctx.shutting_down_broker_ids:
            event.result.set_exception(BrokerNotAvailableError(f"Broker id {event.broker_id} does not exist."))
            return
        epoch = ctx.broker_epoch(event.broker_id)
        if event.broker_epoch >= 0 and epoch is not None and event.broker_epoch < epoch:
            event.result.set_exception(
                StaleBrokerEpochError(f"Broker epoch {event.broker_epoch} of broker {event.broker_id} is stale")
            )
            return
        ctx.shutting_down_broker_ids.add(event.broker_id)
        batch = self._new_batch()
        led = sorted(
            (
                tp
                for tp in ctx.partitions_led_by(event.broker_id, replicated_only=True)
                if not ctx.is_topic_queued_up_for_deletion(tp.topic)
            ),
            key=_tp_order,
        )
        if led:
            self._handle_partition_state_changes(led, PartitionState.ONLINE, "controlled-shutdown", batch)
        followed = sorted(
            (
                PartitionReplica(tp, event.broker_id)
                for tp in ctx.partitions_on_broker(event.broker_id)
                if len(ctx.partition_replica_assignment(tp)) > 1
                and ctx.partition_leadership_info(tp) is not None
                and ctx.partition_leadership_info(tp).leader_and_isr.leader != event.broker_id
                and not ctx.is_topic_queued_up_for_deletion(tp.topic)
            ),
            key=_replica_order,
        )
        if followed:
            self._handle_replica_state_changes(followed, ReplicaState.OFFLINE, batch)
        self._send(batch)
        event.result.set_result(set(ctx.partitions_led_by(event.broker_id)))

    # --- topics (§5.2, §5.9) -------------------------------------------------------------------------

    def _on_topic_change(self) -> None:
        ctx = self.context
        topics = set(self.zk.get_all_topics())
        new_topics = sorted(topics - ctx.all_topics)
        deleted = ctx.all_topics - topics
        for topic in deleted:
            ctx.remove_topic(topic)
        ctx.set_all_topics(topics)
        if not new_topics:
            return
        assignments = self.zk.get_topic_assignments(new_topics)
        new_partitions = []
        for topic in new_topics:
            assignment = assignments.get(topic)
            if assignment is None:
                continue
            DataWatch(
                self.zk.kazoo,
                znodes.TopicZNode.path(topic),
                self._watch(self._watch_generation, PartitionModifications(topic)),
            )
            for partition, replica_assignment in sorted(assignment.partitions.items()):
                tp = TopicPartition(topic, partition)
                ctx.update_partition_full_replica_assignment(tp, replica_assignment)
                new_partitions.append(tp)
        self._assign_topic_ids(new_topics)
        self._on_new_partition_creation(new_partitions)

    def _on_new_partition_creation(self, partitions: list[TopicPartition]) -> None:
        if not partitions:
            return
        ctx = self.context
        replicas = [PartitionReplica(tp, r) for tp in partitions for r in ctx.partition_replica_assignment(tp)]
        self._handle_partition_state_changes(partitions, PartitionState.NEW)
        self._handle_replica_state_changes(replicas, ReplicaState.NEW)
        self._handle_partition_state_changes(partitions, PartitionState.ONLINE, "offline")
        self._handle_replica_state_changes(replicas, ReplicaState.ONLINE)

    def _on_partition_modifications(self, topic: str) -> None:
        ctx = self.context
        if topic not in ctx.all_topics:
            return
        entry = self.zk.get(znodes.TopicZNode.path(topic))
        if entry is None:
            return
        try:
            assignment = znodes.TopicZNode.decode(topic, entry[0])
        except MalformedZNodeError as error:
            log.error("Ignoring a change of topic %s: %s", topic, error)
            return
        known = {tp.partition for tp in ctx.partitions_for_topic(topic)}
        added = sorted(p for p in assignment.partitions if p not in known)
        if not added:
            return
        if ctx.is_topic_queued_up_for_deletion(topic):
            log.warning(
                "Skipping adding partitions %s for topic %s since it is currently being deleted",
                ",".join(map(str, added)),
                topic,
            )
            self._restore_partition_replica_assignment(topic, assignment, entry[1].version, known)
            return
        new_partitions = []
        for partition in added:
            tp = TopicPartition(topic, partition)
            ctx.update_partition_full_replica_assignment(tp, assignment.partitions[partition])
            new_partitions.append(tp)
        self._on_new_partition_creation(new_partitions)

    def _restore_partition_replica_assignment(
        self, topic: str, assignment: TopicAssignment, version: int, known: set[int]
    ) -> None:
        """Kafka's `restorePartitionReplicaAssignment`: partitions added to a topic being deleted are
        written out of its znode again (conditionally on the version read, fenced on the epoch)."""
        log.info("Restoring the partition replica assignment for topic %s", topic)
        restored = {p: a for p, a in assignment.partitions.items() if p in known}
        outcome = self.zk.fenced_multi_many(
            [
                [
                    Op.set(
                        znodes.TopicZNode.path(topic),
                        znodes.TopicZNode.encode(restored, assignment.topic_id),
                        version,
                    )
                ]
            ],
            self.context.epoch_zk_version,
        )[0]
        if isinstance(outcome, Exception):
            log.warning("Could not restore the assignment of topic %s: %r", topic, outcome)

    def _on_topic_deletion(self) -> None:
        ctx = self.context
        requested = set(self.zk.get_children(znodes.DeleteTopicsZNode.path()) or [])
        unknown = sorted(t for t in requested if t not in ctx.all_topics)
        if not self.settings.delete_topic_enable:
            unknown = sorted(requested)  # delete.topic.enable=false: drop the intents, do nothing
        if unknown:
            self.zk.fenced_multi_many(
                [[Op.delete(znodes.DeleteTopicsTopicZNode.path(t))] for t in unknown], ctx.epoch_zk_version
            )
        if not self.settings.delete_topic_enable:
            return
        to_delete = sorted(t for t in requested if t in ctx.all_topics)
        if not to_delete:
            return
        ctx.queue_topic_deletion(to_delete)
        offline = {r.partition.topic for r in ctx.online_and_offline_replicas()[1]}
        halted = offline | {tp.topic for tp in ctx.partitions_being_reassigned}  # "topic reassignment in progress"
        ctx.mark_topics_ineligible_for_deletion(t for t in to_delete if t in halted)
        self._try_topic_deletion()

    def _try_topic_deletion(self) -> None:
        ctx = self.context
        for topic in sorted(ctx.topics_to_be_deleted):
            if ctx.are_all_replicas_in_state(topic, ReplicaState.DELETION_SUCCESSFUL):
                self._complete_delete_topic(topic)
            elif ctx.is_any_replica_in_state(topic, ReplicaState.DELETION_STARTED):
                continue  # StopReplica responses will come
            elif ctx.is_topic_eligible_for_deletion(topic):
                self._on_topic_deletion_started(topic)
            elif ctx.is_any_replica_in_state(topic, ReplicaState.DELETION_INELIGIBLE):
                continue  # retried when a broker comes back

    def _on_topic_deletion_started(self, topic: str) -> None:
        ctx = self.context
        ctx.begin_topic_deletion([topic])
        partitions = sorted(ctx.partitions_for_topic(topic), key=_tp_order)
        batch = self._new_batch()
        batch.add_update_metadata(ctx.live_broker_ids, partitions)
        self._send(batch)
        self._handle_partition_state_changes(partitions, PartitionState.OFFLINE)
        self._handle_partition_state_changes(partitions, PartitionState.NON_EXISTENT)
        replicas = sorted(ctx.replicas_for_topic(topic), key=_replica_order)
        live = ctx.live_broker_ids
        dead = [r for r in replicas if r.replica not in live]
        alive = [r for r in replicas if r.replica in live]
        if dead:
            self._handle_replica_state_changes(dead, ReplicaState.DELETION_INELIGIBLE)
        self._handle_replica_state_changes(alive, ReplicaState.OFFLINE)
        self._handle_replica_state_changes(alive, ReplicaState.DELETION_STARTED)
        if dead:
            ctx.mark_topics_ineligible_for_deletion([topic])

    def _on_stop_replica_deleted(self, event: TopicDeletionStopReplicaResponseReceived) -> None:
        ctx = self.context
        failed = (
            {tp for tp, code in event.partition_errors if code != 0}
            if event.error_code == 0
            else {tp for tp, _ in event.partition_errors}
        )
        replicas = [PartitionReplica(tp, event.broker_id) for tp, _ in event.partition_errors]
        ineligible = [
            r for r in replicas if r.partition in failed and ctx.replica_state(r) is ReplicaState.DELETION_STARTED
        ]
        succeeded = [
            r for r in replicas if r.partition not in failed and ctx.replica_state(r) is ReplicaState.DELETION_STARTED
        ]
        if ineligible:
            self._handle_replica_state_changes(ineligible, ReplicaState.DELETION_INELIGIBLE)
            ctx.mark_topics_ineligible_for_deletion({r.partition.topic for r in ineligible})
        if succeeded:
            self._handle_replica_state_changes(succeeded, ReplicaState.DELETION_SUCCESSFUL)
        self._try_topic_deletion()

    def _complete_delete_topic(self, topic: str) -> None:
        ctx = self.context
        replicas = sorted(ctx.replicas_in_state(topic, ReplicaState.DELETION_SUCCESSFUL), key=_replica_order)
        self._handle_replica_state_changes(replicas, ReplicaState.NON_EXISTENT)
        self._delete_recursive(znodes.TopicZNode.path(topic))
        self._delete_recursive(znodes.ConfigEntityZNode.path(znodes.ConfigType.TOPIC, topic))
        self._delete_recursive(znodes.DeleteTopicsTopicZNode.path(topic))
        ctx.remove_topic(topic)
        log.info("Deletion of topic %s successfully completed", topic)

    def _delete_recursive(self, path: str) -> None:
        """Children first, each delete fenced (Kafka's `deleteRecursive` with the epoch check)."""
        order: list[str] = []
        stack = [path]
        while stack:
            current = stack.pop()
            children = self.zk.get_children(current)
            if children is None:
                continue
            order.append(current)
            stack.extend(f"{current}/{child}" for child in children)
        for node in reversed(order):
            outcome = self.zk.fenced_multi_many([[Op.delete(node)]], self.context.epoch_zk_version)[0]
            if isinstance(outcome, Exception) and not isinstance(outcome, NoNodeError):
                raise KafkaOpsError(f"Could not delete {node}: {outcome!r}")

    def _stop_replica_callback(self, broker_id: int, delete: bool) -> Callable[[int, dict[str, Any]], None] | None:
        if not delete:
            return None

        def received(broker: int, body: dict[str, Any]) -> None:
            errors = tuple(
                (TopicPartition(e["topic_name"], e["partition_index"]), e["error_code"])
                for e in body.get("partition_errors", [])
            )
            self.events.put(TopicDeletionStopReplicaResponseReceived(broker, errors, body.get("error_code", 0)))

        return received

    # --- log dir failures (Kafka's `processLogDirEventNotification`) ----------------------------------

    def _leader_and_isr_callback(self, broker_id: int, body: dict[str, Any]) -> None:
        """On a send thread: only answers that matter for offline log dirs become events."""
        partition_errors = tuple(
            (TopicPartition(e["topic_name"], e["partition_index"]), e["error_code"])
            for e in body.get("partition_errors", [])
        )
        storage_error = any(code == errors.KafkaStorageError.code for _, code in partition_errors)
        if storage_error or broker_id in self.context.replicas_on_offline_dirs:
            self.events.put(LeaderAndIsrResponseReceived(broker_id, partition_errors))

    def _on_log_dir_event_notification(self) -> None:
        """A broker reported a failed log dir: send LeaderAndIsr for all its replicas; its answers
        (KAFKA_STORAGE_ERROR per replica on the dead dir) tell which replicas went offline."""
        root = znodes.LogDirEventNotificationZNode.path()
        children = sorted(self.zk.get_children(root) or [])
        if not children:
            return
        brokers: set[int] = set()
        for path, entry in self.zk.get_many(f"{root}/{child}" for child in children).items():
            if entry is None:
                continue
            try:
                brokers.add(znodes.LogDirEventNotificationSequenceZNode.decode(entry[0]))
            except MalformedZNodeError as error:
                log.error("Ignoring log dir event notification %s: %s", path, error)
        ctx = self.context
        live = sorted(b for b in brokers if b in ctx.live_broker_ids)
        if live:
            log.info("Sending LeaderAndIsr to broker(s) %s to find the replicas on failed log dirs", live)
            replicas = sorted(ctx.replicas_on_brokers(live), key=_replica_order)
            self._handle_replica_state_changes(replicas, ReplicaState.ONLINE)
        self.zk.fenced_multi_many([[Op.delete(f"{root}/{child}")] for child in children], ctx.epoch_zk_version)

    def _on_leader_and_isr_response(self, event: LeaderAndIsrResponseReceived) -> None:
        ctx = self.context
        if event.broker_id not in ctx.live_broker_ids:
            return
        offline = {tp for tp, code in event.partition_errors if code == errors.KafkaStorageError.code}
        online = {tp for tp, code in event.partition_errors if code == errors.NONE}
        previous = ctx.replicas_on_offline_dirs.get(event.broker_id, set())
        current = (previous - online) | offline
        if current:
            ctx.replicas_on_offline_dirs[event.broker_id] = current
        else:
            ctx.replicas_on_offline_dirs.pop(event.broker_id, None)
        newly_offline = sorted(current - previous, key=_tp_order)
        if newly_offline:
            log.error(
                "Replicas of broker %s on offline log dirs: %s",
                event.broker_id,
                ",".join(map(str, newly_offline)),
            )
            self._on_replicas_become_offline([PartitionReplica(tp, event.broker_id) for tp in newly_offline])

    def _on_replicas_become_offline(self, replicas: list[PartitionReplica]) -> None:
        """Kafka's `onReplicasBecomeOffline`: partitions whose leader is now offline elect another, and the
        offline replicas leave the ISR (topics being deleted: their replicas become ineligible)."""
        ctx = self.context
        batch = self._new_batch()
        offline_leader = sorted(ctx.partitions_with_offline_leader(), key=_tp_order)
        self._handle_partition_state_changes(offline_leader, PartitionState.OFFLINE, batch=batch)
        self._trigger_online_partition_state_change(batch=batch)
        deleting = [r for r in replicas if ctx.is_topic_queued_up_for_deletion(r.partition.topic)]
        self._handle_replica_state_changes([r for r in replicas if r not in set(deleting)], ReplicaState.OFFLINE, batch)
        if deleting:
            self._handle_replica_state_changes(deleting, ReplicaState.DELETION_INELIGIBLE, batch)
            ctx.mark_topics_ineligible_for_deletion({r.partition.topic for r in deleting})
        batch.add_update_metadata(ctx.live_broker_ids, [])
        self._send(batch)

    # --- ISR changes (§5.5) --------------------------------------------------------------------------

    def _on_isr_change_notification(self) -> None:
        ctx = self.context
        children = sorted(self.zk.get_children(znodes.IsrChangeNotificationZNode.path()) or [])
        if not children:
            return
        found = self.zk.get_many(f"{znodes.IsrChangeNotificationZNode.path()}/{c}" for c in children)
        partitions: set[TopicPartition] = set()
        for path, entry in found.items():
            if entry is None:
                continue
            try:
                partitions |= znodes.IsrChangeNotificationSequenceZNode.decode(entry[0])
            except MalformedZNodeError as error:
                log.error("Ignoring ISR change notification %s: %s", path, error)
        try:
            known = sorted((tp for tp in partitions if tp.topic in ctx.all_topics), key=_tp_order)
            states = self.zk.get_partition_states(known)
            for tp, state in states.items():
                if state is not None:
                    ctx.put_partition_leadership_info(tp, state)
            batch = self._new_batch()
            batch.add_update_metadata(ctx.live_broker_ids, known)
            self._send(batch)
            # the leaders write these when they expand the ISR: a reassignment may be complete (its
            # completion watch, set apart, fires as well)
            self._maybe_complete_reassignments(known, states)
        finally:
            # only the notifications read: one written meanwhile fires the watch again
            self.zk.fenced_multi_many(
                [[Op.delete(f"{znodes.IsrChangeNotificationZNode.path()}/{c}")] for c in children],
                ctx.epoch_zk_version,
            )

    # --- partition reassignment (§5.7, §5.8; Kafka 2.8 KIP-455) -----------------------------------------

    def _initialize_partition_reassignments(self) -> None:
        """Kafka's `initializePartitionReassignments` at failover: the entries of the znode first (they
        supersede what the topic znodes hold), then every partition whose topic znode still lists
        adding or removing replicas."""
        resumed = self._on_zk_partition_reassignment(resume=True)
        self._maybe_resume_reassignments(lambda tp, assignment: tp not in resumed)

    def _maybe_resume_reassignments(self, should_resume: Callable[[TopicPartition, ReplicaAssignment], bool]) -> None:
        ctx = self.context
        to_resume: dict[TopicPartition, ReplicaAssignment] = {}
        for tp in sorted(ctx.partitions_being_reassigned, key=_tp_order):
            assignment = ctx.partition_full_replica_assignment(tp)
            if should_resume(tp, assignment):
                to_resume[tp] = assignment
        self._trigger_reassignments(to_resume)

    def _on_zk_partition_reassignment(self, resume: bool) -> set[TopicPartition]:
        """`processZkPartitionReassignment`: start (or supersede, or cancel) the reassignment of every
        entry, remove the refused ones from the znode; returns the partitions started. A znode that
        cannot be read as Kafka's JSON is logged and deleted (Kafka 2.8 ignores it and leaves it, which
        blocks every later reassignment)."""
        ctx = self.context
        entry = self.zk.get(znodes.ReassignPartitionsZNode.path())
        if entry is None:
            return set()
        try:
            requested = znodes.ReassignPartitionsZNode.decode(entry[0])
        except MalformedZNodeError as error:
            log.warning("Ignoring partition reassignment due to invalid json: %s", error)
            self._write_zk_reassignment({}, entry[1].version)
            return set()
        plan = reassign.plan_zk_reassignments(
            requested,
            ctx.partition_full_replica_assignment,
            ctx.is_topic_queued_up_for_deletion,
            ctx.live_broker_ids,
            resume=resume,
        )
        for tp in plan.being_deleted:
            log.info("Skipping reassignment of %s since the topic is currently being deleted", tp)
        failed = dict(plan.failed)
        refused = self._trigger_reassignments(plan.to_start)
        failed.update(refused)
        if failed:
            log.warning(
                "Failed reassignment through zk with the following errors: %s", reassign.format_failures(failed)
            )
            self._remove_from_zk_reassignment(lambda tp, _: tp in failed)
        elif not requested:
            self._remove_from_zk_reassignment(lambda tp, _: False)  # an empty list: nothing left to do
        return set(plan.to_start) - set(refused)

    def _trigger_reassignments(
        self,
        reassignments: Mapping[TopicPartition, ReplicaAssignment],
        states: Mapping[TopicPartition, LeaderIsrAndControllerEpoch | None] | None = None,
    ) -> dict[TopicPartition, reassign.ApiError]:
        """`maybeTriggerPartitionReassignment` for many partitions at once; returns the refused ones. A
        failure other than the controller moving is logged and reported, never raised: the batch is then
        retried one partition at a time, so that one bad partition does not stop the others (every step
        can be repeated, as a new controller resuming a reassignment repeats them)."""
        if not reassignments:
            return {}
        try:
            self._on_partition_reassignments(reassignments, states)
        except ControllerMovedError:
            log.info(
                "Failed completing reassignment of partitions %s because controller has moved to another broker",
                ",".join(str(tp) for tp in reassignments),
            )
            raise
        except Exception:
            if len(reassignments) == 1:
                tp = next(iter(reassignments))
                log.exception("Error completing reassignment of partition %s", tp)
                return {tp: reassign.UNKNOWN_SERVER_ERROR}
            log.exception("Error completing the reassignment of %d partitions: retrying one by one", len(reassignments))
            refused: dict[TopicPartition, reassign.ApiError] = {}
            for tp, assignment in reassignments.items():
                refused.update(self._trigger_reassignments({tp: assignment}))
            return refused
        return {}

    def _on_partition_reassignments(
        self,
        reassignments: Mapping[TopicPartition, ReplicaAssignment],
        states: Mapping[TopicPartition, LeaderIsrAndControllerEpoch | None] | None = None,
    ) -> None:
        """Kafka's `onPartitionReassignment`, for many partitions: each step once for all of them (one
        pipelined round of ZooKeeper writes, one request per broker), in Kafka's order for each partition.
        RS = replicas, AR/RR = adding/removing, TRS = target. `states`: the partitions' state znodes if
        the caller has just read them with the completion watch set.

        Phase U: ZooKeeper then memory get RS = TRS ++ ORS with AR and RR; replicas a superseded
        reassignment was adding and the new one does not hold are stopped. Phase A (TRS ⊄ ISR): bump
        the leader epoch, LeaderAndIsr to the origin and adding replicas, AR → NewReplica. Phase B
        (TRS ⊆ ISR): AR → OnlineReplica, RS = TRS in memory, leader moved if it is leaving (or dead),
        RR → Offline → deleted, RS = TRS in ZooKeeper, the entry leaves `/admin/reassign_partitions`,
        UpdateMetadata. The topic znode holds ORS until the very end, so a new controller can resume.
        """
        ctx = self.context
        # no deletion while a partition moves
        ctx.mark_topics_ineligible_for_deletion({tp.topic for tp in reassignments})
        changed = self._update_current_reassignments(reassignments)
        if changed or states is None:
            states = self._watch_reassignment_isr(list(reassignments))
        complete = {
            tp: assignment
            for tp, assignment in reassignments.items()
            if self._is_reassignment_complete(assignment, states.get(tp))
        }
        incomplete = {tp: assignment for tp, assignment in reassignments.items() if tp not in complete}
        if incomplete:
            self._update_leader_epochs_and_send_requests(incomplete)  # A1
            self._handle_replica_state_changes(  # A2
                [PartitionReplica(tp, r) for tp, a in incomplete.items() for r in a.adding_replicas], ReplicaState.NEW
            )
        if complete:
            self._complete_reassignments(complete)

    def _complete_reassignments(self, reassignments: Mapping[TopicPartition, ReplicaAssignment]) -> None:
        """Phase B (see `_on_partition_reassignments`)."""
        ctx = self.context
        self._handle_replica_state_changes(  # B1
            [PartitionReplica(tp, r) for tp, a in reassignments.items() for r in a.adding_replicas],
            ReplicaState.ONLINE,
        )
        completed = {tp: ReplicaAssignment(a.target_replicas) for tp, a in reassignments.items()}
        for tp, assignment in completed.items():
            ctx.update_partition_full_replica_assignment(tp, assignment)  # B2
        self._move_reassigned_partition_leaders_if_required(completed)  # B3
        self._stop_removed_replicas_of_reassigned_partitions(  # B4, B5
            [PartitionReplica(tp, r) for tp, a in reassignments.items() for r in a.removing_replicas]
        )
        self._update_replica_assignments(completed)  # B6
        self._remove_partitions_from_reassigning_partitions(completed)  # B7
        batch = self._new_batch()  # B8
        batch.add_update_metadata(ctx.live_or_shutting_down_broker_ids, list(completed))
        self._send(batch)
        # a topic's deletion waits for its last partition to move (`resume_deletion_for_topics`)
        queued = sorted({tp.topic for tp in completed if ctx.is_topic_queued_up_for_deletion(tp.topic)})
        if queued:
            ctx.resume_deletion_for_topics(queued)
            self._try_topic_deletion()

    def _update_current_reassignments(self, reassignments: Mapping[TopicPartition, ReplicaAssignment]) -> bool:
        """Phase U; True if any assignment changed."""
        ctx = self.context
        current = {tp: ctx.partition_full_replica_assignment(tp) for tp in reassignments}
        changed = {tp: a for tp, a in reassignments.items() if current[tp] != a}
        for tp, assignment in changed.items():
            log.debug("Updating assignment of partition %s from %s to %s", tp, current[tp], assignment)
        if changed:
            self._update_replica_assignments(changed)  # U1
            for tp, assignment in changed.items():
                ctx.update_partition_full_replica_assignment(tp, assignment)  # U2
            self._stop_removed_replicas_of_reassigned_partitions(  # U3
                [
                    PartitionReplica(tp, r)
                    for tp, assignment in changed.items()
                    for r in reassign.unneeded_replicas(current[tp], assignment)
                ]
            )
        ctx.partitions_being_reassigned.update(reassignments)
        return bool(changed)

    def _is_reassignment_complete(
        self, assignment: ReplicaAssignment, state: LeaderIsrAndControllerEpoch | None | MalformedZNodeError
    ) -> bool:
        if isinstance(state, MalformedZNodeError):
            return not assignment.is_being_reassigned
        return reassign.is_reassignment_complete(assignment, state.leader_and_isr.isr if state else None)

    def _update_leader_epochs_and_send_requests(
        self, reassignments: Mapping[TopicPartition, ReplicaAssignment]
    ) -> None:
        """Same leader and ISR, next leader epoch, so that the replicas take the new replica set; the
        origin replicas get it as they are, the adding ones with isNew (they may start on any log dir)."""
        updated = self._update_leader_epochs(list(reassignments))
        batch = self._new_batch()
        for tp, assignment in reassignments.items():
            state = updated.get(tp)
            if state is None:
                self._write(self.scl.reassignment_request_failed(tp, assignment))
                continue
            batch.add_leader_and_isr(assignment.original_replicas, tp, state, assignment, is_new=False)
            batch.add_leader_and_isr(assignment.adding_replicas, tp, state, assignment, is_new=True)
        self._send(batch)
        for tp, assignment in reassignments.items():
            state = updated.get(tp)
            if state is not None:
                self._write(self.scl.reassignment_request_sent(tp, state, assignment))

    def _update_leader_epochs(
        self, partitions: Sequence[TopicPartition]
    ) -> dict[TopicPartition, LeaderIsrAndControllerEpoch]:
        """Kafka's `updateLeaderEpoch` for many partitions: read the state znodes, write them back with the
        next leader epoch (conditionally, in one pipelined round; a leader's ISR write in between means
        read that one again). A partition whose state znode went away is left out. Raises if a state
        znode is missing at the first read or was written by a newer controller."""
        ctx = self.context
        updated: dict[TopicPartition, LeaderIsrAndControllerEpoch] = {}
        remaining = list(partitions)
        fresh = False
        while remaining:
            current = self._read_partition_states(remaining, fresh)
            fresh = True  # after a BADVERSION, read on the session that writes
            writes: list[tuple[TopicPartition, LeaderAndIsr]] = []
            for tp in remaining:
                state = current[tp]
                if state is None:
                    raise KafkaOpsError(
                        f"Cannot update leader epoch for partition {tp} as leaderAndIsr path is empty. This could "
                        "mean we somehow tried to reassign a partition that doesn't exist"
                    )
                if state.controller_epoch > ctx.epoch:
                    raise KafkaOpsError(
                        "Leader and isr path written by another controller. This probably means the current "
                        f"controller with epoch {ctx.epoch} went through a soft failure and another controller was "
                        f"elected with epoch {state.controller_epoch}. Aborting state change by this controller"
                    )
                writes.append((tp, state.leader_and_isr.new_epoch()))
            outcomes = self.zk.fenced_multi_many(
                [
                    [
                        Op.set(
                            znodes.TopicPartitionStateZNode.path(tp.topic, tp.partition),
                            znodes.TopicPartitionStateZNode.encode(LeaderIsrAndControllerEpoch(new, ctx.epoch)),
                            new.zk_version,
                        )
                    ]
                    for tp, new in writes
                ],
                ctx.epoch_zk_version,
            )
            remaining = []
            for (tp, new), outcome in zip(writes, outcomes, strict=True):
                if isinstance(outcome, BadVersionError):
                    remaining.append(tp)
                    continue
                if isinstance(outcome, NoNodeError):
                    continue
                if isinstance(outcome, Exception):
                    raise KafkaOpsError(f"Failed to update the leader epoch of partition {tp}: {outcome!r}")
                state = LeaderIsrAndControllerEpoch(new.with_zk_version(outcome[0].version), ctx.epoch)
                ctx.put_partition_leadership_info(tp, state)
                updated[tp] = state
                log.info(
                    "Updated leader epoch for partition %s to %s, zkVersion=%s",
                    tp,
                    state.leader_and_isr.leader_epoch,
                    state.leader_and_isr.zk_version,
                )
        return updated

    def _move_reassigned_partition_leaders_if_required(
        self, completed: Mapping[TopicPartition, ReplicaAssignment]
    ) -> None:
        ctx = self.context
        resend: dict[TopicPartition, ReplicaAssignment] = {}
        elect: list[TopicPartition] = []
        for tp, assignment in completed.items():
            info = ctx.partition_leadership_info(tp)
            leader = info.leader_and_isr.leader if info is not None else NO_LEADER
            move = reassign.leader_move(assignment, leader, ctx.is_replica_online(leader, tp))
            log.info(move.message(leader, tp, assignment.replicas))
            if move is reassign.LeaderMove.RESEND:
                resend[tp] = assignment
            else:
                elect.append(tp)
        if resend:
            self._update_leader_epochs_and_send_requests(resend)
        if elect:
            self._handle_partition_state_changes(elect, PartitionState.ONLINE, "reassign")

    def _stop_removed_replicas_of_reassigned_partitions(self, replicas: Sequence[PartitionReplica]) -> None:
        """Offline (out of the ISR, StopReplica) → DeletionStarted (StopReplica delete=true) →
        DeletionSuccessful → NonExistent: as Kafka, without waiting for the deletion's answer."""
        if not replicas:
            return
        for target in (
            ReplicaState.OFFLINE,
            ReplicaState.DELETION_STARTED,
            ReplicaState.DELETION_SUCCESSFUL,
            ReplicaState.NON_EXISTENT,
        ):
            self._handle_replica_state_changes(replicas, target)

    def _update_replica_assignments(self, assignments: Mapping[TopicPartition, ReplicaAssignment]) -> None:
        """Write these partitions' assignments into their `/brokers/topics/<t>` znodes (fenced): one
        conditional write per topic, all in one pipelined round. Kafka rewrites each node from its memory
        once per partition; this reads it and writes it back conditionally, so that partitions added to a
        topic meanwhile are not lost (a lost race re-reads that topic)."""
        ctx = self.context
        by_topic: dict[str, dict[int, ReplicaAssignment]] = defaultdict(dict)
        for tp, assignment in assignments.items():
            by_topic[tp.topic][tp.partition] = assignment
        remaining = sorted(by_topic)
        while remaining:
            found = self.zk.get_many(znodes.TopicZNode.path(topic) for topic in remaining)
            writes: list[tuple[str, Op]] = []
            for topic in remaining:
                entry = found[znodes.TopicZNode.path(topic)]
                if entry is None:
                    first = min(by_topic[topic])
                    raise KafkaOpsError(
                        f"Failed to update assignment for {TopicPartition(topic, first)} since the topic has no "
                        "current assignment"
                    )
                current = znodes.TopicZNode.decode(topic, entry[0])
                partitions = {**current.partitions, **by_topic[topic]}
                topic_id = current.topic_id or ctx.topic_ids.get(topic)
                writes.append(
                    (
                        topic,
                        Op.set(
                            znodes.TopicZNode.path(topic),
                            znodes.TopicZNode.encode(partitions, topic_id),
                            entry[1].version,
                        ),
                    )
                )
            outcomes = self.zk.fenced_multi_many([[op] for _, op in writes], ctx.epoch_zk_version)
            remaining = []
            for (topic, _), outcome in zip(writes, outcomes, strict=True):
                if isinstance(outcome, BadVersionError):
                    remaining.append(topic)
                    continue
                if isinstance(outcome, Exception):
                    raise KafkaOpsError(f"Failed to update the assignment of topic {topic}: {outcome!r}")
                for partition, assignment in sorted(by_topic[topic].items()):
                    log.info(
                        "Successfully updated assignment of partition %s to %s",
                        TopicPartition(topic, partition),
                        assignment,
                    )

    def _remove_partitions_from_reassigning_partitions(
        self, completed: Mapping[TopicPartition, ReplicaAssignment]
    ) -> None:
        ctx = self.context
        for tp in completed:
            if tp not in ctx.partitions_being_reassigned:
                raise KafkaOpsError("Cannot remove a reassigning partition because it is not present in memory")
        self._remove_from_zk_reassignment(reassign.completed_entries(completed))
        ctx.partitions_being_reassigned.difference_update(completed)

    def _remove_from_zk_reassignment(self, remove: Callable[[TopicPartition, tuple[int, ...]], bool]) -> None:
        """`maybeRemoveFromZkReassignment`: rewrite `/admin/reassign_partitions` without the entries
        `remove` picks, or delete it when none is left. Conditional on the version read: an operator's
        write in between is re-read, not overwritten (Kafka writes over it)."""
        path = znodes.ReassignPartitionsZNode.path()
        while True:
            entry = self.zk.get(path)
            if entry is None:
                return
            try:
                requested = znodes.ReassignPartitionsZNode.decode(entry[0])
            except MalformedZNodeError as error:
                log.warning("Ignoring partition reassignment due to invalid json: %s", error)
                requested = {}
            kept, removed = reassign.remaining_entries(requested, remove)
            if requested and not removed:
                return
            log.info(
                "Removing partitions %s from the list of reassigned partitions in zookeeper",
                ",".join(str(tp) for tp in removed),
            )
            if self._write_zk_reassignment(kept, entry[1].version):
                return

    def _write_zk_reassignment(self, kept: dict[TopicPartition, tuple[int, ...]], version: int) -> bool:
        """Replace (or, with nothing left, delete) the znode if it still has `version`; False if it moved."""
        path = znodes.ReassignPartitionsZNode.path()
        if not kept:
            log.info("No more partitions need to be reassigned. Deleting zk path %s", path)
            op = Op.delete(path, version)
        else:
            op = Op.set(path, znodes.ReassignPartitionsZNode.encode(kept), version)
        outcome = self.zk.fenced_multi_many([[op]], self.context.epoch_zk_version)[0]
        if isinstance(outcome, BadVersionError):
            return False
        if isinstance(outcome, Exception) and not isinstance(outcome, NoNodeError):
            raise KafkaOpsError(f"Could not update {path}: {outcome!r}")
        return True

    def _on_partition_reassignment_isr_change(self) -> None:
        with self._isr_watch_lock:
            changed, self._reassignment_isr_changed = self._reassignment_isr_changed, set()
        self._maybe_complete_reassignments(changed)

    def _maybe_complete_reassignments(
        self,
        partitions: Iterable[TopicPartition],
        states: Mapping[TopicPartition, LeaderIsrAndControllerEpoch | None] | None = None,
    ) -> None:
        """Complete those of `partitions` still moving whose target replicas are all in the ISR now. Without
        `states` (just read by the caller), reads them and watches them again."""
        ctx = self.context
        moving = sorted((tp for tp in partitions if tp in ctx.partitions_being_reassigned), key=_tp_order)
        if not moving:
            return
        if states is None:
            states = self._watch_reassignment_isr(moving)
        complete: dict[TopicPartition, ReplicaAssignment] = {}
        for tp in moving:
            assignment = ctx.partition_full_replica_assignment(tp)
            if self._is_reassignment_complete(assignment, states.get(tp)):
                log.info(
                    "Target replicas %s have all caught up with the leader for reassigning partition %s",
                    reassign.scala_list(assignment.target_replicas),
                    tp,
                )
                complete[tp] = assignment
        self._trigger_reassignments(complete, states)

    def _watch_reassignment_isr(
        self, partitions: Sequence[TopicPartition]
    ) -> dict[TopicPartition, LeaderIsrAndControllerEpoch | None | MalformedZNodeError]:
        """Kafka's `PartitionReassignmentIsrChangeHandler` (IBP < 2.7): the leaders here write ISR changes
        to the state znode, so its changes tell when the target replicas have caught up, without the
        5 s batching of ISR change notifications. Reads the state znodes with a one-shot watch on each
        (pipelined) and returns them; each watch that fires queues its partition for
        `_maybe_complete_reassignments`, which watches again while the partition moves. A watch left on a
        partition that finished or whose controller resigned fires once into nothing."""
        found = self.zk.get_many(
            (znodes.TopicPartitionStateZNode.path(tp.topic, tp.partition) for tp in partitions),
            self._on_reassignment_isr_watch,
        )
        states: dict[TopicPartition, LeaderIsrAndControllerEpoch | None | MalformedZNodeError] = {}
        for tp in partitions:
            entry = found[znodes.TopicPartitionStateZNode.path(tp.topic, tp.partition)]
            if entry is None:
                states[tp] = None
                continue
            try:
                states[tp] = znodes.TopicPartitionStateZNode.decode(tp.topic, tp.partition, entry[0], entry[1].version)
            except MalformedZNodeError as error:
                log.error("Unreadable state of %s: %s", tp, error)
                states[tp] = error
        return states

    def _on_reassignment_isr_watch(self, event: WatchedEvent) -> None:
        """On kazoo's thread: one event for any number of partitions whose watch fires before it runs."""
        tp = znodes.TopicPartitionStateZNode.partition_of(event.path)
        if tp is None:
            return
        with self._isr_watch_lock:
            first = not self._reassignment_isr_changed
            self._reassignment_isr_changed.add(tp)
        if first:
            self.events.put(PartitionReassignmentIsrChange())

    # --- preferred replica elections (§5.6, §5.7) ----------------------------------------------------

    def _on_preferred_replica_election_znode(self) -> None:
        ctx = self.context
        entry = self.zk.get(znodes.PreferredReplicaElectionZNode.path())
        if entry is None:
            return
        try:
            requested = znodes.PreferredReplicaElectionZNode.decode(entry[0])
        except MalformedZNodeError as error:
            log.error("Removing a malformed preferred replica election request: %s", error)
            requested = set()
        valid = sorted(
            (
                tp
                for tp in requested
                if tp.topic in ctx.all_topics
                and tp in set(ctx.partitions_for_topic(tp.topic))
                and not ctx.is_topic_queued_up_for_deletion(tp.topic)
                and ctx.partition_leadership_info(tp) is not None
                and ctx.partition_leadership_info(tp).leader_and_isr.leader != ctx.partition_replica_assignment(tp)[0]
            ),
            key=_tp_order,
        )
        if valid:
            self._elect_preferred(valid)
        outcome = self.zk.fenced_multi_many(
            [[Op.delete(znodes.PreferredReplicaElectionZNode.path())]], ctx.epoch_zk_version
        )[0]
        if isinstance(outcome, Exception) and not isinstance(outcome, NoNodeError):
            log.error("Could not delete the preferred replica election znode: %r", outcome)

    def _on_replica_leader_election(self, event: ReplicaLeaderElection) -> None:
        if not self._active:
            event.result.set_exception(NotControllerError(f"Broker {self.broker_id} is not the controller"))
            return
        try:
            event.result.set_result(self._replica_leader_election(event.election_type, event.partitions))
        except ControllerMovedError:
            event.result.set_exception(NotControllerError(f"Broker {self.broker_id} is no longer the controller"))
            raise
        except Exception as error:  # noqa: BLE001 - the caller must hear of it; the controller goes on
            log.exception("Leader election (%s) failed", event.election_type)
            event.result.set_exception(error)

    def _replica_leader_election(
        self, election_type: str, requested: Sequence[TopicPartition] | None
    ) -> dict[TopicPartition, tuple[int, str | None]]:
        """`processReplicaLeaderElection`: unknown partitions and topics being deleted are refused, those
        whose leader is already right need no election, the others are elected (preferred: the first
        replica; unclean: any live replica when no live one is in the ISR)."""
        ctx = self.context
        known_partitions = set(ctx.all_partitions())
        partitions = sorted(set(requested) if requested is not None else known_partitions, key=_tp_order)
        results: dict[TopicPartition, tuple[int, str | None]] = {}
        electable: list[TopicPartition] = []
        for tp in partitions:
            if tp not in known_partitions:
                log.info(
                    "Skipping replica leader election (%s) for partition %s by AdminClientTriggered since it "
                    "doesn't exist.",
                    election_type.upper(),
                    tp,
                )
                results[tp] = (errors.UnknownTopicOrPartitionError.code, "The partition does not exist.")
            elif ctx.is_topic_queued_up_for_deletion(tp.topic):
                results[tp] = (errors.InvalidTopicError.code, "The topic is being deleted")
            else:
                info = ctx.partition_leadership_info(tp)
                leader = info.leader_and_isr.leader if info is not None else -1
                needed = (
                    leader != ctx.partition_replica_assignment(tp)[0]
                    if election_type == "preferred"
                    else leader == -1 or leader not in ctx.live_broker_ids
                )
                if needed:
                    electable.append(tp)
                else:
                    results[tp] = (errors.ElectionNotNeededError.code, None)
        if electable:
            strategy = "preferred" if election_type == "preferred" else "unclean"
            failures = self._handle_partition_state_changes(electable, PartitionState.ONLINE, strategy)
            failed_code = (
                errors.PreferredLeaderNotAvailableError.code
                if election_type == "preferred"
                else errors.EligibleLeadersNotAvailableError.code
            )
            for tp in electable:
                results[tp] = (failed_code, failures[tp]) if tp in failures else (errors.NONE, None)
        return results

    def _elect_preferred(self, partitions: list[TopicPartition]) -> dict[TopicPartition, str]:
        return self._handle_partition_state_changes(partitions, PartitionState.ONLINE, "preferred")

    def _schedule_auto_rebalance(self, delay_s: float) -> None:
        self.events.schedule(delay_s, AutoPreferredReplicaLeaderElection(self._rebalance_generation))

    def _on_auto_rebalance(self) -> None:
        ctx = self.context
        try:
            if not ctx.reassignment_in_progress:
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
                    imbalance_percentage=self.settings.leader_imbalance_per_broker_percentage,
                )
                if selection.to_elect:
                    self._elect_preferred(sorted(selection.to_elect, key=_tp_order))
        finally:
            self._schedule_auto_rebalance(self.settings.leader_imbalance_check_interval_s)

    # --- helpers ---------------------------------------------------------------------------------

    def _connect_string(self) -> str:
        return self.settings.zookeeper_connect or str(self.zk.connect_string)

    def _read_partition_states(
        self, partitions: Sequence[TopicPartition], fresh: bool
    ) -> dict[TopicPartition, LeaderIsrAndControllerEpoch | None]:
        """State znodes of many partitions: one multiRead per thousand on a bulk connection; small
        sets, and re-reads after a lost race (`fresh`), on the controller's own session, whose reads
        always see its own writes."""
        if fresh or len(partitions) < BULK_READ_THRESHOLD:
            return self.zk.get_partition_states(partitions)
        paths = [znodes.TopicPartitionStateZNode.path(tp.topic, tp.partition) for tp in partitions]
        try:
            with PipelinedReader(self._connect_string()) as reader:
                found = reader.get_data_many(paths)
        except (KafkaOpsError, OSError):
            return self.zk.get_partition_states(partitions)
        result: dict[TopicPartition, LeaderIsrAndControllerEpoch | None] = {}
        for tp, entry in zip(partitions, found, strict=True):
            if entry is None:
                result[tp] = None
                continue
            try:
                result[tp] = znodes.TopicPartitionStateZNode.decode(tp.topic, tp.partition, entry[0], entry[1].version)
            except MalformedZNodeError as error:
                log.error("Unreadable state of %s: %s", tp, error)
                result[tp] = None
        return result

    def _new_batch(self) -> ControllerBrokerRequestBatch:
        return ControllerBrokerRequestBatch(self.broker_id)

    def _send(self, batch: ControllerBrokerRequestBatch) -> None:
        if batch.is_empty() or self.channel is None or not self._active:
            return
        ctx = self.context
        live = {b.broker_id: b for b in ctx.live_or_shutting_down_brokers}
        batch.send_requests_to_brokers(
            ctx.epoch,
            self.channel,
            live,
            dict(ctx.live_broker_epochs),
            ctx.partition_leadership_info,
            ctx.partition_replica_assignment,
            lambda tp: ctx.is_topic_queued_up_for_deletion(tp.topic) and tp.topic in ctx.topics_with_deletion_started,
            self.scl,
            self.sink,
            self._stop_replica_callback,
            self._leader_and_isr_callback,
        )

    def _write(self, entry: Any) -> None:
        self.sink.write(entry)


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off while a failover loads the context: the millions of long-lived
    objects it allocates set off full collections, each walking the whole heap of a broker that holds
    100,000 replicas (a second each) to free nothing. Reference counting still frees as usual."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _tp_order(tp: TopicPartition) -> tuple[str, int]:
    return tp.topic, tp.partition


def _replica_order(replica: PartitionReplica) -> tuple[str, int, int]:
    return replica.partition.topic, replica.partition.partition, replica.replica
