"""`kafkaops get-offsets` against real broker processes, after Kafka 3.0's GetOffsetShellTest: topic1..topic4
with i partitions and i records in each, the offsets topic with 4 partitions; every filter option, --time
(latest, earliest, a timestamp, one after the last record), a partition without a leader, the errors."""

from __future__ import annotations

import subprocess
import sys

from kafkaops.admin import topics as admin_topics
from kafkaops.admin.assignment import JavaRandom
from kafkaops.cluster.local.waiting import wait_for
from tests.cluster.clients_util import Rec, all_bootstraps, kafka_python_produce, partition_states, wait_partitions

BASE_TIME = 1_600_000_000_000


def get_offsets(bootstrap: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kafkaops.cli", "get-offsets", "--bootstrap-server", bootstrap, *args],
        capture_output=True,
        text=True,
        check=False,
    )


def lines(bootstrap: str, *args: str) -> list[str]:
    result = get_offsets(bootstrap, *args)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout.splitlines()


def expected(i: int, offset: int | str) -> list[str]:
    return [f"topic{i}:{p}:{offset}" for p in range(i)]


def test_get_offsets_against_brokers(cluster, zk) -> None:  # type: ignore[no-untyped-def]
    local = cluster(brokers=2)
    for i in range(1, 5):
        admin_topics.create_topic(zk, f"topic{i}", None, None, {p: [p % 2] for p in range(i)}, {}, rng=JavaRandom(1))
    admin_topics.create_topic(zk, "__consumer_offsets", 4, 1, None, {}, rng=JavaRandom(1))
    admin_topics.create_topic(zk, "solo", None, None, {0: [1]}, {})
    for i in range(1, 5):
        wait_partitions(zk, f"topic{i}", i, isr_size=1)
    wait_partitions(zk, "__consumer_offsets", 4, isr_size=1)
    wait_partitions(zk, "solo", 1, isr_size=1)
    bootstrap = all_bootstraps(local)
    for i in range(1, 5):
        records = [Rec(n % i, None, f"val{n}".encode(), timestamp=BASE_TIME + n) for n in range(i * i)]
        kafka_python_produce(bootstrap, f"topic{i}", records).raise_errors(f"topic{i}")

    topics = [line for i in range(1, 5) for line in expected(i, i)]
    internal = [f"__consumer_offsets:{p}:0" for p in range(4)]
    assert lines(bootstrap) == [*internal, "solo:0:0", *topics]
    assert lines(bootstrap, "--exclude-internal-topics") == ["solo:0:0", *topics]
    for i in range(1, 5):
        assert lines(bootstrap, "--topic", f"topic{i}") == expected(i, i)
    assert lines(bootstrap, "--topic", "topic.*") == topics
    assert lines(bootstrap, "--topic", "topic.*", "--partitions", "0,1") == [
        line for line in topics if line.split(":")[1] in ("0", "1")
    ]
    assert lines(bootstrap, "--topic-partitions", "topic1:0,topic2:1,topic(3|4):2,__.*:3") == [
        "__consumer_offsets:3:0",
        "topic1:0:1",
        "topic2:1:2",
        "topic3:2:3",
        "topic4:2:4",
    ]
    assert lines(
        bootstrap, "--topic-partitions", "topic1:0,topic2:1,topic(3|4):2,__.*:3", "--exclude-internal-topics"
    ) == [
        "topic1:0:1",
        "topic2:1:2",
        "topic3:2:3",
        "topic4:2:4",
    ]
    assert lines(bootstrap, "--topic-partitions", "topic4:1-3", "--time", "earliest") == ["topic4:1:0", "topic4:2:0"]
    # topic4's partition p holds records n = p, p+4, p+8, p+12 at BASE_TIME + n, offsets 0..3
    assert lines(bootstrap, "--topic", "topic4", "--time", str(BASE_TIME + 6)) == [
        "topic4:0:2",
        "topic4:1:2",
        "topic4:2:1",
        "topic4:3:1",
    ]
    assert lines(bootstrap, "--topic", "topic4", "--time", str(BASE_TIME + 100)) == expected(4, "")

    for args in (
        ("--topic", "some_nonexistent_topic"),
        ("--topic", "some_nonexistent_topic:*"),
        ("--topic-partitions", "__consumer_offsets", "--exclude-internal-topics"),
    ):
        result = get_offsets(bootstrap, *args)
        assert (result.returncode, result.stdout) == (
            1,
            "Error occurred: Could not match any topic-partitions with the specified filters\n",
        )

    # broker 1 down: "solo" has no leader, and is skipped with Kafka's line
    local.stop_broker(1)
    wait_for(lambda: partition_states(zk, "solo", 1)[0].leader == -1, timeout_s=30, what="solo without a leader")  # type: ignore[union-attr]
    first = all_bootstraps(local).split(",")[0]
    result = get_offsets(first, "--topic", "solo|topic1")
    assert result.returncode == 0
    assert result.stdout.splitlines() == ["topic1:0:1"]
    assert result.stderr == "Error: topic-partition solo:0 does not have a leader. Skip getting offsets\n"
