"""The controller (Kafka 2.8 `KafkaController`, ZooKeeper mode; reference §5).

Every broker runs one. All of them compete for `/controller`; the winner bumps `/controller_epoch`
in the same multi, loads the cluster from ZooKeeper and then turns intents into decisions: topics
come online, leaders move off dead brokers, deleted topics disappear, preferred leaders return,
partitions move to the replicas `/admin/reassign_partitions` asks for.

This module holds the election, the failover and the dispatch of events. The decisions live in
modules named after Kafka's classes of concern, each over narrow interfaces to ZooKeeper
(`controller_zk_client.py`) and to the brokers (`channel.ControllerChannel`): the partition and replica
state machines, the topic deletion manager, reassignment (`reassignment_handler.py`, deciding with the
pure `reassignment.py`), elections asked for from outside (`replica_election.py`, deciding with the pure
`elections.py`), topic, broker and ISR changes, and the context load of a failover.

Threading: the state (`ControllerContext`) is owned by the event thread. kazoo watch callbacks,
timers, send-thread response callbacks and the broker's request handlers only `put` events. Every
ZooKeeper write is fenced on the `/controller_epoch` version (`fenced_multi_many`); a failed check means a
newer controller exists, and the handler resigns. When the ZooKeeper session is lost the controller
stops acting at once (`_active` is cleared on kazoo's thread, before any event can run).
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, assert_never

from kazoo.exceptions import KazooException
from kazoo.protocol.states import KazooState, WatchedEvent
from kazoo.recipe.watchers import ChildrenWatch, DataWatch

from kafkaops.cluster.common import errors
from kafkaops.cluster.common.client_channel import PLAINTEXT_CHANNEL, ClientChannel
from kafkaops.cluster.common.collector import collector_paused
from kafkaops.cluster.common.errors import ControllerMovedError, MalformedZNodeError, NotControllerError
from kafkaops.cluster.controller.broker_change import BrokerChangeHandler
from kafkaops.cluster.controller.channel import (
    ControllerBrokerRequestBatch,
    ControllerChannel,
    ControllerChannelManager,
    ResponseCallback,
    StateChangeSink,
)
from kafkaops.cluster.controller.context import ControllerContext
from kafkaops.cluster.controller.context_loader import initialize_controller_context
from kafkaops.cluster.controller.controller_zk_client import ControllerZk, ControllerZkClient
from kafkaops.cluster.controller.event_manager import ControllerEventManager
from kafkaops.cluster.controller.events import (
    ActiveControllerEvent,
    ApiPartitionReassignment,
    AutoPreferredReplicaLeaderElection,
    BrokerChange,
    ControlledShutdown,
    ControllerChange,
    ControllerEvent,
    Expire,
    IsrChangeNotification,
    LeaderAndIsrResponseReceived,
    ListPartitionReassignments,
    LogDirEventNotification,
    PartitionModifications,
    PartitionReassignmentIsrChange,
    PreferredReplicaLeaderElection,
    Reelect,
    ReplicaLeaderElection,
    ShutdownController,
    Startup,
    TopicChange,
    TopicDeletion,
    TopicDeletionStopReplicaResponseReceived,
    UncleanLeaderElectionEnable,
    ZkPartitionReassignment,
    ZkWatchesLost,
)
from kafkaops.cluster.controller.isr_change import IsrChangeNotificationHandler
from kafkaops.cluster.controller.partition_state_machine import PartitionStateMachine
from kafkaops.cluster.controller.reassignment_handler import ReassignmentHandler
from kafkaops.cluster.controller.replica_election import ReplicaElectionHandler
from kafkaops.cluster.controller.replica_state_machine import ReplicaStateMachine
from kafkaops.cluster.controller.topic_change import TopicChangeHandler
from kafkaops.cluster.controller.topic_deletion import TopicDeletionManager
from kafkaops.cluster.protocol.schemas import ElectionType
from kafkaops.cluster.state_change_log import ControllerLog, StateChangeLogFile
from kafkaops.cluster.zk import znodes
from kafkaops.cluster.zk.client import KafkaZkClient
from kafkaops.cluster.zk.values import BrokerRegistration, ReplicaAssignment, TopicPartition

log = logging.getLogger("kafkaops.controller")

AUTO_REBALANCE_FIRST_DELAY_S = 5.0


@dataclass(frozen=True)
class ControllerSettings:
    """The broker configs the controller acts on (Kafka's names in comments)."""

    broker_id: int
    delete_topic_enable: bool = True  # delete.topic.enable
    unclean_leader_election_enable: bool = False  # unclean.leader.election.enable
    auto_leader_rebalance_enable: bool = True  # auto.leader.rebalance.enable
    leader_imbalance_per_broker_percentage: int = 10  # leader.imbalance.per.broker.percentage
    leader_imbalance_check_interval_s: float = 300.0  # leader.imbalance.check.interval.seconds
    inter_broker_listener_name: str = "PLAINTEXT"  # inter.broker.listener.name
    inter_broker_channel: ClientChannel = PLAINTEXT_CHANNEL
    """How the controller connects to brokers (their inter-broker listener's protocol)."""


@dataclass(frozen=True)
class ControllerHandlers:
    """One controller incarnation's state machines and event handlers, all over one context: a new
    controller epoch (or a resignation) gets new ones with its new context."""

    partition_state_machine: PartitionStateMachine
    replica_state_machine: ReplicaStateMachine
    topic_deletion: TopicDeletionManager
    reassignments: ReassignmentHandler
    replica_elections: ReplicaElectionHandler
    topic_changes: TopicChangeHandler
    broker_changes: BrokerChangeHandler
    isr_changes: IsrChangeNotificationHandler

    @classmethod
    def create(
        cls,
        settings: ControllerSettings,
        context: ControllerContext,
        zk: ControllerZk,
        channel: ControllerChannel,
        log: ControllerLog,
        sink: StateChangeSink,
        *,
        watch_topics: Callable[[Sequence[str]], None],
        on_reassignment_isr_change: Callable[[], None],
    ) -> ControllerHandlers:
        """`watch_topics` watches topic znodes for PartitionModifications; `on_reassignment_isr_change`
        (kazoo's thread) enqueues a PartitionReassignmentIsrChange."""
        partitions = PartitionStateMachine(
            settings.broker_id,
            context,
            zk,
            channel,
            log,
            sink,
            unclean_leader_election_enable=settings.unclean_leader_election_enable,
        )
        replicas = ReplicaStateMachine(context, zk, channel, log, sink)
        deletion = TopicDeletionManager(
            context, zk, channel, partitions, replicas, delete_topic_enable=settings.delete_topic_enable
        )
        reassignments = ReassignmentHandler(
            context, zk, channel, log, sink, partitions, replicas, deletion, on_reassignment_isr_change
        )
        return cls(
            partition_state_machine=partitions,
            replica_state_machine=replicas,
            topic_deletion=deletion,
            reassignments=reassignments,
            replica_elections=ReplicaElectionHandler(
                context,
                zk,
                partitions,
                leader_imbalance_per_broker_percentage=settings.leader_imbalance_per_broker_percentage,
            ),
            topic_changes=TopicChangeHandler(context, zk, partitions, replicas, watch_topics),
            broker_changes=BrokerChangeHandler(context, zk, channel, partitions, replicas, deletion, reassignments),
            isr_changes=IsrChangeNotificationHandler(context, zk, channel, reassignments),
        )


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
        self.channel: ControllerChannelManager | None = None
        self._active = False
        self.failover_completed_at: float | None = None
        """Monotonic time at which the last failover finished loading and acting (benchmarks read it)."""
        self._watch_generation = 0
        self._rebalance_generation = 0
        self._connection_lost = False  # kazoo's thread only
        self._zk_client = ControllerZkClient(zk)
        self._to_brokers = _ChannelToBrokers(self)
        self.events = ControllerEventManager(self._process, f"controller-{self.broker_id}-event-thread")
        self.context = ControllerContext()
        self.scl = ControllerLog(self.broker_id)
        self.handlers = self._create_handlers()

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
        self, election_type: ElectionType, partitions: Sequence[TopicPartition] | None, timeout_s: float = 60.0
    ) -> dict[TopicPartition, tuple[int, str | None]]:
        """Kafka's `processReplicaLeaderElection` for an ElectLeaders request: per partition (error code,
        message), 0 for a new leader (blocks the caller). Raises TimeoutError and NotControllerError."""
        result: Future[dict[TopicPartition, tuple[int, str | None]]] = Future()
        self.events.put(
            ReplicaLeaderElection(election_type, tuple(partitions) if partitions is not None else None, result)
        )
        return result.result(timeout_s)

    def alter_partition_reassignments(
        self, reassignments: Mapping[TopicPartition, Sequence[int] | None], timeout_s: float = 60.0
    ) -> dict[TopicPartition, tuple[int, str | None]]:
        """Kafka's `processApiPartitionReassignment` (KIP-455): per partition (error code, message); None
        cancels. Blocks the caller; raises TimeoutError and NotControllerError."""
        result: Future[dict[TopicPartition, tuple[int, str | None]]] = Future()
        entries = tuple((tp, tuple(r) if r is not None else None) for tp, r in reassignments.items())
        self.events.put(ApiPartitionReassignment(entries, result))
        return result.result(timeout_s)

    def list_partition_reassignments(
        self, partitions: Sequence[TopicPartition] | None, timeout_s: float = 60.0
    ) -> dict[TopicPartition, ReplicaAssignment]:
        """Kafka's `processListPartitionReassignments`: the partitions being reassigned (of `partitions`,
        or all) with their full assignment. Blocks the caller; raises TimeoutError and NotControllerError."""
        result: Future[dict[TopicPartition, ReplicaAssignment]] = Future()
        self.events.put(ListPartitionReassignments(tuple(partitions) if partitions is not None else None, result))
        return result.result(timeout_s)

    def set_unclean_leader_election_enable(self, enable: bool) -> None:
        """The broker's dynamic `unclean.leader.election.enable` (thread-safe: through the event queue)."""
        self.events.put(UncleanLeaderElectionEnable(enable))

    def controlled_shutdown(self, broker_id: int, broker_epoch: int, timeout_s: float = 30.0) -> set[TopicPartition]:
        """The partitions `broker_id` still leads after moving what it can (blocks the caller)."""
        result: Future[set[TopicPartition]] = Future()
        self.events.put(ControlledShutdown(broker_id, broker_epoch, result))
        return result.result(timeout_s)

    # --- watch callbacks (kazoo's thread: enqueue only) ----------------------------------------

    def _session_state_changed(self, state: str) -> None:
        if state == KazooState.LOST:
            self._connection_lost = False  # the new session starts without watches: a failover sets them
            self._active = False  # stop acting before anything else can run
            self.events.put(Expire())
        elif state == KazooState.SUSPENDED:
            self._connection_lost = True
        elif state == KazooState.CONNECTED:
            if self.active_controller_id is None:
                self.events.put(Reelect())
            elif self._connection_lost:
                self.events.put(ZkWatchesLost(self._watch_generation))
            self._connection_lost = False

    def _controller_znode_changed(self, data: bytes | None, stat: Any, event: Any = None) -> bool:
        self.events.put(ControllerChange())
        return True

    def _watch(self, generation: int, event: ControllerEvent) -> Callable[..., bool]:
        def callback(*_: Any) -> bool:
            if generation != self._watch_generation:
                return False  # a resigned controller's watch: stop it
            self.events.put(event)
            return True

        return callback

    def _watch_topics(self, topics: Sequence[str]) -> None:
        """Watch the topics' znodes for PartitionModifications (Kafka's PartitionModificationsHandler), in
        one pipelined round of requests: Kafka sets these watches with its bulk read of the topics, where
        a kazoo DataWatch per topic waits for a read of its own (a round trip per topic at failover)."""
        if topics:
            self.zk.watch_many([znodes.TopicZNode.path(t) for t in topics], _TopicWatch(self, self._watch_generation))

    # --- the event loop ------------------------------------------------------------------------

    def _process(self, event: ControllerEvent) -> None:
        with collector_paused():  # an event's per-partition work: see cluster/common/collector.py
            self._process_event(event)

    def _process_event(self, event: ControllerEvent) -> None:
        try:
            match event:
                case Startup() | Reelect():
                    self._maybe_elect(controller_changed=False)
                case ControllerChange():
                    self._maybe_elect(controller_changed=True)
                case Expire():
                    self._resign("ZooKeeper session expired")
                case ShutdownController(done=done):
                    self._resign("broker shutting down")
                    done.set()
                case ControlledShutdown():
                    self._on_controlled_shutdown(event)
                case ReplicaLeaderElection():
                    self._on_replica_leader_election(event)
                case ApiPartitionReassignment() | ListPartitionReassignments():
                    self._on_reassignment_request(event)
                case UncleanLeaderElectionEnable(enable=enable):
                    self._on_unclean_leader_election_enable(enable)
                case _:
                    if self._active:
                        self._process_active(event)
        except ControllerMovedError:
            self._resign("controller moved")
            self.events.put(Reelect())
        finally:
            self.sink.flush()

    def _process_active(self, event: ActiveControllerEvent) -> None:
        handlers = self.handlers
        match event:
            case BrokerChange():
                handlers.broker_changes.process_broker_change()
            case TopicChange():
                handlers.topic_changes.process_topic_change()
            case PartitionModifications(topic=topic):
                handlers.topic_changes.process_partition_modifications(topic)
            case TopicDeletion():
                handlers.topic_deletion.process_topic_deletion()
            case TopicDeletionStopReplicaResponseReceived():
                handlers.topic_deletion.process_stop_replica_response(event)
            case IsrChangeNotification():
                handlers.isr_changes.process_isr_change_notification()
            case PreferredReplicaLeaderElection():
                handlers.replica_elections.process_preferred_replica_election()
            case LogDirEventNotification():
                handlers.broker_changes.process_log_dir_event_notification()
            case LeaderAndIsrResponseReceived():
                handlers.broker_changes.process_leader_and_isr_response(event)
            case ZkPartitionReassignment():
                handlers.reassignments.process_zk_partition_reassignment()
            case PartitionReassignmentIsrChange():
                handlers.reassignments.process_partition_reassignment_isr_change()
            case AutoPreferredReplicaLeaderElection(generation=generation):
                if generation == self._rebalance_generation:
                    self._on_auto_rebalance()
            case ZkWatchesLost(generation=generation):
                if generation == self._watch_generation:
                    self._restore_watches()
            case _:
                assert_never(event)

    # --- election, failover, resignation (§5.1, §5.2) -------------------------------------------

    def _maybe_elect(self, controller_changed: bool) -> None:
        current = self._read_controller_id()
        self.active_controller_id = current
        if controller_changed and self._active and current != self.broker_id:
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
        context = ControllerContext()
        context.epoch, context.epoch_zk_version = epoch, version
        self._new_incarnation(context, ControllerLog(self.broker_id, epoch))
        self._active = True
        log.info("Broker %s elected controller with epoch %s", self.broker_id, epoch)
        try:
            with collector_paused():
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
        if self.channel is not None:
            self.channel.shutdown()
            self.channel = None
        self._new_incarnation(ControllerContext(), self.scl)

    def _new_incarnation(self, context: ControllerContext, scl: ControllerLog) -> None:
        self.context = context
        self.scl = scl
        self.handlers = self._create_handlers()

    def _create_handlers(self) -> ControllerHandlers:
        return ControllerHandlers.create(
            self.settings,
            self.context,
            self._zk_client,
            self._to_brokers,
            self.scl,
            self.sink,
            watch_topics=self._watch_topics,
            on_reassignment_isr_change=lambda: self.events.put(PartitionReassignmentIsrChange()),
        )

    def _on_controller_failover(self) -> None:
        started = time.monotonic()
        self._watch_generation += 1
        self.zk.ensure_paths(znodes.PERSISTENT_PATHS + (znodes.AdminZNode.path(),))
        self._register_watches(self._watch_generation)
        self._delete_stale_notifications()
        self._initialize_context()
        ctx, handlers = self.context, self.handlers
        self.channel = ControllerChannelManager(
            self.broker_id, self.settings.inter_broker_listener_name, self.settings.inter_broker_channel
        )
        for broker in ctx.live_or_shutting_down_brokers:
            self.channel.add_broker(broker)
        # One round of requests for the whole start-up (Kafka sends one per step): the brokers' work on
        # them then does not compete with the rest of the failover.
        batch = self._to_brokers.new_batch()
        batch.add_update_metadata(ctx.live_broker_ids, ctx.all_partitions())
        handlers.replica_state_machine.startup(batch)
        handlers.partition_state_machine.startup(batch)
        self._send(batch)
        handlers.reassignments.initialize_partition_reassignments()
        handlers.topic_deletion.resume_deletions()
        handlers.replica_elections.process_preferred_replica_election()
        if self.settings.auto_leader_rebalance_enable:
            self._schedule_auto_rebalance(AUTO_REBALANCE_FIRST_DELAY_S)
        self.failover_completed_at = time.monotonic()
        log.info(
            "Controller %s epoch %s ready in %.3f s: %d brokers, %d topics, %d partitions",
            self.broker_id,
            ctx.epoch,
            time.monotonic() - started,
            len(ctx.live_broker_ids),
            len(ctx.all_topics),
            len(ctx.all_partitions()),
        )

    def _restore_watches(self) -> None:
        """After a lost connection (`ZkWatchesLost`): kazoo's recipes (brokers, topics, notifications, the
        intents) set themselves again; the one-shot watches of each topic and of each moving partition's
        state are set here, and whatever they would have reported meanwhile is processed now."""
        ctx, handlers = self.context, self.handlers
        topics = sorted(ctx.all_topics)
        log.info(
            "ZooKeeper connection restored: watching %d topics and %d moving partitions again",
            len(topics),
            len(ctx.partitions_being_reassigned),
        )
        self._watch_topics(topics)
        for topic in topics:
            handlers.topic_changes.process_partition_modifications(topic)
        handlers.reassignments.maybe_complete_reassignments(list(ctx.partitions_being_reassigned))

    def _register_watches(self, generation: int) -> None:
        kazoo = self.zk.kazoo
        for path, event in (
            (znodes.BrokerIdsZNode.path(), BrokerChange()),
            (znodes.TopicsZNode.path(), TopicChange()),
            (znodes.DeleteTopicsZNode.path(), TopicDeletion()),
            (znodes.LogDirEventNotificationZNode.path(), LogDirEventNotification()),
            (znodes.IsrChangeNotificationZNode.path(), IsrChangeNotification()),
        ):
            ChildrenWatch(kazoo, path, self._watch(generation, event), send_event=True)
        DataWatch(
            kazoo,
            znodes.PreferredReplicaElectionZNode.path(),
            self._watch(generation, PreferredReplicaLeaderElection()),
        )
        DataWatch(kazoo, znodes.ReassignPartitionsZNode.path(), self._watch(generation, ZkPartitionReassignment()))

    def _delete_stale_notifications(self) -> None:
        """ISR and log dir notifications left from before: the full reload covers them."""
        zk, epoch_zk_version = self._zk_client, self.context.epoch_zk_version
        isr_changes = zk.get_all_isr_change_notifications()
        if isr_changes:
            zk.delete_isr_change_notifications(isr_changes, epoch_zk_version)
        log_dir_events = zk.get_all_log_dir_event_notifications()
        if log_dir_events:
            zk.delete_log_dir_event_notifications(log_dir_events, epoch_zk_version)

    def _initialize_context(self) -> None:
        ctx, handlers = self.context, self.handlers
        topics = initialize_controller_context(ctx, self._zk_client, self._watch_topics)
        handlers.topic_changes.assign_topic_ids(topics)
        deleting = set(self._zk_client.get_topic_deletions())
        deletion = handlers.topic_deletion
        if deletion.is_delete_topic_enabled:
            queued = [t for t in deleting if t in ctx.all_topics]
            deletion.init(queued, deletion.halted_topics(queued))

    # --- events that answer a caller -----------------------------------------------------------------

    def _on_controlled_shutdown(self, event: ControlledShutdown) -> None:
        if not self._active:
            event.result.set_exception(NotControllerError(f"Broker {self.broker_id} is not the controller"))
            return
        self.handlers.broker_changes.process_controlled_shutdown(event)

    def _on_replica_leader_election(self, event: ReplicaLeaderElection) -> None:
        if not self._active:
            event.result.set_exception(NotControllerError(f"Broker {self.broker_id} is not the controller"))
            return
        try:
            event.result.set_result(
                self.handlers.replica_elections.process_replica_leader_election(event.election_type, event.partitions)
            )
        except ControllerMovedError:
            event.result.set_exception(NotControllerError(f"Broker {self.broker_id} is no longer the controller"))
            raise
        except Exception as error:  # noqa: BLE001 - the caller must hear of it; the controller goes on
            log.exception("Leader election (%s) failed", event.election_type.name.lower())
            event.result.set_exception(error)

    def _on_reassignment_request(self, event: ApiPartitionReassignment | ListPartitionReassignments) -> None:
        if not self._active:
            event.result.set_exception(NotControllerError(f"Broker {self.broker_id} is not the controller"))
            return
        reassignments = self.handlers.reassignments
        try:
            match event:
                case ApiPartitionReassignment():
                    done = reassignments.process_api_partition_reassignment(dict(event.reassignments))
                    event.result.set_result(
                        {tp: (e.error.code, e.message) if e is not None else (0, None) for tp, e in done.items()}
                    )
                case ListPartitionReassignments():
                    event.result.set_result(reassignments.list_partition_reassignments(event.partitions))
        except ControllerMovedError:
            event.result.set_exception(NotControllerError(f"Broker {self.broker_id} is no longer the controller"))
            raise
        except Exception as error:  # noqa: BLE001 - the caller must hear of it; the controller goes on
            log.exception("Partition reassignment request failed")
            event.result.set_exception(error)

    def _on_unclean_leader_election_enable(self, enable: bool) -> None:
        """Kafka's `processUncleanLeaderElectionEnable`: topics without an override follow the new default;
        turned on, the offline partitions get an election at once."""
        if enable == self.settings.unclean_leader_election_enable:
            return
        self.settings = dataclasses.replace(self.settings, unclean_leader_election_enable=enable)
        self.handlers.partition_state_machine.unclean_leader_election_enable = enable
        if enable and self._active:
            self.handlers.partition_state_machine.trigger_online_partition_state_change()

    # --- auto leader rebalance (§5.6) ----------------------------------------------------------------

    def _schedule_auto_rebalance(self, delay_s: float) -> None:
        self.events.schedule(delay_s, AutoPreferredReplicaLeaderElection(self._rebalance_generation))

    def _on_auto_rebalance(self) -> None:
        try:
            self.handlers.replica_elections.check_and_trigger_auto_leader_rebalance()
        finally:
            self._schedule_auto_rebalance(self.settings.leader_imbalance_check_interval_s)

    # --- requests to brokers -------------------------------------------------------------------------

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
            ctx.topic_ids,
        )

    def _stop_replica_callback(self, broker_id: int, delete: bool) -> ResponseCallback | None:
        if not delete:
            return None

        def received(broker: int, body: dict[str, Any]) -> None:
            partition_errors = tuple(
                (TopicPartition(e["topic_name"], e["partition_index"]), e["error_code"])
                for e in body.get("partition_errors", [])
            )
            self.events.put(
                TopicDeletionStopReplicaResponseReceived(broker, partition_errors, body.get("error_code", 0))
            )

        return received

    def _leader_and_isr_callback(self, broker_id: int, body: dict[str, Any]) -> None:
        """On a send thread: only answers that matter for offline log dirs become events."""
        partition_errors = tuple(
            (TopicPartition(e["topic_name"], e["partition_index"]), e["error_code"])
            for e in body.get("partition_errors", [])
        )
        storage_error = any(code == errors.KafkaStorageError.code for _, code in partition_errors)
        if storage_error or broker_id in self.context.replicas_on_offline_dirs:
            self.events.put(LeaderAndIsrResponseReceived(broker_id, partition_errors))


class _ChannelToBrokers:
    """The real `ControllerChannel`: requests go out through the active controller's send threads (and
    nowhere once it has resigned)."""

    def __init__(self, controller: KafkaController) -> None:
        self._controller = controller

    def new_batch(self) -> ControllerBrokerRequestBatch:
        return ControllerBrokerRequestBatch(self._controller.broker_id)

    def send(self, batch: ControllerBrokerRequestBatch) -> None:
        self._controller._send(batch)

    def add_broker(self, broker: BrokerRegistration) -> None:
        if self._controller.channel is not None:
            self._controller.channel.add_broker(broker)

    def remove_broker(self, broker_id: int) -> None:
        if self._controller.channel is not None:
            self._controller.channel.remove_broker(broker_id)


@dataclass(frozen=True)
class _TopicWatch:
    """The one-shot watch on a topic's znode (one object for every topic: the event names the path). When
    it fires it sets itself again before queueing the event, so a change after the event's read fires
    again; a resigned controller's watch (an older generation) stops."""

    controller: KafkaController
    generation: int

    def __call__(self, event: WatchedEvent) -> None:
        controller = self.controller
        if event.path is None:  # kazoo dropped the watch with the connection: ZkWatchesLost sets it again
            return
        topic = znodes.TopicZNode.topic_of(event.path)
        if topic is None or self.generation != controller._watch_generation:
            return
        kazoo = controller.zk.kazoo
        try:
            kazoo.retry(kazoo.exists, event.path, watch=self)  # as DataWatch sets itself again
        except KazooException:
            log.debug("Could not watch %s again; the session is going", event.path)
            return
        controller.events.put(PartitionModifications(topic))
