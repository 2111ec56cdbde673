"""`kafkaops reassign-partitions`: Kafka 2.8's kafka-reassign-partitions (kafka-reference.md §2.3).

Every action with Kafka's flags, JSON files, texts and exit codes. Where Kafka 2.8 needs
--bootstrap-server (`--additional`, `--cancel`, `--list`) ours works through ZooKeeper intents with the
same texts (`admin.reassignment_ops`).

`--generate` offers a choice of strategy: `balanced` (default: `admin.planner`, which keeps what is well
placed and moves the fewest replicas that balance the cluster) or `kafka` (Kafka's redraw, exactly).
stdout stays Kafka's two JSON documents so scripts keep working; the plan report goes to stderr (and
`--stats-json`). Its work (inputs, plan, report, batches) is `admin.reassignment_generate`; here the
flags are parsed and the result rendered, and the Spark engine is built and passed in.

Beyond Kafka: offline planning from a current-assignment file (`--current-assignment-json-file`,
Kafka's reassignment JSON as `--generate` prints it, or JSON lines `{"topic","partition","replicas"}`
when the file name ends in `.jsonl`), racks for offline planning (`--broker-racks`), partition sizes
(`--partition-sizes-json-file`), batches (`--batch-size`), a Spark engine; `--verify --wait` (poll
until the reassignment is done, with a live table on a terminal) and `--output json` for
--execute, --verify, --cancel and --list.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console, Group
from rich.live import Live
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text

from kafkaops.admin import reassignment as files
from kafkaops.admin import reassignment_admin_ops as admin_ops
from kafkaops.admin import reassignment_ops as ops
from kafkaops.admin.kafka_client.client import KafkaClient
from kafkaops.admin.planner import Key, Plan, PlanReport, Spread
from kafkaops.admin.reassignment import ReassignmentEntry
from kafkaops.admin.reassignment_generate import (
    DEFAULT_BATCH_PREFIX,
    Engine,
    GenerateRequest,
    PlanEngine,
    Strategy,
    generate_reassignment,
    read_input_file,
)
from kafkaops.cli.common import (
    BootstrapServerOption,
    CommandConfigOption,
    StateDirOption,
    ZookeeperOption,
    admin_client,
    zookeeper,
)
from kafkaops.cli.output import OutputFormat, fail, kafka_errors, print_json, print_lines
from kafkaops.cluster.common.errors import InvalidArgumentError, KafkaOpsError, TerseReassignmentFailure, UsageError
from kafkaops.cluster.zk.client import KafkaZkClient
from kafkaops.cluster.zk.values import ReplicaAssignment, TopicPartition

DESCRIPTION = "This tool helps to move topic partitions between replicas."
ERROR_PREFIX = "Error: "
ACTIONS = ("generate", "execute", "verify", "cancel", "list")
CLIENT_ID = "reassign-partitions-tool"
EXACTLY_ONE_ACTION = "Command must include exactly one action: --generate, --execute, --verify, --cancel, --list"

# Kafka 2.8 `validateAndParseArgs`: what each action needs and what it accepts. Our own options are
# accepted with --generate only.
REQUIRED = {
    "verify": ("reassignment-json-file",),
    "generate": ("topics-to-move-json-file", "broker-list"),
    "execute": ("reassignment-json-file",),
    "cancel": ("reassignment-json-file",),
    "list": (),
}
OURS = (
    "strategy",
    "seed",
    "current-assignment-json-file",
    "broker-racks",
    "partition-sizes-json-file",
    "stats-json",
    "batch-size",
    "batch-prefix",
    "engine",
    "master",
    "conf",
)
PERMITTED = {
    "verify": ("bootstrap-server", "command-config", "preserve-throttles", "zookeeper", "wait"),
    "generate": ("bootstrap-server", "broker-list", "command-config", "disable-rack-aware", "zookeeper", *OURS),
    "execute": (
        "additional",
        "bootstrap-server",
        "command-config",
        "throttle",
        "replica-alter-log-dirs-throttle",
        "timeout",
        "zookeeper",
    ),
    # --zookeeper also with --cancel and --list (beyond Kafka 2.8, which needs --bootstrap-server there)
    "cancel": ("bootstrap-server", "command-config", "preserve-throttles", "timeout", "zookeeper"),
    "list": ("bootstrap-server", "command-config", "zookeeper"),
}
BOOTSTRAP_ONLY = ("command-config",)
"""Options Kafka 2.8 takes with --bootstrap-server only that have no meaning through ZooKeeper here
(`--additional`, `--cancel`, `--list`, `--timeout` and the log-dir throttle work both ways)."""

MAX_BROKER_ROWS = 64
"""The stderr report lists every broker up to this many; beyond, the per-broker table is in --stats-json."""


def check_args(given: Sequence[str]) -> str:
    """Kafka 2.8's action and option checks, in its order and with jopt-simple's texts; returns the action.

    `given` holds the long names of the options on the command line. --zookeeper is not required: it
    defaults (environment, config file, local cluster), and offline planning needs no cluster.
    Raises UsageError (printed with the usage, as Kafka's printUsageAndDie does).
    """
    if not given:
        raise UsageError(DESCRIPTION)
    actions = [a for a in ACTIONS if a in given]
    if len(actions) != 1:
        raise UsageError(EXACTLY_ONE_ACTION)
    action = actions[0]
    for name in REQUIRED[action]:
        if name not in given:
            raise UsageError(f'Missing required argument "[{name}]"')
    for name in given:
        permitted = name in PERMITTED[action] or (action, name) == ("verify", "timeout") and "wait" in given
        if name != action and name not in REQUIRED[action] and not permitted:
            raise UsageError(f'Option "[{name}]" can\'t be used with action "[{action}]"')
    if "bootstrap-server" not in given:
        for name in BOOTSTRAP_ONLY:
            if name in given:
                raise InvalidArgumentError(f'You must specify --bootstrap-server when using "[{name}]"')
    return action


def report_lines(
    report: PlanReport, strategy: Strategy, seed: int | None, engine: Engine, batches: Sequence[str]
) -> list[str]:
    """The plan report as text (stderr). The figures topicmappr and Cruise Control print."""

    def spread(s: Spread) -> str:
        return f"min {s.min:g}, max {s.max:g}, stddev {s.stddev:.2f} (spread {s.spread:g})"

    bound = report.lower_bound.total
    ratio = f", {report.replicas_moved / bound:.2f}x" if bound else ""
    # with partition sizes the goal is bytes, and the bound (for balanced counts) only a reference
    bound_name = "lower bound for balanced counts" if report.bytes_before is not None else "lower bound"
    seed_text = "random" if seed is None else str(seed)
    targets = [b for b in report.brokers if b.target]
    lines = [
        f"Plan report (strategy {strategy}, seed {seed_text}, engine {engine}):",
        f"  Partitions: {report.partitions} in {report.topics} topic(s); replicas: {report.replicas}; "
        f"target brokers: {len(targets)}",
        f"  Replicas moved: {report.replicas_moved} ({bound_name} {bound}{ratio}); leader changes: "
        f"{report.leader_changes}; partitions changed: {report.partitions_changed}",
        f"  Replicas per broker: {spread(report.replicas_before)} -> {spread(report.replicas_after)}",
        f"  Leaders per broker:  {spread(report.leaders_before)} -> {spread(report.leaders_after)}",
    ]
    if report.bytes_before is not None and report.bytes_after is not None:
        lines.append(f"  Bytes per broker:    {spread(report.bytes_before)} -> {spread(report.bytes_after)}")
        lines.append(f"  Bytes moved: {report.bytes_moved}")
    lines += [
        f"  Per-topic spread (worst topic): {report.topic_spread_before} -> {report.topic_spread_after}; "
        f"topics within 1: {report.topics_within_one_before}/{report.topics} -> "
        f"{report.topics_within_one_after}/{report.topics}",
        f"  Rack violations (partitions on fewer racks than they could span): "
        f"{report.rack_violations_before} -> {report.rack_violations_after}",
    ]
    if len(report.brokers) <= MAX_BROKER_ROWS:
        lines.append(f"  {'broker':>8}  {'rack':<10}  {'replicas':>12}  {'leaders':>12}")
        for b in report.brokers:
            mark = "" if b.target else "  (removed)"
            lines.append(
                f"  {b.broker:>8}  {b.rack or '-':<10}  {f'{b.replicas_before} -> {b.replicas_after}':>12}  "
                f"{f'{b.leaders_before} -> {b.leaders_after}':>12}{mark}"
            )
    else:
        lines.append(f"  ({len(report.brokers)} brokers: the per-broker table is in --stats-json)")
    for path in batches:
        lines.append(f"  Wrote {path}")
    return lines


_Partition = TypeVar("_Partition", bound=tuple[str, int])
"""A plan's (topic, partition) key or a TopicPartition: both render the same."""


def _reassignment_document(assignment: Mapping[_Partition, Sequence[int]]) -> dict[str, Any]:
    return {
        "version": 1,
        "partitions": [
            {
                "topic": key[0],
                "partition": key[1],
                "replicas": list(assignment[key]),
                "log_dirs": ["any"] * len(assignment[key]),
            }
            for key in sorted(assignment)
        ],
    }


def _spark_engine(master: str | None, conf: Sequence[str]) -> PlanEngine:
    """The balanced strategy as a Spark job (`--engine spark`): a session per plan, stopped after it
    unless it was already running."""

    def plan_on_spark_session(
        current: Mapping[Key, Sequence[int]], brokers: Sequence[int], racks: Mapping[int, str] | None, seed: int
    ) -> Plan:
        from kafkaops.spark.planner_job import plan_on_spark
        from kafkaops.spark.session import build_session

        session = build_session(master=master, conf=conf, app_name="kafkaops-reassign-partitions")
        try:
            return plan_on_spark(session.spark, current, brokers, racks, seed)
        except KafkaOpsError as error:
            if session.log_path and not isinstance(error, InvalidArgumentError):
                raise KafkaOpsError(f"{error} (Spark's log: {session.log_path})") from error
            raise
        finally:
            if session.owned:
                session.spark.stop()

    return plan_on_spark_session


def _check_generate_options(
    request: GenerateRequest, zookeeper_connect: str | None, master: str | None, conf: Sequence[str]
) -> None:
    """Our options' combinations with --generate, before any input is read. Raises InvalidArgumentError."""
    if request.current_assignment_json_file is not None and zookeeper_connect is not None:
        raise InvalidArgumentError("--current-assignment-json-file plans offline: leave out --zookeeper")
    if request.broker_racks is not None and request.current_assignment_json_file is None:
        raise InvalidArgumentError(
            "--broker-racks is for offline planning: with ZooKeeper the brokers' registered racks are used"
        )
    if request.engine is Engine.spark and request.strategy is Strategy.kafka:
        raise InvalidArgumentError("--engine spark runs the balanced strategy; Kafka's strategy needs no cluster")
    if request.engine is Engine.spark and request.partition_sizes_json_file is not None:
        raise InvalidArgumentError(
            "--partition-sizes-json-file needs --engine local: balancing bytes runs on one machine"
        )
    if request.engine is Engine.local and (master is not None or conf):
        raise InvalidArgumentError("--master and --conf are for --engine spark")
    if request.batch_size is not None and request.batch_size < 1:
        raise InvalidArgumentError(f"--batch-size must be a positive number of partitions, not {request.batch_size}")


def _generate(
    request: GenerateRequest,
    zookeeper_connect: str | None,
    master: str | None,
    conf: Sequence[str],
    output: OutputFormat,
    bootstrap_server: str | None = None,
    command_config: str | None = None,
    state: Path | None = None,
) -> None:
    """--generate: check our options, plan (admin.reassignment_generate), print Kafka's two documents on
    stdout and the plan report on stderr, or one JSON document. With --bootstrap-server the brokers and
    the current assignment are read over the Admin API (Metadata)."""
    _check_generate_options(request, zookeeper_connect, master, conf)
    spark = _spark_engine(master, conf) if request.engine is Engine.spark else None
    if bootstrap_server is not None and request.current_assignment_json_file is None:
        with admin_client(bootstrap_server, command_config, CLIENT_ID, state) as (client, _):
            result = generate_reassignment(
                request,
                lambda: zookeeper(zookeeper_connect, state),
                spark,
                cluster_reader=lambda topics: admin_ops.read_cluster(client, topics),
            )
    else:
        result = generate_reassignment(request, lambda: zookeeper(zookeeper_connect, state), spark)
    if output is OutputFormat.json:
        print_json(
            {
                "current": _reassignment_document(result.current),
                "proposed": _reassignment_document(result.proposed),
                "report": result.document,
            }
        )
        return
    sys.stdout.write(
        "Current partition replica assignment\n"
        f"{files.format_reassignment_json(result.current)}\n\n"
        "Proposed partition reassignment configuration\n"
        f"{files.format_reassignment_json(result.proposed)}\n"
    )
    sys.stdout.flush()
    lines = report_lines(result.report, request.strategy, request.effective_seed, request.engine, result.batch_files)
    for line in lines:
        sys.stderr.write(line + "\n")


# --- --execute, --verify, --cancel, --list: Kafka's texts, each in one place ---------------------

CURRENT_ASSIGNMENT = "Current partition replica assignment\n\n{}\n\nSave this to use as the --reassignment-json-file option during rollback"
VERIFY_PERIODICALLY = (
    "Warning: You must run --verify periodically, until the reassignment completes, to ensure the throttle is removed."
)
INTER_BROKER_THROTTLE_SET = "The inter-broker throttle limit was set to {} B/s"
LOG_DIR_THROTTLE_SET = "The replica-alter-dir throttle limit was set to {} B/s"
STARTED = "Successfully started partition reassignment{} for {}"
STATUS_HEADER = "Status of partition reassignment:"
STATUS_COMPLETE = "Reassignment of partition {} is complete."
STATUS_FAILED = "There is no active reassignment of partition {}, but replica set is {} rather than {}."
STATUS_IN_PROGRESS = "Reassignment of partition {} is still in progress."
CLEARING_BROKERS = "Clearing broker-level throttles on broker{} {}"
CLEARING_TOPICS = "Clearing topic-level throttles on topic{} {}"
CANCELLED = "Successfully cancelled partition reassignment{} for: {}"
NONE_ACTIVE = "None of the specified partition reassignments are active."
NO_MOVES_ACTIVE = "None of the specified partition moves are active."
LIST_HEADER = "Current partition reassignments:"
LIST_EMPTY = "No partition reassignments found."
# ours (--verify --wait)
WAIT_FAILED = "Partition reassignment did not reach its target replicas for: {}"
WAIT_TIMED_OUT = "Timed out after {} ms waiting for partition reassignment of: {}"
EXIT_TIMED_OUT = 3
WAIT_INTERVAL_S = 1.0
DEFAULT_EXECUTE_TIMEOUT_MS = 10000
"""--timeout of --execute and --cancel: how long log-dir moves may take to start (Kafka's default)."""


def _plural(items: Sequence[object]) -> str:
    return "" if len(items) == 1 else "s"


def _ids(ids: Sequence[int]) -> str:
    return ",".join(map(str, ids))


def _partitions_text(partitions: Sequence[TopicPartition]) -> str:
    return ",".join(map(str, partitions))


def execute_lines_before(plan: ops.ExecutePlan) -> list[str]:
    """What Kafka prints before it writes anything: the rollback file."""
    return [CURRENT_ASSIGNMENT.format(files.format_reassignment_json(plan.current))]


def execute_lines_after(plan: ops.ExecutePlan) -> list[str]:
    lines = []
    if plan.throttle >= 0 or plan.log_dir_throttle >= 0:
        lines.append(VERIFY_PERIODICALLY)
    if plan.throttle >= 0:
        lines.append(INTER_BROKER_THROTTLE_SET.format(plan.throttle))
    if plan.log_dir_throttle >= 0:
        lines.append(LOG_DIR_THROTTLE_SET.format(plan.log_dir_throttle))
    lines.append(STARTED.format(_plural(plan.started), _partitions_text(plan.started)))
    return lines


def status_lines(states: Mapping[TopicPartition, ops.PartitionState]) -> list[str]:
    """Kafka 2.8 `partitionReassignmentStatesToString` (states come sorted by (topic, partition))."""
    lines = [STATUS_HEADER]
    for tp, state in states.items():
        if state.complete:
            lines.append(STATUS_COMPLETE.format(tp))
        elif state.done:
            lines.append(STATUS_FAILED.format(tp, _ids(state.current), _ids(state.target)))
        else:
            lines.append(STATUS_IN_PROGRESS.format(tp))
    return lines


def cleared_lines(cleared: ops.ClearedThrottles | None) -> list[str]:
    if cleared is None:
        return []
    return [
        CLEARING_BROKERS.format(_plural(cleared.brokers), _ids(cleared.brokers)),
        CLEARING_TOPICS.format(_plural(cleared.topics), ",".join(cleared.topics)),
    ]


def cancel_lines(result: ops.CancelResult) -> list[str]:
    cancelled = sorted(result.cancelled)
    first = CANCELLED.format(_plural(cancelled), _partitions_text(cancelled)) if cancelled else NONE_ACTIVE
    return [first, *(result.move_lines or [NO_MOVES_ACTIVE]), *cleared_lines(result.cleared)]


def list_lines(active: Mapping[TopicPartition, ReplicaAssignment]) -> list[str]:
    """Kafka 2.8 `curReassignmentsToString`."""
    if not active:
        return [LIST_EMPTY]
    lines = [LIST_HEADER]
    for tp, a in active.items():
        adding = f" adding: {_ids(a.adding_replicas)}." if a.adding_replicas else ""
        removing = f" removing: {_ids(a.removing_replicas)}." if a.removing_replicas else ""
        lines.append(f"{tp}: replicas: {_ids(a.replicas)}.{adding}{removing}")
    return lines


def _state_name(state: ops.PartitionState) -> str:
    return "complete" if state.complete else "failed" if state.done else "in_progress"


def _partition_document(tp: TopicPartition, **fields: Any) -> dict[str, Any]:
    return {"topic": tp.topic, "partition": tp.partition, **fields}


def _cleared_document(cleared: ops.ClearedThrottles | None) -> dict[str, Any] | None:
    return None if cleared is None else {"brokers": cleared.brokers, "topics": cleared.topics}


def execute_document(plan: ops.ExecutePlan) -> dict[str, Any]:
    return {
        "current": _reassignment_document(plan.current),
        "proposed": _reassignment_document(plan.proposed),
        "throttle": plan.throttle if plan.throttle >= 0 else None,
        "topic_throttles": plan.topic_throttles,
        "broker_throttles": {str(b): v for b, v in plan.broker_throttles.items()},
        "started": [_partition_document(tp) for tp in plan.started],
    }


def verify_document(result: ops.VerifyResult, progress: ops.ReassignmentProgress | None = None) -> dict[str, Any]:
    document: dict[str, Any] = {
        "partitions": [
            _partition_document(tp, state=_state_name(s), current=list(s.current), target=list(s.target))
            for tp, s in result.states.items()
        ],
        "ongoing": result.ongoing,
        "throttles_cleared": _cleared_document(result.cleared),
    }
    if progress is not None:
        document["timed_out"] = progress.timed_out
        document["elapsed_ms"] = round(progress.elapsed_s * 1000)
    return document


def cancel_document(result: ops.CancelResult) -> dict[str, Any]:
    return {
        "cancelled": [_partition_document(tp, replicas=list(r)) for tp, r in sorted(result.cancelled.items())],
        "throttles_cleared": _cleared_document(result.cleared),
    }


def list_document(active: Mapping[TopicPartition, ReplicaAssignment]) -> dict[str, Any]:
    return {
        "reassignments": [
            _partition_document(
                tp, replicas=list(a.replicas), adding=list(a.adding_replicas), removing=list(a.removing_replicas)
            )
            for tp, a in active.items()
        ]
    }


# --- --verify --wait: progress ---------------------------------------------------------------------


def progress_line(row: ops.PartitionProgress) -> str:
    """One plain line per partition change, for logs and pipes."""
    parts = [f"{row.partition}: {_state_name(row.state).replace('_', ' ')}", f"replicas: {_ids(row.state.current)}"]
    if row.isr is not None:
        parts.append(f"isr: {_ids(row.isr)}")
    if row.adding:
        parts.append(f"adding: {_ids(row.adding)}")
    if row.removing:
        parts.append(f"removing: {_ids(row.removing)}")
    return "; ".join(parts)


def progress_table(progress: ops.ReassignmentProgress) -> Group:
    """The live view on a terminal: a bar of finished partitions and one row per partition."""
    total = len(progress.partitions)
    table = Table(box=None, pad_edge=False)
    for column in ("partition", "state", "replicas", "target", "leader", "isr", "adding", "removing"):
        table.add_column(column)
    styles = {"complete": "green", "failed": "red", "in_progress": "yellow"}
    for row in progress.partitions:
        name = _state_name(row.state)
        table.add_row(
            str(row.partition),
            Text(name.replace("_", " "), style=styles[name]),
            _ids(row.state.current),
            _ids(row.state.target),
            "-" if row.leader is None else str(row.leader),
            "-" if row.isr is None else _ids(row.isr),
            _ids(row.adding),
            _ids(row.removing),
        )
    header = Table.grid(padding=(0, 1))
    header.add_row(
        ProgressBar(total=max(total, 1), completed=progress.completed, width=30),
        Text(f"{progress.completed}/{total} partitions done, {progress.elapsed_s:.0f}s"),
    )
    return Group(header, table)


class _ZooKeeperActions:
    """The actions through ZooKeeper intents (`admin.reassignment_ops`)."""

    def __init__(self, zk: KafkaZkClient) -> None:
        self.zk = zk

    def plan_execute(self, entries: Sequence[ReassignmentEntry], **kwargs: Any) -> ops.ExecutePlan:
        return ops.plan_execute(self.zk, entries, **kwargs)

    def apply_execute(self, plan: ops.ExecutePlan, timeout_ms: int) -> list[str]:
        ops.apply_execute(self.zk, plan)
        return []

    def verify(self, entries: Sequence[ReassignmentEntry], preserve_throttles: bool) -> ops.VerifyResult:
        return ops.verify_reassignment(self.zk, entries, preserve_throttles=preserve_throttles)

    def refuse_log_dirs(self, entries: Sequence[ReassignmentEntry]) -> None:
        ops.refuse_log_dirs(entries)

    def read_progress(
        self, targets: Mapping[TopicPartition, Sequence[int]], elapsed: float
    ) -> ops.ReassignmentProgress:
        return ops.read_progress(self.zk, targets, elapsed)

    def cancel(
        self, entries: Sequence[ReassignmentEntry], preserve_throttles: bool, timeout_ms: int
    ) -> ops.CancelResult:
        return ops.cancel_reassignment(self.zk, entries, preserve_throttles=preserve_throttles)

    def list(self) -> dict[TopicPartition, ReplicaAssignment]:
        return ops.list_reassignments(self.zk)


class _AdminActions:
    """The actions through the Admin API (`admin.reassignment_admin_ops`)."""

    def __init__(self, client: KafkaClient) -> None:
        self.client = client

    def plan_execute(self, entries: Sequence[ReassignmentEntry], **kwargs: Any) -> ops.ExecutePlan:
        return admin_ops.plan_execute(self.client, entries, **kwargs)

    def apply_execute(self, plan: ops.ExecutePlan, timeout_ms: int) -> list[str]:
        return admin_ops.apply_execute(self.client, plan, timeout_ms)

    def verify(self, entries: Sequence[ReassignmentEntry], preserve_throttles: bool) -> ops.VerifyResult:
        return admin_ops.verify_reassignment(self.client, entries, preserve_throttles=preserve_throttles)

    def refuse_log_dirs(self, entries: Sequence[ReassignmentEntry]) -> None:
        """The Admin API moves replicas between log dirs."""

    def read_progress(
        self, targets: Mapping[TopicPartition, Sequence[int]], elapsed: float
    ) -> ops.ReassignmentProgress:
        return admin_ops.read_progress(self.client, targets, elapsed)

    def cancel(
        self, entries: Sequence[ReassignmentEntry], preserve_throttles: bool, timeout_ms: int
    ) -> ops.CancelResult:
        return admin_ops.cancel_reassignment(
            self.client, entries, preserve_throttles=preserve_throttles, timeout_ms=timeout_ms
        )

    def list(self) -> dict[TopicPartition, ReplicaAssignment]:
        return admin_ops.list_reassignments(self.client)


_Actions = _ZooKeeperActions | _AdminActions


def _wait(
    actions: _Actions, targets: Mapping[TopicPartition, Sequence[int]], timeout_ms: int | None, output: OutputFormat
) -> ops.ReassignmentProgress:
    """Poll until done or timed out, showing progress: a live table on a terminal, a line per change when
    stdout is a pipe or a file, nothing with --output json (stdout is one JSON document)."""
    snapshots = ops.watch_progress(
        lambda elapsed: actions.read_progress(targets, elapsed),
        timeout_s=None if timeout_ms is None else timeout_ms / 1000,
        interval_s=WAIT_INTERVAL_S,
    )
    last: ops.ReassignmentProgress | None = None
    if output is OutputFormat.json:
        *_, last = snapshots
    elif sys.stdout.isatty():
        with Live(console=Console(file=sys.stdout), auto_refresh=False) as live:
            for last in snapshots:
                live.update(progress_table(last), refresh=True)
    else:
        shown: dict[TopicPartition, str] = {}
        for last in snapshots:
            for row in last.partitions:
                line = progress_line(row)
                if shown.get(row.partition) != line:
                    shown[row.partition] = line
                    sys.stdout.write(line + "\n")
            sys.stdout.flush()
    assert last is not None  # watch_progress yields at least once
    return last


def _print(text: bool, lines: list[str], document: Any) -> None:
    if text:
        print_lines(lines)
    else:
        print_json(document)


@contextmanager
def _actions(
    zookeeper_connect: str | None, bootstrap_server: str | None, command_config: str | None, state: Path | None
) -> Iterator[_Actions]:
    """The Admin API with --bootstrap-server (Kafka ignores --zookeeper then), else ZooKeeper."""
    if bootstrap_server is not None:
        with admin_client(bootstrap_server, command_config, CLIENT_ID, state) as (client, _):
            yield _AdminActions(client)
    else:
        with zookeeper(zookeeper_connect, state) as zk:
            yield _ZooKeeperActions(zk)


def _run_action(
    action: str,
    actions: _Actions,
    entries: Sequence[ReassignmentEntry],
    *,
    additional: bool,
    throttle: int | None,
    log_dir_throttle: int | None,
    preserve_throttles: bool,
    wait: bool,
    timeout: int | None,
    output: OutputFormat,
) -> None:
    """--execute, --verify, --cancel, --list: call admin, print Kafka's text or JSON."""
    text = output is OutputFormat.text
    if action == "execute":
        plan = actions.plan_execute(
            entries,
            additional=additional,
            throttle=ops.NO_THROTTLE if throttle is None else throttle,
            log_dir_throttle=ops.NO_THROTTLE if log_dir_throttle is None else log_dir_throttle,
        )
        if text:
            print_lines(execute_lines_before(plan))
            sys.stdout.flush()
        moves = actions.apply_execute(plan, DEFAULT_EXECUTE_TIMEOUT_MS if timeout is None else timeout)
        _print(text, [*execute_lines_after(plan), *moves], execute_document(plan))
    elif action == "verify":
        progress = None
        if wait:
            actions.refuse_log_dirs(entries)  # before waiting, as a plain --verify checks first
            progress = _wait(actions, ops.targets_of(entries), timeout, output)
        result = actions.verify(entries, preserve_throttles)
        lines = [*status_lines(result.states), *result.move_lines, *cleared_lines(result.cleared)]
        _print(text, lines, verify_document(result, progress))
        if progress is not None:
            sys.stdout.flush()
            if result.failed:
                raise fail(WAIT_FAILED.format(_partitions_text(result.failed)))
            if result.in_progress:
                waited = timeout if timeout is not None else round(progress.elapsed_s * 1000)
                sys.stderr.write(WAIT_TIMED_OUT.format(waited, _partitions_text(result.in_progress)) + "\n")
                raise typer.Exit(EXIT_TIMED_OUT)
    elif action == "cancel":
        cancelled = actions.cancel(
            entries, preserve_throttles, DEFAULT_EXECUTE_TIMEOUT_MS if timeout is None else timeout
        )
        _print(text, cancel_lines(cancelled), cancel_document(cancelled))
    else:
        active = actions.list()
        _print(text, list_lines(active), list_document(active))


@kafka_errors(ERROR_PREFIX)
def reassign_partitions_command(
    ctx: typer.Context,
    generate: Annotated[
        bool,
        typer.Option(
            "--generate",
            help="Generate a candidate partition reassignment configuration. Note that this only generates a candidate assignment, it does not execute it.",
        ),
    ] = False,
    execute: Annotated[
        bool,
        typer.Option(
            "--execute",
            help="Kick off the reassignment as specified by the --reassignment-json-file option.",
        ),
    ] = False,
    verify: Annotated[
        bool,
        typer.Option(
            "--verify",
            help="Verify if the reassignment completed as specified by the --reassignment-json-file option. If there is a throttle engaged for the replicas specified, and the rebalance has completed, the throttle will be removed",
        ),
    ] = False,
    cancel: Annotated[bool, typer.Option("--cancel", help="Cancel an active reassignment.")] = False,
    list_: Annotated[bool, typer.Option("--list", help="List all active partition reassignments.")] = False,
    zookeeper_connect: ZookeeperOption = None,
    state: StateDirOption = None,
    bootstrap_server: BootstrapServerOption = None,
    command_config: CommandConfigOption = None,
    reassignment_json_file: Annotated[
        str | None,
        typer.Option(
            "--reassignment-json-file",
            metavar="<manual assignment json file path>",
            help="The JSON file with the partition reassignment configuration (--execute, --verify, --cancel).",
        ),
    ] = None,
    topics_to_move_json_file: Annotated[
        str | None,
        typer.Option(
            "--topics-to-move-json-file",
            metavar="<topics to reassign json file path>",
            help='Generate a reassignment configuration to move the partitions of the specified topics to the list of brokers specified by the --broker-list option. The format to use is - {"topics": [{"topic": "foo"},{"topic": "foo1"}], "version":1}',
        ),
    ] = None,
    broker_list: Annotated[
        str | None,
        typer.Option(
            "--broker-list",
            metavar="<brokerlist>",
            help='The list of brokers to which the partitions need to be reassigned in the form "0,1,2". This is required if --topics-to-move-json-file is used to generate reassignment configuration. A registered broker left out is decommissioned: all its replicas move.',
        ),
    ] = None,
    disable_rack_aware: Annotated[
        bool, typer.Option("--disable-rack-aware", help="Disable rack aware replica assignment")
    ] = False,
    throttle: Annotated[
        int | None,
        typer.Option(
            "--throttle",
            metavar="<Long: throttle>",
            help="The movement of partitions between brokers will be throttled to this value (bytes/sec). This option can be included with --execute when a reassignment is started, and it can be altered by resubmitting the current reassignment along with the --additional flag. The throttle rate should be at least 1 KB/s. (default: -1)",
        ),
    ] = None,
    replica_alter_log_dirs_throttle: Annotated[
        int | None,
        typer.Option(
            "--replica-alter-log-dirs-throttle",
            metavar="<Long: replicaAlterLogDirsThrottle>",
            help="The movement of replicas between log directories on the same broker will be throttled to this value (bytes/sec). (default: -1)",
        ),
    ] = None,
    timeout: Annotated[
        int | None,
        typer.Option(
            "--timeout",
            metavar="<Long: timeout>",
            help="The maximum time in ms to wait for log directory replica assignment to begin (default: 10000); with --verify --wait, the maximum time in ms to wait for the reassignment to finish (default: no limit).",
        ),
    ] = None,
    additional: Annotated[
        bool,
        typer.Option(
            "--additional",
            help="Execute this reassignment in addition to any other ongoing ones. This option can also be used to change the throttle of an ongoing reassignment.",
        ),
    ] = False,
    preserve_throttles: Annotated[
        bool,
        typer.Option(
            "--preserve-throttles",
            help="Do not modify broker or topic throttles.",
        ),
    ] = False,
    wait: Annotated[
        bool,
        typer.Option(
            "--wait",
            help="With --verify: poll until no listed partition is in progress (a live table on a terminal, a line per change otherwise). Exit 0 when all are complete, 1 when one ended on other replicas than its target, 3 on --timeout.",
        ),
    ] = False,
    strategy: Annotated[
        Strategy,
        typer.Option(
            "--strategy",
            help="balanced: keep what is well placed and move the fewest replicas that balance replicas, leaders and racks; kafka: Kafka's --generate, a random redraw of every topic.",
        ),
    ] = Strategy.balanced,
    seed: Annotated[
        int | None,
        typer.Option(
            "--seed",
            metavar="<long>",
            help="Random seed: the same seed and input give the same plan. Default: 0 for balanced, a random draw for kafka (as Kafka).",
        ),
    ] = None,
    current_assignment_json_file: Annotated[
        str | None,
        typer.Option(
            "--current-assignment-json-file",
            metavar="<path>",
            help='Plan offline from this current assignment instead of reading ZooKeeper: the reassignment JSON --generate prints ({"version":1,"partitions":[{"topic":"foo","partition":0,"replicas":[1,2]}]}), or JSON lines ({"topic":"foo","partition":0,"replicas":[1,2]} per line) for a name ending in .jsonl.',
        ),
    ] = None,
    broker_racks: Annotated[
        str | None,
        typer.Option(
            "--broker-racks",
            metavar="<id:rack,...>",
            help="Racks of the target brokers for offline planning, e.g. 0:rack-a,1:rack-b (with ZooKeeper, the registrations' racks are used).",
        ),
    ] = None,
    partition_sizes_json_file: Annotated[
        str | None,
        typer.Option(
            "--partition-sizes-json-file",
            metavar="<path>",
            help='Balance bytes instead of replica counts: {"version":1,"partitions":[{"topic":"foo","partition":0,"size":1048576}]}, or the output of kafka-log-dirs.sh --describe. Missing partitions count 0 bytes.',
        ),
    ] = None,
    stats_json: Annotated[
        str | None,
        typer.Option("--stats-json", metavar="<path>", help="Also write the plan report to this file as JSON."),
    ] = None,
    batch_size: Annotated[
        int | None,
        typer.Option(
            "--batch-size",
            metavar="<partitions>",
            help="Also split the proposed changes into reassignment files of at most this many partitions, to execute one after another; each batch moves every broker's replicas in proportion, so the cluster stays balanced between batches.",
        ),
    ] = None,
    batch_prefix: Annotated[
        str,
        typer.Option(
            "--batch-prefix", metavar="<path prefix>", help="Batch files are <prefix>-1.json, <prefix>-2.json, ..."
        ),
    ] = DEFAULT_BATCH_PREFIX,
    engine: Annotated[
        Engine,
        typer.Option(
            "--engine",
            help="local: plan in this process; spark: the same planner as a Spark job (for plans of millions of partitions).",
        ),
    ] = Engine.local,
    master: Annotated[
        str | None,
        typer.Option("--master", metavar="<url>", help="Spark master for --engine spark (default: embedded local[*])"),
    ] = None,
    conf: Annotated[
        list[str] | None, typer.Option("--conf", metavar="<key=value>", help="Spark configuration, repeatable")
    ] = None,
    output: Annotated[
        OutputFormat,
        typer.Option(
            "--output",
            help="text: Kafka's output (--generate: the plan report on stderr); json: one JSON document (--generate, --execute, --verify, --cancel, --list).",
        ),
    ] = OutputFormat.text,
) -> None:
    """Move topic partitions between brokers (Kafka's kafka-reassign-partitions)."""
    values = {
        "generate": generate,
        "execute": execute,
        "verify": verify,
        "cancel": cancel,
        "list": list_,
        "zookeeper": zookeeper_connect,
        "bootstrap-server": bootstrap_server,
        "command-config": command_config,
        "reassignment-json-file": reassignment_json_file,
        "topics-to-move-json-file": topics_to_move_json_file,
        "broker-list": broker_list,
        "disable-rack-aware": disable_rack_aware,
        "throttle": throttle,
        "replica-alter-log-dirs-throttle": replica_alter_log_dirs_throttle,
        "timeout": timeout,
        "additional": additional,
        "preserve-throttles": preserve_throttles,
        "wait": wait,
        "strategy": strategy if strategy is not Strategy.balanced else None,
        "seed": seed,
        "current-assignment-json-file": current_assignment_json_file,
        "broker-racks": broker_racks,
        "partition-sizes-json-file": partition_sizes_json_file,
        "stats-json": stats_json,
        "batch-size": batch_size,
        "batch-prefix": batch_prefix if batch_prefix != DEFAULT_BATCH_PREFIX else None,
        "engine": engine if engine is not Engine.local else None,
        "master": master,
        "conf": conf,
    }
    given = [name for name, value in values.items() if not (value is None or value is False or value == [])]
    action = check_args(given)
    if action != "generate":
        entries = []
        if action != "list":  # the file is read before any connection is made, as Kafka does
            entries = files.parse_reassignment_json(read_input_file(reassignment_json_file or "", "reassignment file"))
        try:
            with _actions(zookeeper_connect, bootstrap_server, command_config, state) as actions:
                _run_action(
                    action,
                    actions,
                    entries,
                    additional=additional,
                    throttle=throttle,
                    log_dir_throttle=replica_alter_log_dirs_throttle,
                    preserve_throttles=preserve_throttles,
                    wait=wait,
                    timeout=timeout,
                    output=output,
                )
        except TerseReassignmentFailure as error:  # Kafka prints these without its "Error: "
            if output is OutputFormat.json:
                sys.stdout.write(json.dumps({"error": str(error)}) + "\n")
            raise fail(str(error)) from None
        return
    if bootstrap_server is not None and current_assignment_json_file is not None:
        raise InvalidArgumentError("--current-assignment-json-file plans offline: leave out --bootstrap-server")
    request = GenerateRequest(
        broker_list=broker_list or "",
        topics_to_move_json_file=topics_to_move_json_file or "",
        current_assignment_json_file=current_assignment_json_file,
        broker_racks=broker_racks,
        partition_sizes_json_file=partition_sizes_json_file,
        rack_aware=not disable_rack_aware,
        strategy=strategy,
        seed=seed,
        engine=engine,
        stats_json=stats_json,
        batch_size=batch_size,
        batch_prefix=batch_prefix,
    )
    _generate(request, zookeeper_connect, master, conf or [], output, bootstrap_server, command_config, state)
