"""The console tools against real brokers: `kafkaops console-producer`, `console-consumer` and
`producer-perf-test` run as scripts run them (the installed executable, stdin piped), and a produce that
outlives the death of its partition's leader."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from kafkaops.admin import topics as admin_topics
from kafkaops.admin.assignment import JavaRandom
from kafkaops.admin.kafka_client import KafkaClient, partition_for_key
from kafkaops.cluster.local.cluster import LocalCluster
from kafkaops.cluster.local.waiting import wait_for
from kafkaops.cluster.zk.client import KafkaZkClient
from kafkaops.cluster.zk.values import TopicPartition

KAFKAOPS = str(Path(sys.executable).parent / "kafkaops")


def run(*args: str, stdin: str = "", timeout: float = 90) -> subprocess.CompletedProcess[str]:
    return subprocess.run([KAFKAOPS, *args], input=stdin, capture_output=True, text=True, timeout=timeout, check=False)


def bootstrap_servers(local: LocalCluster) -> str:
    """Every broker's address, so the tools still find the cluster when one broker is down."""
    return ",".join(b.endpoint.removeprefix("PLAINTEXT://") for b in local.status().brokers if b.endpoint)


def create_topic(zk: KafkaZkClient, servers: str, topic: str, partitions: int, replication_factor: int) -> None:
    """Create the topic and wait until a broker's metadata shows a leader for each partition."""
    admin_topics.create_topic(zk, topic, partitions, replication_factor, None, {}, rng=JavaRandom(1))

    def led() -> bool:
        with KafkaClient(servers, request_timeout_ms=5000) as client:
            info = client.metadata([topic]).topics.get(topic)
            return (
                info is not None and len(info.partitions) == partitions and all(p.leader >= 0 for p in info.partitions)
            )

    wait_for(led, timeout_s=30, interval_s=0.3)


def consume(servers: str, topic: str, *args: str) -> subprocess.CompletedProcess[str]:
    return run("console-consumer", "--bootstrap-server", servers, "--topic", topic, "--timeout-ms", "20000", *args)


def test_console_producer_and_consumer(cluster, zk):
    local = cluster(brokers=3)
    servers = bootstrap_servers(local)
    create_topic(zk, servers, "lines", 3, 3)

    # keys parsed with a separator, into one partition, acknowledged by every in-sync replica
    produced = run(
        "console-producer",
        "--bootstrap-server",
        servers,
        "--topic",
        "lines",
        "--partition",
        "1",
        "--acks",
        "all",
        "--property",
        "parse.key=true",
        "--property",
        "key.separator=:",
        stdin="k1:v1\nk2:v2\nk3:v3\n",
    )
    assert (produced.returncode, produced.stdout, produced.stderr) == (0, "", "")

    consumed = consume(
        servers,
        "lines",
        "--partition",
        "1",
        "--from-beginning",
        "--max-messages",
        "3",
        "--property",
        "print.key=true",
        "print.offset=true",  # several settings after one --property
    )
    assert consumed.returncode == 0, consumed.stderr
    assert consumed.stdout == "Offset:0\tk1\tv1\nOffset:1\tk2\tv2\nOffset:2\tk3\tv3\n"
    assert consumed.stderr == "Processed a total of 3 messages\n"

    # an absolute offset; values only, as Kafka's default formatter prints them
    from_offset = consume(servers, "lines", "--partition", "1", "--offset", "1", "--max-messages", "2")
    assert (from_offset.returncode, from_offset.stdout) == (0, "v2\nv3\n")

    # headers, keys and a null value, as Kafka 3.2's reader parses them, printed back by the formatter
    with_headers = run(
        "console-producer",
        "--bootstrap-server",
        servers,
        "--topic",
        "lines",
        "--partition",
        "2",
        "--property",
        "parse.headers=true",
        "parse.key=true",
        "null.marker=<null>",
        stdin="h1:x,h2:y\tkey\t<null>\n",
    )
    assert with_headers.returncode == 0, with_headers.stderr
    headed = consume(
        servers,
        "lines",
        "--partition",
        "2",
        "--offset",
        "earliest",
        "--max-messages",
        "1",
        "--property",
        "print.headers=true",
        "print.key=true",
        "print.timestamp=true",
        "null.literal=NULL",
    )
    assert headed.returncode == 0, headed.stderr
    assert re.fullmatch(r"CreateTime:\d+\th1:x,h2:y\tkey\tNULL\n", headed.stdout), headed.stdout

    # without --partition: keyed records land where Kafka's partitioner puts them; the consumer reads them all
    keys = [f"key-{i}" for i in range(30)]
    spread = run(
        "console-producer",
        "--bootstrap-server",
        servers,
        "--topic",
        "lines",
        "--property",
        "parse.key=true",
        stdin="".join(f"{k}\tvalue-{k}\n" for k in keys),
    )
    assert spread.returncode == 0, spread.stderr
    everything = consume(
        servers,
        "lines",
        "--from-beginning",
        "--max-messages",
        "34",
        "--property",
        "print.partition=true",
        "--property",
        "print.key=true",
    )
    assert everything.returncode == 0, everything.stderr
    rows = [line.split("\t") for line in everything.stdout.splitlines()]
    assert len(rows) == 34
    placed = {key: int(partition.removeprefix("Partition:")) for partition, key, _ in rows if key.startswith("key-")}
    assert placed == {k: partition_for_key(k.encode(), 3) for k in keys}
    assert sorted(value for _, _, value in rows) == sorted([f"value-{k}" for k in keys] + ["v1", "v2", "v3", "null"])

    # --timeout-ms ends a consumer that has read everything, as Kafka's does (exit 0, the count on stderr)
    idle = run(
        "console-consumer",
        "--bootstrap-server",
        servers,
        "--topic",
        "lines",
        "--partition",
        "1",
        "--from-beginning",
        "--timeout-ms",
        "1500",
    )
    assert idle.returncode == 0
    assert idle.stdout == "v1\nv2\nv3\n" + "".join(
        f"value-{k}\n" for k in keys if partition_for_key(k.encode(), 3) == 1
    )
    assert "ERROR Error processing message, terminating consumer process:" in idle.stderr
    assert "org.apache.kafka.common.errors.TimeoutException" in idle.stderr
    assert idle.stderr.endswith(f"Processed a total of {len(idle.stdout.splitlines())} messages\n")

    # a topic that does not exist: Kafka's text, exit 1, no traceback
    missing = run(
        "console-producer", "--bootstrap-server", servers, "--topic", "nosuchtopic", "--partition", "0", stdin="x\n"
    )
    assert missing.returncode == 1
    assert "UNKNOWN_TOPIC_OR_PARTITION" in missing.stderr and "Traceback" not in missing.stderr

    # producer-perf-test prints Kafka's summary line, and every record is in the log
    create_topic(zk, servers, "perf", 2, 2)
    perf = run(
        "producer-perf-test",
        "--topic",
        "perf",
        "--num-records",
        "500",
        "--record-size",
        "100",
        "--throughput",
        "-1",
        "--producer-props",
        f"bootstrap.servers={servers}",
        "acks=all",
    )
    assert perf.returncode == 0, perf.stderr
    assert re.fullmatch(
        r"500 records sent, \d+\.\d{6} records/sec \(\d+\.\d\d MB/sec\), \d+\.\d\d ms avg latency, "
        r"\d+\.\d\d ms max latency, \d+ ms 50th, \d+ ms 95th, \d+ ms 99th, \d+ ms 99\.9th\.",
        perf.stdout.splitlines()[-1],
    ), perf.stdout
    with KafkaClient(servers) as client:
        assert sum(client.list_offsets("perf", p, -1).offset for p in range(2)) == 500


def test_produce_after_the_leader_dies(cluster, zk):
    local = cluster(brokers=3)
    servers = bootstrap_servers(local)
    create_topic(zk, servers, "failover", 1, 3)

    def produce(lines: str) -> subprocess.CompletedProcess[str]:
        return run(
            "console-producer",
            "--bootstrap-server",
            servers,
            "--topic",
            "failover",
            "--acks",
            "all",
            "--request-timeout-ms",
            "5000",
            stdin=lines,
        )

    first = produce("a\nb\n")
    assert (first.returncode, first.stderr) == (0, "")
    tp = TopicPartition("failover", 0)
    old_leader = zk.get_partition_states([tp])[tp].leader_and_isr.leader
    local.stop_broker(old_leader, hard=True)

    second = produce("c\nd\n")  # the cached leader is dead: reconnect, refresh metadata, find the new one
    assert (second.returncode, second.stderr) == (0, "")
    new_leader = zk.get_partition_states([tp])[tp].leader_and_isr.leader
    assert new_leader not in (old_leader, -1)

    consumed = consume(servers, "failover", "--from-beginning", "--max-messages", "4")
    assert (consumed.returncode, consumed.stdout) == (0, "a\nb\nc\nd\n"), consumed.stderr
    assert consumed.stderr == "Processed a total of 4 messages\n"
