"""`kafkaops reassign-partitions --generate` (Kafka 2.8's `ReassignPartitionsCommand.generateAssignment`,
kafka-reference.md §2.3), beyond printing: read the inputs, the current assignment (ZooKeeper, or a
file for offline planning) and the target brokers' racks; plan with the chosen strategy and engine;
report; cut batches; write the files asked for. One call, `generate_reassignment`, that returns what
the command prints and never prints or exits.

Every input is read and checked before any output, and every output path before any work, so bad
input writes nothing (Kafka's order: the broker list, then the topics file). The Spark engine is passed
in by the caller (`PlanEngine`): the admin library does not import `spark`.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import os
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager

from kafkaops.admin import reassignment as files
from kafkaops.admin.planner import (
    Key,
    LowerBound,
    Plan,
    PlanReport,
    batch_figures,
    plan_balanced,
    plan_kafka,
    plan_report,
    split_batches,
)
from kafkaops.cluster.common.errors import InvalidArgumentError, KafkaOpsError
from kafkaops.cluster.zk.client import KafkaZkClient

__all__ = [
    "DEFAULT_BATCH_PREFIX",
    "Engine",
    "GenerateRequest",
    "GenerateResult",
    "PlanEngine",
    "Strategy",
    "check_writable",
    "generate_reassignment",
    "read_current_file",
    "read_input_file",
    "write_text_file",
]

DEFAULT_BATCH_PREFIX = "reassignment-batch"


class Strategy(enum.StrEnum):
    """`balanced`: the planner (`admin.planner`); `kafka`: Kafka's own redraw of every topic."""

    balanced = "balanced"
    kafka = "kafka"


class Engine(enum.StrEnum):
    """Where the balanced strategy runs: in this process, or as a Spark job."""

    local = "local"
    spark = "spark"


PlanEngine = Callable[[Mapping[Key, Sequence[int]], Sequence[int], Mapping[int, str] | None, int], Plan]
"""The balanced strategy on an engine: (current assignment, target broker ids, their racks or None,
seed) -> plan, as `admin.planner.plan_balanced` without partition sizes."""

ZooKeeperSession = Callable[[], AbstractContextManager[KafkaZkClient]]
ClusterReader = Callable[[list[str]], files.ClusterView]
"""The registered brokers and the current assignment of the topics to move, read some other way."""
"""Opens the cluster's ZooKeeper (only when the current assignment is not read from a file)."""


@dataclasses.dataclass(frozen=True)
class GenerateRequest:
    """What `--generate` was asked: Kafka's flags as given (texts and paths), and ours."""

    broker_list: str
    topics_to_move_json_file: str
    current_assignment_json_file: str | None = None  # offline planning: no ZooKeeper
    broker_racks: str | None = None  # offline planning: `0:rack-a,1:rack-b`
    partition_sizes_json_file: str | None = None
    rack_aware: bool = True
    strategy: Strategy = Strategy.balanced
    seed: int | None = None
    engine: Engine = Engine.local
    stats_json: str | None = None
    batch_size: int | None = None
    batch_prefix: str = DEFAULT_BATCH_PREFIX

    @property
    def effective_seed(self) -> int | None:
        """The seed the plan used: 0 unless given for `balanced`; for `kafka` as given (None: Kafka's
        random draw)."""
        return self.seed if self.seed is not None or self.strategy is Strategy.kafka else 0


@dataclasses.dataclass(frozen=True)
class GenerateResult:
    """The current and proposed assignments (Kafka's two documents), the plan report, the document
    `--stats-json` holds (the report with the strategy, seed, engine and batches), and the batch
    files written, in order."""

    current: dict[Key, list[int]]
    proposed: dict[Key, list[int]]
    report: PlanReport
    document: dict[str, object]
    batch_files: tuple[str, ...]


@dataclasses.dataclass(frozen=True)
class _Inputs:
    brokers: list[int]
    topics: list[str]
    offline_racks: dict[int, str] | None
    sizes: dict[Key, int] | None


def generate_reassignment(
    request: GenerateRequest,
    zookeeper: ZooKeeperSession,
    spark: PlanEngine | None = None,
    cluster_reader: ClusterReader | None = None,
) -> GenerateResult:
    """Plan the reassignment of the topics to move onto the listed brokers, report it, and write the
    batch files and `--stats-json` asked for.

    `zookeeper` is opened only without a current-assignment file and without `cluster_reader` (the
    brokers and assignments read over the Admin API, `--bootstrap-server`); `spark` runs the balanced strategy
    when `request.engine` is `spark` (a ValueError if it is missing: a caller's mistake).
    Raises InvalidArgumentError, AdminOperationError, UnknownTopicOrPartitionError and
    InvalidReplicationFactorError with Kafka's texts, before anything is written; what `spark` raises.
    """
    inputs = _read_inputs(request)
    if request.current_assignment_json_file is not None:
        current = files.select_current(read_current_file(request.current_assignment_json_file), inputs.topics)
        targets = files.target_brokers(inputs.brokers, None, request.rack_aware, inputs.offline_racks)
        all_racks = {b: r for b, r in targets.items() if r is not None}
    else:
        if cluster_reader is not None:
            view = cluster_reader(inputs.topics)
        else:
            with zookeeper() as zk:
                view = files.read_cluster(zk, inputs.topics)
        current = files.select_current(view.assignment, inputs.topics)
        targets = files.target_brokers(inputs.brokers, view.brokers, request.rack_aware)
        all_racks = {b: r for b, r in view.brokers.items() if r is not None and request.rack_aware}
        if inputs.sizes is None and view.sizes and request.engine is Engine.local:
            # over --bootstrap-server the brokers' own log sizes: bytes balanced without a hand-made file
            inputs = dataclasses.replace(inputs, sizes={k: view.sizes.get(k, 0) for k in current})
    racks = {b: r for b, r in targets.items() if r is not None} or None
    ids = list(targets)
    proposed, bound = _plan(request, current, ids, racks, inputs.sizes, spark)
    report = plan_report(current, proposed, ids, racks, inputs.sizes, all_racks, bound)

    batch_files: list[str] = []
    figures: list[dict[str, int | float]] = []
    if request.batch_size is not None:
        batches = split_batches(current, proposed, request.batch_size)
        figures = batch_figures(current, batches, ids)
        for number, batch in enumerate(batches, 1):
            path = f"{request.batch_prefix}-{number}.json"
            write_text_file(path, files.format_reassignment_json(batch))
            batch_files.append(path)
    document = report.as_dict()
    document.update(
        strategy=str(request.strategy),
        seed=request.effective_seed,
        engine=str(request.engine),
        batches=[{"file": p, **f} for p, f in zip(batch_files, figures, strict=True)],
    )
    if request.stats_json:
        write_text_file(request.stats_json, json.dumps(document, indent=2) + "\n")
    return GenerateResult(current, proposed, report, document, tuple(batch_files))


def _read_inputs(request: GenerateRequest) -> _Inputs:
    """Every input, in Kafka's order, then every output path checked; nothing read from the cluster."""
    brokers = files.parse_broker_list(request.broker_list)
    topics = files.parse_topics_to_move_json(read_input_file(request.topics_to_move_json_file, "topics-to-move file"))
    files.check_topics_to_move(topics)
    offline_racks = files.parse_broker_racks(request.broker_racks) if request.broker_racks else None
    sizes = (
        files.parse_partition_sizes_json(read_input_file(request.partition_sizes_json_file, "partition sizes file"))
        if request.partition_sizes_json_file
        else None
    )
    for path in [request.stats_json] if request.stats_json else []:
        check_writable(path)
    if request.batch_size is not None:
        check_writable(f"{request.batch_prefix}-1.json")
    return _Inputs(brokers, topics, offline_racks, sizes)


def _plan(
    request: GenerateRequest,
    current: Mapping[Key, Sequence[int]],
    ids: Sequence[int],
    racks: Mapping[int, str] | None,
    sizes: Mapping[Key, int] | None,
    spark: PlanEngine | None,
) -> tuple[dict[Key, list[int]], LowerBound | None]:
    """(proposed assignment, lower bound or None where the report computes it)."""
    if request.strategy is Strategy.kafka:
        return plan_kafka(current, ids, racks, request.seed), None
    if request.engine is Engine.spark:
        if spark is None:
            raise ValueError("--engine spark needs the Spark engine passed in")
        plan = spark(current, ids, racks, request.seed or 0)
        return plan.proposed, plan.bound
    plan = plan_balanced(current, ids, racks, request.seed or 0, sizes)
    # with partition sizes the bound is for balanced counts: the report computes it
    return plan.proposed, (plan.bound if sizes is None else None)


# --- files ---------------------------------------------------------------------------------------


def read_input_file(path: str, what: str) -> str:
    """The text of an input file; `what` names it in the error.

    Raises InvalidArgumentError (unreadable, or not UTF-8).
    """
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except OSError as error:
        raise InvalidArgumentError(f"Cannot read the {what} {path}: {error.strerror}") from None
    except UnicodeDecodeError:
        raise InvalidArgumentError(f"Cannot read the {what} {path}: not UTF-8 text") from None


def check_writable(path: str) -> None:
    """Refuse an output path whose directory is missing before any work, so nothing is half written.

    Raises InvalidArgumentError.
    """
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise InvalidArgumentError(f"Cannot write {path}: no such directory {folder}")
    if os.path.isdir(path):
        raise InvalidArgumentError(f"Cannot write {path}: it is a directory")


def write_text_file(path: str, text: str) -> None:
    """Raises InvalidArgumentError."""
    try:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as error:
        raise InvalidArgumentError(f"Cannot write {path}: {error.strerror}") from None


def read_current_file(path: str) -> dict[Key, list[int]]:
    """A current assignment: Kafka's reassignment JSON, or JSON lines when the name ends in `.jsonl`.

    Raises InvalidArgumentError / AdminOperationError with Kafka's texts where Kafka reads the format.
    """
    text = read_input_file(path, "current assignment file")
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
