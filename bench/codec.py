"""Benchmark: the wire codec and the record-batch header walk, compiled (mypyc, `setup_codec_compiled.py`) against
the pure-Python modules, both measured in the same run (each in its own process; the pure one with
KAFKAOPS_PURE_PYTHON=1).

Figures are the least CPU time of --repeat calls (the machine is shared; the codec is single-threaded), with
the cyclic collector paused during each call as the controller and the brokers pause it around such work
(`--gc` leaves it on: decoding 10,000 partitions allocates enough containers to trigger it many times).

Scenarios (each one encode and one decode, or one walk):

    LeaderAndIsr v3      10,000 partitions in 100 topics, RF 3 (what the controller sends on failover)
    UpdateMetadata v7    10,000 partitions in 100 topics, RF 3, 3 live brokers (flexible, topic ids)
    Fetch response v11   100 partitions of one topic, 16 KiB of records each (a consumer's fetch)
    Produce request v8   100 partitions of one topic, 16 KiB of records each
    header walk          iter_batches over 100 MiB of 1 KiB batches without the CRC (log recovery,
                         appends and reads walk headers like this), then the same with the CRC

Usage: .venv/bin/python bench/codec.py [--repeat 5] [--walk-mb 100]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from typing import Any

from kafkaops.cluster.common.compiled import PURE_PYTHON_VARIABLE

PARTITIONS = 10_000
TOPICS = 100
MIB = 1024 * 1024


def best_of(repeat: int, run: Callable[[], object], collect: bool) -> float:
    """The least CPU time of `repeat` calls (CPU time: the machine is shared), the collector paused during
    each unless `collect` (the controller and the brokers pause it around such work)."""
    times = []
    for _ in range(repeat):
        if not collect:
            gc.disable()
        started = time.process_time()
        run()
        times.append(time.process_time() - started)
        gc.enable()
    return min(times)


def partition_state(p: int, **extra: Any) -> dict[str, Any]:
    """One partition's state as both controller requests carry it (3 replicas, all in sync), plus `extra`."""
    replicas = [p % 3, (p + 1) % 3, (p + 2) % 3]
    return {
        "partition_index": p,
        "controller_epoch": 7,
        "leader": p % 3,
        "leader_epoch": 12,
        "isr": replicas,
        "zk_version": 12,
        "replicas": replicas,
        **extra,
    }


def topic_states(**extra: Any) -> list[dict[str, Any]]:
    per_topic = PARTITIONS // TOPICS
    return [
        {
            "topic_name": f"topic-{t:04d}",
            "topic_id": uuid.UUID(int=t + 1),
            "partition_states": [partition_state(p, **extra) for p in range(per_topic)],
        }
        for t in range(TOPICS)
    ]


def leader_and_isr_body() -> dict[str, Any]:
    return {
        "controller_id": 1,
        "controller_epoch": 7,
        "broker_epoch": 4242,
        "type": 0,
        "topic_states": topic_states(adding_replicas=[], removing_replicas=[], is_new=False),
        "live_leaders": [{"broker_id": b, "host_name": "127.0.0.1", "port": 9092 + b} for b in range(3)],
    }


def update_metadata_body() -> dict[str, Any]:
    return {
        "controller_id": 1,
        "controller_epoch": 7,
        "broker_epoch": 4242,
        "topic_states": topic_states(offline_replicas=[]),
        "live_brokers": [
            {
                "id": b,
                "endpoints": [{"port": 9092 + b, "host": "127.0.0.1", "listener": "PLAINTEXT", "security_protocol": 0}],
                "rack": None,
            }
            for b in range(3)
        ],
    }


def records_of(size: int) -> bytes:
    from kafkaops.cluster.protocol.records import Record, build_batch

    batch = build_batch([Record(i, 1_700_000_000_000, None, b"x" * 1000) for i in range(16)])
    return batch * max(1, size // len(batch))


def fetch_response_body() -> dict[str, Any]:
    records = records_of(16 * 1024)
    return {
        "throttle_time_ms": 0,
        "error_code": 0,
        "session_id": 17,
        "responses": [
            {
                "topic": "bench",
                "partition_responses": [
                    {
                        "partition": p,
                        "error_code": 0,
                        "high_watermark": 1_000_000,
                        "last_stable_offset": 1_000_000,
                        "log_start_offset": 0,
                        "aborted_transactions": None,
                        "preferred_read_replica": -1,
                        "record_set": records,
                    }
                    for p in range(100)
                ],
            }
        ],
    }


def produce_body() -> dict[str, Any]:
    records = records_of(16 * 1024)
    return {
        "transactional_id": None,
        "acks": -1,
        "timeout_ms": 30_000,
        "topic_data": [{"name": "bench", "partition_data": [{"index": p, "records": records} for p in range(100)]}],
    }


def measure(repeat: int, walk_mb: int, collect: bool) -> dict[str, Any]:
    """This process's figures (seconds per round trip, MiB/s for the walks) and which codec it ran."""
    from kafkaops.cluster import protocol
    from kafkaops.cluster.protocol.records import Record, build_batch, iter_batches
    from kafkaops.cluster.protocol.schemas import REQUESTS, RESPONSES, ApiKey

    figures: dict[str, float] = {}
    for name, message, version, body in [
        ("LeaderAndIsr v3, 10,000 partitions", REQUESTS[ApiKey.LEADER_AND_ISR], 3, leader_and_isr_body()),
        ("UpdateMetadata v7, 10,000 partitions", REQUESTS[ApiKey.UPDATE_METADATA], 7, update_metadata_body()),
        ("Fetch response v11, 100 partitions", RESPONSES[ApiKey.FETCH], 11, fetch_response_body()),
        ("Produce request v8, 100 partitions", REQUESTS[ApiKey.PRODUCE], 8, produce_body()),
    ]:
        data = message.encode(body, version)
        figures[f"{name}: encode"] = best_of(repeat, lambda m=message, b=body, v=version: m.encode(b, v), collect)
        figures[f"{name}: decode"] = best_of(repeat, lambda m=message, d=data, v=version: m.decode(d, v), collect)

    batch = build_batch([Record(0, 1_700_000_000_000, None, b"x" * 950)])
    data = batch * (walk_mb * MIB // len(batch))

    def walk(verify_crc: bool) -> int:
        return sum(b.header.records_count for b in iter_batches(data, verify_crc=verify_crc))

    mib = len(data) / MIB
    figures["header walk, 100 MiB of 1 KiB batches (MiB/s)"] = mib / best_of(repeat, lambda: walk(False), collect)
    with_crc = best_of(repeat, lambda: walk(True), collect)
    figures["batch walk with CRC, 100 MiB of 1 KiB batches (MiB/s)"] = mib / with_crc
    return {"compiled": protocol.compiled_modules(), "figures": figures}


def child(pure: bool, repeat: int, walk_mb: int, collect: bool) -> dict[str, Any]:
    env = dict(os.environ)
    env.pop(PURE_PYTHON_VARIABLE, None)
    if pure:
        env[PURE_PYTHON_VARIABLE] = "1"
    argv = [sys.executable, __file__, "--child", "--repeat", str(repeat), "--walk-mb", str(walk_mb)]
    argv += ["--gc"] if collect else []
    out = subprocess.run(argv, env=env, check=True, capture_output=True, text=True).stdout
    result: dict[str, Any] = json.loads(out)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--walk-mb", type=int, default=100)
    parser.add_argument("--gc", action="store_true", help="leave the cyclic collector on while measuring")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.repeat, args.walk_mb, args.gc)))
        return
    fast = child(False, args.repeat, args.walk_mb, args.gc)
    pure = child(True, args.repeat, args.walk_mb, args.gc)
    print(f"compiled modules: {', '.join(fast['compiled']) or 'none (build with setup_codec_compiled.py)'}")
    print(f"{'scenario':<56} {'compiled':>12} {'pure':>12} {'speed-up':>9}")
    for name, figure in fast["figures"].items():
        base = pure["figures"][name]
        rate = name.endswith("(MiB/s)")
        ratio = figure / base if rate else base / figure
        shown = [f"{x:12.1f}" if rate else f"{x * 1000:10.1f}ms" for x in (figure, base)]
        print(f"{name:<56} {shown[0]} {shown[1]} {ratio:8.2f}x")


if __name__ == "__main__":
    main()
