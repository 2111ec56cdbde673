"""GetOffsetShell's pure parts (`kafkaops.admin.get_offsets`): Kafka 3.0's GetOffsetShellParsingTest cases,
the `--partitions` and `--time` parsing, IncludeList, and the command's texts before any connection."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from kafkaops.admin import get_offsets as go
from kafkaops.admin.kafka_client import BrokerNode, ClusterMetadata, PartitionInfo, TopicInfo
from kafkaops.cli.app import app
from kafkaops.cluster.common.errors import InvalidArgumentError, NumberFormatError
from kafkaops.cluster.zk.values import TopicPartition


@pytest.fixture(autouse=True)
def no_local_cluster(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Without a broker flag the tools use the local cluster's brokers: this test's state dir has none."""
    monkeypatch.setenv("KAFKAOPS_STATE_DIR", str(tmp_path / "state"))


def patterns(text: str, exclude_internal: bool = False) -> go.TopicPartitionFilter:
    return go.filter_from_patterns(text, exclude_internal)


@pytest.mark.parametrize("exclude", [True, False])
def test_topic_names_and_regexes(exclude: bool) -> None:
    f = patterns("test", exclude)
    assert f("test", 0) and f("test", 1) and not f("test1", 0) and not f("__consumer_offsets", 0)
    f = patterns("__consumer_offsets", exclude)
    assert f("__consumer_offsets", 0) is not exclude and not f("test1", 0)
    f = patterns("test,test1,__consumer_offsets", exclude)
    assert f("test", 0) and f("test1", 1) and not f("test2", 0)
    assert f("__consumer_offsets", 0) is not exclude
    f = patterns("test.*", exclude)
    assert f("test", 0) and f("test1", 1) and f("test2", 0) and not f("__consumer_offsets", 0)


@pytest.mark.parametrize("exclude", [True, False])
def test_partition_specs(exclude: bool) -> None:
    f = patterns(":0", exclude)
    assert f("test", 0) and f("test1", 0) and not f("test2", 1)
    assert f("__consumer_offsets", 0) is not exclude and not f("__consumer_offsets", 1)
    f = patterns(":1-3", exclude)
    assert f("test", 1) and f("test1", 2) and not f("test2", 0) and not f("test2", 3)
    f = patterns(":1-", exclude)
    assert f("test", 1) and f("test1", 2) and not f("test2", 0)
    f = patterns(":-3", exclude)
    assert f("test", 0) and f("test2", 2) and not f("test3", 3)
    assert f("__consumer_offsets", 2) is not exclude


@pytest.mark.parametrize("exclude", [True, False])
def test_complex_filter(exclude: bool) -> None:
    f = patterns("test.*:0,__consumer_offsets:1-2,.*:3", exclude)
    assert f("test", 0) and f("test", 3) and not f("test", 1)
    assert f("test1", 0) and f("test1", 3) and not f("test1", 1)
    assert f("custom", 3) and not f("custom", 0)
    assert f("__consumer_offsets", 1) is not exclude and f("__consumer_offsets", 3) is not exclude
    assert not f("__consumer_offsets", 0) and not f("__consumer_offsets", 2)


def test_ranges() -> None:
    assert [p for p in range(6) if patterns(":1")("t", p)] == [1]
    assert [p for p in range(6) if patterns(":1-3")("t", p)] == [1, 2]
    assert [p for p in range(6) if patterns(":3-")("t", p)] == [3, 4, 5]
    assert [p for p in range(6) if patterns(":-3")("t", p)] == [0, 1, 2]
    assert [p for p in range(6) if patterns("t.*:0-2,u:1")("t1", p)] == [0, 1]
    assert [p for p in range(6) if patterns("t.*:0-2,u:1")("u", p)] == [1]


@pytest.mark.parametrize("spec", [":a", ":a-b", ":a-", ":-b", "t:1:2", "t:1,"[:-1] + ":x"])
def test_invalid_rules(spec: str) -> None:
    with pytest.raises(InvalidArgumentError, match=f"^Invalid rule specification: {spec}$"):
        patterns(spec)


def test_a_partition_beyond_an_int_is_javas_number_format_error() -> None:
    with pytest.raises(NumberFormatError, match='For input string: "99999999999"'):
        patterns("t:99999999999")


def test_topic_and_partitions() -> None:
    f = go.filter_from_topic_and_partitions("topic.*", "0,1", exclude_internal_topics=False)
    assert f("topic1", 0) and f("topic2", 1) and not f("topic2", 2) and not f("other", 0)
    every = go.filter_from_topic_and_partitions(None, None, exclude_internal_topics=True)
    assert every("anything", 7) and not every("__transaction_state", 0)
    # IncludeList: commas are alternatives, spaces and quotes go
    quoted = go.filter_from_topic_and_partitions("'a, b'", "", exclude_internal_topics=False)
    assert quoted("a", 0) and quoted("b", 3) and not quoted("ab", 0)
    with pytest.raises(InvalidArgumentError) as bad:
        go.parse_partition_set("0,x")
    assert str(bad.value) == "--partitions expects a comma separated list of numeric partition ids, but received: 0,x"
    with pytest.raises(InvalidArgumentError, match=r"^\(\[ is an invalid regex\.$"):
        go.include_list("([")


def test_time() -> None:
    assert [go.parse_time(t) for t in ("-1", "latest", "-2", "earliest", "-3", "max-timestamp", "1600000000000")] == [
        -1,
        -1,
        -2,
        -2,
        -3,
        -3,
        1600000000000,
    ]
    with pytest.raises(InvalidArgumentError) as bad:
        go.parse_time("yesterday")
    assert str(bad.value) == (
        "Malformed time argument yesterday. Please use -1 or latest / -2 or earliest / -3 or max-timestamp, or a "
        "specified long format timestamp"
    )


def test_select_partitions_by_leader_and_leaderless() -> None:
    def partition(topic: str, index: int, leader: int) -> PartitionInfo:
        return PartitionInfo(topic, index, leader, 0, (leader,), (leader,))

    cluster = ClusterMetadata(
        {1: BrokerNode(1, "h", 1), 2: BrokerNode(2, "h", 2)},
        1,
        "c",
        {
            "a": TopicInfo("a", 0, False, (partition("a", 0, 1), partition("a", 1, 2), partition("a", 2, -1))),
            "b": TopicInfo("b", 0, False, (partition("b", 0, 3),)),  # leader not among the live brokers
            "gone": TopicInfo("gone", 3, False, ()),
        },
    )
    by_leader, leaderless = go.select_partitions(cluster, patterns(".*"))
    assert by_leader == {1: [TopicPartition("a", 0)], 2: [TopicPartition("a", 1)]}
    assert leaderless == [TopicPartition("a", 2), TopicPartition("b", 0)]


def run(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(app, ["get-offsets", *args], catch_exceptions=False)


def test_command_texts_before_connecting() -> None:
    nothing = run()
    assert nothing.exit_code == 1 and nothing.stderr.startswith(
        "An interactive shell for getting topic-partition offsets.\n"
    )
    missing = run("--topic", "t")
    assert (missing.exit_code, missing.stdout) == (1, "Error occurred: Missing required option(s) [bootstrap-server]\n")
    bad_port = run("--bootstrap-server", "localhost")
    assert bad_port.exit_code == 1
    assert bad_port.stderr.startswith("Please provide valid host:port like host1:9091,host2:9092\n \nUsage:")
    both = run("--bootstrap-server", "127.0.0.1:1", "--topic-partitions", "t", "--partitions", "0")
    assert (both.exit_code, both.stdout) == (
        1,
        "Error occurred: --topic-partitions cannot be used with --topic or --partitions\n",
    )
    rule = run("--broker-list", "127.0.0.1:1", "--topic-partitions", "t:x")
    assert (rule.exit_code, rule.stdout) == (1, "Error occurred: Invalid rule specification: t:x\n")
    nowhere = run("--topic", "t", "--state-dir", "/nonexistent/kafkaops-state")
    assert nowhere.exit_code == 1
    assert nowhere.stdout.startswith("Error occurred: No --bootstrap-server given and there is no local cluster in")
    down = run("--bootstrap-server", "127.0.0.1:1")
    assert down.exit_code == 1 and down.stdout.startswith("Error occurred: No broker answered a Metadata request")


def test_command_config_refuses_a_tls_store_python_cannot_read(tmp_path) -> None:  # type: ignore[no-untyped-def]
    config = tmp_path / "client.properties"
    config.write_text("security.protocol=SSL\nssl.truststore.location=/x\n")
    result = run("--bootstrap-server", "127.0.0.1:1", "--command-config", str(config))
    assert result.exit_code == 1
    assert result.stdout == (
        "Error occurred: ssl.truststore.type JKS is not supported: kafkaops reads PEM trust stores "
        "(ssl.truststore.type=PEM)\n"
    )
