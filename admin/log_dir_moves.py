"""Replica moves between a broker's log dirs in a reassignment (the `log_dirs` of the reassignment JSON):
their states and Kafka 2.8's texts (`ReassignPartitionsCommand.LogDirMoveState`,
`replicaMoveStatesToString`). Pure: `reassignment_admin_ops` feeds them DescribeLogDirs answers.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping, Sequence

from kafkaops.admin.kafka_client.log_dirs import TopicPartitionReplica
from kafkaops.admin.reassignment import ReassignmentEntry
from kafkaops.cluster.zk.values import TopicPartition

Replica = TopicPartitionReplica


def replica_text(replica: Replica) -> str:
    """`TopicPartitionReplica.toString`: topic-partition-broker."""
    return str(replica)


def replica_order(replica: Replica) -> tuple[int, str, int]:
    """`compareTopicPartitionReplicas`: by broker, then topic, then partition."""
    return replica.broker_id, replica.topic, replica.partition


def target_moves(entries: Sequence[ReassignmentEntry]) -> dict[Replica, str]:
    """The file's replicas that name a log dir (not `any`), the last entry of a partition winning."""
    moves: dict[Replica, str] = {}
    for entry in entries:
        for broker, log_dir in entry.log_dir_moves.items():
            moves[TopicPartitionReplica(entry.partition.topic, entry.partition.partition, broker)] = log_dir
    return moves


class MoveKind(enum.Enum):
    MISSING_REPLICA = "missing replica"  # the broker has no such replica in a live log dir
    MISSING_LOG_DIR = "missing log dir"  # the replica's current log dir is offline
    ACTIVE = "active"
    CANCELLED = "cancelled"
    COMPLETED = "completed"


@dataclasses.dataclass(frozen=True)
class LogDirMoveState:
    kind: MoveKind
    target: str
    current: str | None = None
    future: str | None = None

    @property
    def done(self) -> bool:
        return self.kind in (MoveKind.CANCELLED, MoveKind.COMPLETED)


@dataclasses.dataclass(frozen=True)
class ReplicaDirs:
    """Where a broker keeps a replica: its current log dir (None if offline) and its future one."""

    current: str | None
    future: str | None


def move_states(targets: Mapping[Replica, str], found: Mapping[Replica, ReplicaDirs]) -> dict[Replica, LogDirMoveState]:
    """Kafka's `findLogDirMoveStates`, sorted as Kafka prints them."""
    states = {}
    for replica in sorted(targets, key=replica_order):
        target = targets[replica]
        dirs = found.get(replica)
        if dirs is None:
            state = LogDirMoveState(MoveKind.MISSING_REPLICA, target)
        elif dirs.current is None:
            state = LogDirMoveState(MoveKind.MISSING_LOG_DIR, target)
        elif dirs.future is None:
            kind = MoveKind.COMPLETED if dirs.current == target else MoveKind.CANCELLED
            state = LogDirMoveState(kind, target, dirs.current)
        else:
            state = LogDirMoveState(MoveKind.ACTIVE, target, dirs.current, dirs.future)
        states[replica] = state
    return states


def move_state_lines(states: Mapping[Replica, LogDirMoveState]) -> list[str]:
    """Kafka 2.8 `replicaMoveStatesToString`, one line per replica (none: Kafka prints an empty line)."""
    lines = []
    for replica, state in states.items():
        tp, broker = TopicPartition(replica.topic, replica.partition), replica.broker_id
        match state.kind:
            case MoveKind.MISSING_LOG_DIR:
                lines.append(
                    f"Partition {tp} is not found in any live log dir on broker {broker}. "
                    "There is likely an offline log directory on the broker."
                )
            case MoveKind.MISSING_REPLICA:
                lines.append(f"Partition {tp} cannot be found in any live log directory on broker {broker}.")
            case MoveKind.ACTIVE if state.target == state.future:
                lines.append(f"Reassignment of replica {replica_text(replica)} is still in progress.")
            case MoveKind.ACTIVE:
                lines.append(
                    f"Partition {tp} on broker {broker} is being moved to log dir {state.future} "
                    f"instead of {state.target}."
                )
            case MoveKind.CANCELLED:
                lines.append(
                    f"Partition {tp} on broker {broker} is not being moved from log dir {state.current} "
                    f"to {state.target}."
                )
            case MoveKind.COMPLETED:
                lines.append(f"Reassignment of replica {replica_text(replica)} completed successfully.")
    return lines or [""]


def moves_started_line(replicas: Sequence[Replica]) -> str:
    ordered = sorted(replicas, key=replica_order)
    plural = "" if len(ordered) == 1 else "s"
    return f"Successfully started log directory move{plural} for: {','.join(map(replica_text, ordered))}"


def moves_timed_out_message(replicas: Sequence[Replica]) -> str:
    ordered = sorted(replicas, key=replica_order)
    plural = "" if len(ordered) == 1 else "s"
    return f"Timed out before log directory move{plural} could be started for: {','.join(map(replica_text, ordered))}"
