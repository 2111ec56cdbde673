"""Kafka's `ConsumerGroupCommand` (kafka-consumer-groups.sh), its pure part: the options and `checkArgs`'
texts, the `--state` list, the `--topic` scopes, `--to-datetime` / `--by-duration`, the arithmetic of
each reset scenario with `checkOffsetsRange`'s clamping, and the reset plan CSV (`--export` / `--from-file`).

No I/O: `consumer_groups_service` asks the cluster and calls these; `consumer_groups_text` renders.
A usage error (Kafka's `printUsageAndDie`) is a UsageError; what Kafka's `run` catches as any other
Throwable (`Error: Executing consumer group command failed due to <message>`) is a CommandFailedError.
"""

from __future__ import annotations

import csv
import datetime as dt
import enum
import io
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from kafkaops.cluster.common.errors import UsageError, UserError
from kafkaops.cluster.common.jvm_text import java_parse_int, java_parse_long
from kafkaops.cluster.zk.values import TopicPartition

DEFAULT_TIMEOUT_MS = 5000

STATES = ("PreparingRebalance", "CompletingRebalance", "Stable", "Dead", "Empty")
"""`ConsumerGroupState`'s names but UNKNOWN, in Kafka's order (as its error text lists them)."""

ACTIONS_TEXT = (
    "Command must include exactly one action: --list, --describe, --delete, --reset-offsets, --delete-offsets"
)
SCOPES_TEXT = "One of the reset scopes should be defined: --all-topics, --topic."
NO_EXECUTE_WARNING = (
    "WARN: No action will be performed as the --execute option is missing.In a future major release, the default "
    "behavior of this command will be to prompt the user before executing the reset rather than doing a dry run. "
    "You should add the --dry-run option explicitly if you are scripting this command and want to keep the current "
    "default behavior without prompting."
)


class CommandFailedError(UserError):
    """What Kafka's `run` prints as `Error: Executing consumer group command failed due to <message>`."""


class ResetScenario(enum.Enum):
    """The reset specifications, in the order `checkArgs` checks them (Kafka's set has no stable order)."""

    TO_OFFSET = "to-offset"
    SHIFT_BY = "shift-by"
    TO_DATETIME = "to-datetime"
    BY_DURATION = "by-duration"
    TO_EARLIEST = "to-earliest"
    TO_LATEST = "to-latest"
    TO_CURRENT = "to-current"
    FROM_FILE = "from-file"


@dataclass(frozen=True)
class ConsumerGroupOptions:
    """The command line as Kafka's `ConsumerGroupCommandOptions` sees it: what was given, with values."""

    bootstrap_server: str | None = None
    command_config: str | None = None
    groups: tuple[str, ...] = ()
    topics: tuple[str, ...] = ()
    all_topics: bool = False
    all_groups: bool = False
    list_: bool = False
    describe: bool = False
    delete: bool = False
    reset_offsets: bool = False
    delete_offsets: bool = False
    dry_run: bool = False
    execute: bool = False
    export: bool = False
    timeout_ms: int = DEFAULT_TIMEOUT_MS
    members: bool = False
    verbose: bool = False
    offsets: bool = False
    state: str | None = None
    """None: --state not given; "": given without a value."""
    to_offset: int | None = None
    shift_by: int | None = None
    to_datetime: str | None = None
    by_duration: str | None = None
    to_earliest: bool = False
    to_latest: bool = False
    to_current: bool = False
    from_file: str | None = None

    @property
    def scenarios(self) -> list[ResetScenario]:
        given = {
            ResetScenario.TO_OFFSET: self.to_offset is not None,
            ResetScenario.SHIFT_BY: self.shift_by is not None,
            ResetScenario.TO_DATETIME: self.to_datetime is not None,
            ResetScenario.BY_DURATION: self.by_duration is not None,
            ResetScenario.TO_EARLIEST: self.to_earliest,
            ResetScenario.TO_LATEST: self.to_latest,
            ResetScenario.TO_CURRENT: self.to_current,
            ResetScenario.FROM_FILE: self.from_file is not None,
        }
        return [scenario for scenario, on in given.items() if on]

    @property
    def dry_run_only(self) -> bool:
        """Dry-run is the default without --execute."""
        return self.dry_run or not self.execute

    @property
    def single_group(self) -> bool:
        """Kafka's `isSingleGroupQuery`: exactly one --group (the CSV then has no group column)."""
        return len(self.groups) == 1


def _opt(name: str) -> str:
    return f"[{name}]"


def check_unavailable(options: ConsumerGroupOptions) -> None:
    """joptsimple's `availableIf`: --members/--verbose/--offsets need --describe, --state --describe or --list.
    Raises UsageError with joptsimple's text."""
    unavailable = [name for name, on in (("members", options.members), ("verbose", options.verbose)) if on]
    unavailable += ["offsets"] if options.offsets else []
    if unavailable and not options.describe:
        raise UsageError(f"Option(s) {_opt(unavailable[0])} are unavailable given other options on the command line")
    if options.state is not None and not (options.describe or options.list_):
        raise UsageError("Option(s) [state] are unavailable given other options on the command line")


def check_args(options: ConsumerGroupOptions) -> list[str]:
    """Kafka's `checkArgs` then the one-action rule, in Kafka's order. Returns the warnings Kafka prints on
    stderr (the dry-run default); raises UsageError with Kafka's text."""
    check_unavailable(options)
    warnings: list[str] = []
    if options.bootstrap_server is None:
        raise UsageError('Missing required argument "[bootstrap-server]"')
    scope = "[group], [all-groups]"
    has_group_scope = bool(options.groups) or options.all_groups
    if options.describe:
        if not has_group_scope:
            raise UsageError(f"Option [describe] takes one of these options: {scope}")
        if sum((options.members, options.offsets, options.state is not None)) > 1:
            raise UsageError("Option [describe] takes at most one of these options: [members], [offsets], [state]")
        if options.state:
            raise UsageError("Option [describe] does not take a value for [state]")
    if options.delete:
        if not has_group_scope:
            raise UsageError(f"Option [delete] takes one of these options: {scope}")
        if options.topics:
            raise UsageError("The consumer does not support topic-specific offset deletion from a consumer group.")
    if options.delete_offsets and (not options.groups or not options.topics):
        raise UsageError("Option [delete-offsets] takes the following options: [group], [topic]")
    if options.reset_offsets:
        warnings += _check_reset_args(options, has_group_scope)
    if options.groups and options.all_groups:
        raise UsageError('Option "[group]" can\'t be used with option "[all-groups]"')
    if options.groups and options.list_:
        raise UsageError('Option "[group]" can\'t be used with option "[list]"')
    if options.topics:
        for name, on in (("list", options.list_), ("describe", options.describe)):
            if on:
                raise UsageError(f'Option "[topic]" can\'t be used with option "[{name}]"')
    actions = (options.list_, options.describe, options.delete, options.reset_offsets, options.delete_offsets)
    if sum(actions) != 1:
        raise UsageError(ACTIONS_TEXT)
    return warnings


def _check_reset_args(options: ConsumerGroupOptions, has_group_scope: bool) -> list[str]:
    if options.dry_run and options.execute:
        raise UsageError("Option [reset-offsets] only accepts one of [execute] and [dry-run]")
    warnings = [] if options.dry_run or options.execute else [NO_EXECUTE_WARNING]
    if not has_group_scope:
        raise UsageError("Option [reset-offsets] takes one of these options: [group], [all-groups]")
    scenarios = options.scenarios
    if len(scenarios) > 1:
        raise UsageError(f'Option "[{scenarios[0].value}]" can\'t be used with option "[{scenarios[1].value}]"')
    return warnings


def no_scenario_text() -> str:
    """Kafka's text when --reset-offsets has no specification (its set printed in our fixed order)."""
    return "Option [reset-offsets] requires one of the following scenarios: " + (
        "Set(" + ", ".join(f"[{s.value}]" for s in ResetScenario) + ")"
    )


# --- --state ---------------------------------------------------------------------------------------------


def parse_states(text: str) -> list[str]:
    """`--list --state a,b`: Kafka's state names (matched regardless of case, as Kafka's help example
    `stable,empty` needs). Raises UsageError (Kafka's IllegalArgumentException) for an unknown one."""
    by_lower = {state.lower(): state for state in STATES}
    parsed: list[str] = []
    for item in text.split(","):
        state = by_lower.get(item.strip().lower())
        if state is None:
            raise UsageError(f"Invalid state list '{text}'. Valid states are: {', '.join(STATES)}")
        if state not in parsed:
            parsed.append(state)
    return parsed


# --- --topic ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TopicScope:
    """One --topic argument: a whole topic (partitions None) or `topic:0,1,2`."""

    topic: str
    partitions: tuple[int, ...] | None = None


def parse_topic_args(topics: Iterable[str]) -> list[TopicScope]:
    """Kafka's `parseTopicPartitionsToReset` split: `topic` or `topic:0,1`. Raises CommandFailedError
    with Java's NumberFormatException text for a partition that is not a number."""
    scopes: list[TopicScope] = []
    for arg in topics:
        if ":" not in arg:
            scopes.append(TopicScope(arg))
            continue
        topic, _, partitions = arg.partition(":")
        try:
            ids = tuple(java_parse_int(p) for p in partitions.split(",")) if partitions else ()
        except ValueError as error:
            raise CommandFailedError(str(error)) from None
        scopes.append(TopicScope(topic, ids))
    return scopes


# --- --to-datetime, --by-duration ----------------------------------------------------------------------------

_DATETIME = re.compile(r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\.(\d+)(Z|[+-]\d{2}(?::?\d{2})?)?")


def parse_datetime(text: str) -> int:
    """Kafka's `Utils.getDateTime`: `yyyy-MM-ddTHH:mm:ss.SSS` with an optional zone (`Z`, `+hh`, `+hh:mm`),
    UTC without one; epoch milliseconds. Raises CommandFailedError with Java's ParseException text."""
    if len(text.split("T")) < 2:
        raise CommandFailedError("Error parsing timestamp. It does not contain a 'T' according to ISO8601 format")
    match = _DATETIME.fullmatch(text)
    if match is None:
        raise CommandFailedError(f'Unparseable date: "{text}"')
    year, month, day, hour, minute, second, millis = (int(g) for g in match.groups()[:7])
    zone = match.group(8) or "Z"
    offset = dt.timedelta(0)
    if zone != "Z":
        digits = zone[1:].replace(":", "")
        offset = dt.timedelta(hours=int(digits[:2]), minutes=int(digits[2:] or 0))
        offset = -offset if zone[0] == "-" else offset
    try:
        if millis > 999:
            raise ValueError
        moment = dt.datetime(year, month, day, hour, minute, second, millis * 1000, dt.timezone(offset))
    except ValueError:
        raise CommandFailedError(f'Unparseable date: "{text}"') from None
    return _epoch_ms(moment)


def _epoch_ms(moment: dt.datetime) -> int:
    delta = moment - dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
    return (delta.days * 86400 + delta.seconds) * 1000 + delta.microseconds // 1000


_DURATION = re.compile(
    r"([-+]?)P(?:([-+]?[0-9]+)D)?(T(?:([-+]?[0-9]+)H)?(?:([-+]?[0-9]+)M)?(?:([-+]?[0-9]+)(?:[.,]([0-9]{0,9}))?S)?)?",
    re.IGNORECASE,
)


def parse_duration_ms(text: str) -> int:
    """Java's `Duration.parse` (`PnDTnHnMn.nS`), in milliseconds. Raises CommandFailedError with Java's
    DateTimeParseException text."""
    match = _DURATION.fullmatch(text)
    if match is None or match.group(3) == "T" or not any(match.group(i) for i in (2, 4, 5, 6)):
        raise CommandFailedError("Text cannot be parsed to a Duration")
    sign, days, _, hours, minutes, seconds, fraction = match.groups()
    total_ms = (
        int(days or 0) * 86_400_000
        + int(hours or 0) * 3_600_000
        + int(minutes or 0) * 60_000
        + int(seconds or 0) * 1000
    )
    if fraction:
        ms = int((fraction + "000")[:3])
        total_ms += -ms if (seconds or "").startswith("-") else ms
    return -total_ms if sign == "-" else total_ms


# --- the reset arithmetic ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ClampedOffset:
    """`checkOffsetsRange`'s outcome for one partition: the offset to commit, and Kafka's warning if moved."""

    offset: int
    warning: str | None = None


def check_offsets_range(
    requested: Mapping[TopicPartition, int],
    log_start: Mapping[TopicPartition, int | None],
    log_end: Mapping[TopicPartition, int | None],
) -> dict[TopicPartition, ClampedOffset]:
    """Kafka's `checkOffsetsRange`: an offset past the log end becomes the log end, one before the log
    start the log start, each with Kafka's warning; a partition whose offsets are unknown keeps its value."""
    result: dict[TopicPartition, ClampedOffset] = {}
    for tp, offset in requested.items():
        end, start = log_end.get(tp), log_start.get(tp)
        if end is not None and offset > end:
            result[tp] = ClampedOffset(
                end,
                f"New offset ({offset}) is higher than latest offset for topic partition {tp}. "
                f"Value will be set to {end}",
            )
        elif start is not None and offset < start:
            result[tp] = ClampedOffset(
                start,
                f"New offset ({offset}) is lower than earliest offset for topic partition {tp}. "
                f"Value will be set to {start}",
            )
        else:
            result[tp] = ClampedOffset(offset)
    return result


def shifted_offsets(
    partitions: Sequence[TopicPartition], committed: Mapping[TopicPartition, int], shift_by: int
) -> dict[TopicPartition, int]:
    """`--shift-by n`: each committed offset plus n. Raises UsageError (Kafka's IllegalArgumentException)
    for a partition without a committed offset."""
    requested: dict[TopicPartition, int] = {}
    for tp in partitions:
        if tp not in committed:
            raise UsageError(f"Cannot shift offset for partition {tp} since there is no current committed offset")
        requested[tp] = committed[tp] + shift_by
    return requested


def known_offsets(
    partitions: Sequence[TopicPartition], offsets: Mapping[TopicPartition, int | None], what: str
) -> dict[TopicPartition, int]:
    """The offsets of a lookup (earliest, latest, by timestamp) for each partition, or UsageError with
    Kafka's `Error getting <what> of topic partition: <tp>` where the lookup found none."""
    found: dict[TopicPartition, int] = {}
    for tp in partitions:
        offset = offsets.get(tp)
        if offset is None:
            raise UsageError(f"Error getting {what} of topic partition: {tp}")
        found[tp] = offset
    return found


# --- the reset plan CSV ----------------------------------------------------------------------------------------


def export_csv(plan: Mapping[str, Mapping[TopicPartition, int]], single_group: bool) -> str:
    """Kafka's `exportOffsetsToCsv`: `topic,partition,offset` lines for one --group, else
    `group,topic,partition,offset`, each ended by a newline (Jackson's CSV writer, quoting as it does)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
    for group, offsets in plan.items():
        for tp, offset in offsets.items():
            writer.writerow(
                [tp.topic, tp.partition, offset] if single_group else [group, tp.topic, tp.partition, offset]
            )
    return out.getvalue()


def _csv_row(line: str, columns: int) -> list[str]:
    row = next(csv.reader([line]), [])
    if len(row) > columns:
        extra = row[columns]
        raise CommandFailedError(
            f'Too many entries: expected at most {columns} (value #{columns} ({len(extra)} chars) "{extra}")'
        )
    if len(row) < columns:
        raise CommandFailedError(f"Not enough column values: expected {columns}, found {len(row)}")
    return row


def _csv_number(text: str, long: bool) -> int:
    try:
        return java_parse_long(text) if long else java_parse_int(text)
    except ValueError:
        kind = "long" if long else "int"
        raise CommandFailedError(
            f'Cannot deserialize value of type `{kind}` from String "{text}": not a valid `{kind}` value'
        ) from None


def parse_reset_plan(text: str, groups: Sequence[str]) -> dict[str, dict[TopicPartition, int]]:
    """Kafka's `parseResetPlan`: with exactly one --group and a first line of three columns, every line is
    `topic,partition,offset` of that group; otherwise every line is `group,topic,partition,offset`.
    Raises CommandFailedError (Jackson's texts, shortened to their first line) for a malformed line."""
    lines = text.split("\n")
    while lines and lines[-1] == "":
        lines.pop()  # Java's split drops trailing empty strings
    plan: dict[str, dict[TopicPartition, int]] = {}
    old_format = len(groups) == 1 and bool(lines) and _parses(lines[0], 3)
    for line in lines:
        line = line.rstrip("\r")
        if old_format:
            topic, partition, offset = _csv_row(line, 3)
            group = groups[0]
        else:
            group, topic, partition, offset = _csv_row(line, 4)
        tp = TopicPartition(topic, _csv_number(partition, long=False))
        plan.setdefault(group, {})[tp] = _csv_number(offset, long=True)
    return plan


def _parses(line: str, columns: int) -> bool:
    try:
        row = _csv_row(line.rstrip("\r"), columns)
        _csv_number(row[-2], long=False)
        _csv_number(row[-1], long=True)
    except CommandFailedError:
        return False
    return True
