"""The broker's replica manager: which partitions it leads or follows, as the controller says.

Kafka's `ReplicaManager.becomeLeaderOrFollower` / `stopReplicas` checks: a request from an older
controller epoch is refused (STALE_CONTROLLER_EPOCH); a partition state with an older or equal
leader epoch is ignored; a partition this broker is not a replica of is refused. Every decision is
written to the state-change log in Kafka 2.8's words.

This holds roles only; the replicated logs, fetchers and ISR tracking build on it (the data-plane
issue). Thread-safe: the controller's requests and the client handlers may race.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kafkaops.cluster.protocol import errors
from kafkaops.cluster.protocol.schemas import flatten_partition_states, flatten_stop_replica_partitions
from kafkaops.cluster.state_change_log import (
    BrokerLog,
    LeaderAndIsrPartitionState,
    Level,
    StateChangeEntry,
    StateChangeLogFile,
    StopReplicaPartitionState,
)
from kafkaops.cluster.zk.values import TopicPartition

NONE = errors.NONE
UNKNOWN_TOPIC_OR_PARTITION = errors.UnknownTopicOrPartitionError.code
STALE_CONTROLLER_EPOCH = errors.StaleControllerEpochError.code


@dataclass(frozen=True)
class PartitionRole:
    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    replicas: tuple[int, ...]
    zk_version: int
    is_leader: bool


class ReplicaManager:
    def __init__(self, broker_id: int, sink: StateChangeLogFile) -> None:
        self.broker_id = broker_id
        self.sink = sink
        self.log = BrokerLog(broker_id)
        self.controller_epoch = 0
        self._lock = threading.RLock()
        self.partitions: dict[TopicPartition, PartitionRole] = {}

    def role(self, partition: TopicPartition) -> PartitionRole | None:
        with self._lock:
            return self.partitions.get(partition)

    def accept_controller_epoch(self, epoch: int, stale: Callable[[int], StateChangeEntry]) -> bool:
        """Kafka's fencing of old controllers: a request from an older controller epoch is refused and
        logged with `stale(latest epoch)`; a newer one raises the epoch this broker knows."""
        with self._lock:
            if epoch < self.controller_epoch:
                self.sink.write(stale(self.controller_epoch))
                return False
            self.controller_epoch = epoch
            return True

    def become_leader_or_follower(self, correlation_id: int, body: dict[str, Any]) -> dict[str, Any]:
        """Apply a LeaderAndIsr request; returns the response body."""
        started = time.monotonic()
        controller_id, controller_epoch = body["controller_id"], body["controller_epoch"]
        states = flatten_partition_states(body)
        write = self.sink.write
        write(self.log.handling_leader_and_isr(correlation_id, controller_id, len(states)))
        with self._lock:
            if not self.accept_controller_epoch(
                controller_epoch,
                lambda latest: self.log.ignoring_leader_and_isr_stale_controller(
                    controller_id, correlation_id, controller_epoch, latest
                ),
            ):
                return {"error_code": STALE_CONTROLLER_EPOCH, "partition_errors": []}
            errors = []
            for state in states:
                tp = TopicPartition(state["topic_name"], state["partition_index"])
                if self.sink.enabled(Level.TRACE):
                    write(
                        self.log.received_leader_and_isr(
                            _printable(state), correlation_id, controller_id, controller_epoch
                        )
                    )
                code = self._apply(tp, state, correlation_id, controller_id, controller_epoch)
                errors.append({"topic_name": tp.topic, "partition_index": tp.partition, "error_code": code})
        elapsed_ms = int((time.monotonic() - started) * 1000)
        write(self.log.finished_leader_and_isr(elapsed_ms, correlation_id, controller_id, len(states)))
        self.sink.flush()
        return {"error_code": NONE, "partition_errors": errors}

    def _apply(
        self, tp: TopicPartition, state: dict[str, Any], correlation_id: int, controller_id: int, epoch: int
    ) -> int:
        write = self.sink.write
        if self.broker_id not in state["replicas"]:
            write(
                self.log.ignoring_leader_and_isr_not_a_replica(
                    controller_id, correlation_id, epoch, tp, state["replicas"]
                )
            )
            return UNKNOWN_TOPIC_OR_PARTITION
        current = self.partitions.get(tp)
        previous_epoch = current.leader_epoch if current is not None else -1
        if current is not None and state["leader_epoch"] < current.leader_epoch:
            write(
                self.log.ignoring_leader_and_isr_stale_leader_epoch(
                    controller_id, correlation_id, epoch, tp, state["leader_epoch"], current.leader_epoch
                )
            )
            return STALE_CONTROLLER_EPOCH
        if current is not None and state["leader_epoch"] == current.leader_epoch:
            write(
                self.log.ignoring_leader_and_isr_same_leader_epoch(
                    controller_id, correlation_id, epoch, tp, state["leader_epoch"]
                )
            )
            return STALE_CONTROLLER_EPOCH
        is_leader = state["leader"] == self.broker_id
        role = PartitionRole(
            state["leader"],
            state["leader_epoch"],
            tuple(state["isr"]),
            tuple(state["replicas"]),
            state["zk_version"],
            is_leader,
        )
        if is_leader:
            write(self.log.starting_become_leader(correlation_id, controller_id, epoch, tp))
            self.partitions[tp] = role
            write(
                self.log.leader_starts(
                    tp,
                    role.leader_epoch,
                    0,
                    0,
                    role.isr,
                    state.get("adding_replicas", []),
                    state.get("removing_replicas", []),
                    previous_epoch,
                )
            )
            write(self.log.completed_become_leader(correlation_id, controller_id, epoch, tp))
        else:
            write(self.log.starting_become_follower(correlation_id, controller_id, epoch, tp, role.leader))
            self.partitions[tp] = role
            write(self.log.follower_starts(tp, role.leader_epoch, 0, 0, previous_epoch))
            write(self.log.completed_become_follower(correlation_id, controller_id, epoch, tp, role.leader))
        return NONE

    def stop_replicas(self, correlation_id: int, body: dict[str, Any]) -> dict[str, Any]:
        controller_id, controller_epoch = body["controller_id"], body["controller_epoch"]
        partitions = flatten_stop_replica_partitions(body)
        write = self.sink.write
        write(self.log.handling_stop_replica(correlation_id, controller_id, len(partitions)))
        with self._lock:
            if not self.accept_controller_epoch(
                controller_epoch,
                lambda latest: self.log.ignoring_stop_replica_stale_controller(
                    controller_id, correlation_id, controller_epoch, latest
                ),
            ):
                return {"error_code": STALE_CONTROLLER_EPOCH, "partition_errors": []}
            errors = []
            for topic, index in partitions:
                tp = TopicPartition(topic, index)
                current = self.partitions.get(tp)
                state = StopReplicaPartitionState(
                    index, current.leader_epoch if current else -1, body["delete_partitions"]
                )
                if self.sink.enabled(Level.TRACE):
                    write(self.log.received_stop_replica(state, tp, correlation_id, controller_id, controller_epoch))
                if body["delete_partitions"]:
                    self.partitions.pop(tp, None)
                elif current is not None and current.is_leader:
                    self.partitions[tp] = PartitionRole(
                        current.leader, current.leader_epoch, current.isr, current.replicas, current.zk_version, False
                    )
                errors.append({"topic_name": topic, "partition_index": index, "error_code": NONE})
        self.sink.flush()
        return {"error_code": NONE, "partition_errors": errors}


def _printable(state: dict[str, Any]) -> LeaderAndIsrPartitionState:
    return LeaderAndIsrPartitionState(
        state["topic_name"],
        state["partition_index"],
        state["controller_epoch"],
        state["leader"],
        state["leader_epoch"],
        tuple(state["isr"]),
        state["zk_version"],
        tuple(state["replicas"]),
        tuple(state.get("adding_replicas", [])),
        tuple(state.get("removing_replicas", [])),
        bool(state.get("is_new", False)),
    )
