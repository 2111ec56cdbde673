"""`state-change.log` as Kafka 2.8 writes it: the message texts, the log4j line, the hourly rolling file.

kafka-reference.md §4.1 – §4.4. The controller and the brokers build an entry with one function per
message kind (`ControllerLog` for `[Controller id=N epoch=E] ...`, `BrokerLog` for `[Broker id=N] ...`),
then hand it to a `StateChangeLogFile`, which stamps it `[yyyy-MM-dd HH:mm:ss,SSS] LEVEL ...
(state.change.logger)` and rolls the file every hour to `state-change.log.yyyy-MM-dd-HH` as log4j's
DailyRollingFileAppender does. Message builders are pure; only the file class does I/O, under a lock.

Texts are those of Kafka 2.8's `ControllerChannelManager`, `ZkPartitionStateMachine`,
`ZkReplicaStateMachine`, `KafkaController`, `ReplicaManager`, `Partition` and `MetadataCache`, with
Scala/Java collection printing reproduced (Scala 2.13 builds, the default for Kafka 2.8).
"""

from __future__ import annotations

import enum
import os
import shutil
import threading
import time
import traceback
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, tzinfo
from pathlib import Path
from types import TracebackType

from kafkaops.cluster.common import log4j
from kafkaops.cluster.common.jvm_text import java_boolean_text, java_list_text, scala_mutable_hash_set
from kafkaops.cluster.zk.values import LeaderAndIsr, LeaderIsrAndControllerEpoch, ReplicaAssignment, TopicPartition

LOGGER_NAME = "state.change.logger"
FILE_NAME = "state-change.log"

# --- Scala and Java collection printing (the JVM's own text is on the floor) -----------------------


def _csv(ids: Iterable[object]) -> str:
    """Scala's `mkString(",")`."""
    return ",".join(map(str, ids))


def node_string(broker_id: int, host: str, port: int, rack: str | None = None) -> str:
    """`org.apache.kafka.common.Node.toString`: `host:port (id: 1 rack: null)`."""
    return f"{host}:{port} (id: {broker_id} rack: {rack if rack is not None else 'null'})"


# --- request partition states, printed as Kafka's generated message classes ---------------------


@dataclass(frozen=True)
class LeaderAndIsrPartitionState:
    """One partition of a LeaderAndIsr request (LeaderAndIsrRequest.json, v0–4 fields)."""

    topic_name: str
    partition_index: int
    controller_epoch: int
    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    zk_version: int
    replicas: tuple[int, ...]
    adding_replicas: tuple[int, ...] = ()
    removing_replicas: tuple[int, ...] = ()
    is_new: bool = False

    @classmethod
    def of(
        cls,
        partition: TopicPartition,
        state: LeaderIsrAndControllerEpoch,
        assignment: ReplicaAssignment,
        *,
        is_new: bool,
    ) -> LeaderAndIsrPartitionState:
        """As `addLeaderAndIsrRequestForBrokers` builds it from the controller's context."""
        lai = state.leader_and_isr
        return cls(
            partition.topic,
            partition.partition,
            state.controller_epoch,
            lai.leader,
            lai.leader_epoch,
            lai.isr,
            lai.zk_version,
            assignment.replicas,
            assignment.adding_replicas,
            assignment.removing_replicas,
            is_new,
        )

    @property
    def partition(self) -> TopicPartition:
        return TopicPartition(self.topic_name, self.partition_index)

    def __str__(self) -> str:
        return (
            f"LeaderAndIsrPartitionState(topicName='{self.topic_name}', partitionIndex={self.partition_index}, "
            f"controllerEpoch={self.controller_epoch}, leader={self.leader}, leaderEpoch={self.leader_epoch}, "
            f"isr={java_list_text(self.isr)}, zkVersion={self.zk_version}, replicas={java_list_text(self.replicas)}, "
            f"addingReplicas={java_list_text(self.adding_replicas)}, "
            f"removingReplicas={java_list_text(self.removing_replicas)}, isNew={java_boolean_text(self.is_new)})"
        )


@dataclass(frozen=True)
class UpdateMetadataPartitionState:
    """One partition of an UpdateMetadata request (UpdateMetadataRequest.json)."""

    topic_name: str
    partition_index: int
    controller_epoch: int
    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    zk_version: int
    replicas: tuple[int, ...]
    offline_replicas: tuple[int, ...] = ()

    @property
    def partition(self) -> TopicPartition:
        return TopicPartition(self.topic_name, self.partition_index)

    def __str__(self) -> str:
        return (
            f"UpdateMetadataPartitionState(topicName='{self.topic_name}', partitionIndex={self.partition_index}, "
            f"controllerEpoch={self.controller_epoch}, leader={self.leader}, leaderEpoch={self.leader_epoch}, "
            f"isr={java_list_text(self.isr)}, zkVersion={self.zk_version}, replicas={java_list_text(self.replicas)}, "
            f"offlineReplicas={java_list_text(self.offline_replicas)})"
        )


@dataclass(frozen=True)
class StopReplicaPartitionState:
    """One partition of a StopReplica request (StopReplicaRequest.json v3 form)."""

    partition_index: int
    leader_epoch: int
    delete_partition: bool

    def __str__(self) -> str:
        return (
            f"StopReplicaPartitionState(partitionIndex={self.partition_index}, leaderEpoch={self.leader_epoch}, "
            f"deletePartition={java_boolean_text(self.delete_partition)})"
        )


# --- entries -------------------------------------------------------------------------------------


class Level(enum.IntEnum):
    """log4j levels, ordered; `%p` prints the name."""

    TRACE = 5000
    DEBUG = 10000
    INFO = 20000
    WARN = 30000
    ERROR = 40000


@dataclass(frozen=True)
class ErrorTrace:
    """An exception as log4j prints it under the message: `Throwable.toString`, then `\\tat` frames,
    then `Caused by: ...` for the cause chain."""

    exception_class: str
    message: str | None = None
    frames: tuple[str, ...] = ()
    cause: ErrorTrace | None = None

    @classmethod
    def state_change_failed(cls, message: str) -> ErrorTrace:
        return cls("kafka.common.StateChangeFailedException", message)

    @classmethod
    def illegal_state(cls, message: str) -> ErrorTrace:
        return cls("java.lang.IllegalStateException", message)

    @classmethod
    def keeper(cls, code: str) -> ErrorTrace:
        """`KeeperException.create(code)` for a code name such as `NodeExists` or `BadVersion`."""
        return cls(f"org.apache.zookeeper.KeeperException${code}Exception", f"KeeperErrorCode = {code}")

    @classmethod
    def from_exception(cls, error: BaseException) -> ErrorTrace:
        """A Python exception in the same shape: qualified class name, message, one `at` per frame
        (innermost last, as Python lists them), and its `__cause__`."""
        kind = type(error)
        frames = tuple(
            f"{Path(frame.filename).stem}.{frame.name}({Path(frame.filename).name}:{frame.lineno})"
            for frame in traceback.extract_tb(error.__traceback__)
        )
        cause = cls.from_exception(error.__cause__) if error.__cause__ is not None else None
        return cls(f"{kind.__module__}.{kind.__qualname__}", str(error) or None, frames, cause)

    def lines(self) -> list[str]:
        header = self.exception_class if self.message is None else f"{self.exception_class}: {self.message}"
        out = [header, *(f"\tat {frame}" for frame in self.frames)]
        if self.cause is not None:
            first, *rest = self.cause.lines()
            out += [f"Caused by: {first}", *rest]
        return out


@dataclass(frozen=True)
class StateChangeEntry:
    """One log event: level, message (with its actor prefix) and an optional exception."""

    level: Level
    message: str
    error: ErrorTrace | None = None

    def format(self, when: datetime) -> str:
        """The log4j `[%d] %p %m (%c)%n` text, followed by the exception's lines, `\\n`-terminated."""
        return self.format_at(log4j.timestamp(when))

    def format_at(self, stamp: str) -> str:
        """As `format`, with the `%d` text already made (`yyyy-MM-dd HH:mm:ss,SSS`)."""
        text = f"[{stamp}] {self.level.name} {self.message} ({LOGGER_NAME})\n"
        if self.error is not None:
            text += "".join(line + "\n" for line in self.error.lines())
        return text


# --- controller messages -------------------------------------------------------------------------


@dataclass(frozen=True)
class ControllerLog:
    """Kafka's controller-side `StateChangeLogger`: `[Controller id=N epoch=E] ` (no epoch before one is
    known). Each method returns the entry for one message kind; nothing is written here."""

    controller_id: int
    epoch: int | None = None

    @property
    def prefix(self) -> str:
        epoch = f" epoch={self.epoch}" if self.epoch is not None else ""
        return f"[Controller id={self.controller_id}{epoch}] "

    def _entry(self, level: Level, message: str, error: ErrorTrace | None = None) -> StateChangeEntry:
        return StateChangeEntry(level, self.prefix + message, error)

    def _failure_head(self) -> str:
        # the failure texts repeat the id and epoch inside the message (`logFailedStateChange`); before
        # an election Kafka's context epoch is its initial 0
        return f"Controller {self.controller_id} epoch {self.epoch if self.epoch is not None else 0}"

    # partition state machine

    def new_partition(self, partition: TopicPartition, from_state: object, replicas: Sequence[int]) -> StateChangeEntry:
        return self._entry(
            Level.INFO,
            f"Changed partition {partition} state from {from_state} to NewPartition with assigned replicas "
            f"{_csv(replicas)}",
        )

    def partition_online(
        self, partition: TopicPartition, from_state: object, leader_and_isr: LeaderAndIsr
    ) -> StateChangeEntry:
        return self._entry(
            Level.INFO,
            f"Changed partition {partition} from {from_state} to OnlinePartition with state {leader_and_isr}",
        )

    def partition_state_changed(
        self, partition: TopicPartition, from_state: object, to_state: object
    ) -> StateChangeEntry:
        """→ OfflinePartition / NonExistentPartition."""
        return self._entry(Level.TRACE, f"Changed partition {partition} state from {from_state} to {to_state}")

    def partition_state_change_failed(
        self, partition: TopicPartition, from_state: object, to_state: object, error: ErrorTrace
    ) -> StateChangeEntry:
        """An invalid transition (`ErrorTrace.illegal_state(InvalidTransition.reason)`), a failed
        election (`ErrorTrace.state_change_failed(ElectionFailed.reason)`) or a ZooKeeper error."""
        return self._entry(
            Level.ERROR,
            f"{self._failure_head()} failed to change state for partition {partition} from {from_state} to {to_state}",
            error,
        )

    # replica state machine

    def replica_state_changed(
        self, replica: int, partition: TopicPartition, from_state: object, to_state: object
    ) -> StateChangeEntry:
        return self._entry(
            Level.TRACE, f"Changed state of replica {replica} for partition {partition} from {from_state} to {to_state}"
        )

    def replica_state_change_failed(
        self, replica: int, partition: TopicPartition, from_state: object, to_state: object, error: ErrorTrace
    ) -> StateChangeEntry:
        return self._entry(
            Level.ERROR,
            f"{self._failure_head()} initiated state change of replica {replica} for partition {partition} "
            f"from {from_state} to {to_state} failed",
            error,
        )

    def replica_removed_from_isr(
        self, partition: TopicPartition, state: LeaderIsrAndControllerEpoch, replica: int
    ) -> StateChangeEntry:
        return self._entry(
            Level.INFO,
            f"Partition {partition} state changed to {state} after removing replica {replica} from the ISR as part "
            "of transition to OfflineReplica",
        )

    # requests to brokers (ControllerChannelManager)

    def sending_leader_and_isr_partition(self, broker: int, state: LeaderAndIsrPartitionState) -> StateChangeEntry:
        kind = "become-leader" if state.leader == broker else "become-follower"
        return self._entry(
            Level.TRACE,
            f"Sending {kind} LeaderAndIsr request {state} to broker {broker} for partition {state.partition}",
        )

    def sending_leader_and_isr(self, broker: int, become_leader: int, become_follower: int) -> StateChangeEntry:
        return self._entry(
            Level.INFO,
            f"Sending LeaderAndIsr request to broker {broker} with {become_leader} become-leader and "
            f"{become_follower} become-follower partitions",
        )

    def sending_update_metadata(self, brokers: Iterable[int], partitions: int) -> StateChangeEntry:
        return self._entry(
            Level.INFO,
            f"Sending UpdateMetadata request to brokers {scala_mutable_hash_set(brokers)} for {partitions} partitions",
        )

    def sending_stop_replica_partition(
        self, broker: int, partition: TopicPartition, state: StopReplicaPartitionState
    ) -> StateChangeEntry:
        return self._entry(
            Level.TRACE, f"Sending StopReplica request {state} to broker {broker} for partition {partition}"
        )

    def sending_stop_replica(self, broker: int, replicas: int) -> StateChangeEntry:
        return self._entry(Level.INFO, f"Sending StopReplica request for {replicas} replicas to broker {broker}")

    def received_response(self, response: object, api: str, correlation_id: int, broker_node: str) -> StateChangeEntry:
        """`response` prints as the response data class; `broker_node` as `node_string(...)`."""
        return self._entry(
            Level.TRACE,
            f"Received response {response} for request {api} with correlation id {correlation_id} sent to broker "
            f"{broker_node}",
        )

    # KafkaController's own logger has no epoch in its prefix

    def leader_and_isr_response_error(self, response: object, broker: int) -> StateChangeEntry:
        return StateChangeEntry(
            Level.ERROR,
            ControllerLog(self.controller_id).prefix + f"Received error in LeaderAndIsr response {response} "
            f"from broker {broker}",
        )

    def mark_replicas_offline(self, partitions: Iterable[TopicPartition], broker: int) -> StateChangeEntry:
        return StateChangeEntry(
            Level.INFO,
            ControllerLog(self.controller_id).prefix
            + f"Mark replicas {_csv(partitions)} on broker {broker} as offline",
        )

    # reassignment (updateLeaderEpochAndSendRequest)

    def reassignment_request_sent(
        self, partition: TopicPartition, state: LeaderIsrAndControllerEpoch, assignment: ReplicaAssignment
    ) -> StateChangeEntry:
        return self._entry(
            Level.INFO,
            f"Sent LeaderAndIsr request {state} with new replica assignment {assignment} to leader "
            f"{state.leader_and_isr.leader} for partition being reassigned {partition}",
        )

    def reassignment_request_failed(self, partition: TopicPartition, assignment: ReplicaAssignment) -> StateChangeEntry:
        return self._entry(
            Level.ERROR,
            f"Failed to send LeaderAndIsr request with new replica assignment {assignment} to leader for partition "
            f"being reassigned {partition}",
        )


# --- broker messages -----------------------------------------------------------------------------


@dataclass(frozen=True)
class BrokerLog:
    """Kafka's broker-side `StateChangeLogger`: `[Broker id=N] `. `controller_id`, `controller_epoch` and
    `correlation_id` are those of the request being handled."""

    broker_id: int

    @property
    def prefix(self) -> str:
        return f"[Broker id={self.broker_id}] "

    def _entry(self, level: Level, message: str, error: ErrorTrace | None = None) -> StateChangeEntry:
        return StateChangeEntry(level, self.prefix + message, error)

    # LeaderAndIsr (ReplicaManager.becomeLeaderOrFollower)

    def handling_leader_and_isr(self, correlation_id: int, controller_id: int, partitions: int) -> StateChangeEntry:
        return self._entry(
            Level.INFO,
            f"Handling LeaderAndIsr request correlationId {correlation_id} from controller {controller_id} for "
            f"{partitions} partitions",
        )

    def received_leader_and_isr(
        self, state: LeaderAndIsrPartitionState, correlation_id: int, controller_id: int, controller_epoch: int
    ) -> StateChangeEntry:
        return self._entry(
            Level.TRACE,
            f"Received LeaderAndIsr request {state} correlation id {correlation_id} from controller {controller_id} "
            f"epoch {controller_epoch}",
        )

    def ignoring_leader_and_isr_stale_controller(
        self, controller_id: int, correlation_id: int, controller_epoch: int, latest_epoch: int
    ) -> StateChangeEntry:
        return self._entry(
            Level.WARN,
            f"Ignoring LeaderAndIsr request from controller {controller_id} with correlation id {correlation_id} "
            f"since its controller epoch {controller_epoch} is old. Latest known controller epoch is {latest_epoch}",
        )

    def _ignoring_partition(
        self, controller_id: int, correlation_id: int, controller_epoch: int, partition: TopicPartition
    ) -> str:
        return (
            f"Ignoring LeaderAndIsr request from controller {controller_id} with correlation id {correlation_id} "
            f"epoch {controller_epoch} for partition {partition}"
        )

    def ignoring_leader_and_isr_offline_dir(
        self, controller_id: int, correlation_id: int, controller_epoch: int, partition: TopicPartition
    ) -> StateChangeEntry:
        return self._entry(
            Level.WARN,
            self._ignoring_partition(controller_id, correlation_id, controller_epoch, partition)
            + " as the local replica for the partition is in an offline log directory",
        )

    def ignoring_leader_and_isr_not_a_replica(
        self,
        controller_id: int,
        correlation_id: int,
        controller_epoch: int,
        partition: TopicPartition,
        replicas: Sequence[int],
    ) -> StateChangeEntry:
        return self._entry(
            Level.WARN,
            self._ignoring_partition(controller_id, correlation_id, controller_epoch, partition)
            + f" as itself is not in assigned replica list {_csv(replicas)}",
        )

    def ignoring_leader_and_isr_stale_leader_epoch(
        self,
        controller_id: int,
        correlation_id: int,
        controller_epoch: int,
        partition: TopicPartition,
        request_leader_epoch: int,
        current_leader_epoch: int,
    ) -> StateChangeEntry:
        return self._entry(
            Level.WARN,
            self._ignoring_partition(controller_id, correlation_id, controller_epoch, partition)
            + f" since its associated leader epoch {request_leader_epoch} is smaller than the current leader epoch "
            f"{current_leader_epoch}",
        )

    def ignoring_leader_and_isr_same_leader_epoch(
        self,
        controller_id: int,
        correlation_id: int,
        controller_epoch: int,
        partition: TopicPartition,
        leader_epoch: int,
    ) -> StateChangeEntry:
        return self._entry(
            Level.INFO,
            self._ignoring_partition(controller_id, correlation_id, controller_epoch, partition)
            + f" since its associated leader epoch {leader_epoch} matches the current leader epoch",
        )

    def starting_become_leader(
        self, correlation_id: int, controller_id: int, controller_epoch: int, partition: TopicPartition
    ) -> StateChangeEntry:
        return self._entry(
            Level.TRACE,
            f"Handling LeaderAndIsr request correlationId {correlation_id} from controller {controller_id} epoch "
            f"{controller_epoch} starting the become-leader transition for partition {partition}",
        )

    def stopped_fetchers_become_leader(
        self, correlation_id: int, controller_id: int, controller_epoch: int, partitions: int
    ) -> StateChangeEntry:
        return self._entry(
            Level.INFO,
            f"Stopped fetchers as part of LeaderAndIsr request correlationId {correlation_id} from controller "
            f"{controller_id} epoch {controller_epoch} as part of the become-leader transition for {partitions} "
            "partitions",
        )

    def skipped_become_leader(
        self,
        correlation_id: int,
        controller_id: int,
        controller_epoch: int,
        partition: TopicPartition,
        last_update_controller_epoch: int,
    ) -> StateChangeEntry:
        return self._entry(
            Level.INFO,
            f"Skipped the become-leader state change after marking its partition as leader with correlation id "
            f"{correlation_id} from controller {controller_id} epoch {controller_epoch} for partition {partition} "
            f"(last update controller epoch {last_update_controller_epoch}) since it is already the leader for the "
            "partition.",
        )

    def completed_become_leader(
        self, correlation_id: int, controller_id: int, controller_epoch: int, partition: TopicPartition
    ) -> StateChangeEntry:
        return self._entry(
            Level.TRACE,
            f"Completed LeaderAndIsr request correlationId {correlation_id} from controller {controller_id} epoch "
            f"{controller_epoch} for the become-leader transition for partition {partition}",
        )

    def starting_become_follower(
        self, correlation_id: int, controller_id: int, controller_epoch: int, partition: TopicPartition, leader: int
    ) -> StateChangeEntry:
        return self._entry(
            Level.TRACE,
            f"Handling LeaderAndIsr request correlationId {correlation_id} from controller {controller_id} epoch "
            f"{controller_epoch} starting the become-follower transition for partition {partition} "
            f"with leader {leader}",
        )

    def skipped_become_follower(
        self,
        correlation_id: int,
        controller_id: int,
        controller_epoch: int,
        partition: TopicPartition,
        last_update_controller_epoch: int,
        leader: int,
    ) -> StateChangeEntry:
        return self._entry(
            Level.INFO,
            f"Skipped the become-follower state change after marking its partition as follower with correlation id "
            f"{correlation_id} from controller {controller_id} epoch {controller_epoch} for partition {partition} "
            f"(last update controller epoch {last_update_controller_epoch}) since the new leader {leader} is the "
            "same as the old leader",
        )

    def leader_unavailable_for_follower(
        self,
        correlation_id: int,
        controller_id: int,
        controller_epoch: int,
        partition: TopicPartition,
        last_update_controller_epoch: int,
        leader: int,
    ) -> StateChangeEntry:
        return self._entry(
            Level.ERROR,
            f"Received LeaderAndIsrRequest with correlation id {correlation_id} from controller {controller_id} "
            f"epoch {controller_epoch} for partition {partition} (last update controller epoch "
            f"{last_update_controller_epoch}) but cannot become follower since the new leader {leader} is "
            "unavailable.",
        )

    def stopped_fetchers_become_follower(
        self, controller_id: int, controller_epoch: int, correlation_id: int, partitions: int
    ) -> StateChangeEntry:
        return self._entry(
            Level.INFO,
            f"Stopped fetchers as part of become-follower request from controller {controller_id} epoch "
            f"{controller_epoch} with correlation id {correlation_id} for {partitions} partitions",
        )

    def skipped_adding_fetcher_shutting_down(
        self, correlation_id: int, controller_id: int, controller_epoch: int, partition: TopicPartition, leader: int
    ) -> StateChangeEntry:
        return self._entry(
            Level.TRACE,
            f"Skipped the adding-fetcher step of the become-follower state change with correlation id "
            f"{correlation_id} from controller {controller_id} epoch {controller_epoch} for partition {partition} "
            f"with leader {leader} since it is shutting down",
        )

    def completed_become_follower(
        self, correlation_id: int, controller_id: int, controller_epoch: int, partition: TopicPartition, leader: int
    ) -> StateChangeEntry:
        return self._entry(
            Level.TRACE,
            f"Completed LeaderAndIsr request correlationId {correlation_id} from controller {controller_id} epoch "
            f"{controller_epoch} for the become-follower transition for partition {partition} with leader {leader}",
        )

    def finished_leader_and_isr(
        self, elapsed_ms: int, correlation_id: int, controller_id: int, partitions: int
    ) -> StateChangeEntry:
        return self._entry(
            Level.INFO,
            f"Finished LeaderAndIsr request in {elapsed_ms}ms correlationId {correlation_id} from controller "
            f"{controller_id} for {partitions} partitions",
        )

    # Partition.makeLeader / makeFollower

    def leader_starts(
        self,
        partition: TopicPartition,
        leader_epoch: int,
        start_offset: int,
        high_watermark: int,
        isr: Sequence[int],
        adding_replicas: Sequence[int],
        removing_replicas: Sequence[int],
        previous_leader_epoch: int,
    ) -> StateChangeEntry:
        return self._entry(
            Level.INFO,
            f"Leader {partition} starts at leader epoch {leader_epoch} from offset {start_offset} with high watermark "
            f"{high_watermark} ISR [{_csv(isr)}] addingReplicas [{_csv(adding_replicas)}] removingReplicas "
            f"[{_csv(removing_replicas)}]. Previous leader epoch was {previous_leader_epoch}.",
        )

    def follower_starts(
        self,
        partition: TopicPartition,
        leader_epoch: int,
        end_offset: int,
        high_watermark: int,
        previous_leader_epoch: int,
    ) -> StateChangeEntry:
        return self._entry(
            Level.INFO,
            f"Follower {partition} starts at leader epoch {leader_epoch} from offset {end_offset} with high watermark "
            f"{high_watermark}. Previous leader epoch was {previous_leader_epoch}.",
        )

    # UpdateMetadata (MetadataCache / ReplicaManager.maybeUpdateMetadataCache)

    def cached_leader_info(
        self, state: UpdateMetadataPartitionState, controller_id: int, controller_epoch: int, correlation_id: int
    ) -> StateChangeEntry:
        return self._entry(
            Level.TRACE,
            f"Cached leader info {state} for partition {state.partition} in response to UpdateMetadata request sent "
            f"by controller {controller_id} epoch {controller_epoch} with correlation id {correlation_id}",
        )

    def deleted_from_metadata_cache(
        self, partition: TopicPartition, controller_id: int, controller_epoch: int, correlation_id: int
    ) -> StateChangeEntry:
        return self._entry(
            Level.TRACE,
            f"Deleted partition {partition} from metadata cache in response to UpdateMetadata request sent by "
            f"controller {controller_id} epoch {controller_epoch} with correlation id {correlation_id}",
        )

    def ignoring_update_metadata_stale_controller(
        self, correlation_id: int, controller_id: int, controller_epoch: int, latest_epoch: int
    ) -> StateChangeEntry:
        return self._entry(
            Level.WARN,
            f"Received update metadata request with correlation id {correlation_id} from an old controller "
            f"{controller_id} with epoch {controller_epoch}. Latest known controller epoch is {latest_epoch}",
        )

    # StopReplica (ReplicaManager.stopReplicas)

    def handling_stop_replica(self, correlation_id: int, controller_id: int, partitions: int) -> StateChangeEntry:
        return self._entry(
            Level.INFO,
            f"Handling StopReplica request correlationId {correlation_id} from controller {controller_id} for "
            f"{partitions} partitions",
        )

    def received_stop_replica(
        self,
        state: StopReplicaPartitionState,
        partition: TopicPartition,
        correlation_id: int,
        controller_id: int,
        controller_epoch: int,
    ) -> StateChangeEntry:
        return self._entry(
            Level.TRACE,
            f"Received StopReplica request {state} correlation id {correlation_id} from controller {controller_id} "
            f"epoch {controller_epoch} for partition {partition}",
        )

    def ignoring_stop_replica_stale_controller(
        self, controller_id: int, correlation_id: int, controller_epoch: int, latest_epoch: int
    ) -> StateChangeEntry:
        return self._entry(
            Level.WARN,
            f"Ignoring StopReplica request from controller {controller_id} with correlation id {correlation_id} "
            f"since its controller epoch {controller_epoch} is old. Latest known controller epoch is {latest_epoch}",
        )


# --- the file ------------------------------------------------------------------------------------


FLUSH_INTERVAL_S = 0.05
"""At most this much of the log is lost when the process is killed; writers also `flush()` at the
end of each event or request."""


class StateChangeLogFile:
    """`state-change.log` in `directory`, rolled every hour like log4j's DailyRollingFileAppender with
    `DatePattern='.'yyyy-MM-dd-HH`: the first write in a new hour renames the file to
    `state-change.log.<hour of the lines it holds>` and starts a new one.

    `clock` returns seconds since the epoch (time.time); `tz` is the zone of `%d` and of the rolled
    names (None: the local zone, as the JVM's default). Entries below `threshold` are dropped: Kafka
    2.8 ships `state.change.logger=INFO` (TRACE in 2.5 and before). Thread-safe: any thread may write.

    Two deliberate differences from log4j: a file left from an earlier hour is rolled at the first
    write after a restart (log4j waits for the next hour boundary and then names the file after the
    old hour, mixing both hours' lines in it); and a rolled file that already exists (the clock went
    back and forth) is appended to rather than deleted.
    """

    def __init__(
        self,
        directory: str | os.PathLike[str],
        *,
        clock: Callable[[], float] = time.time,
        tz: tzinfo | None = None,
        threshold: Level = Level.INFO,
    ) -> None:
        self.path = Path(directory) / FILE_NAME
        self.threshold = threshold
        self._clock = clock
        self._tz = tz
        self._lock = threading.Lock()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._hour: str | None = None
        if self.path.exists() and self.path.stat().st_size > 0:
            self._hour = self._hour_of(self.path.stat().st_mtime)
        self._file = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 - kept open for the process
        self._second: int | None = None
        self._stamp = ""
        self._last_flush = 0.0

    def _hour_of(self, seconds: float) -> str:
        return datetime.fromtimestamp(seconds, self._tz).strftime("%Y-%m-%d-%H")

    def enabled(self, level: Level) -> bool:
        """Whether entries at `level` are written: check before building costly TRACE entries."""
        return level >= self.threshold

    def write(self, entry: StateChangeEntry) -> None:
        """Write one entry. Lines reach the file at least every FLUSH_INTERVAL_S and at `flush()`:
        a controller event or a broker request writes thousands of lines, one write call each would
        cost more than the decisions they record."""
        if not self.enabled(entry.level):
            return
        with self._lock:
            now = self._clock()
            second = int(now)
            if second != self._second:
                self._second = second
                moment = datetime.fromtimestamp(second, self._tz)
                self._stamp = log4j.second_text(moment)
                hour = moment.strftime("%Y-%m-%d-%H")
                if self._hour is not None and hour > self._hour:
                    self._roll(self._hour)
                if self._hour is None or hour > self._hour:
                    self._hour = hour
            self._file.write(entry.format_at(log4j.with_millis(self._stamp, int(now * 1000) % 1000)))
            if now - self._last_flush >= FLUSH_INTERVAL_S:
                self._file.flush()
                self._last_flush = now

    def flush(self) -> None:
        with self._lock:
            self._file.flush()
            self._last_flush = self._clock()

    def write_all(self, entries: Iterable[StateChangeEntry]) -> None:
        for entry in entries:
            self.write(entry)

    def _roll(self, hour: str) -> None:
        self._file.close()
        target = self.path.with_name(f"{FILE_NAME}.{hour}")
        if target.exists():
            with open(self.path, "rb") as source, open(target, "ab") as sink:
                shutil.copyfileobj(source, sink)
            self.path.unlink()
        else:
            os.replace(self.path, target)
        self._file = open(self.path, "a", encoding="utf-8")  # noqa: SIM115

    def close(self) -> None:
        with self._lock:
            self._file.close()

    def __enter__(self) -> StateChangeLogFile:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()
