"""Benchmark: controller elections and failover at scale, against raw ZooKeeper in the same run.

Every scenario runs on a fresh local cluster of 3 broker processes (`LocalCluster`, as `kafkaops cluster
up` starts them), so that each broker has its own interpreter as in a real deployment. Times are taken
from the brokers' own logs (state-change.log, server.out; millisecond timestamps) and from ZooKeeper
watches, so that nothing in the brokers is instrumented or polled.

1. election: a broker leading N partitions (default 10,000, RF 2) is killed (SIGKILL); seconds from
   its `/brokers/ids` znode disappearing (ZooKeeper's session expiry, reported separately) until the
   survivor has logged every one of those partitions' leadership ("Leader ... starts at leader epoch"),
   and the controller's share (until it logged sending the UpdateMetadata that ends the failure's one
   request round). Baseline: the same number of fenced conditional writes pipelined on one raw
   connection, of znodes as big as the state znodes (paths as long, the same bytes; until 2026-11-27 they
   were tiny, which made the ceiling 25-42 % lower: both are printed).
2. controlled shutdown: a broker leading N partitions (each with an in-sync follower) gets SIGTERM;
   seconds from the signal to its exit, every leadership moved first (checked in ZooKeeper).
3. controller failover: with M partitions (default 100,000, RF 2) the controller is killed (SIGKILL);
   seconds from its `/controller` znode disappearing until the new controller logs that it is ready
   (context loaded from ZooKeeper, the start-up request round sent). Baseline: reads of every state znode
   with kazoo's async API and with our pipelined multiRead reader.

Each figure is also a row of issue 18's benchmark table (`bench/goals.py`), printed at the end and, with
`--json PATH`, written there after each scenario (so a later scenario failing keeps the earlier rows).

Usage: .venv/bin/python bench/controller.py [--partitions 10000] [--failover-partitions 100000] [--profile DIR]
                                            [--json PATH]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import goals  # noqa: E402 - after the path it is found on
from bench.table import Row, format_table, write_rows  # noqa: E402
from kafkaops.admin import topics as admin_topics
from kafkaops.cluster.local.cluster import LocalCluster
from kafkaops.cluster.local.processes import alive, raise_open_files_limit
from kafkaops.cluster.local.zookeeper import LocalZooKeeper, free_port
from kafkaops.cluster.zk import znodes
from kafkaops.cluster.zk.client import KafkaZkClient
from kafkaops.cluster.zk.pipelined import PipelinedReader
from kafkaops.cluster.zk.zookeeper_client import Op
from kafkaops.statechange.parse import parse_first_line

if TYPE_CHECKING:
    from kafkaops.cluster.local.profiling import Profiler

TOPIC_SIZE = 1000
# Kafka's default zookeeper.session.timeout.ms: 6 s lost the connections of brokers busy with 100,000 partitions
SESSION_TIMEOUT_MS = 18_000
OVERRIDES = {"auto.leader.rebalance.enable": False, "zookeeper.session.timeout.ms": SESSION_TIMEOUT_MS}
OPEN_FILES = 20_000  # each broker process inherits it: an empty log holds no descriptor, a written one up to 3


def stamp_seconds(line: str) -> float | None:
    """A log line's `[yyyy-MM-dd HH:mm:ss,SSS]` stamp as epoch seconds (the brokers log local time); None
    for a line that starts no entry."""
    timestamp, level, _ = parse_first_line(line)
    if level is None:
        return None
    return datetime.strptime(timestamp, "%Y-%m-%d %H:%M:%S,%f").timestamp()


class LogTail:
    """New lines of a broker's log file as it grows; keeps its descriptor across an hourly rotation."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file = None
        self._partial = ""

    def lines(self) -> Iterator[str]:
        if self._file is None:
            if not self.path.exists():
                return
            self._file = open(self.path, encoding="utf-8", errors="replace")  # noqa: SIM115
        while True:
            chunk = self._file.read(1 << 20)
            if not chunk:
                rotated = self.path.exists() and os.stat(self.path).st_ino != os.fstat(self._file.fileno()).st_ino
                if not rotated:
                    return
                # the writer closes the file before renaming it: what it wrote since our last read is there
                chunk = self._file.read()
                self._file.close()
                self._file = open(self.path, encoding="utf-8", errors="replace")  # noqa: SIM115
                if not chunk:
                    continue
            *complete, self._partial = (self._partial + chunk).split("\n")
            yield from complete

    def skip_to_end(self) -> None:
        for _ in self.lines():
            pass


class PartitionLines:
    """Counts the distinct partitions of a topic prefix named by a broker's state-change.log lines of one
    kind, and the time of the line that completed the count."""

    def __init__(self, tail: LogTail, pattern: str, prefix: str) -> None:
        self.tail = tail
        self.pattern = re.compile(pattern.format(topic=re.escape(prefix) + r"-\d{4}-\d+"))
        self.seen: set[str] = set()
        self.last_at = 0.0
        # open the file now: the broker may roll it on the hour before the first wait, and a tail opened
        # after that would start at the new file and never see the lines of the rolled one
        self.poll()

    def poll(self) -> int:
        for line in self.tail.lines():
            match = self.pattern.search(line)
            if match is not None and match.group(1) not in self.seen:
                self.seen.add(match.group(1))
                self.last_at = stamp_seconds(line) or self.last_at
        return len(self.seen)

    def wait_for(self, count: int, timeout_s: float = 600.0) -> float:
        wait_until(lambda: self.poll() >= count, timeout_s, 0.1)
        return self.last_at


LEADER_STARTS = r"\] Leader ({topic}) starts at leader epoch"
FOLLOWER_STARTS = r"\] Follower ({topic}) starts at leader epoch"


def require_profiler(directory: Path | None) -> None:
    """With --profile, fail at once when py-spy is missing, not after the cluster is built."""
    if directory is not None:
        with contextlib.suppress(ImportError):  # an older tree has no such check
            from kafkaops.cluster.local.profiling import py_spy

            py_spy()


def cpu_seconds(pid: int | None) -> float:
    """User + system CPU seconds a process has used (/proc): less sensitive to a loaded machine than the
    wall time, which other processes' load stretches."""
    if pid is None:
        return 0.0
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_until(condition: Callable[[], bool], timeout_s: float, interval_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError("benchmark condition not reached")
        time.sleep(interval_s)


def topic_names(prefix: str, partitions: int) -> list[str]:
    return [f"{prefix}-{start // TOPIC_SIZE:04d}" for start in range(0, partitions, TOPIC_SIZE)]


def create_topics(zk: KafkaZkClient, prefix: str, partitions: int, replicas: list[list[int]]) -> list[str]:
    """Topics of TOPIC_SIZE partitions; topic i gets the replica list replicas[i % len(replicas)]."""
    names = topic_names(prefix, partitions)
    for index, name in enumerate(names):
        count = min(TOPIC_SIZE, partitions - index * TOPIC_SIZE)
        assignment = replicas[index % len(replicas)]
        admin_topics.create_topic(zk, name, None, None, {p: assignment for p in range(count)}, {})
    return names


def state_paths(topics: list[str], partitions: int) -> list[str]:
    return [znodes.TopicPartitionStateZNode.path(t, p) for t in topics for p in range(TOPIC_SIZE)][:partitions]


def raw_fenced_writes(zk: KafkaZkClient, like: list[str], data: bytes, root: str = "/bench-raw") -> float:
    """Conditional setData multis with the epoch check, pipelined, of as many znodes as `like` holds: the
    ZooKeeper ceiling. Each twin's path under /bench-raw is as long as its model's and holds `data` (a
    state znode's bytes): ZooKeeper's work per write grows with both, so the ceiling is for those znodes
    (which it cannot write itself: a version bump would make the controller's writes lose their race).
    With `data` b'{"leader":1}' and short paths it is the tiny-znode ceiling earlier runs reported."""
    zk.kazoo.ensure_path(root)
    twins = [f"{root}/{i:0{max(len(path) - len(root) - 1, 1)}d}" for i, path in enumerate(like)]
    pending = [zk.kazoo.create_async(twin, b"{}") for twin in twins]
    for request in pending:
        request.get()
    epoch = zk.get_controller_epoch()
    assert epoch is not None
    started = time.monotonic()
    zk.fenced_multi_many([[Op.set(twin, data, 0)] for twin in twins], epoch[1])
    return time.monotonic() - started


def znode_gone(zk: KafkaZkClient, path: str) -> tuple[threading.Event, list[float]]:
    """An event set (with the wall-clock time) when `path` is deleted."""
    gone, at = threading.Event(), []

    def deleted(event: object) -> None:
        at.append(time.time())
        gone.set()

    assert zk.kazoo.exists(path, watch=deleted) is not None
    return gone, at


class Cluster:
    """Three broker processes in a state dir of their own, on a chroot of the bench's ZooKeeper."""

    def __init__(self, zookeeper: LocalZooKeeper, state: Path, name: str) -> None:
        self.connect = f"{zookeeper.connect_string}/{name}"
        with KafkaZkClient(zookeeper.connect_string) as zk:
            zk.kazoo.ensure_path(f"/{name}")
        self.local = LocalCluster(state / name)
        try:
            self.local.up(3, self.connect, OVERRIDES)
        except BaseException:
            with contextlib.suppress(Exception):  # the brokers that did start
                self.down()
            raise

    def controller_id(self) -> int:
        with KafkaZkClient(self.connect) as zk:
            controller = zk.get_controller_id()
        assert controller is not None
        return controller

    def state_change_log(self, broker_id: int) -> LogTail:
        return LogTail(self.local.broker_dir(broker_id) / "logs" / "state-change.log")

    def server_log(self, broker_id: int) -> LogTail:
        return LogTail(self.local.broker_dir(broker_id) / "logs" / "server.out")

    def profile(self, directory: Path | None, scenario: str, names: dict[str, int]) -> Profiler | None:
        """py-spy on these brokers (name -> broker id) into `directory`, when given."""
        if directory is None:
            return None
        from kafkaops.cluster.local.profiling import Profiler  # only here: the bench also runs older trees

        pids = {name: self.local.broker_pid(broker_id) for name, broker_id in names.items()}
        profiler = Profiler(directory / scenario, {n: p for n, p in pids.items() if p is not None}, rate=200)
        time.sleep(1.0)  # attached before the clock starts
        return profiler

    def down(self) -> None:
        for broker_id in self.local.broker_ids():
            self.local.stop_broker(broker_id, hard=True)


def read_states(connect: str, topics: list[str], partitions: int) -> list[dict | None]:  # type: ignore[type-arg]
    with PipelinedReader(connect) as reader:
        found = reader.get_data_many(state_paths(topics, partitions))
    return [json.loads(entry[0]) if entry is not None else None for entry in found]


def leaders(connect: str, topics: list[str], partitions: int) -> set[int]:
    return {state["leader"] if state is not None else -1 for state in read_states(connect, topics, partitions)}


def wait_isrs_full(connect: str, topics: list[str], partitions: int, replicas: int, timeout_s: float) -> None:
    """Until every partition's ISR holds all its replicas: a creation of this size overloads the brokers,
    followers start late and fall out of the ISR, and the measurement must start from a quiet cluster. The
    scenarios check again right before the kill or the signal: on a loaded machine (a profiler attached) an
    ISR can shrink in between, and a partition whose only in-sync replica is killed has no leader to elect (a
    600 s wait), one whose leader shuts down keeps it (a retry 5 s later)."""

    def full() -> bool:
        return all(s is not None and len(s["isr"]) == replicas for s in read_states(connect, topics, partitions))

    wait_until(full, timeout_s, 5.0)


def report_profile(profiler: Profiler | None) -> None:
    if profiler is not None:
        from kafkaops.cluster.local.profiling import summary

        profiler.stop()
        for path in profiler.outputs.values():
            if path.exists():
                print(summary(path), flush=True)


def scenario_election(
    zookeeper: LocalZooKeeper, state: Path, partitions: int, profile: Path | None
) -> tuple[list[Row], float]:
    """The rows, and the raw fenced multi-write's seconds (the controlled shutdown's baseline too)."""
    cluster = Cluster(zookeeper, state, "election")
    try:
        controller = cluster.controller_id()
        victim, survivor = (b for b in (0, 1, 2) if b != controller)
        survivor_log, controller_log = cluster.state_change_log(survivor), cluster.state_change_log(controller)
        with KafkaZkClient(cluster.connect) as zk:
            following = PartitionLines(survivor_log, FOLLOWER_STARTS, "election")
            leading = PartitionLines(cluster.state_change_log(victim), LEADER_STARTS, "election")
            topics = create_topics(zk, "election", partitions, [[victim, survivor]])
            following.wait_for(partitions)
            leading.wait_for(partitions)
            wait_isrs_full(cluster.connect, topics, partitions, 2, 600)
            controller_log.skip_to_end()
            paths = state_paths(topics, partitions)
            tiny = raw_fenced_writes(zk, [f"/n{i}" for i in range(partitions)], b'{"leader":1}', "/bench-tiny")
            baseline = raw_fenced_writes(zk, paths, zk.kazoo.get(paths[0])[0])
            gone, gone_at = znode_gone(zk, znodes.BrokerIdZNode.path(victim))
            profiler = cluster.profile(profile, "election", {"controller": controller, "survivor": survivor})
            wait_isrs_full(cluster.connect, topics, partitions, 2, 600)  # still: see wait_isrs_full
            pids = {b: cluster.local.broker_pid(b) for b in (controller, survivor)}
            cpu_before = {b: cpu_seconds(pid) for b, pid in pids.items()}
            killed_at = time.time()
            cluster.local.stop_broker(victim, hard=True)
            assert gone.wait(SESSION_TIMEOUT_MS / 1000 * 3)
            t0 = gone_at[0]
            t1 = PartitionLines(survivor_log, LEADER_STARTS, "election").wait_for(partitions)
            sent = [stamp_seconds(line) for line in controller_log.lines() if "Sending UpdateMetadata request" in line]
            decided = next(at for at in sent if at is not None and at >= t0 - 0.001)
            cpu = {b: cpu_seconds(pid) - cpu_before[b] for b, pid in pids.items()}
            report_profile(profiler)
        elapsed, controller_s = t1 - t0, decided - t0
        print(
            f"election        {partitions:>7} partitions: {elapsed:6.2f} s from znode gone to all new leaders applied "
            f"({partitions / elapsed:7.0f}/s), of which {controller_s:5.2f} s for the controller to elect, write "
            f"and send; raw fenced multi ceiling {baseline:6.3f} s ({tiny:.3f} s for tiny znodes, as reported "
            f"before 2026-11-27); ratio {controller_s / baseline:4.1f}x "
            f"(session expiry before it: {t0 - killed_at:.2f} s); CPU from the kill until then (idle fetching "
            f"included): controller {cpu[controller]:5.2f} s, survivor {cpu[survivor]:5.2f} s",
            flush=True,
        )
        return goals.election_rows(partitions, elapsed, controller_s, baseline), baseline
    finally:
        cluster.down()


def scenario_controlled_shutdown(
    zookeeper: LocalZooKeeper, state: Path, partitions: int, profile: Path | None, raw_s: float | None
) -> Row:
    cluster = Cluster(zookeeper, state, "shutdown")
    try:
        controller = cluster.controller_id()
        leaving, staying = (b for b in (0, 1, 2) if b != controller)
        with KafkaZkClient(cluster.connect) as zk:
            following = PartitionLines(cluster.state_change_log(staying), FOLLOWER_STARTS, "shutdown")
            leading = PartitionLines(cluster.state_change_log(leaving), LEADER_STARTS, "shutdown")
            topics = create_topics(zk, "shutdown", partitions, [[leaving, staying]])
            following.wait_for(partitions)
            leading.wait_for(partitions)
            wait_isrs_full(cluster.connect, topics, partitions, 2, 600)
        pid = cluster.local.broker_pid(leaving)
        assert pid is not None
        server_log = cluster.server_log(leaving)
        server_log.skip_to_end()
        roles = {"controller": controller, "leaving": leaving, "staying": staying}
        profiler = cluster.profile(profile, "shutdown", roles)
        wait_isrs_full(cluster.connect, topics, partitions, 2, 600)  # still: see wait_isrs_full
        pids = {b: cluster.local.broker_pid(b) for b in (controller, staying)}
        cpu_before = {b: cpu_seconds(pid) for b, pid in pids.items()}
        t0 = time.time()
        os.kill(pid, signal.SIGTERM)
        wait_until(lambda: not alive(pid), 600, 0.005)
        elapsed = time.time() - t0
        cpu = {b: cpu_seconds(pid) - cpu_before[b] for b, pid in pids.items()}
        time.sleep(1.0)  # the staying broker applies its leaderships after the leaving one exits
        report_profile(profiler)
        moved = leaders(cluster.connect, topics, partitions) == {staying}
        succeeded = next(
            (stamp_seconds(line) for line in server_log.lines() if "Controlled shutdown succeeded" in line), None
        )
        handed_over = f"{succeeded - t0:.2f} s" if succeeded is not None else "?"
        print(
            f"controlled shut {partitions:>7} partitions: {elapsed:6.2f} s from SIGTERM to exit "
            f"(leaderships handed over after {handed_over}), every leadership moved first: {moved}; CPU until "
            f"the exit: controller {cpu[controller]:5.2f} s, staying broker {cpu[staying]:5.2f} s",
            flush=True,
        )
        return goals.shutdown_row(partitions, elapsed, raw_s, moved)
    finally:
        cluster.down()


READY = re.compile(r"Controller (\d+) epoch (\d+) ready in ([\d.]+) s: (\d+) brokers, (\d+) topics, (\d+) partitions")


def scenario_failover(zookeeper: LocalZooKeeper, state: Path, partitions: int, profile: Path | None) -> Row:
    cluster = Cluster(zookeeper, state, "failover")
    try:
        controller = cluster.controller_id()
        a, b = (x for x in (0, 1, 2) if x != controller)
        server_logs = {x: cluster.server_log(x) for x in (a, b)}
        with KafkaZkClient(cluster.connect) as zk:
            started = time.monotonic()
            # one tail per count: a tail hands each line to one reader
            led = {x: PartitionLines(cluster.state_change_log(x), LEADER_STARTS, "failover") for x in (a, b)}
            followed = {x: PartitionLines(cluster.state_change_log(x), FOLLOWER_STARTS, "failover") for x in (a, b)}
            topics = create_topics(zk, "failover", partitions, [[a, b], [b, a]])
            half = partitions // 2  # topics alternate their leader between a and b
            wait_until(lambda: all(led[x].poll() >= half and followed[x].poll() >= half for x in (a, b)), 7200, 1.0)
            wait_isrs_full(cluster.connect, topics, partitions, 2, 7200)
            created = time.monotonic() - started
            paths = state_paths(topics, partitions)
            t = time.monotonic()
            zk.get_many(paths)
            kazoo_reads = time.monotonic() - t
            with PipelinedReader(cluster.connect) as reader:
                t = time.monotonic()
                reader.get_data_many(paths)
                raw_reads = time.monotonic() - t
            for tail in server_logs.values():
                tail.skip_to_end()
            profiler = cluster.profile(profile, "failover", {f"broker-{a}": a, f"broker-{b}": b})
            gone, gone_at = znode_gone(zk, znodes.ControllerZNode.path())
            cluster.local.stop_broker(controller, hard=True)
            assert gone.wait(SESSION_TIMEOUT_MS / 1000 * 3)
            t0 = gone_at[0]
            ready: list[tuple[float, re.Match[str]]] = []

            def new_controller_ready() -> bool:
                for tail in server_logs.values():
                    for line in tail.lines():
                        match = READY.search(line)
                        at = stamp_seconds(line)
                        if match is not None and at is not None:
                            ready.append((at, match))
                return bool(ready)

            wait_until(new_controller_ready, 600, 0.05)
            report_profile(profiler)
        at, match = ready[0]
        print(
            f"ctrl failover   {partitions:>7} partitions: {at - t0:6.2f} s from /controller gone to the new controller "
            f"(broker {match.group(1)}, epoch {match.group(2)}, {match.group(6)} partitions) ready, of which "
            f"{float(match.group(3)):.2f} s from its election (created in {created:.0f} s); reading every state "
            f"znode: kazoo async {kazoo_reads:5.2f} s, raw pipelined {raw_reads:5.2f} s",
            flush=True,
        )
        return goals.failover_row(partitions, at - t0, raw_reads)
    finally:
        cluster.down()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--partitions", type=int, default=10_000)
    parser.add_argument("--failover-partitions", type=int, default=100_000)
    parser.add_argument("--skip-failover", action="store_true")
    parser.add_argument("--only-failover", action="store_true")
    parser.add_argument("--profile", type=Path, help="py-spy the brokers of each scenario into DIR")
    parser.add_argument("--state-dir", type=Path, help="keep the brokers' logs here (default: a temporary dir)")
    parser.add_argument("--json", type=Path, help="write the rows of issue 18's table here (a JSON list)")
    args = parser.parse_args()
    require_profiler(args.profile)
    open_files = raise_open_files_limit(OPEN_FILES)
    if open_files < OPEN_FILES:
        print(f"warning: open files limited to {open_files}, {OPEN_FILES} wanted", flush=True)
    with tempfile.TemporaryDirectory() as temporary:
        state = args.state_dir or Path(temporary)
        zookeeper = LocalZooKeeper(state / "zk", free_port(), heap_mb=1024)
        zookeeper.start()
        rows: list[Row] = []

        def add(new: list[Row]) -> None:
            rows.extend(new)
            if args.json:
                write_rows(args.json, rows)

        try:
            if not args.only_failover:
                election, raw_s = scenario_election(zookeeper, state, args.partitions, args.profile)
                add(election)
                add([scenario_controlled_shutdown(zookeeper, state, args.partitions, args.profile, raw_s)])
            if not args.skip_failover:
                add([scenario_failover(zookeeper, state, args.failover_partitions, args.profile)])
        finally:
            zookeeper.stop()
    print(format_table(rows), flush=True)


if __name__ == "__main__":
    from kafkaops.cluster.local.signals import run_program  # Ctrl-C stops it, even inherited ignored

    run_program(main)
