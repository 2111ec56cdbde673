"""`kafkaops reassign-partitions`: Kafka 2.8's kafka-reassign-partitions (kafka-reference.md §2.3).

Today `--generate`, with Kafka's flags, JSON files, texts and exit codes, plus a choice of strategy:
`balanced` (default: `admin.planner`, which keeps what is well placed and moves the fewest replicas
that balance the cluster) or `kafka` (Kafka's redraw, exactly). stdout stays Kafka's two JSON
documents so scripts keep working; the plan report goes to stderr (and `--stats-json`). `--execute`,
`--verify`, `--cancel` and `--list` are validated as Kafka validates them, then refused: the
reassignment issue adds them.

Beyond Kafka: offline planning from a current-assignment file (`--current-assignment-json-file`,
Kafka's reassignment JSON as `--generate` prints it, or JSON lines `{"topic","partition","replicas"}`
when the file name ends in `.jsonl`), racks for offline planning (`--broker-racks`), partition sizes
(`--partition-sizes-json-file`), batches (`--batch-size`), and a Spark engine.
"""

from __future__ import annotations

import enum
import json
import os
import sys
from collections.abc import Mapping, Sequence
from typing import Annotated, Any

import typer

from kafkaops.admin import planner
from kafkaops.admin import reassignment as files
from kafkaops.cli.common import (
    BootstrapServerOption,
    CommandConfigOption,
    ZookeeperOption,
    refuse_bootstrap_server,
    zookeeper,
)
from kafkaops.cli.output import OutputFormat, kafka_errors, print_json
from kafkaops.cluster.errors import InvalidArgumentError, KafkaOpsError, UsageError

DESCRIPTION = "This tool helps to move topic partitions between replicas."
ERROR_PREFIX = "Error: "
ACTIONS = ("generate", "execute", "verify", "cancel", "list")
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
    "verify": ("bootstrap-server", "command-config", "preserve-throttles", "zookeeper"),
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
    "cancel": ("bootstrap-server", "command-config", "preserve-throttles", "timeout"),
    "list": ("bootstrap-server", "command-config"),
}

MAX_BROKER_ROWS = 64
"""The stderr report lists every broker up to this many; beyond, the per-broker table is in --stats-json."""


class Strategy(enum.StrEnum):
    balanced = "balanced"
    kafka = "kafka"


class Engine(enum.StrEnum):
    local = "local"
    spark = "spark"


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
        if name != action and name not in REQUIRED[action] and name not in PERMITTED[action]:
            raise UsageError(f'Option "[{name}]" can\'t be used with action "[{action}]"')
    return action


def _read(path: str, what: str) -> str:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except OSError as error:
        raise InvalidArgumentError(f"Cannot read the {what} {path}: {error.strerror}") from None
    except UnicodeDecodeError:
        raise InvalidArgumentError(f"Cannot read the {what} {path}: not UTF-8 text") from None


def _check_writable(path: str) -> None:
    """Refuse an output path whose directory is missing before any work, so nothing is half written."""
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise InvalidArgumentError(f"Cannot write {path}: no such directory {folder}")
    if os.path.isdir(path):
        raise InvalidArgumentError(f"Cannot write {path}: it is a directory")


def _write(path: str, text: str) -> None:
    try:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as error:
        raise InvalidArgumentError(f"Cannot write {path}: {error.strerror}") from None


def read_current_file(path: str) -> dict[planner.Key, list[int]]:
    """A current assignment: Kafka's reassignment JSON, or JSON lines when the name ends in `.jsonl`.

    Raises InvalidArgumentError / AdminOperationError with Kafka's texts where Kafka reads the format.
    """
    text = _read(path, "current assignment file")
    if not path.endswith(".jsonl"):
        return files.assignment_from_entries(files.parse_reassignment_json(text))
    entries = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            document = json.dumps({"partitions": [json.loads(line)]})
            entries.extend(files.parse_reassignment_json(document))
        except (ValueError, KafkaOpsError) as error:
            raise InvalidArgumentError(f"{path}, line {number}: {error}") from None
    return files.assignment_from_entries(entries)


def report_lines(
    report: planner.PlanReport, strategy: Strategy, seed: int | None, engine: Engine, batches: Sequence[str]
) -> list[str]:
    """The plan report as text (stderr). The figures topicmappr and Cruise Control print."""

    def spread(s: planner.Spread) -> str:
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


def _reassignment_document(assignment: Mapping[planner.Key, Sequence[int]]) -> dict[str, Any]:
    return {
        "version": 1,
        "partitions": [
            {
                "topic": t,
                "partition": p,
                "replicas": list(assignment[(t, p)]),
                "log_dirs": ["any"] * len(assignment[(t, p)]),
            }
            for t, p in sorted(assignment)
        ],
    }


def _plan_on_spark(
    current: Mapping[planner.Key, Sequence[int]],
    brokers: Sequence[int],
    racks: Mapping[int, str] | None,
    seed: int,
    master: str | None,
    conf: Sequence[str],
) -> planner.Plan:
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
            help="Kick off the reassignment as specified by the --reassignment-json-file option. (Not yet available.)",
        ),
    ] = False,
    verify: Annotated[
        bool,
        typer.Option(
            "--verify",
            help="Verify if the reassignment completed as specified by the --reassignment-json-file option. (Not yet available.)",
        ),
    ] = False,
    cancel: Annotated[
        bool, typer.Option("--cancel", help="Cancel an active reassignment. (Not yet available.)")
    ] = False,
    list_: Annotated[
        bool, typer.Option("--list", help="List all active partition reassignments. (Not yet available.)")
    ] = False,
    zookeeper_connect: ZookeeperOption = None,
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
    throttle: Annotated[int | None, typer.Option("--throttle", metavar="<throttle>", hidden=True)] = None,
    replica_alter_log_dirs_throttle: Annotated[
        int | None,
        typer.Option("--replica-alter-log-dirs-throttle", metavar="<replicaAlterLogDirsThrottle>", hidden=True),
    ] = None,
    timeout: Annotated[int | None, typer.Option("--timeout", metavar="<timeout>", hidden=True)] = None,
    additional: Annotated[bool, typer.Option("--additional", hidden=True)] = False,
    preserve_throttles: Annotated[bool, typer.Option("--preserve-throttles", hidden=True)] = False,
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
    ] = "reassignment-batch",
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
            "--output", help="text: Kafka's output (the report on stderr); json: one JSON document with the report."
        ),
    ] = OutputFormat.text,
) -> None:
    """Move topic partitions between brokers (Kafka's kafka-reassign-partitions; today --generate)."""
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
        "strategy": strategy if strategy is not Strategy.balanced else None,
        "seed": seed,
        "current-assignment-json-file": current_assignment_json_file,
        "broker-racks": broker_racks,
        "partition-sizes-json-file": partition_sizes_json_file,
        "stats-json": stats_json,
        "batch-size": batch_size,
        "batch-prefix": batch_prefix if batch_prefix != "reassignment-batch" else None,
        "engine": engine if engine is not Engine.local else None,
        "master": master,
        "conf": conf,
    }
    given = [name for name, value in values.items() if not (value is None or value is False or value == [])]
    action = check_args(given)
    if action != "generate":
        raise InvalidArgumentError(
            f"kafkaops reassign-partitions --{action} is not available yet (only --generate is; "
            "--execute, --verify, --cancel and --list come with the reassignment issue)"
        )
    if bootstrap_server is not None:
        raise refuse_bootstrap_server("reassign-partitions", ", or plan offline with --current-assignment-json-file")
    if current_assignment_json_file is not None and zookeeper_connect is not None:
        raise InvalidArgumentError("--current-assignment-json-file plans offline: leave out --zookeeper")
    if broker_racks is not None and current_assignment_json_file is None:
        raise InvalidArgumentError(
            "--broker-racks is for offline planning: with ZooKeeper the brokers' registered racks are used"
        )
    if engine is Engine.spark and strategy is Strategy.kafka:
        raise InvalidArgumentError("--engine spark runs the balanced strategy; Kafka's strategy needs no cluster")
    if engine is Engine.spark and partition_sizes_json_file is not None:
        raise InvalidArgumentError(
            "--partition-sizes-json-file needs --engine local: balancing bytes runs on one machine"
        )
    if engine is Engine.local and (master is not None or conf):
        raise InvalidArgumentError("--master and --conf are for --engine spark")
    if batch_size is not None and batch_size < 1:
        raise InvalidArgumentError(f"--batch-size must be a positive number of partitions, not {batch_size}")

    # Kafka's order: the broker list, then the topics file; every input before any output
    brokers = files.parse_broker_list(broker_list or "")
    topics = files.parse_topics_to_move_json(_read(topics_to_move_json_file or "", "topics-to-move file"))
    files.check_topics_to_move(topics)
    offline_racks = files.parse_broker_racks(broker_racks) if broker_racks else None
    sizes = (
        files.parse_partition_sizes_json(_read(partition_sizes_json_file, "partition sizes file"))
        if partition_sizes_json_file
        else None
    )
    for path in [stats_json] if stats_json else []:
        _check_writable(path)
    if batch_size is not None:
        _check_writable(f"{batch_prefix}-1.json")

    if current_assignment_json_file is not None:
        current = files.select_current(read_current_file(current_assignment_json_file), topics)
        targets = files.target_brokers(brokers, None, not disable_rack_aware, offline_racks)
        all_racks = {b: r for b, r in targets.items() if r is not None}
    else:
        with zookeeper(zookeeper_connect) as zk:
            view = files.read_cluster(zk, topics)
        current = files.select_current(view.assignment, topics)
        targets = files.target_brokers(brokers, view.brokers, not disable_rack_aware)
        all_racks = {b: r for b, r in view.brokers.items() if r is not None and not disable_rack_aware}
    racks = {b: r for b, r in targets.items() if r is not None} or None
    ids = list(targets)

    if strategy is Strategy.kafka:
        proposed = planner.plan_kafka(current, ids, racks, seed)
        bound = None
    elif engine is Engine.spark:
        plan = _plan_on_spark(current, ids, racks, seed or 0, master, conf or [])
        proposed, bound = plan.proposed, plan.bound
    else:
        plan = planner.plan_balanced(current, ids, racks, seed or 0, sizes)
        proposed, bound = plan.proposed, (plan.bound if sizes is None else None)
    report = planner.plan_report(current, proposed, ids, racks, sizes, all_racks, bound)

    batch_paths: list[str] = []
    batch_figures: list[dict[str, Any]] = []
    if batch_size is not None:
        batches = planner.split_batches(current, proposed, batch_size)
        batch_figures = planner.batch_figures(current, batches, ids)
        for number, batch in enumerate(batches, 1):
            path = f"{batch_prefix}-{number}.json"
            _write(path, files.format_reassignment_json(batch))
            batch_paths.append(path)
    document = report.as_dict()
    document.update(
        strategy=str(strategy),
        seed=seed if seed is not None or strategy is Strategy.kafka else 0,
        engine=str(engine),
        batches=[{"file": p, **f} for p, f in zip(batch_paths, batch_figures, strict=True)],
    )
    if stats_json:
        _write(stats_json, json.dumps(document, indent=2) + "\n")

    if output is OutputFormat.json:
        print_json(
            {
                "current": _reassignment_document(current),
                "proposed": _reassignment_document(proposed),
                "report": document,
            }
        )
        return
    sys.stdout.write(
        "Current partition replica assignment\n"
        f"{files.format_reassignment_json(current)}\n\n"
        "Proposed partition reassignment configuration\n"
        f"{files.format_reassignment_json(proposed)}\n"
    )
    sys.stdout.flush()
    effective_seed = seed if seed is not None or strategy is Strategy.kafka else 0
    for line in report_lines(report, strategy, effective_seed, engine, batch_paths):
        sys.stderr.write(line + "\n")
