"""`kafkaops dump-log` over segments a real broker process wrote for real clients: kafka-python's idempotent
producer (gzip, keys, headers) and confluent-kafka (snappy, lz4; zstd, whose records cannot be read here):
every record comes back in the lines, the indexes agree with the log, the sanity checks pass."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from kafkaops.admin import topics as admin_topics
from kafkaops.admin.assignment import JavaRandom
from tests.cluster.clients_util import (
    Rec,
    bootstrap_of,
    confluent_produce,
    kafka_python_produce,
    log_dir,
    make_records,
    wait_partitions,
)

RECORD_LINE = re.compile(
    r"\| offset: (?P<offset>\d+) isValid: true crc: null keySize: (?P<key_size>-?\d+) valueSize: (?P<value_size>-?\d+) "
    r"CreateTime: \d+ baseOffset: \d+ lastOffset: \d+ baseSequence: (?P<base_sequence>-?\d+) "
    r"lastSequence: -?\d+ producerEpoch: -?\d+ partitionLeaderEpoch: 0 batchSize: \d+ magic: 2 "
    r"compressType: (?P<codec>\w+) position: \d+ sequence: (?P<sequence>-?\d+) headerKeys: \[(?P<headers>[^\]]*)\]"
    r"(?: key: (?P<key>\S+))? payload: (?P<value>\S+)$"
)
BATCH_LINE = re.compile(
    r"baseOffset: \d+ lastOffset: \d+ count: \d+ baseSequence: -?\d+ lastSequence: -?\d+ producerId: -?\d+ "
    r"producerEpoch: -?\d+ partitionLeaderEpoch: 0 isTransactional: false isControl: false position: \d+ "
    r"CreateTime: \d+ size: \d+ magic: 2 compresscodec: (?P<codec>\w+) crc: \d+ isvalid: true$"
)


def dump_log(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kafkaops.cli", "dump-log", *args], capture_output=True, text=True, check=False
    )


def test_dump_log_reads_what_the_broker_wrote(cluster, zk) -> None:  # type: ignore[no-untyped-def]
    local = cluster(brokers=1)
    admin_topics.create_topic(zk, "d", 1, 1, None, {"index.interval.bytes": "200"}, rng=JavaRandom(1))
    wait_partitions(zk, "d", 1, isr_size=1)
    bootstrap = bootstrap_of(local)
    gzipped = make_records(0, 200, "gz", value_bytes=60)
    kafka_python_produce(bootstrap, "d", gzipped, codec="gzip", linger_ms=20, batch_size=1500).raise_errors(
        "kafka-python"
    )
    compressed = {codec: make_records(0, 100, codec, value_bytes=150) for codec in ("snappy", "lz4")}
    for codec, records in compressed.items():
        confluent_produce(bootstrap, "d", records, codec=codec).raise_errors(f"confluent {codec}")
    zstd = [Rec(0, None, f"zstd-{i}".encode()) for i in range(20)]
    confluent_produce(bootstrap, "d", zstd, codec="zstd").raise_errors("confluent zstd")

    directory = log_dir(local, 0, "d", 0)
    segment, index, time_index = (
        directory / f"00000000000000000000{suffix}" for suffix in (".log", ".index", ".timeindex")
    )
    result = dump_log("--files", ",".join(map(str, (segment, index, time_index))), "--print-data-log")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[:2] == [f"Dumping {segment}", "Starting offset: 0"]

    batches = [BATCH_LINE.match(line) for line in lines if line.startswith("baseOffset: ")]
    assert all(batches), [line for line in lines if line.startswith("baseOffset: ") and not BATCH_LINE.match(line)]
    assert {m["codec"] for m in batches if m} == {"gzip", "snappy", "lz4", "zstd"}
    records = [RECORD_LINE.match(line) for line in lines if line.startswith("| ")]
    assert all(records), next(line for line in lines if line.startswith("| ") and not RECORD_LINE.match(line))
    got = [(m["key"], m["value"], m["headers"], m["sequence"]) for m in records if m]
    sent = [(r, str(i)) for i, r in enumerate(gzipped)] + [(r, "-1") for c in compressed.values() for r in c]
    assert got == [(r.key.decode(), r.value.decode(), "n,tag", seq) for r, seq in sent if r.key and r.value]
    assert [int(m["offset"]) for m in records if m] == list(range(400))
    # snappy and lz4 (librdkafka's framings) decompress here; zstd does not: one warning per batch, no finding
    zstd_batches = sum(1 for m in batches if m and m["codec"] == "zstd")
    warnings = result.stderr.splitlines()
    assert len(warnings) == zstd_batches and all("zstd is not supported" in w for w in warnings)

    index_lines = lines[lines.index(f"Dumping {index}") + 1 : lines.index(f"Dumping {time_index}")]
    assert len(index_lines) >= 5 and all(re.fullmatch(r"offset: \d+ position: \d+", line) for line in index_lines)
    time_lines = lines[lines.index(f"Dumping {time_index}") + 1 :]
    assert time_lines and all(re.fullmatch(r"timestamp: \d+ offset: \d+", line) for line in time_lines)

    verified = dump_log("--files", f"{index},{time_index}", "--verify-index-only")
    assert (verified.returncode, verified.stdout, verified.stderr) == (
        0,
        f"Dumping {index}\nDumping {time_index}\n",
        "",
    )
    sane = dump_log("--files", f"{index},{time_index}", "--index-sanity-check")
    assert sane.stdout.splitlines() == [
        f"Dumping {index}",
        f"{index} passed sanity check.",
        f"Dumping {time_index}",
        f"{time_index} passed sanity check.",
    ]
    assert Path(segment).stat().st_size > 0
