"""In-memory fakes of the controller's narrow interfaces, for unit tests of its handlers without ZooKeeper
or brokers (Kafka's tests mock `KafkaZkClient` and `ControllerBrokerRequestBatch` for the same purpose).

`FakeControllerZk` implements every Protocol of `controller_zk_client.py` over dicts, with ZooKeeper's
rules where the handlers depend on them: data versions (a conditional write with a stale version is a
BadVersionError, to be retried), NodeExists/NoNode, the epoch check of every controller write
(ControllerMovedError), one-shot watches. `FakeChannel` records each batch a handler sends, as it was
when sent. `RecordingSink` keeps the state-change entries. `Harness` wires them to a real context and
the real handlers (`ControllerHandlers.create`, as `KafkaController` does).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kazoo.exceptions import BadVersionError, NodeExistsError, NoNodeError

from kafkaops.cluster.common.errors import ControllerMovedError, MalformedZNodeError
from kafkaops.cluster.controller.channel import ControllerBrokerRequestBatch, LeaderAndIsrEntry
from kafkaops.cluster.controller.context import ControllerContext
from kafkaops.cluster.controller.controller import ControllerHandlers, ControllerSettings
from kafkaops.cluster.controller.controller_zk_client import (
    TopicAssignmentWrite,
    TopicZNodeRead,
    UpdateLeaderAndIsrResult,
)
from kafkaops.cluster.controller.state_machines import PartitionReplica, PartitionState, ReplicaState
from kafkaops.cluster.protocol.schemas import ApiKey
from kafkaops.cluster.state_change_log import ControllerLog, Level, StateChangeEntry
from kafkaops.cluster.zk.client import PartitionStateRead
from kafkaops.cluster.zk.values import (
    BrokerRegistration,
    EndPoint,
    LeaderAndIsr,
    LeaderIsrAndControllerEpoch,
    ReplicaAssignment,
    TopicAssignment,
    TopicPartition,
)

CONTROLLER_ID = 5
CONTROLLER_EPOCH = 50
EPOCH_ZK_VERSION = 7


def broker(broker_id: int) -> BrokerRegistration:
    return BrokerRegistration(broker_id, (EndPoint("PLAINTEXT", "localhost", 9900 + broker_id),), 1000)


def malformed(path: str) -> MalformedZNodeError:
    return MalformedZNodeError(path, b"{not json", "not valid JSON")


class FakeControllerZk:
    """The controller's view of ZooKeeper, in memory. Tests set the fields, call handlers, and look at
    the fields and at `calls` (method name and the partitions or topics it was given)."""

    def __init__(self, epoch_zk_version: int = EPOCH_ZK_VERSION) -> None:
        self.epoch_zk_version = epoch_zk_version
        self.partition_states: dict[TopicPartition, LeaderIsrAndControllerEpoch] = {}
        """State znodes; the data version is in `leader_and_isr.zk_version`."""
        self.unreadable_states: dict[TopicPartition, MalformedZNodeError] = {}
        self.topics: dict[str, tuple[TopicAssignment | MalformedZNodeError, int]] = {}
        self.topic_configs: dict[str, dict[str, str]] = {}
        self.topic_deletions: set[str] = set()
        self.deleted_topics: list[str] = []
        self.reassignment: tuple[dict[TopicPartition, tuple[int, ...]] | MalformedZNodeError, int] | None = None
        self.preferred_election: set[TopicPartition] | MalformedZNodeError | None = None
        self.brokers: dict[int, tuple[BrokerRegistration, int] | MalformedZNodeError] = {}
        self.isr_change_notifications: dict[str, set[TopicPartition] | MalformedZNodeError] = {}
        self.log_dir_event_notifications: dict[str, int | MalformedZNodeError] = {}
        self.watches: dict[TopicPartition, Callable[[TopicPartition], None]] = {}
        self.calls: list[tuple[str, tuple[object, ...]]] = []
        self.raise_on: dict[str, Exception] = {}
        """Method name → error the next call of it raises (a lost connection, say)."""
        self.concurrent_writes: dict[TopicPartition, LeaderAndIsr] = {}
        """A leader's write that lands just before the controller's next conditional write of that state."""

    # --- helpers for tests

    def put_state(self, tp: TopicPartition, state: LeaderIsrAndControllerEpoch) -> None:
        self.partition_states[tp] = state

    def add_topic(
        self,
        topic: str,
        partitions: Mapping[int, Sequence[int]] | Mapping[int, ReplicaAssignment],
        topic_id: str | None = None,
    ) -> None:
        assignment = {
            p: a if isinstance(a, ReplicaAssignment) else ReplicaAssignment(tuple(a)) for p, a in partitions.items()
        }
        self.topics[topic] = (TopicAssignment(assignment, topic_id), 0)

    def _called(self, name: str, *args: object) -> None:
        self.calls.append((name, args))
        error = self.raise_on.pop(name, None)
        if error is not None:
            raise error

    def _fence(self, epoch_zk_version: int) -> None:
        if epoch_zk_version != self.epoch_zk_version:
            raise ControllerMovedError("Controller epoch zkVersion check fails: a newer controller exists")

    def names_called(self) -> list[str]:
        return [name for name, _ in self.calls]

    # --- partition states

    def _state(self, tp: TopicPartition) -> PartitionStateRead:
        if tp in self.unreadable_states:
            return self.unreadable_states[tp]
        return self.partition_states.get(tp)

    def get_topic_partition_states(
        self, partitions: Sequence[TopicPartition], *, fresh: bool = False
    ) -> dict[TopicPartition, PartitionStateRead]:
        self._called("get_topic_partition_states", tuple(partitions), fresh)
        return {tp: self._state(tp) for tp in partitions}

    def watch_topic_partition_states(
        self, partitions: Sequence[TopicPartition], on_change: Callable[[TopicPartition], None]
    ) -> dict[TopicPartition, PartitionStateRead]:
        self._called("watch_topic_partition_states", tuple(partitions))
        for tp in partitions:
            if self._state(tp) is not None:
                self.watches[tp] = on_change
        return {tp: self._state(tp) for tp in partitions}

    def leader_writes(self, tp: TopicPartition, leader_and_isr: LeaderAndIsr) -> None:
        """A partition leader's own ISR write (as a broker does), firing the watch on the state."""
        current = self.partition_states[tp]
        self.partition_states[tp] = LeaderIsrAndControllerEpoch(
            leader_and_isr.with_zk_version(current.leader_and_isr.zk_version + 1), current.controller_epoch
        )
        watch = self.watches.pop(tp, None)
        if watch is not None:
            watch(tp)

    def create_topic_partition_states(
        self, states: Sequence[tuple[TopicPartition, LeaderIsrAndControllerEpoch]], epoch_zk_version: int
    ) -> list[Exception | None]:
        self._called("create_topic_partition_states", tuple(states))
        self._fence(epoch_zk_version)
        outcomes: list[Exception | None] = []
        for tp, state in states:
            if tp in self.partition_states or tp in self.unreadable_states:
                outcomes.append(NodeExistsError())
                continue
            self.partition_states[tp] = LeaderIsrAndControllerEpoch(
                state.leader_and_isr.with_zk_version(0), state.controller_epoch
            )
            outcomes.append(None)
        return outcomes

    def update_leader_and_isr(
        self,
        leader_and_isrs: Sequence[tuple[TopicPartition, LeaderAndIsr]],
        controller_epoch: int,
        epoch_zk_version: int,
    ) -> UpdateLeaderAndIsrResult:
        self._called("update_leader_and_isr", tuple(leader_and_isrs), controller_epoch)
        self._fence(epoch_zk_version)
        finished: dict[TopicPartition, LeaderAndIsr | Exception] = {}
        retry: list[TopicPartition] = []
        for tp, lai in leader_and_isrs:
            concurrent = self.concurrent_writes.pop(tp, None)
            if concurrent is not None:
                self.leader_writes(tp, concurrent)
            current = self.partition_states.get(tp)
            if current is None:
                finished[tp] = NoNodeError()
            elif current.leader_and_isr.zk_version != lai.zk_version:
                retry.append(tp)
            else:
                written = lai.with_zk_version(lai.zk_version + 1)
                self.partition_states[tp] = LeaderIsrAndControllerEpoch(written, controller_epoch)
                finished[tp] = written
        return UpdateLeaderAndIsrResult(finished, retry)

    def get_topic_config(self, topic: str) -> Mapping[str, str]:
        self._called("get_topic_config", topic)
        return self.topic_configs.get(topic, {})

    # --- topics

    def get_all_topics(self) -> list[str]:
        return sorted(self.topics)

    def get_full_replica_assignments(self, topics: Sequence[str]) -> dict[str, TopicAssignment | MalformedZNodeError]:
        self._called("get_full_replica_assignments", tuple(topics))
        return {t: self.topics[t][0] for t in topics if t in self.topics}

    def get_topic_znodes(self, topics: Sequence[str]) -> dict[str, TopicZNodeRead | None]:
        self._called("get_topic_znodes", tuple(topics))
        return {t: self.topics.get(t) for t in topics}

    def set_topic_assignments(
        self, writes: Sequence[TopicAssignmentWrite], epoch_zk_version: int
    ) -> list[Exception | None]:
        self._called("set_topic_assignments", tuple(writes))
        self._fence(epoch_zk_version)
        outcomes: list[Exception | None] = []
        for write in writes:
            current = self.topics.get(write.topic)
            if current is None:
                outcomes.append(NoNodeError())
            elif current[1] != write.expected_version:
                outcomes.append(BadVersionError())
            else:
                self.topics[write.topic] = (TopicAssignment(dict(write.partitions), write.topic_id), current[1] + 1)
                outcomes.append(None)
        return outcomes

    # --- topic deletion

    def get_topic_deletions(self) -> list[str]:
        return sorted(self.topic_deletions)

    def delete_topic_deletions(self, topics: Sequence[str], epoch_zk_version: int) -> None:
        self._called("delete_topic_deletions", tuple(topics))
        self._fence(epoch_zk_version)
        self.topic_deletions.difference_update(topics)

    def delete_topic(self, topic: str, epoch_zk_version: int) -> None:
        self._called("delete_topic", topic)
        self._fence(epoch_zk_version)
        self.topics.pop(topic, None)
        self.topic_configs.pop(topic, None)
        self.topic_deletions.discard(topic)
        for tp in [tp for tp in self.partition_states if tp.topic == topic]:
            del self.partition_states[tp]
        self.deleted_topics.append(topic)

    # --- partition reassignment

    def get_partition_reassignment(
        self,
    ) -> tuple[dict[TopicPartition, tuple[int, ...]] | MalformedZNodeError, int] | None:
        return self.reassignment

    def set_or_delete_partition_reassignment(
        self, entries: Mapping[TopicPartition, Sequence[int]], expected_version: int, epoch_zk_version: int
    ) -> Exception | None:
        self._called("set_or_delete_partition_reassignment", dict(entries))
        self._fence(epoch_zk_version)
        if self.reassignment is None:
            return NoNodeError()
        if self.reassignment[1] != expected_version:
            return BadVersionError()
        self.reassignment = ({tp: tuple(r) for tp, r in entries.items()}, expected_version + 1) if entries else None
        return None

    # --- preferred replica election

    def get_preferred_replica_election(self) -> set[TopicPartition] | MalformedZNodeError | None:
        return self.preferred_election

    def delete_preferred_replica_election(self, epoch_zk_version: int) -> Exception | None:
        self._called("delete_preferred_replica_election")
        self._fence(epoch_zk_version)
        if self.preferred_election is None:
            return NoNodeError()
        self.preferred_election = None
        return None

    # --- brokers and log dir failures

    def get_all_broker_and_epochs(self) -> dict[int, tuple[BrokerRegistration, int] | MalformedZNodeError]:
        return dict(sorted(self.brokers.items()))

    def get_all_log_dir_event_notifications(self) -> list[str]:
        return sorted(self.log_dir_event_notifications)

    def get_broker_ids_from_log_dir_events(self, sequences: Sequence[str]) -> dict[str, int | MalformedZNodeError]:
        return {
            f"/log_dir_event_notification/{s}": self.log_dir_event_notifications[s]
            for s in sequences
            if s in self.log_dir_event_notifications
        }

    def delete_log_dir_event_notifications(self, sequences: Sequence[str], epoch_zk_version: int) -> None:
        self._called("delete_log_dir_event_notifications", tuple(sequences))
        self._fence(epoch_zk_version)
        for s in sequences:
            self.log_dir_event_notifications.pop(s, None)

    # --- ISR change notifications

    def get_all_isr_change_notifications(self) -> list[str]:
        return sorted(self.isr_change_notifications)

    def get_partitions_from_isr_change_notifications(
        self, sequences: Sequence[str]
    ) -> dict[str, set[TopicPartition] | MalformedZNodeError]:
        return {
            f"/isr_change_notification/{s}": self.isr_change_notifications[s]
            for s in sequences
            if s in self.isr_change_notifications
        }

    def delete_isr_change_notifications(self, sequences: Sequence[str], epoch_zk_version: int) -> None:
        self._called("delete_isr_change_notifications", tuple(sequences))
        self._fence(epoch_zk_version)
        for s in sequences:
            self.isr_change_notifications.pop(s, None)


@dataclass
class SentBatch:
    """What one `send` carried: per broker the LeaderAndIsr entries and StopReplica partitions
    (delete flag), and the UpdateMetadata recipients and partitions."""

    leader_and_isr: dict[int, dict[TopicPartition, LeaderAndIsrEntry]]
    stop_replica: dict[int, dict[TopicPartition, bool]]
    update_metadata_brokers: set[int]
    update_metadata_partitions: set[TopicPartition]


@dataclass
class FakeChannel:
    """The channel to the brokers: records what is sent instead of sending it."""

    controller_id: int = CONTROLLER_ID
    sent: list[SentBatch] = field(default_factory=list)
    added_brokers: list[int] = field(default_factory=list)
    removed_brokers: list[int] = field(default_factory=list)

    def new_batch(self) -> ControllerBrokerRequestBatch:
        return ControllerBrokerRequestBatch(self.controller_id)

    def send(self, batch: ControllerBrokerRequestBatch) -> None:
        if batch.is_empty():
            return  # as the controller: an empty batch sends nothing
        self.sent.append(
            SentBatch(
                {b: dict(entries) for b, entries in batch.leader_and_isr.items()},
                {b: dict(partitions) for b, partitions in batch.stop_replica.items()},
                set(batch.update_metadata_brokers),
                set(batch.update_metadata_partitions),
            )
        )
        batch.leader_and_isr.clear()
        batch.stop_replica.clear()
        batch.update_metadata_brokers.clear()
        batch.update_metadata_partitions.clear()

    def add_broker(self, broker: BrokerRegistration) -> None:
        self.added_brokers.append(broker.broker_id)

    def remove_broker(self, broker_id: int) -> None:
        self.removed_brokers.append(broker_id)

    def leader_and_isr(self) -> list[tuple[int, TopicPartition, LeaderAndIsrEntry]]:
        """Every LeaderAndIsr entry sent: (broker, partition, entry), in sending order."""
        return [
            (b, tp, entry)
            for sent in self.sent
            for b, entries in sorted(sent.leader_and_isr.items())
            for tp, entry in entries.items()
        ]

    def stop_replica(self) -> list[tuple[int, TopicPartition, bool]]:
        """Every StopReplica entry sent: (broker, partition, delete)."""
        return [
            (b, tp, delete)
            for sent in self.sent
            for b, partitions in sorted(sent.stop_replica.items())
            for tp, delete in partitions.items()
        ]

    def update_metadata_partitions(self) -> set[TopicPartition]:
        return {tp for sent in self.sent for tp in sent.update_metadata_partitions}


class RecordingSink:
    """The state-change log, as a list of entries (TRACE kept, so that every transition shows)."""

    def __init__(self, threshold: Level = Level.TRACE) -> None:
        self.threshold = threshold
        self.entries: list[StateChangeEntry] = []

    def enabled(self, level: Level) -> bool:
        return level >= self.threshold

    def write(self, entry: StateChangeEntry) -> None:
        if self.enabled(entry.level):
            self.entries.append(entry)

    def flush(self) -> None:
        pass

    def messages(self, level: Level | None = None) -> list[str]:
        return [e.message for e in self.entries if level is None or e.level is level]


@dataclass
class Harness:
    """A controller incarnation's handlers over the fakes (what `KafkaController` builds at election)."""

    settings: ControllerSettings = field(default_factory=lambda: ControllerSettings(broker_id=CONTROLLER_ID))
    context: ControllerContext = field(default_factory=ControllerContext)
    zk: FakeControllerZk = field(default_factory=FakeControllerZk)
    channel: FakeChannel = field(default_factory=FakeChannel)
    sink: RecordingSink = field(default_factory=RecordingSink)
    watched_topics: list[str] = field(default_factory=list)
    isr_change_events: int = 0

    def __post_init__(self) -> None:
        self.context.epoch = CONTROLLER_EPOCH
        self.context.epoch_zk_version = self.zk.epoch_zk_version
        self.handlers = ControllerHandlers.create(
            self.settings,
            self.context,
            self.zk,
            self.channel,
            ControllerLog(self.settings.broker_id, CONTROLLER_EPOCH),
            self.sink,
            watch_topics=self.watched_topics.extend,
            on_reassignment_isr_change=self._isr_changed,
        )

    def _isr_changed(self) -> None:
        self.isr_change_events += 1

    def live_brokers(self, *broker_ids: int, epoch: int = 1) -> None:
        self.context.set_live_brokers((broker(b), epoch) for b in broker_ids)
        for b in broker_ids:
            self.zk.brokers[b] = (broker(b), epoch)

    def topic(
        self,
        topic: str,
        partitions: Mapping[int, Sequence[int]],
        *,
        leaders: bool = True,
        states: bool = True,
    ) -> list[TopicPartition]:
        """A topic known to ZooKeeper and the context; with `leaders`, each partition led by its first
        replica with the whole assignment in the ISR, in ZooKeeper and the context; with `states` too,
        the partition Online and its replicas Online."""
        ctx = self.context
        self.zk.add_topic(topic, partitions, topic_id=f"id-{topic}")
        ctx.set_all_topics([*ctx.all_topics, topic])
        ctx.topic_ids[topic] = f"id-{topic}"
        tps = []
        for p, replicas in sorted(partitions.items()):
            tp = TopicPartition(topic, p)
            tps.append(tp)
            ctx.update_partition_full_replica_assignment(tp, ReplicaAssignment(tuple(replicas)))
            if not leaders:
                continue
            state = LeaderIsrAndControllerEpoch(LeaderAndIsr(replicas[0], 0, tuple(replicas), 0), CONTROLLER_EPOCH)
            self.zk.put_state(tp, state)
            ctx.put_partition_leadership_info(tp, state)
            if states:
                ctx.put_partition_state(tp, PartitionState.ONLINE)
                for r in replicas:
                    ctx.put_replica_state(PartitionReplica(tp, r), ReplicaState.ONLINE)
        return tps


@dataclass(frozen=True)
class QueuedRequest:
    """One request as `send_requests_to_brokers` queued it, with how many state-change entries had been
    written by then."""

    broker_id: int
    api_key: ApiKey
    version: int
    body: dict[str, Any]
    encoded: bytes
    entries_written: int


class RecordingRequestChannel:
    """The channel manager under `ControllerBrokerRequestBatch.send_requests_to_brokers`: records each
    request queued to a send thread instead of sending it."""

    listener_name = "PLAINTEXT"

    def __init__(self, sink: RecordingSink | None = None) -> None:
        self.sink = sink
        self.queued: list[QueuedRequest] = []

    def send(
        self,
        broker_id: int,
        api_key: ApiKey,
        version: int,
        body: dict[str, Any],
        callback: object,
        encoded: bytes,
    ) -> bool:
        written = len(self.sink.entries) if self.sink is not None else 0
        self.queued.append(QueuedRequest(broker_id, api_key, version, body, encoded, written))
        return True
