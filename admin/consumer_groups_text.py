"""What kafka-consumer-groups.sh prints, as Kafka 2.8's `ConsumerGroupCommand` formats it: the tables of
`--describe` (offsets, `--members [--verbose]`, `--state`), `--list [--state]`, the reset plan, the
deletion reports; the orders Kafka's collections give (Scala maps and Java hash maps, through the floor's
`jvm_text`). Pure: each function returns `Printed`, the lines and the stream each goes to, for the CLI to
write; `failed` says Kafka printed an `Error:` (we exit 1 there, where Kafka's tool exits 0).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from kafkaops.admin.kafka_text import topic_partition_hash
from kafkaops.cluster.common.jvm_text import hash_map_order, java_hash_map_order, java_string_hash, scala_set_order
from kafkaops.cluster.zk.values import TopicPartition

MISSING = "-"
"""Kafka's `MISSING_COLUMN_VALUE`."""


@dataclass
class Printed:
    """Lines for stdout (`err` False) or stderr, in order; `failed` once an `Error:` line was printed."""

    lines: list[tuple[bool, str]] = field(default_factory=list)
    failed: bool = False

    def out(self, line: str) -> None:
        self.lines.append((False, line))

    def err(self, line: str) -> None:
        self.lines.append((True, line))

    def error(self, message: str) -> None:
        """Kafka's `printError`: a blank line then `Error: <message>`, on stdout."""
        self.out("")
        self.out(f"Error: {message}")
        self.failed = True

    def extend(self, other: Printed) -> None:
        self.lines += other.lines
        self.failed = self.failed or other.failed

    @property
    def stdout(self) -> str:
        return "".join(line + "\n" for err, line in self.lines if not err)

    @property
    def stderr(self) -> str:
        return "".join(line + "\n" for err, line in self.lines if err)


@dataclass(frozen=True, slots=True)
class PartitionAssignmentState:
    """One row of the offsets view; None prints as `-`."""

    group: str
    topic: str | None
    partition: int | None
    offset: int | None
    lag: int | None
    consumer_id: str | None
    host: str | None
    client_id: str | None
    log_end_offset: int | None


@dataclass(frozen=True, slots=True)
class MemberAssignmentState:
    group: str
    consumer_id: str
    host: str
    client_id: str
    group_instance_id: str
    num_partitions: int
    assignment: tuple[TopicPartition, ...]


@dataclass(frozen=True, slots=True)
class GroupState:
    group: str
    coordinator: str
    """`host:port (id)`."""
    assignment_strategy: str
    state: str
    num_members: int


def _cell(value: object) -> str:
    return MISSING if value is None else str(value)


def _left(value: object, width: int) -> str:
    return _cell(value).ljust(width)


def _padded(cells: Sequence[object], widths: Sequence[int]) -> str:
    return " ".join(_left(cell, width) for cell, width in zip(cells, widths, strict=True))


def should_print_member_state(printed: Printed, group: str, state: str | None, num_rows: int | None) -> bool:
    """Kafka's `shouldPrintMemberState`: the notes on a group that does not exist, is empty or rebalancing."""
    if num_rows is None:
        printed.error(f"The consumer group '{group}' does not exist.")
        return False
    if state == "Dead":
        printed.error(f"Consumer group '{group}' does not exist.")
    elif state == "Empty":
        printed.err("")
        printed.err(f"Consumer group '{group}' has no active members.")
    elif state in ("PreparingRebalance", "CompletingRebalance"):
        printed.err("")
        printed.err(f"Warning: Consumer group '{group}' is rebalancing.")
    elif state != "Stable":
        raise ValueError(f"Expected a valid consumer group state, but found '{state or 'NONE'}'.")
    return state != "Dead" and num_rows > 0


def offsets_table(groups: Mapping[str, tuple[str | None, Sequence[PartitionAssignmentState] | None]]) -> Printed:
    """Kafka's `printOffsets`, groups in name order (its TreeMap)."""
    printed = Printed()
    for group in sorted(groups):
        state, rows = groups[group]
        if not should_print_member_state(printed, group, state, None if rows is None else len(rows)):
            continue
        rows = rows or ()
        widths = [15, 15, 15, 15]
        for row in rows:
            cells = (row.group, _cell(row.topic), _cell(row.consumer_id), _cell(row.host))
            widths = [max(w, len(c)) for w, c in zip(widths, cells, strict=True)]
        group_w, topic_w, consumer_w, host_w = widths

        widths = [group_w, topic_w, 10, 15, 15, 15, consumer_w, host_w]

        def line(*cells: object, widths: Sequence[int] = widths) -> str:
            return _padded(cells[:-1], widths) + " " + _cell(cells[-1])

        printed.out("")
        printed.out(
            line(
                "GROUP",
                "TOPIC",
                "PARTITION",
                "CURRENT-OFFSET",
                "LOG-END-OFFSET",
                "LAG",
                "CONSUMER-ID",
                "HOST",
                "CLIENT-ID",
            )
        )
        for r in rows:
            printed.out(
                line(
                    r.group, r.topic, r.partition, r.offset, r.log_end_offset, r.lag, r.consumer_id, r.host, r.client_id
                )
            )
    return printed


def _verbose_assignment(assignment: Sequence[TopicPartition]) -> str:
    if not assignment:
        return MISSING
    by_topic: dict[str, list[int]] = {}
    for tp in assignment:
        by_topic.setdefault(tp.topic, []).append(tp.partition)
    return ", ".join(sorted(f"{topic}({','.join(str(p) for p in sorted(ids))})" for topic, ids in by_topic.items()))


def members_table(
    groups: Mapping[str, tuple[str | None, Sequence[MemberAssignmentState] | None]], verbose: bool
) -> Printed:
    """Kafka's `printMembers` (GROUP-INSTANCE-ID only when a member has one; ASSIGNMENT with --verbose)."""
    printed = Printed()
    for group in sorted(groups):
        state, members = groups[group]
        if not should_print_member_state(printed, group, state, None if members is None else len(members)):
            continue
        members = members or ()
        group_w, consumer_w, instance_w, host_w, client_w = 15, 15, 17, 15, 15
        with_instance = False
        for m in members:
            group_w, consumer_w = max(group_w, len(m.group)), max(consumer_w, len(m.consumer_id))
            instance_w, host_w = max(instance_w, len(m.group_instance_id)), max(host_w, len(m.host))
            client_w = max(client_w, len(m.client_id))
            with_instance = with_instance or bool(m.group_instance_id)

        widths = [group_w, consumer_w] + ([instance_w] if with_instance else []) + [host_w, client_w, 15]

        def line(*cells: object, widths: Sequence[int] = widths, with_instance: bool = with_instance) -> str:
            shown = cells if with_instance else cells[:2] + cells[3:]
            return _padded(shown, widths) + " "

        printed.out("")
        printed.out(
            line("GROUP", "CONSUMER-ID", "GROUP-INSTANCE-ID", "HOST", "CLIENT-ID", "#PARTITIONS")
            + ("ASSIGNMENT" if verbose else "")
        )
        for m in members:
            row = line(m.group, m.consumer_id, m.group_instance_id, m.host, m.client_id, m.num_partitions)
            printed.out(row + (_verbose_assignment(m.assignment) if verbose else ""))
    return printed


def states_table(states: Mapping[str, GroupState]) -> Printed:
    """Kafka's `printStates` (its GROUP column as wide as the coordinator's, as Kafka pads it)."""
    printed = Printed()
    for group in sorted(states):
        s = states[group]
        if not should_print_member_state(printed, group, s.state, 1):
            continue
        width = max(25, len(s.coordinator))
        printed.out("")
        printed.out(
            f"{'GROUP'.ljust(width)} {'COORDINATOR (ID)'.ljust(25)} {'ASSIGNMENT-STRATEGY'.ljust(20)} "
            f"{'STATE'.ljust(15)} #MEMBERS"
        )
        printed.out(
            f"{s.group.ljust(width)} {s.coordinator.ljust(25)} {s.assignment_strategy.ljust(20)} "
            f"{s.state.ljust(15)} {s.num_members}"
        )
    return printed


def group_states_table(listings: Sequence[tuple[str, str]]) -> Printed:
    """`--list --state`: GROUP and STATE, the group column at least 15 wide."""
    printed = Printed()
    width = max([15] + [len(group) for group, _ in listings])
    printed.out(f"{'GROUP'.ljust(width)} STATE")
    for group, state in listings:
        printed.out(f"{group.ljust(width)} {state}")
    return printed


# --- the orders of Kafka's collections -------------------------------------------------------------------


def kafka_partition_order(partitions: Iterable[TopicPartition]) -> list[TopicPartition]:
    """A Scala immutable Map keyed by TopicPartition built in this order (`toMap`): Kafka's reset plan
    and its describe rows come out in this order."""
    return scala_set_order(list(partitions), topic_partition_hash)


def java_partition_set_order(partitions: Iterable[TopicPartition]) -> list[TopicPartition]:
    """A Java `HashSet<TopicPartition>` (a member's assignment as the admin client builds it)."""
    return java_hash_map_order(list(partitions), topic_partition_hash)


def java_group_order(groups: Iterable[str]) -> list[str]:
    """A Java `HashMap<String, _>` keyed by group id (the admin client's per-group futures)."""
    return hash_map_order(list(dict.fromkeys(groups)))


def reset_plan_order(groups: Iterable[str]) -> list[str]:
    """The groups of `resetOffsets`' fold: a Java HashMap's order, then a Scala immutable Map's."""
    return scala_set_order(java_group_order(groups), java_string_hash)


# --- reset, delete ---------------------------------------------------------------------------------------


def reset_table(plan: Mapping[str, Mapping[TopicPartition, int]]) -> Printed:
    """Kafka's `printOffsetsToReset`: the header once there is any group, then group, topic, partition and
    the new offset per row."""
    printed = Printed()
    if plan:
        printed.out("")
        printed.out(f"{'GROUP'.ljust(30)} {'TOPIC'.ljust(30)} {'PARTITION'.ljust(10)} {'NEW-OFFSET'.ljust(15)}")
    for group, offsets in plan.items():
        for tp, offset in offsets.items():
            printed.out(f"{group.ljust(30)} {tp.topic.ljust(30)} {str(tp.partition).ljust(10)} {str(offset).ljust(15)}")
    return printed


def _quoted(groups: Iterable[str]) -> str:
    return "'" + "', '".join(groups) + "'"


def delete_groups_report(results: Mapping[str, str | None]) -> Printed:
    """Kafka's `deleteGroups` report; `results` maps each group to None (deleted) or the Java exception's
    `toString` (`org.apache.kafka.common.errors.GroupNotEmptyException: The group is not empty.`)."""
    printed = Printed()
    order = java_group_order(results)
    success = [g for g in order if results[g] is None]
    failed = [g for g in order if results[g] is not None]
    if not failed:
        printed.out(f"Deletion of requested consumer groups ({_quoted(success)}) was successful.")
        return printed
    printed.error("Deletion of some consumer groups failed:")
    for group in failed:
        printed.out(f"* Group '{group}' could not be deleted due to: {results[group]}")
    if success:
        printed.out("")
        printed.out(f"These consumer groups were deleted successfully: {_quoted(success)}")
    return printed


DELETE_OFFSETS_TOP_LEVEL = {
    "INVALID_GROUP_ID": "'{group}' is not valid.",
    "GROUP_ID_NOT_FOUND": "'{group}' does not exist.",
    "GROUP_AUTHORIZATION_FAILED": "Access to '{group}' is not authorized.",
    "NON_EMPTY_GROUP": "Deleting offsets of a consumer group '{group}' is forbidden if the group is not empty.",
    "GROUP_SUBSCRIBED_TO_TOPIC": "Encounter some partition level error, see the follow-up details:",
    "TOPIC_AUTHORIZATION_FAILED": "Encounter some partition level error, see the follow-up details:",
    "UNKNOWN_TOPIC_OR_PARTITION": "Encounter some partition level error, see the follow-up details:",
}


def delete_offsets_report(
    group: str, topics: Sequence[str], top_level: str | None, partitions: Mapping[TopicPartition, str | None]
) -> Printed:
    """Kafka's `deleteOffsets` report: `top_level` is the Errors name of the call's error (None: success),
    `partitions` each partition's exception message (None: deleted; partition -1 a topic not found)."""
    printed = Printed()
    if top_level is None:
        printed.out(f"Request succeed for deleting offsets with topic {', '.join(topics)} group {group}")
    else:
        template = DELETE_OFFSETS_TOP_LEVEL.get(top_level, "Encounter some unknown error: {error}")
        printed.error(template.format(group=group, error=top_level))
    printed.out("")
    printed.out(f"{'TOPIC'.ljust(30)} {'PARTITION'.ljust(15)} {'STATUS'.ljust(15)}")
    for tp in sorted(partitions, key=lambda t: t.topic + str(t.partition)):
        error = partitions[tp]
        partition = str(tp.partition) if tp.partition >= 0 else "Not Provided"
        status = f"Error: {error}" if error is not None else "Successful"
        printed.out(f"{tp.topic.ljust(30)} {partition.ljust(15)} {status.ljust(15)}")
    return printed
