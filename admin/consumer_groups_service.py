"""Kafka's `ConsumerGroupService`: the actions of kafka-consumer-groups.sh over a `KafkaClient`.

Each action asks the cluster through `kafka_client.group_admin` (and ListOffsets through `get_offsets`),
computes with the pure `consumer_groups` functions and returns what `consumer_groups_text` renders (or the
CLI prints as JSON). Nothing here prints. Raises the Kafka error of a failed call, UsageError /
CommandFailedError where Kafka's command prints its usage or `Error: Executing consumer group command
failed due to ...`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from kafkaops.admin import consumer_groups as cg
from kafkaops.admin import get_offsets as go
from kafkaops.admin.consumer_groups_text import (
    GroupState,
    MemberAssignmentState,
    PartitionAssignmentState,
    java_group_order,
    java_partition_set_order,
    kafka_partition_order,
)
from kafkaops.admin.kafka_client import group_admin as ga
from kafkaops.admin.kafka_client.client import KafkaClient
from kafkaops.admin.kafka_client.topic_admin import describe_topics
from kafkaops.admin.kafka_text import topic_partition_hash
from kafkaops.cluster.common.errors import BrokerError, InvalidArgumentError, UsageError, for_code
from kafkaops.cluster.common.java_errors import java_exception_text
from kafkaops.cluster.common.jvm_text import scala_mutable_hash_order
from kafkaops.cluster.zk.values import TopicPartition

EARLIEST, LATEST = go.EARLIEST_TIMESTAMP, go.LATEST_TIMESTAMP


def group_ids(client: KafkaClient, options: cg.ConsumerGroupOptions) -> list[str]:
    """`--all-groups`: every consumer group; else the --group values in order."""
    if options.all_groups:
        return [listing.group_id for listing in ga.list_consumer_groups(client)]
    return list(options.groups)


def list_groups(client: KafkaClient, states: Sequence[str] | None) -> list[ga.GroupListing]:
    """`--list`, with `--state` (`states` [] for every state, None without the option)."""
    return ga.list_consumer_groups(client, states or ())


def log_offsets(
    client: KafkaClient, partitions: Sequence[TopicPartition], timestamp: int, timeout_ms: int
) -> dict[TopicPartition, int | None]:
    """ListOffsets of `partitions` at `timestamp` (EARLIEST, LATEST or a time): None where unknown (no
    leader, no such partition, no record at or after the time)."""
    wanted = set(partitions)
    if not wanted:
        return {}
    try:
        result = go.get_offsets(client, lambda t, p: TopicPartition(t, p) in wanted, timestamp, timeout_ms=timeout_ms)
    except InvalidArgumentError:  # none of them exists
        return dict.fromkeys(partitions)
    found: dict[TopicPartition, int | None] = {TopicPartition(o.topic, o.partition): o.offset for o in result.offsets}
    return {tp: found.get(tp) for tp in partitions}


def _describe(client: KafkaClient, groups: Sequence[str], timeout_ms: int) -> dict[str, ga.GroupDescription]:
    return {g: ga.describe_consumer_group(client, g, timeout_ms) for g in java_group_order(groups)}


def _committed(client: KafkaClient, group: str, timeout_ms: int) -> dict[TopicPartition, int]:
    return {tp: o.offset for tp, o in ga.list_consumer_group_offsets(client, group, timeout_ms).items()}


def _lag(offset: int | None, end: int | None) -> int | None:
    return None if offset is None or offset == -1 or end is None else end - offset


# --- --describe ----------------------------------------------------------------------------------------------

GroupRows = tuple[str | None, list[PartitionAssignmentState] | None]


def collect_groups_offsets(client: KafkaClient, groups: Sequence[str], timeout_ms: int) -> dict[str, GroupRows]:
    """Kafka's `collectGroupsOffsets`: per group its state and a row per assigned partition (members with
    the most partitions first), then one per committed partition no member holds."""
    result: dict[str, GroupRows] = {}
    for group, description in _describe(client, groups, timeout_ms).items():
        committed = _committed(client, group, timeout_ms)
        members = sorted((m for m in description.members if m.assignment), key=lambda m: -len(m.assignment))
        assigned = [
            (m, kafka_partition_order(sorted(java_partition_set_order(m.assignment), key=lambda tp: tp.partition)))
            for m in members
        ]
        held = {tp for _, tps in assigned for tp in tps}
        unheld = scala_mutable_hash_order([tp for tp in committed if tp not in held], topic_partition_hash)
        ends = log_offsets(client, [tp for _, tps in assigned for tp in tps] + unheld, LATEST, timeout_ms)
        rows: list[PartitionAssignmentState] = []
        for member, tps in assigned:
            for tp in tps:
                offset = committed.get(tp)
                rows.append(
                    PartitionAssignmentState(
                        group, tp.topic, tp.partition, offset, _lag(offset, ends[tp]),
                        member.member_id, member.host, member.client_id, ends[tp],
                    )
                )  # fmt: skip
        for tp in unheld:
            rows.append(
                PartitionAssignmentState(
                    group, tp.topic, tp.partition, committed[tp], _lag(committed[tp], ends[tp]), "-", "-", "-", ends[tp]
                )
            )
        result[group] = (description.state, rows)
    return result


def collect_groups_members(
    client: KafkaClient, groups: Sequence[str], timeout_ms: int, verbose: bool
) -> dict[str, tuple[str | None, list[MemberAssignmentState] | None]]:
    """Kafka's `collectGroupsMembers`."""
    return {
        group: (
            description.state,
            [
                MemberAssignmentState(
                    group,
                    m.member_id,
                    m.host,
                    m.client_id,
                    m.group_instance_id or "",
                    len(m.assignment),
                    tuple(m.assignment) if verbose else (),
                )
                for m in description.members
            ],
        )
        for group, description in _describe(client, groups, timeout_ms).items()
    }


def collect_groups_state(client: KafkaClient, groups: Sequence[str], timeout_ms: int) -> dict[str, GroupState]:
    """Kafka's `collectGroupsState`."""
    return {
        group: GroupState(
            group,
            f"{d.coordinator.host}:{d.coordinator.port} ({d.coordinator.node_id})",
            d.partition_assignor,
            d.state,
            len(d.members),
        )
        for group, d in _describe(client, groups, timeout_ms).items()
    }


# --- --reset-offsets -------------------------------------------------------------------------------------------


@dataclass
class ResetResult:
    """The new offset per group and partition (empty for a group that was refused), and what Kafka prints
    on the way: `errors` as `Error: ...` lines, `warnings` (checkOffsetsRange's) on stderr."""

    plan: dict[str, dict[TopicPartition, int]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    executed: bool = False


class _Resetter:
    """One `resetOffsets` run: the reset file read once, on first use (Kafka's lazy val)."""

    def __init__(self, client: KafkaClient, options: cg.ConsumerGroupOptions, now_ms: int) -> None:
        self.client, self.options, self.now_ms = client, options, now_ms
        self.timeout_ms = options.timeout_ms
        self._file_plan: dict[str, dict[TopicPartition, int]] | None = None
        self.result = ResetResult()

    def file_plan(self) -> dict[str, dict[TopicPartition, int]]:
        if self._file_plan is None:
            path = self.options.from_file or ""
            try:
                text = Path(path).read_text()
            except OSError:
                raise cg.CommandFailedError(path) from None  # Java's NoSuchFileException message is the path
            self._file_plan = cg.parse_reset_plan(text, self.options.groups)
        return self._file_plan

    def partitions_to_reset(self, group: str) -> list[TopicPartition]:
        if self.options.all_topics:
            return list(_committed(self.client, group, self.timeout_ms))
        if self.options.topics:
            partitions: list[TopicPartition] = []
            for scope in cg.parse_topic_args(self.options.topics):
                if scope.partitions is not None:
                    partitions += [TopicPartition(scope.topic, p) for p in scope.partitions]
                    continue
                info = describe_topics(self.client, [scope.topic])[scope.topic]
                partitions += [TopicPartition(scope.topic, p.partition) for p in info.partitions]
            return partitions
        if self.options.from_file is not None:
            return []
        raise UsageError(cg.SCOPES_TEXT)

    def checked(self, requested: Mapping[TopicPartition, int]) -> dict[TopicPartition, int]:
        tps = list(requested)
        start = log_offsets(self.client, tps, EARLIEST, self.timeout_ms)
        end = log_offsets(self.client, tps, LATEST, self.timeout_ms)
        clamped = cg.check_offsets_range(requested, start, end)
        self.result.warnings += [c.warning for c in clamped.values() if c.warning]
        return {tp: c.offset for tp, c in clamped.items()}

    def by_time(self, partitions: list[TopicPartition], timestamp: int) -> dict[TopicPartition, int]:
        """Kafka's `getLogTimestampOffsets`: the first offset at or after the time, else the log end."""
        found = log_offsets(self.client, partitions, timestamp, self.timeout_ms)
        missing = [tp for tp, offset in found.items() if offset is None]
        found.update(log_offsets(self.client, missing, LATEST, self.timeout_ms))
        return cg.known_offsets(partitions, found, "offset by timestamp")

    def prepare(self, group: str, partitions: list[TopicPartition]) -> dict[TopicPartition, int]:
        """Kafka's `prepareOffsetsToReset` for the one scenario given."""
        o = self.options
        scenario = o.scenarios[0] if o.scenarios else None
        match scenario:
            case cg.ResetScenario.TO_OFFSET:
                return self.checked(dict.fromkeys(partitions, o.to_offset or 0))
            case cg.ResetScenario.TO_EARLIEST:
                offsets = log_offsets(self.client, partitions, EARLIEST, self.timeout_ms)
                return cg.known_offsets(partitions, offsets, "starting offset")
            case cg.ResetScenario.TO_LATEST:
                offsets = log_offsets(self.client, partitions, LATEST, self.timeout_ms)
                return cg.known_offsets(partitions, offsets, "ending offset")
            case cg.ResetScenario.SHIFT_BY:
                committed = _committed(self.client, group, self.timeout_ms)
                return self.checked(cg.shifted_offsets(partitions, committed, o.shift_by or 0))
            case cg.ResetScenario.TO_DATETIME:
                return self.by_time(partitions, cg.parse_datetime(o.to_datetime or ""))
            case cg.ResetScenario.BY_DURATION:
                return self.by_time(partitions, self.now_ms - cg.parse_duration_ms(o.by_duration or ""))
            case cg.ResetScenario.FROM_FILE:
                plan = self.file_plan().get(group)
                if plan is None:
                    self.result.errors.append(f"No reset plan for group {group} found")
                    return {}
                return self.checked(plan)
            case cg.ResetScenario.TO_CURRENT:
                committed = _committed(self.client, group, self.timeout_ms)
                without = [tp for tp in partitions if tp not in committed]
                ends = cg.known_offsets(
                    without, log_offsets(self.client, without, LATEST, self.timeout_ms), "ending offset"
                )
                return {**{tp: committed[tp] for tp in partitions if tp in committed}, **ends}
            case None:
                raise UsageError(cg.no_scenario_text())

    def run(self, groups: Sequence[str]) -> ResetResult:
        descriptions = _describe(self.client, groups, self.timeout_ms)
        for group, description in descriptions.items():
            if description.state not in ("Empty", "Dead"):
                self.result.errors.append(
                    f"Assignments can only be reset if the group '{group}' is inactive, but the current state is "
                    f"{description.state}."
                )
                self.result.plan[group] = {}
                continue
            prepared = self.prepare(group, self.partitions_to_reset(group))
            ordered = {tp: prepared[tp] for tp in kafka_partition_order(prepared)}
            if not self.options.dry_run_only:
                ga.alter_consumer_group_offsets(self.client, group, ordered, self.timeout_ms)
                self.result.executed = True
            self.result.plan[group] = ordered
        return self.result


def reset_offsets(
    client: KafkaClient, options: cg.ConsumerGroupOptions, now_ms: Callable[[], int] | None = None
) -> ResetResult:
    """Kafka's `resetOffsets`: each group that has no members gets its plan (committed with --execute);
    an active one is refused with Kafka's text and an empty plan."""
    clock = now_ms or (lambda: time.time_ns() // 1_000_000)
    return _Resetter(client, options, clock()).run(group_ids(client, options))


# --- --delete, --delete-offsets -------------------------------------------------------------------------------


def delete_groups(client: KafkaClient, groups: Sequence[str], timeout_ms: int) -> dict[str, str | None]:
    """Kafka's `deleteGroups`: per group None (deleted) or its Java exception's text."""
    results = ga.delete_consumer_groups(client, groups, timeout_ms)
    return {
        group: None if error is None else java_exception_text(error.code, error.message or None)
        for group, error in results.items()
    }


@dataclass(frozen=True)
class DeleteOffsetsOutcome:
    top_level: str | None
    """The Errors name of the call's error, None on success."""
    partitions: dict[TopicPartition, str | None]
    """Each partition's error message (None: deleted); partition -1 for a topic that was not found."""


def delete_offsets(client: KafkaClient, group: str, topics: Sequence[str], timeout_ms: int) -> DeleteOffsetsOutcome:
    """Kafka's `deleteOffsets`: topics given as `t:0,1` as such, whole topics through their metadata (a
    topic not found is reported as partition -1)."""
    partitions: list[TopicPartition] = []
    outcome: dict[TopicPartition, str | None] = {}
    for scope in cg.parse_topic_args(topics):
        if scope.partitions is not None:
            partitions += [TopicPartition(scope.topic, p) for p in scope.partitions]
            continue
        try:
            info = describe_topics(client, [scope.topic])[scope.topic]
        except BrokerError as error:
            outcome[TopicPartition(scope.topic, -1)] = java_exception_text(error.code)
            continue
        partitions += [TopicPartition(scope.topic, p.partition) for p in info.partitions]
    answer = ga.delete_consumer_group_offsets(client, group, partitions, timeout_ms)
    top_level = for_code(answer.error_code).name if answer.error_code else None
    if top_level is None:
        codes = [code for code in answer.partitions.values() if code]
        top_level = for_code(codes[0]).name if codes else None
    for tp in partitions:
        code = answer.partitions.get(tp, 0)
        outcome[tp] = java_exception_text(code) if code else (None if not answer.error_code else _top(answer))
    return DeleteOffsetsOutcome(top_level, outcome)


def _top(answer: ga.DeleteOffsetsResult) -> str:
    return java_exception_text(answer.error_code)
