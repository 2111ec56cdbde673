"""`kafkaops replica-verification` against three real brokers: replicas in sync pass `--once`, a follower
whose log was rewritten on disk (valid CRC, different bytes) is caught, the continuous mode prints Kafka's
lines through a broker's outage until it is terminated."""

from __future__ import annotations

import dataclasses
import json
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO

from kafka import KafkaProducer

from kafkaops.admin import topics as admin_topics
from kafkaops.admin.assignment import JavaRandom
from kafkaops.admin.kafka_client import KafkaClient, RawFetchResult
from kafkaops.cluster.local.cluster import LocalCluster
from kafkaops.cluster.local.waiting import wait_for
from kafkaops.cluster.protocol.records import build_batch, iter_batches, iter_records
from kafkaops.cluster.zk.client import KafkaZkClient
from kafkaops.cluster.zk.values import TopicPartition

KAFKAOPS = str(Path(sys.executable).parent / "kafkaops")
TOPIC = "t"
PARTITIONS = 3
RECORDS = 6  # per partition, one batch each
TS = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}"
CHECKPOINT_MS = 200  # the follower's high watermark must be on disk before it is killed


def run(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [KAFKAOPS, "replica-verification", *args], capture_output=True, text=True, timeout=timeout, check=False
    )


def servers(local: LocalCluster) -> str:
    return ",".join(b.endpoint.removeprefix("PLAINTEXT://") for b in local.status().brokers if b.endpoint)


def tps() -> list[TopicPartition]:
    return [TopicPartition(TOPIC, p) for p in range(PARTITIONS)]


def high_watermarks(bootstrap: str, brokers: list[int]) -> dict[tuple[int, TopicPartition], int]:
    """Every replica's own high watermark, as a debug fetch from that broker reports it."""
    found: dict[tuple[int, TopicPartition], int] = {}
    with KafkaClient(bootstrap, request_timeout_ms=5000) as client:
        for broker_id in brokers:
            for tp, result in client.fetch_raw_from_broker(broker_id, dict.fromkeys(tps(), 0)).items():
                found[(broker_id, tp)] = result.high_watermark if isinstance(result, RawFetchResult) else -1
    return found


def replicas_caught_up(bootstrap: str) -> bool:
    try:
        return set(high_watermarks(bootstrap, [0, 1, 2]).values()) == {RECORDS}
    except Exception:  # a broker still starting
        return False


def start_with_records(cluster, zk: KafkaZkClient) -> LocalCluster:  # type: ignore[no-untyped-def]
    """Three brokers, topic t (3 partitions, RF 3) with RECORDS one-record batches in each partition,
    acknowledged by all replicas and below every replica's high watermark."""
    local = cluster(brokers=3, **{"replica.high.watermark.checkpoint.interval.ms": CHECKPOINT_MS})
    admin_topics.create_topic(zk, TOPIC, PARTITIONS, 3, None, {}, rng=JavaRandom(1))
    wait_for(lambda: all(s is not None for s in zk.get_partition_states(tps()).values()))
    bootstrap = local.status().brokers[0].endpoint.removeprefix("PLAINTEXT://")
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", request_timeout_ms=20000)
    try:
        for partition in range(PARTITIONS):
            for i in range(RECORDS):
                producer.send(TOPIC, value=f"value-{partition}-{i}".encode(), partition=partition).get(timeout=30)
    finally:
        producer.close()
    wait_for(lambda: replicas_caught_up(servers(local)), timeout_s=30, interval_s=0.3)
    return local


def test_replicas_in_sync_pass_once(cluster, zk) -> None:  # type: ignore[no-untyped-def]
    local = start_with_records(cluster, zk)
    bootstrap = servers(local)

    text = run("--broker-list", bootstrap, "--topic-white-list", TOPIC, "--time", "-2", "--once")
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    assert re.fullmatch(rf"{TS}: verification process is started\.", lines[0])
    # every lag is 0; Kafka walks t-2, t-1, t-0 and keeps the first of equal lags
    assert re.fullmatch(rf"{TS}: max lag is 0 for partition t-2 at offset {RECORDS} among 3 partitions", lines[1])
    assert len(lines) == 2 and text.stderr == ""

    document = run(
        "--broker-list", bootstrap, "--topic-white-list", TOPIC, "--time", "-2", "--once", "--output", "json"
    )
    assert document.returncode == 0, document.stderr
    summary = json.loads(document.stdout)
    assert summary["in_sync"] is True and summary["offset_mismatch"] is None
    assert summary["max_lag"] == {"lag": 0, "topic": TOPIC, "partition": 2, "offset": RECORDS}
    assert [(p["partition"], p["start_offset"], p["verified_offset"], p["lag"]) for p in summary["partitions"]] == [
        (p, 0, RECORDS, 0) for p in range(PARTITIONS)
    ]
    assert all(p["high_watermarks"] == {"0": RECORDS, "1": RECORDS, "2": RECORDS} for p in summary["partitions"])

    # from the latest offsets there is nothing to verify: done at once, lag 0
    latest = run("--broker-list", bootstrap, "--topic-white-list", TOPIC, "--once", "--output", "json")
    assert latest.returncode == 0, latest.stderr
    assert {p["verified_offset"] for p in json.loads(latest.stdout)["partitions"]} == {RECORDS}

    # a timestamp: the first offset at or after it; after the last record, the end
    for timestamp, start in ((0, 0), (int(time.time() * 1000) + 3_600_000, RECORDS)):
        timed = run(
            "--broker-list",
            bootstrap,
            "--topic-white-list",
            TOPIC,
            "--time",
            str(timestamp),
            "--once",
            "--output",
            "json",
        )
        assert timed.returncode == 0, timed.stderr
        partitions = json.loads(timed.stdout)["partitions"]
        assert {(p["start_offset"], p["verified_offset"]) for p in partitions} == {(start, RECORDS)}

    # a white list that selects nothing: Kafka's text, exit 1
    nothing = run("--broker-list", bootstrap, "--topic-white-list", "nope", "--once")
    assert (nothing.returncode, nothing.stdout) == (1, "")
    assert nothing.stderr == (
        "No topics found. [topic-white-list] if specified, is either filtering out all topics or there is no topic.\n"
    )


def rewrite_first_batch(segment: Path) -> int:
    """Give the first batch of `segment` other record bytes of the same size, with a valid CRC and the same
    offsets, leader epoch and producer fields, so the broker's recovery keeps it. Returns its last offset."""
    data = bytearray(segment.read_bytes())
    batch = next(iter_batches(data, allow_truncated_tail=True))
    header = batch.header
    records = list(iter_records(batch))
    assert records[0].value is not None
    records[0] = dataclasses.replace(records[0], value=records[0].value.upper())
    rewritten = build_batch(
        records,
        partition_leader_epoch=header.partition_leader_epoch,
        producer_id=header.producer_id,
        producer_epoch=header.producer_epoch,
        base_sequence=header.base_sequence,
    )
    assert len(rewritten) == header.size and rewritten != bytes(batch.data)
    data[: header.size] = rewritten
    segment.write_bytes(bytes(data))
    return header.last_offset


def test_a_follower_whose_log_was_rewritten_is_detected(cluster, zk) -> None:  # type: ignore[no-untyped-def]
    local = start_with_records(cluster, zk)
    tp = TopicPartition(TOPIC, 0)
    state = zk.get_partition_states([tp])[tp]
    assert state is not None
    leader = state.leader_and_isr.leader
    follower = next(b for b in (0, 1, 2) if b != leader)
    time.sleep(CHECKPOINT_MS * 3 / 1000)  # the follower's high watermark checkpoint covers every record
    local.stop_broker(follower, hard=True)

    # a replica's broker down at the start: a clear error, exit 1
    bootstrap = servers(local)

    def follower_gone() -> bool:
        with KafkaClient(bootstrap, request_timeout_ms=5000) as client:
            return follower not in client.metadata([]).brokers

    wait_for(follower_gone, timeout_s=30, interval_s=0.3)
    down = run("--broker-list", bootstrap, "--topic-white-list", TOPIC, "--time", "-2", "--once")
    assert (down.returncode, down.stdout) == (1, "")
    assert down.stderr.startswith(f"Cannot verify replicas on brokers that are not available: broker {follower} ")

    segment = local.broker_dir(follower) / "data" / f"{TOPIC}-0" / "00000000000000000000.log"
    offset = rewrite_first_batch(segment)
    local.start_broker(follower)
    wait_for(lambda: replicas_caught_up(servers(local)), timeout_s=60, interval_s=0.3)

    result = run("--broker-list", servers(local), "--topic-white-list", TOPIC, "--time", "-2", "--once")
    assert result.returncode == 1, result.stderr
    lines = result.stdout.splitlines()
    assert re.fullmatch(rf"{TS}: verification process is started\.", lines[0])
    mismatches = [line for line in lines if "unmatched checksum" in line]
    pattern = rf"{TS}: partition t-0 has unmatched checksum at offset {offset}; replica (\d)'s checksum (\d+); replica (\d)'s checksum (\d+)"
    found = [re.fullmatch(pattern, line) for line in mismatches]
    assert mismatches and all(found), lines
    # the replicas are walked 0, 1, 2: replica a is the first of them, the rewritten follower is in every line
    for match in found:
        assert match is not None
        a, b = int(match[1]), int(match[3])
        assert a < b and follower in (a, b) and match[2] != match[4]
    assert len(mismatches) == (2 if follower == 0 else 1)
    assert re.fullmatch(rf"{TS}: max lag is 0 for partition t-2 at offset {RECORDS} among 3 partitions", lines[-1])

    summary = json.loads(
        run(
            "--broker-list", servers(local), "--topic-white-list", TOPIC, "--time", "-2", "--once", "--output", "json"
        ).stdout
    )
    assert summary["in_sync"] is False
    assert [(p["partition"], [m["offset"] for m in p["checksum_mismatches"]]) for p in summary["partitions"]] == [
        (0, [offset] * len(mismatches)),
        (1, []),
        (2, []),
    ]


class _Lines:
    """A pipe's lines as they come, read on a thread, so the test waits for what the tool printed (on a loaded
    machine its start, a failed fetch or a recovery can take seconds) instead of sleeping and hoping."""

    def __init__(self, pipe: IO[str]) -> None:
        self.lines: list[str] = []
        self._thread = threading.Thread(target=lambda: self.lines.extend(iter(pipe.readline, "")), daemon=True)
        self._thread.start()

    def count(self, pattern: str) -> int:
        return sum(1 for line in list(self.lines) if re.search(pattern, line))

    def text(self) -> str:
        self._thread.join(30)
        return "".join(self.lines)


def test_the_continuous_mode_reports_the_max_lag_until_terminated(cluster, zk) -> None:  # type: ignore[no-untyped-def]
    local = start_with_records(cluster, zk)
    process = subprocess.Popen(
        [
            KAFKAOPS,
            "replica-verification",
            "--broker-list",
            servers(local),
            "--topic-white-list",
            TOPIC,
            "--report-interval-ms",
            "300",
            "--max-wait-ms",
            "100",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None and process.stderr is not None
    stdout, stderr = _Lines(process.stdout), _Lines(process.stderr)
    try:
        wait_for(lambda: stdout.count("max lag is") >= 2, timeout_s=60, what="two reports before the outage")
        local.stop_broker(2, hard=True)  # its fetcher fails: noted once on stderr, verification waits for it
        wait_for(lambda: stderr.count("from broker 2 failed") >= 1, timeout_s=60, what="the failed fetch noted")
        local.start_broker(2)
        wait_for(lambda: replicas_caught_up(servers(local)), timeout_s=60, interval_s=0.3)
        wait_for(lambda: stderr.count("from broker 2 works again") >= 1, timeout_s=60, what="the recovery noted")
        reports = stdout.count("max lag is")
        wait_for(lambda: stdout.count("max lag is") >= reports + 2, timeout_s=60, what="reports after the outage")
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
    out, err = stdout.text(), stderr.text()
    assert process.returncode == 143, err  # as Kafka's JVM on SIGTERM
    notes = err.splitlines()
    failed = rf"{TS}: fetching (.+ )?from broker 2 failed \((.*)\); these replicas are not verified until they answer"
    recovered = rf"{TS}: fetching (.+ )?from broker 2 works again"
    assert re.fullmatch(failed, notes[0]) and "NETWORK_EXCEPTION" in notes[0], notes
    assert re.fullmatch(rf"{TS}: fetching from broker 2 works again", notes[1]), notes
    # a restarted broker may answer UNKNOWN_TOPIC_OR_PARTITION until the controller's LeaderAndIsr reaches it
    assert all(re.fullmatch(failed, n) or re.fullmatch(recovered, n) for n in notes), notes
    assert len([n for n in notes if "failed" in n]) == len([n for n in notes if "works again" in n]), notes
    lines = out.splitlines()
    assert re.fullmatch(rf"{TS}: verification process is started\.", lines[0])
    reports = lines[1:]
    assert len(reports) >= 3, lines
    assert all(
        re.fullmatch(rf"{TS}: max lag is 0 for partition t-2 at offset {RECORDS} among 3 partitions", line)
        for line in reports
    ), lines
