"""Benchmark: reassign N empty partitions (RF 3) onto a new set of brokers, against raw ZooKeeper in the same run.

Issue 5's benchmark. B "old" brokers (0 .. B-1) hold topics totalling N partitions (default 10,000;
1,000 per topic), RF 3, replicas and leaders rotated over them; B "new" brokers (B .. 2B-1) join
empty. B is 3 unless the brokers' file descriptors say otherwise (`--brokers` to choose): a log here
keeps its segment, offset index and time index open, so a broker holding every partition of 10,000
needs 30,000 descriptors, and this machine's hard limit is 20,000 (raising it needs CAP_SYS_RESOURCE,
which we do not have; Kafka's docs ask for 100,000 or more). B is then the smallest count whose
brokers stay under 80 % of the limit: 6 + 6 at 10,000 partitions, 3 + 3 up to about 5,000.
A plan moving every partition onto the new brokers (leader rotation kept) is written as a reassignment
JSON file and executed through the code path of `kafkaops reassign-partitions --execute` (parse the
file, `admin.reassignment_ops.plan_execute`, `apply_execute`); the figure is the seconds from the
start of --execute until `verify_reassignment` (the library behind `--verify`) reports every partition
complete, and the partitions per second that makes.

Real broker processes (`cluster/local/cluster.py`, `python -m kafkaops.cluster.server`), not the
in-process mode of bench/controller.py: the brokers fit this machine as processes, and this is the
shape the figure is about — the controller (whichever broker wins `/controller`) talks to the other
brokers over sockets, each broker has its own GIL, asyncio loop and ZooKeeper session, the new
brokers create the new replicas' logs and fetch from the old leaders, the old leaders widen the ISR
in ZooKeeper, the controller sees the target replicas join the ISR, moves the leaders, stops and
deletes the old replicas and clears `/admin/reassign_partitions`. In one process every broker and
the controller would share one GIL (and one descriptor limit) and the figure would measure that
contention instead. Each
process can be profiled on its own (`--profile DIR` runs py-spy on the controller and on one old and
one new broker for the timed phase).

Baseline (same run, same ZooKeeper, cluster idle): N conditional setData of a partition-state-sized
payload, each a fenced batch `[check /controller_epoch, set]` grouped into pipelined multis by
`KafkaZkClient.fenced_multi_many` exactly as the controller's writes are — the ceiling of the
cheapest write a reassignment must make per partition (it makes several). Best of 3, the machine
being shared. The ratio printed is the reassignment's time over the raw time.

The load average is printed at the start and the end: the machine is shared, read figures with it.

The figure is also a row of issue 18's benchmark table (`bench/goals.py`: partitions/s against the raw
fenced writes/s), printed at the end and, with `--json PATH`, written there.

Usage: .venv/bin/python bench/reassign.py [--partitions 10000] [--topic-size 1000] [--brokers B] [--profile DIR]
                                          [--json PATH]
Starts its own ZooKeeper and brokers under a temporary directory (`--state-dir` to keep it) and stops
every process it started on exit, error, SIGINT or SIGTERM.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import dataclasses
import json
import os
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import goals  # noqa: E402 - after the path it is found on
from bench.table import format_table, write_rows  # noqa: E402
from kafkaops.admin import reassignment as files
from kafkaops.admin import reassignment_ops as ops
from kafkaops.admin import topics as admin_topics
from kafkaops.cluster.local.cluster import LocalCluster
from kafkaops.cluster.local.processes import raise_open_files_limit
from kafkaops.cluster.local.profiling import Profiler, py_spy
from kafkaops.cluster.local.signals import stop_started
from kafkaops.cluster.local.zookeeper import LocalZooKeeper, free_port
from kafkaops.cluster.log.segment import INDEX_SUFFIX, LOG_SUFFIX, TIME_INDEX_SUFFIX, segment_file_name
from kafkaops.cluster.zk import znodes
from kafkaops.cluster.zk.client import KafkaZkClient
from kafkaops.cluster.zk.values import LeaderAndIsr, LeaderIsrAndControllerEpoch, TopicPartition
from kafkaops.cluster.zk.zookeeper_client import Op

REPLICATION_FACTOR = 3
FILES_PER_LOG = 1
"""Descriptors counted per log: an empty log holds none (its segment and indexes open on first write), one
leaves room for the brief opens of checkpoint files and the brokers' sockets."""
OVERRIDES = {
    # a preferred-leader rebalance in the middle would add writes that are not the reassignment's
    "auto.leader.rebalance.enable": False,
    # a dozen processes on a shared 2-core machine: a busy broker must not lose its session
    "zookeeper.session.timeout.ms": 30000,
}
RAW_ROUNDS = 3
OPEN_FILES = 200_000
"""Asked for (soft and hard) for this process, whose children inherit it; we get what we may."""


def wait(condition: Callable[[], Any], timeout_s: float, what: str, interval_s: float = 0.1) -> float:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: not reached within {timeout_s:.0f} s")
        time.sleep(interval_s)
    return time.monotonic()


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def cpu_seconds(pid: int) -> float:
    """utime + stime of `pid` (0 once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_quiet(pids: Sequence[int], timeout_s: float, busy: float, window: int = 5) -> float:
    """Until the setup's LeaderAndIsr/UpdateMetadata work is over: the processes' CPU use (cores, summed,
    per second) is under `busy` and has stopped falling, i.e. `window` consecutive seconds within 25 %
    (or 0.05 core) of each other. Idle brokers are not at zero (followers' fetch sessions, heartbeats): returns
    that idle use."""
    deadline = time.monotonic() + timeout_s
    samples: list[float] = []
    before = sum(cpu_seconds(p) for p in pids)
    while True:
        time.sleep(1.0)
        after = sum(cpu_seconds(p) for p in pids)
        samples.append(after - before)
        before = after
        recent = samples[-window:]
        if len(samples) % 10 == 0:
            print(f"  waiting for the brokers to settle: {samples[-1]:.2f} core", file=sys.stderr, flush=True)
        if len(recent) == window and max(recent) < busy and max(recent) - min(recent) < max(0.05, 0.25 * min(recent)):
            return sum(recent) / window
        if time.monotonic() > deadline:
            raise TimeoutError(f"brokers still busy after {timeout_s:.0f} s: {samples[-5:]}")


def partition_dirs(cluster: LocalCluster, broker_id: int, topics: Sequence[str]) -> int:
    data = cluster.broker_dir(broker_id) / "data"
    prefixes = tuple(f"{t}-" for t in topics)
    try:
        return sum(1 for entry in os.scandir(data) if entry.is_dir() and entry.name.startswith(prefixes))
    except FileNotFoundError:
        return 0


def broker_errors(cluster: LocalCluster, broker_ids: Sequence[int]) -> dict[int, list[str]]:
    """ERROR lines of each broker's server log (a log dir going offline, a failed periodic task...)."""
    found = {}
    for broker_id in broker_ids:
        try:
            lines = (cluster.broker_dir(broker_id) / "logs" / "server.out").read_text(errors="replace").splitlines()
        except OSError:
            continue
        errors = [line for line in lines if " ERROR " in line]
        if errors:
            found[broker_id] = errors
    return found


def brokers_per_set(partitions: int, open_files: int) -> int:
    """The fewest brokers (at least 3) over which `partitions` × RF logs stay under 80 % of `open_files`."""
    descriptors = partitions * REPLICATION_FACTOR * FILES_PER_LOG
    return max(REPLICATION_FACTOR, -(-descriptors // int(0.8 * open_files)))


def rotation(brokers: Sequence[int], p: int) -> list[int]:
    """Partition p's replicas: RF consecutive brokers from the p-th, so replicas and leaders spread evenly."""
    return [brokers[(p + i) % len(brokers)] for i in range(REPLICATION_FACTOR)]


def topic_sizes(partitions: int, topic_size: int) -> list[tuple[str, int]]:
    return [
        (f"bench-{start // topic_size:04d}", min(topic_size, partitions - start))
        for start in range(0, partitions, topic_size)
    ]


def create_topics(zk: KafkaZkClient, topics: Sequence[tuple[str, int]], brokers: Sequence[int]) -> None:
    for name, count in topics:
        admin_topics.create_topic(zk, name, None, None, {p: rotation(brokers, p) for p in range(count)}, {})


def all_led(zk: KafkaZkClient, partitions: Sequence[TopicPartition], replicas: Sequence[int]) -> bool:
    states = zk.get_partition_states(partitions)
    return all(
        s is not None
        and s.leader_and_isr.leader in replicas
        and len(s.leader_and_isr.isr) == REPLICATION_FACTOR
        and set(s.leader_and_isr.isr) <= set(replicas)
        for s in states.values()
    )


def raw_fenced_writes(zk: KafkaZkClient, count: int) -> float:
    """`count` fenced conditional setData of a partition state's size, grouped in pipelined multis as the
    controller's writes are (`fenced_multi_many`); best of RAW_ROUNDS rounds."""
    root = "/bench-raw"
    zk.kazoo.ensure_path(root)
    for request in [zk.kazoo.create_async(f"{root}/n{i}", b"{}") for i in range(count)]:
        request.get()
    epoch = zk.get_controller_epoch()
    if epoch is None:
        raise RuntimeError("no /controller_epoch: no controller was elected")
    controller_epoch, epoch_zk_version = epoch
    payload = znodes.TopicPartitionStateZNode.encode(
        LeaderIsrAndControllerEpoch(LeaderAndIsr(3, 1, (3, 4, 5)), controller_epoch)
    )
    best = float("inf")
    for round_ in range(RAW_ROUNDS):
        batches = [[Op.set(f"{root}/n{i}", payload, round_)] for i in range(count)]
        started = time.monotonic()
        outcomes = zk.fenced_multi_many(batches, epoch_zk_version)
        best = min(best, time.monotonic() - started)
        failed = [o for o in outcomes if isinstance(o, Exception)]
        if failed:
            raise RuntimeError(f"raw writes failed: {failed[0]!r} (and {len(failed) - 1} more)")
    for request in [zk.kazoo.delete_async(f"{root}/n{i}") for i in range(count)]:
        request.get()
    zk.kazoo.delete(root)
    return best


@dataclasses.dataclass(frozen=True)
class Layout:
    """Where the benchmark's partitions start (`old` brokers) and where the plan moves them (`new`)."""

    open_files: int
    old: tuple[int, ...]
    new: tuple[int, ...]
    topics: list[tuple[str, int]]
    names: list[str]
    partitions: list[TopicPartition]
    target: dict[TopicPartition, list[int]]
    hosted: collections.Counter[int]
    """Logs each broker holds once every partition has replicas on both sets."""


@dataclasses.dataclass(frozen=True)
class Setup:
    pids: dict[int, int | None]
    controller: int | None


@dataclasses.dataclass(frozen=True)
class Timed:
    """The timed phase: --execute, then --verify until every partition is complete."""

    executed: float
    elapsed: float
    timeline: list[tuple[float, int]]
    gone_at: list[float]


@dataclasses.dataclass(frozen=True)
class Usage:
    """CPU seconds of each broker and of this script during the timed phase, and the load around it."""

    cpu: dict[int, float]
    own: float
    load_before: str
    load_after: str


@dataclasses.dataclass(frozen=True)
class Checks:
    leaders_moved: bool
    created: bool
    deleted: bool
    t_deleted: float


def run(args: argparse.Namespace, state: Path, started: list[Callable[[], None]]) -> None:
    print(f"load average at start: {load()}  ({os.cpu_count()} CPUs)", flush=True)
    open_files = raise_open_files_limit(OPEN_FILES)
    per_set = args.brokers or brokers_per_set(args.partitions, open_files)
    zookeeper = LocalZooKeeper(state / "zk", free_port(), heap_mb=1024)
    zookeeper.start()

    def stop_zookeeper() -> None:
        zookeeper.stop(hard=True)

    started.append(stop_zookeeper)
    cluster = LocalCluster(state / "cluster")

    def kill_brokers() -> None:
        for broker_id in cluster.broker_ids():
            with contextlib.suppress(Exception):
                cluster.stop_broker(broker_id, hard=True)

    started.append(kill_brokers)
    connect = zookeeper.connect_string
    layout = plan_layout(args, per_set, open_files)
    t = time.monotonic()
    cluster.up(brokers=len(layout.old), zookeeper_connect=connect, broker_overrides=OVERRIDES)
    with KafkaZkClient(connect) as zk:
        setup = set_up(args, zk, cluster, layout, t)
        raw_s = raw_ceiling(zk, len(layout.partitions))
        # beside a new broker's data dir: the file system places a directory's inodes near its parent's
        probe_log_creation(cluster.broker_dir(layout.new[0]) / "fs-probe", len(layout.partitions) * REPLICATION_FACTOR)
        plan_file = state / "reassignment.json"
        plan_file.write_text(files.format_reassignment_json(layout.target))
        profiler = start_profiler(args, layout, setup, started)
        cpu_before = {b: cpu_seconds(p) for b, p in setup.pids.items() if p is not None}
        own_before = cpu_seconds(os.getpid())
        load_before = load()
        timed = reassign(args, zk, plan_file, len(layout.partitions))
        load_after = load()
        cpu = {b: cpu_seconds(p) - cpu_before[b] for b, p in setup.pids.items() if p is not None}
        own = cpu_seconds(os.getpid()) - own_before
        if profiler is not None:
            profiler.stop()
        checks = check_outcome(zk, cluster, layout)
    report(args, cluster, layout, setup, raw_s, timed, Usage(cpu, own, load_before, load_after), checks)
    moved = checks.leaders_moved and checks.created
    rows = [goals.reassign_row(len(layout.partitions), timed.elapsed, raw_s, moved)]
    print(format_table(rows), flush=True)
    if args.json:
        write_rows(args.json, rows)


def plan_layout(args: argparse.Namespace, per_set: int, open_files: int) -> Layout:
    """The topics on the old brokers and the plan's targets; warns when a broker's logs near the limit."""
    old, new = tuple(range(per_set)), tuple(range(per_set, 2 * per_set))
    topics = topic_sizes(args.partitions, args.topic_size)
    partitions = [TopicPartition(t, p) for t, count in topics for p in range(count)]
    target = {tp: rotation(new, tp.partition) for tp in partitions}
    hosted = collections.Counter(b for tp in partitions for b in rotation(old, tp.partition))
    hosted.update(b for replicas in target.values() for b in replicas)
    most = max(hosted.values())
    if most * FILES_PER_LOG > 0.9 * open_files:
        print(
            f"warning: a broker will hold {most} logs ({most * FILES_PER_LOG} descriptors), the limit is {open_files}",
            file=sys.stderr,
        )
    return Layout(open_files, old, new, topics, [t for t, _ in topics], partitions, target, hosted)


def set_up(args: argparse.Namespace, zk: KafkaZkClient, cluster: LocalCluster, layout: Layout, t: float) -> Setup:
    """On the old brokers (up since `t`): every topic led and its logs created; then the new brokers, all settled."""
    old, new, names, hosted = layout.old, layout.new, layout.names, layout.hosted
    create_topics(zk, layout.topics, old)
    wait(lambda: all_led(zk, layout.partitions, old), args.setup_timeout, "partitions led on the old brokers", 0.5)
    wait(
        lambda: all(partition_dirs(cluster, b, names) == hosted[b] for b in old),
        args.setup_timeout,
        "old brokers' logs created",
        0.5,
    )
    for broker_id in new:  # `up` would restart the state dir's brokers only
        cluster.add_broker(broker_id=broker_id, timeout_s=120)
    pids = {b: cluster.broker_pid(b) for b in (*old, *new)}
    if any(pid is None for pid in pids.values()):
        raise RuntimeError(f"a broker is not running: {pids}")
    idle = wait_quiet([p for p in pids.values() if p is not None], args.setup_timeout, args.idle_cores)
    controller = zk.get_controller_id()
    print(
        f"setup: {len(names)} topics, {len(layout.partitions)} partitions RF {REPLICATION_FACTOR} on brokers "
        f"{list(old)} ({max(hosted[b] for b in old)} logs each at most, descriptor limit {layout.open_files}), "
        f"brokers {list(new)} joined, controller is broker {controller} ({time.monotonic() - t:.0f} s); idle "
        f"brokers use {idle:.2f} core",
        flush=True,
    )
    return Setup(pids, controller)


def raw_ceiling(zk: KafkaZkClient, count: int) -> float:
    raw_s = raw_fenced_writes(zk, count)
    print(
        f"raw fenced multi ceiling: {count} conditional setData in {raw_s:.2f} s "
        f"({count / raw_s:,.0f} writes/s, best of {RAW_ROUNDS})",
        flush=True,
    )
    return raw_s


LOG_FILES = tuple(segment_file_name(0, suffix) for suffix in (LOG_SUFFIX, INDEX_SUFFIX, TIME_INDEX_SUFFIX))
PROBE_LOGS = 100


def probe_log_creation(directory: Path, new_logs: int) -> None:
    """Time what the new brokers do per new replica on this file system: a directory and a segment's three
    files. On ext4 without a journal (this machine's), creating an inode scans past every inode freed in
    the last minutes, so the cost depends on what ran before (a bench's cleanup, checkpoint rewrites);
    the figure says how much of the reassignment's time that is in this run."""
    directory.mkdir(parents=True)
    t = time.perf_counter()
    for i in range(PROBE_LOGS):
        log_dir = directory / f"probe-{i}"
        log_dir.mkdir()
        for name in LOG_FILES:
            os.close(os.open(log_dir / name, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644))
    per_log = (time.perf_counter() - t) / PROBE_LOGS
    print(
        f"file system: a log's directory and 3 segment files take {per_log * 1e3:.2f} ms to create here now; "
        f"the new brokers create {new_logs:,} ({per_log * new_logs:.2f} s at that rate, shared by them)",
        flush=True,
    )


def start_profiler(
    args: argparse.Namespace, layout: Layout, setup: Setup, started: list[Callable[[], None]]
) -> Profiler | None:
    if args.profile is None:
        return None
    controller, pids, new = setup.controller, setup.pids, layout.new
    other = next(b for b in layout.old if b != controller)
    targets = {
        f"controller-broker{controller}": pids[controller],
        f"old-broker{other}": pids[other],
        f"new-broker{new[0]}": pids[new[0]],
    }
    profiler = Profiler(args.profile, {k: v for k, v in targets.items() if v is not None})
    started.append(profiler.stop)
    time.sleep(1.0)  # py-spy attached before the clock starts
    return profiler


def reassign(args: argparse.Namespace, zk: KafkaZkClient, plan_file: Path, count: int) -> Timed:
    """The timed phase: reassign-partitions --execute, then --verify until everything is complete."""
    t0 = time.monotonic()
    entries = files.parse_reassignment_json(plan_file.read_text())
    plan = ops.plan_execute(zk, entries)
    ops.apply_execute(zk, plan)
    executed = time.monotonic() - t0
    # Every partition is complete only once the controller has deleted the znode (it removes each
    # entry after writing the partition's final assignment): --verify runs at once when the znode
    # goes, then every --poll-interval; before that, every --progress-interval for the timeline
    # (a --verify of 10,000 partitions reads and decodes the whole znode and topic znodes: polling
    # it 4 times a second would take CPU from the cluster it measures).
    znode_gone = threading.Event()
    gone_at: list[float] = []

    def reassign_znode(data: bytes | None, stat: Any, event: Any = None) -> bool:
        if data is None and stat is None:
            gone_at.append(time.monotonic() - t0)
            znode_gone.set()
            return False
        return True

    zk.kazoo.DataWatch(znodes.ReassignPartitionsZNode.path(), reassign_znode)
    timeline: list[tuple[float, int]] = []
    while True:
        result = ops.verify_reassignment(zk, entries)
        now = time.monotonic() - t0
        complete = sum(1 for s in result.states.values() if s.complete)
        timeline.append((now, complete))
        if result.failed:
            raise RuntimeError(f"{len(result.failed)} partitions failed, e.g. {result.failed[:5]}")
        if complete == count and not result.ongoing:
            break
        if now > args.timeout:
            raise TimeoutError(f"{complete}/{count} complete after {now:.0f} s")
        if znode_gone.is_set():
            time.sleep(args.poll_interval)
        else:
            print(f"  {now:7.1f} s  {complete:>7} complete", flush=True)
            znode_gone.wait(args.progress_interval)
    return Timed(executed, time.monotonic() - t0, timeline, gone_at)


def check_outcome(zk: KafkaZkClient, cluster: LocalCluster, layout: Layout) -> Checks:
    """Leaders on the new brokers, their logs created, the old replicas' logs deleted (and how long after)."""
    leaders_moved = all_led(zk, layout.partitions, layout.new)
    t_deleted = time.monotonic()
    deleted = True
    try:
        wait(
            lambda: all(partition_dirs(cluster, b, layout.names) == 0 for b in layout.old),
            120,
            "old replicas deleted",
            0.2,
        )
    except TimeoutError:
        deleted = False
    t_deleted = time.monotonic() - t_deleted
    created = all(partition_dirs(cluster, b, layout.names) == layout.hosted[b] for b in layout.new)
    return Checks(leaders_moved, created, deleted, t_deleted)


def report(
    args: argparse.Namespace,
    cluster: LocalCluster,
    layout: Layout,
    setup: Setup,
    raw_s: float,
    timed: Timed,
    usage: Usage,
    checks: Checks,
) -> None:
    old, new, count, elapsed = layout.old, layout.new, len(layout.partitions), timed.elapsed
    rate = count / elapsed
    print(
        f"reassign {count} partitions RF {REPLICATION_FACTOR} from {len(old)} brokers onto {len(new)} new "
        f"ones: {elapsed:.2f} s from --execute "
        f"to --verify all complete (--execute itself {timed.executed:.2f} s) = {rate:,.0f} partitions/s "
        f"(goal 2,000/s)"
    )
    print(
        f"raw fenced multi ceiling {raw_s:.2f} s for {count} writes ({count / raw_s:,.0f}/s): "
        f"the reassignment takes {elapsed / raw_s:.1f}x the raw time"
    )
    print(
        f"checks: leaders on new brokers and ISR full {checks.leaders_moved}; new replicas' logs on {list(new)} "
        f"{checks.created}; old replicas' logs deleted {checks.deleted} ({checks.t_deleted:.1f} s after verify)"
    )
    print(
        "CPU seconds during the timed phase: "
        + ", ".join(
            f"broker {b}{' (controller)' if b == setup.controller else ''} {s:.1f}" for b, s in usage.cpu.items()
        )
        + f"; this script (execute, verify) {usage.own:.1f}"
    )
    print(f"load average: before {usage.load_before}, after {usage.load_after}")
    first = next((t for t, done in timed.timeline if done > 0), elapsed)
    gone_at = timed.gone_at
    print(
        f"first partition seen complete by --verify at {first:.1f} s (the controller starts every move before "
        "finishing any); "
        f"/admin/reassign_partitions deleted after {gone_at[0] if gone_at else float('nan'):.2f} s"
    )
    for broker_id, errors in broker_errors(cluster, (*old, *new)).items():
        print(f"broker {broker_id}: {len(errors)} ERROR lines in server.out, first: {errors[0][:300]}")
    if args.timeline is not None:
        args.timeline.write_text(json.dumps(timed.timeline))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--partitions", type=int, default=10_000)
    parser.add_argument("--topic-size", type=int, default=1000, help="partitions per topic")
    parser.add_argument("--brokers", type=int, help="brokers in each set (default: 3, more if descriptors need)")
    parser.add_argument("--timeout", type=float, default=7200.0, help="seconds to wait for --verify")
    parser.add_argument("--setup-timeout", type=float, default=1800.0)
    parser.add_argument(
        "--idle-cores",
        type=float,
        default=1.2,
        help="CPU use (cores, all brokers) under which they are settled; idle followers' fetches of thousands of "
        "partitions cost about 0.3 core per broker holding 5,000 replicas",
    )
    parser.add_argument(
        "--poll-interval", type=float, default=0.25, help="seconds between --verify calls once the znode is gone"
    )
    parser.add_argument(
        "--progress-interval", type=float, default=5.0, help="seconds between --verify calls while the znode exists"
    )
    parser.add_argument("--profile", type=Path, help="py-spy the controller, an old and a new broker into DIR")
    parser.add_argument("--timeline", type=Path, help="write (seconds, partitions complete) pairs as JSON")
    parser.add_argument("--state-dir", type=Path, help="keep the cluster's directories here (default: temporary)")
    parser.add_argument("--json", type=Path, help="write the row of issue 18's table here (a JSON list)")
    args = parser.parse_args()
    if args.partitions < 1 or args.topic_size < 1:
        parser.error("--partitions and --topic-size must be positive")
    if args.profile is not None:
        py_spy()
    if args.brokers is not None and args.brokers < REPLICATION_FACTOR:
        parser.error(f"--brokers must be at least {REPLICATION_FACTOR}")

    state = args.state_dir or Path(tempfile.mkdtemp(prefix="bench-reassign-"))
    state.mkdir(parents=True, exist_ok=True)
    started: list[Callable[[], None]] = []
    try:
        run(args, state, started)
    finally:
        stop_started(started)
        if args.state_dir is None:
            shutil.rmtree(state, ignore_errors=True)


if __name__ == "__main__":
    from kafkaops.cluster.local.signals import run_program  # Ctrl-C stops it, even inherited ignored

    run_program(main)
