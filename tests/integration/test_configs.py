"""kafkaops configs against a real ZooKeeper: config znodes, change notifications, Kafka's texts."""

from __future__ import annotations

import json

import pytest

from kafkaops.cluster.zk import znodes


def notifications(zk):
    return [
        json.loads(zk.get("/config/changes/" + child)[0]) for child in sorted(zk.get_children("/config/changes") or [])
    ]


@pytest.fixture
def topic(brokers, run_cli):
    brokers([0])
    assert (
        run_cli("topics", "--create", "--topic", "t1", "--partitions", "1", "--replication-factor", "1").exit_code == 0
    )
    return "t1"


def test_alter_and_describe_topic(zk, topic, run_cli):
    result = run_cli(
        "configs",
        "--alter",
        "--entity-type",
        "topics",
        "--entity-name",
        topic,
        "--add-config",
        "retention.ms=1000, cleanup.policy=[compact,delete],segment.bytes = 1048576",
    )
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "Completed updating config for entity: topic 't1'.\n"
    config = json.loads(zk.get(znodes.ConfigEntityZNode.path("topics", topic))[0])
    assert config == {
        "version": 1,
        "config": {"retention.ms": "1000", "cleanup.policy": "compact,delete", "segment.bytes": "1048576"},
    }
    assert notifications(zk) == [{"version": 2, "entity_path": "topics/t1"}]
    described = run_cli("configs", "--describe", "--topic", topic)
    # java.util.Properties order (Java 9+), as Kafka prints it
    assert described.stdout == (
        "Configs for topic 't1' are cleanup.policy=compact,delete,retention.ms=1000,segment.bytes=1048576\n"
    )
    deleted = run_cli("configs", "--alter", "--topic", topic, "--delete-config", "retention.ms,segment.bytes")
    assert deleted.exit_code == 0, deleted.stderr
    assert run_cli("configs", "--describe", "--entity-type", "topics").stdout == (
        "Configs for topic 't1' are cleanup.policy=compact,delete\n"
    )
    assert len(notifications(zk)) == 2


def test_add_config_file(zk, topic, run_cli, tmp_path):
    properties = tmp_path / "t.properties"
    properties.write_text("# comment\nretention.ms = 42\nmin.insync.replicas:2\nflush.ms \\\n  100\n")
    result = run_cli("configs", "--alter", "--topic", topic, "--add-config-file", str(properties))
    assert result.exit_code == 0, result.stderr
    config = json.loads(zk.get(znodes.ConfigEntityZNode.path("topics", topic))[0])["config"]
    assert config == {"retention.ms": "42", "min.insync.replicas": "2", "flush.ms": "100"}


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["--alter", "--topic", "t1", "--add-config", "retention.ms=x"],
            "Invalid value x for configuration retention.ms: Not a number of type LONG",
        ),
        (
            ["--alter", "--topic", "t1", "--add-config", "min.insync.replicas=0"],
            "Invalid value 0 for configuration min.insync.replicas: Value must be at least 1",
        ),
        (
            ["--alter", "--topic", "t1", "--add-config", "cleanup.policy=forever"],
            "Invalid value forever for configuration cleanup.policy: String must be one of: compact, delete",
        ),
        (["--alter", "--topic", "t1", "--add-config", "bogus.config=1"], "Unknown topic config name: bogus.config"),
        (
            ["--alter", "--topic", "t1", "--add-config", "retention.ms"],
            'requirement failed: Invalid entity config: all configs to be added must be in the format "key=val".',
        ),
        (["--alter", "--topic", "t1", "--delete-config", "retention.ms"], "Invalid config(s): retention.ms"),
        (["--alter", "--topic", "missing", "--add-config", "retention.ms=1"], "Topic 'missing' does not exist."),
        (
            ["--alter", "--topic", "t1"],
            "At least one of --add-config, --add-config-file, or --delete-config must be specified with --alter",
        ),
        (
            ["--alter", "--entity-type", "topics", "--add-config", "a=b"],
            "an entity name must be specified with --alter of topics",
        ),
        (
            ["--describe", "--entity-type", "topics", "--entity-type", "topics"],
            "Duplicate entity type(s) specified: topics",
        ),
        (
            ["--describe", "--entity-type", "widgets"],
            "Invalid entity type widgets, the entity type must be one of topics,clients,users,brokers,ips with the "
            "--zookeeper argument",
        ),
        (["--describe"], "At least one entity type must be specified"),
        (
            ["--describe", "--entity-type", "topics", "--topic", "t1"],
            "--entity-{type,name,default} should not be used in conjunction with specific entity flags",
        ),
        (
            ["--alter", "--broker", "one", "--add-config", "a=b"],
            "The entity name for brokers must be a valid integer broker id, but it is: one",
        ),
        (
            ["--alter", "--broker", "0", "--add-config", "leader.replication.throttled.rate=-1"],
            "Invalid value -1 for configuration leader.replication.throttled.rate: Value must be at least 0",
        ),
        (
            ["--alter", "--broker", "0", "--add-config", "log.cleaner.threads=2"],
            "requirement failed: --bootstrap-server option must be specified to update broker configs "
            "Set(log.cleaner.threads). when broker 0 is running. Broker configuration updates using ZooKeeper are "
            "supported for bootstrapping before brokers are started to enable encrypted password configs to be "
            "stored in ZooKeeper.",
        ),
        (
            ["--alter", "--broker-defaults", "--add-config", "log.cleaner.threads=2"],
            "requirement failed: --bootstrap-server option must be specified to update broker configs "
            "Set(log.cleaner.threads). for default cluster if any broker is running. Broker configuration updates "
            "using ZooKeeper are supported for bootstrapping before brokers are started to enable encrypted password "
            "configs to be stored in ZooKeeper.",
        ),
        (
            ["--alter", "--broker", "7", "--add-config", "broker.id=3"],
            "Cannot update these configs dynamically: Set(broker.id)",
        ),
    ],
)
def test_bad_input_changes_nothing(zk, zk_tree, topic, run_cli, args, message):
    run_cli("configs", "--alter", "--topic", topic, "--add-config", "segment.ms=10")
    before = zk_tree()
    result = run_cli("configs", *args)
    assert result.exit_code == 1
    assert result.stderr == message + "\n"
    assert result.stdout == ""
    assert zk_tree() == before


def test_usage_errors(run_cli):
    for args, message in [
        (["--alter", "--describe", "--topic", "x"], "Command must include exactly one action: --describe, --alter"),
        (["--topic", "x"], "Command must include exactly one action: --describe, --alter"),
        (
            ["--describe", "--add-config", "a=b", "--topic", "x"],
            'Option "[describe]" can\'t be used with option "[add-config]"',
        ),
    ]:
        result = run_cli("configs", *args)
        assert result.exit_code == 1
        assert result.stderr.splitlines()[0] == message


def test_broker_configs(zk, brokers, run_cli):
    brokers([0, 1])
    throttle = run_cli(
        "configs",
        "--alter",
        "--entity-type",
        "brokers",
        "--entity-name",
        "0",
        "--add-config",
        "leader.replication.throttled.rate=1000,follower.replication.throttled.rate=2000",
    )
    assert throttle.exit_code == 0, throttle.stderr
    assert throttle.stdout == "Completed updating config for entity: brokers '0'.\n"
    stopped = run_cli("configs", "--alter", "--broker", "5", "--add-config", "log.cleaner.threads=2,custom.key=x")
    assert stopped.exit_code == 0, stopped.stderr
    default = run_cli(
        "configs",
        "--alter",
        "--entity-type",
        "brokers",
        "--entity-default",
        "--add-config",
        "follower.replication.throttled.rate=10",
    )
    assert default.stdout == "Completed updating config for entity: default brokers.\n"
    assert json.loads(zk.get("/config/brokers/<default>")[0]) == {
        "version": 1,
        "config": {"follower.replication.throttled.rate": "10"},
    }
    assert [n["entity_path"] for n in notifications(zk)] == ["brokers/0", "brokers/5", "brokers/<default>"]
    described = run_cli("configs", "--describe", "--entity-type", "brokers")
    assert described.stdout.splitlines() == [
        # java.util.Properties order, checked against a JVM
        "Configs for brokers '0' are leader.replication.throttled.rate=1000,follower.replication.throttled.rate=2000",
        "Configs for brokers '5' are custom.key=x,log.cleaner.threads=2",
        "Configs for default brokers are follower.replication.throttled.rate=10",
    ]
    one = json.loads(run_cli("configs", "--describe", "--broker", "0", "--output", "json").stdout)
    assert one == [
        {
            "entity": "brokers '0'",
            "entity_type": "brokers",
            "name": "0",
            "config": {"leader.replication.throttled.rate": "1000", "follower.replication.throttled.rate": "2000"},
        }
    ]


def test_describe_entity_without_overrides(run_cli, topic):
    assert (
        run_cli("configs", "--describe", "--topic", "nothing-here").stdout == "Configs for topic 'nothing-here' are \n"
    )
