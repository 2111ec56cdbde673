"""Every tool in both modes against a real cluster: `--zookeeper` and `--bootstrap-server` print the same
text for the same operation (or, where Kafka 2.8's two modes print differently, each mode's Kafka text),
and bad input gives Kafka's message, exit 1, and leaves ZooKeeper and the logs unchanged."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from kafkaops.admin.kafka_client.client import KafkaClient
from kafkaops.admin.kafka_client.connection import BrokerConnection, parse_bootstrap_servers
from kafkaops.cluster.local.cluster import LocalCluster
from kafkaops.cluster.local.waiting import wait_for
from kafkaops.cluster.protocol.schemas import SUPPORTED_VERSIONS, ApiKey
from kafkaops.cluster.zk.client import KafkaZkClient
from tests.cluster.clients_util import all_bootstraps, wait_partitions
from tests.cluster.test_log_dirs import data_dirs, replica_dirs, two_dir_cluster  # noqa: F401 (a fixture)
from tests.conftest import read_tree

MODES = ["zookeeper", "bootstrap-server"]
WATCHED = ("/brokers/topics", "/config", "/admin")
"""What an admin command writes: the rest of the tree (broker registrations, ISR notifications) is the
cluster's own and may change while the test runs."""


@dataclass
class Tools:
    local: LocalCluster
    zk: KafkaZkClient
    zk_connect: str
    run_cli: Callable[..., Any]

    @property
    def bootstrap(self) -> str:
        return all_bootstraps(self.local)

    def connection(self, mode: str) -> tuple[str, str]:
        return ("--zookeeper", self.zk_connect) if mode == "zookeeper" else ("--bootstrap-server", self.bootstrap)

    def run(self, mode: str, tool: str, *args: str) -> Any:
        if mode == "bootstrap-server":
            require_admin_api(self.bootstrap)
        # no KAFKAOPS_ZOOKEEPER: the --bootstrap-server mode must not fall back on ZooKeeper
        return self.run_cli(tool, *args, *self.connection(mode), env={"KAFKAOPS_ZOOKEEPER": ""})

    def snapshot(self) -> tuple[dict[str, bytes], list[str]]:
        tree = {path: data for root in WATCHED for path, data in read_tree(self.zk, root).items()}
        # the partition directories: the broker rewrites its checkpoint files (through `.tmp` names) on its own
        logs = sorted(
            str(p.relative_to(self.local.state_dir))
            for broker in self.local.broker_ids()
            for p in (self.local.broker_dir(broker) / "data").glob("*")
            if p.is_dir()
        )
        return tree, logs

    def create(self, topic: str, assignment: str = "0:1,1:2,2:0", *config: str) -> None:
        result = self.run(
            "zookeeper", "topics", "--create", "--topic", topic, "--replica-assignment", assignment, *config
        )
        assert result.exit_code == 0, result.stderr
        wait_partitions(self.zk, topic, len(assignment.split(",")))
        # every replica's directory, or a later snapshot() sees a slow follower's LeaderAndIsr land mid-test
        wanted = [
            (self.local.broker_dir(int(broker)), f"*/{topic}-{partition}")
            for partition, replicas in enumerate(assignment.split(","))
            for broker in replicas.split(":")
        ]
        wait_for(lambda: all(any(d.is_dir() for d in root.glob(name)) for root, name in wanted))


ADMIN_API_KEYS = (19, 20, 32, 33, 37, 44, 45, 46)
"""CreateTopics, DeleteTopics, DescribeConfigs, AlterConfigs, CreatePartitions, IncrementalAlterConfigs,
AlterPartitionReassignments, ListPartitionReassignments."""


def _versions(bootstrap: str) -> dict[int, tuple[int, int]]:
    host, port = parse_bootstrap_servers(bootstrap)[0]
    connection = BrokerConnection(host, port, "tools-test", 10.0, "-1")
    connection.connect()  # ApiVersions
    connection.close()
    return connection.versions


def metadata_version(bootstrap: str) -> int:
    """The Metadata version our client and the broker agree on."""
    return min(_versions(bootstrap)[int(ApiKey.METADATA)][1], SUPPORTED_VERSIONS[ApiKey.METADATA][1])


def require_admin_api(bootstrap: str) -> None:
    """Skip (saying why) while the brokers do not serve the Admin API: the broker side is another part of
    issue 15; with it, these tests run in both modes."""
    versions = _versions(bootstrap)
    missing = [key for key in ADMIN_API_KEYS if key not in versions]
    if missing:
        pytest.skip(f"the brokers do not serve the Admin API yet (API keys {missing})")


@pytest.fixture
def tools(cluster: Callable[..., LocalCluster], zk: KafkaZkClient, zk_connect: str, run_cli: Any) -> Iterator[Tools]:
    local = cluster(brokers=3, **{"auto.leader.rebalance.enable": False})
    wait_for(lambda: len(local.status().brokers) == 3 and all(b.endpoint for b in local.status().brokers))
    yield Tools(local, zk, zk_connect, run_cli)


def assert_refused(tools: Tools, mode: str, tool: str, args: tuple[str, ...], message: str) -> None:
    before = tools.snapshot()
    result = tools.run(mode, tool, *args)
    assert (result.exit_code, result.stdout + result.stderr) == (1, message + "\n")
    assert tools.snapshot() == before


# --- topics ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_topics_create_describe_list_in_both_modes(tools: Tools, mode: str):
    result = tools.run(
        mode,
        "topics",
        "--create",
        "--topic",
        "orders",
        "--replica-assignment",
        "0:1,1:2",
        "--config",
        "retention.ms=1000",
    )
    assert (result.exit_code, result.stdout) == (0, "Created topic orders.\n"), result.stderr
    states = wait_partitions(tools.zk, "orders", 2, isr_size=2)
    # Kafka 2.8 (IBP 2.8) gives every topic an id (a broker's CreateTopics writes it, the controller gives one
    # to a --zookeeper topic); the brokers' Metadata v10+ answers it, so both modes print the znode's
    topic_id = tools.zk.get_topic_assignments(["orders"])["orders"].topic_id
    assert topic_id
    assert metadata_version(tools.bootstrap) >= 10
    topic_id_field = f"\tTopicId: {topic_id}"
    result = tools.run(mode, "topics", "--describe", "--topic", "orders")
    assert result.exit_code == 0, result.stderr
    other = tools.run(next(m for m in MODES if m != mode), "topics", "--describe", "--topic", "orders")
    assert (other.exit_code, other.stdout) == (0, result.stdout), other.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == (
        f"Topic: orders{topic_id_field}\tPartitionCount: 2\tReplicationFactor: 2\tConfigs: retention.ms=1000"
    )
    assert lines[1:] == [
        f"\tTopic: orders\tPartition: {p}\tLeader: {states[p].leader}\tReplicas: {r}\tIsr: {','.join(map(str, states[p].isr))}"
        for p, r in ((0, "0,1"), (1, "1,2"))
    ]
    result = tools.run(mode, "topics", "--list", "--exclude-internal")
    assert (result.exit_code, result.stdout) == (0, "orders\n")
    result = tools.run(mode, "topics", "--describe", "--under-replicated-partitions")
    assert (result.exit_code, result.stdout) == (0, "")
    result = tools.run(
        mode,
        "topics",
        "--create",
        "--topic",
        "orders",
        "--partitions",
        "1",
        "--replication-factor",
        "1",
        "--if-not-exists",
    )
    assert (result.exit_code, result.stdout) == (0, "")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("--create", "--topic", "taken", "--partitions", "1", "--replication-factor", "1"),
            "Error while executing topic command : Topic 'taken' already exists.",
        ),
        (
            ("--create", "--topic", "big", "--partitions", "1", "--replication-factor", "4"),
            "Error while executing topic command : Replication factor: 4 larger than available brokers: 3.",
        ),
        (
            (
                "--create",
                "--topic",
                "bad",
                "--partitions",
                "1",
                "--replication-factor",
                "1",
                "--config",
                "retention.ms=soon",
            ),
            "Error while executing topic command : Invalid value soon for configuration retention.ms: Not a number of type LONG",
        ),
        (
            ("--create", "--topic", "a/b", "--partitions", "1", "--replication-factor", "1"),
            'Error while executing topic command : Topic name "a/b" is illegal, it contains a character other than '
            "ASCII alphanumerics, '.', '_' and '-'",
        ),
        (
            ("--describe", "--topic", "missing"),
            "Error while executing topic command : Topic 'missing' does not exist as expected",
        ),
        (
            ("--delete", "--topic", "missing"),
            "Error while executing topic command : Topic 'missing' does not exist as expected",
        ),
        (
            ("--alter", "--topic", "taken", "--partitions", "1"),
            {  # Kafka 2.8's texts: AdminZkClient.addPartitions, ZkAdminManager.createPartitions
                "zookeeper": "Error while executing topic command : The number of partitions for a topic can only be "
                "increased. Topic taken currently has 3 partitions, 1 would not be an increase.",
                "bootstrap-server": "Error while executing topic command : Topic currently has 3 partitions, which is "
                "higher than the requested 1.",
            },
        ),
    ],
)
def test_topics_bad_input_in_both_modes(tools: Tools, mode: str, args: tuple[str, ...], message: str | dict[str, str]):
    tools.create("taken")
    assert_refused(tools, mode, "topics", args, message if isinstance(message, str) else message[mode])


def test_topics_alter_and_delete_print_each_modes_kafka_text(tools: Tools):
    tools.create("grow", "0:1")
    tools.create("gone", "0:1")
    result = tools.run("bootstrap-server", "topics", "--alter", "--topic", "grow", "--partitions", "3")
    assert (result.exit_code, result.stdout) == (0, ""), result.stderr  # Kafka's AdminClient path prints nothing
    wait_partitions(tools.zk, "grow", 3)
    result = tools.run("zookeeper", "topics", "--alter", "--topic", "grow", "--partitions", "4")
    assert result.stdout.endswith("Adding partitions succeeded!\n"), result.stderr
    wait_partitions(tools.zk, "grow", 4)
    for mode in MODES:
        described = tools.run(mode, "topics", "--describe", "--topic", "grow").stdout
        assert "PartitionCount: 4" in described.splitlines()[0]
    result = tools.run("bootstrap-server", "topics", "--delete", "--topic", "gone")
    assert (result.exit_code, result.stdout) == (0, ""), result.stderr
    wait_for(lambda: not tools.zk.topic_exists("gone"), timeout_s=30)


# --- configs --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "completed"),
    [
        ("zookeeper", "Completed updating config for entity: topic 'cfg'."),
        ("bootstrap-server", "Completed updating config for topic cfg."),
    ],
)
def test_configs_of_a_topic_in_both_modes(tools: Tools, mode: str, completed: str):
    tools.create("cfg", "0:1")
    result = tools.run(
        mode,
        "configs",
        "--alter",
        "--entity-type",
        "topics",
        "--entity-name",
        "cfg",
        "--add-config",
        "retention.ms=5000,cleanup.policy=[compact,delete]",
    )
    assert (result.exit_code, result.stdout) == (0, completed + "\n"), result.stderr
    config, _ = tools.zk.get_entity_config("topics", "cfg")
    assert config == {"retention.ms": "5000", "cleanup.policy": "compact,delete"}
    result = tools.run(mode, "configs", "--alter", "--topic", "cfg", "--delete-config", "cleanup.policy")
    assert (result.exit_code, result.stdout) == (0, completed + "\n"), result.stderr
    assert tools.zk.get_entity_config("topics", "cfg")[0] == {"retention.ms": "5000"}


def test_configs_describe_in_each_modes_kafka_text(tools: Tools):
    tools.create("cfg", "0:1", "--config", "retention.ms=5000")
    result = tools.run("zookeeper", "configs", "--describe", "--entity-type", "topics", "--entity-name", "cfg")
    assert result.stdout == "Configs for topic 'cfg' are retention.ms=5000\n"
    result = tools.run("bootstrap-server", "configs", "--describe", "--entity-type", "topics", "--entity-name", "cfg")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines()[0] == "Dynamic configs for topic cfg are:"
    assert result.stdout.splitlines()[1].startswith(
        "  retention.ms=5000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=5000"
    )
    result = tools.run(
        "bootstrap-server", "configs", "--describe", "--all", "--entity-type", "topics", "--entity-name", "cfg"
    )
    assert result.stdout.splitlines()[0] == "All configs for topic cfg are:"
    assert len(result.stdout.splitlines()) > 10


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--alter", "--topic", "cfg", "--delete-config", "segment.ms"), "Invalid config(s): segment.ms"),
        (
            ("--alter", "--topic", "missing", "--add-config", "retention.ms=1"),
            # the broker answers UNKNOWN_TOPIC_OR_PARTITION without a message: Kafka's default text
            {
                "zookeeper": "Topic 'missing' does not exist.",
                "bootstrap-server": "This server does not host this topic-partition.",
            },
        ),
        (
            ("--describe", "--entity-type", "brokers", "--entity-name", "x"),
            "The entity name for brokers must be a valid integer broker id, but it is: x",
        ),
    ],
)
def test_configs_bad_input_in_both_modes(tools: Tools, mode: str, args: tuple[str, ...], message: str | dict[str, str]):
    tools.create("cfg", "0:1")
    assert_refused(tools, mode, "configs", args, message if isinstance(message, str) else message[mode])


def test_dynamic_broker_configs_on_live_brokers_need_the_bootstrap_server(tools: Tools):
    args = ("--alter", "--entity-type", "brokers", "--entity-name", "1", "--add-config", "log.cleaner.threads=2")
    result = tools.run("zookeeper", "configs", *args)
    assert result.exit_code == 1
    assert "--bootstrap-server option must be specified to update broker configs" in result.stderr
    result = tools.run("bootstrap-server", "configs", *args)
    assert (result.exit_code, result.stdout) == (0, "Completed updating config for broker 1.\n"), result.stderr
    assert tools.zk.get_entity_config("brokers", "1")[0] == {"log.cleaner.threads": "2"}
    result = tools.run("bootstrap-server", "configs", "--describe", "--entity-type", "brokers", "--entity-name", "1")
    assert result.stdout.splitlines()[0] == "Dynamic configs for broker 1 are:"
    assert result.stdout.splitlines()[1].startswith(
        "  log.cleaner.threads=2 sensitive=false synonyms={DYNAMIC_BROKER_CONFIG:log.cleaner.threads=2"
    )
    result = tools.run(
        "bootstrap-server",
        "configs",
        "--alter",
        "--entity-type",
        "brokers",
        "--entity-default",
        "--add-config",
        "log.cleaner.threads=3",
    )
    assert (result.exit_code, result.stdout) == (0, "Completed updating default config for brokers in the cluster.\n")
    assert tools.zk.get_entity_config("brokers", "<default>")[0] == {"log.cleaner.threads": "3"}


# --- configs of users and clients (client quotas) --------------------------------------------------

QUOTA_ALTERATIONS: list[tuple[tuple[str, ...], str, str]] = [
    # (arguments, --zookeeper's text, --bootstrap-server's text: the first entity type and name given)
    (
        ("--entity-type", "users", "--entity-name", "u1", "--entity-type", "clients", "--entity-name", "c1",
         "--add-config", "producer_byte_rate=1024,consumer_byte_rate=2048"),
        "Completed updating config for entity: user-principal 'u1', client-id 'c1'.",
        "Completed updating config for user u1.",
    ),
    (
        ("--entity-type", "users", "--entity-name", "u1", "--add-config", "request_percentage=50.5"),
        "Completed updating config for entity: user-principal 'u1'.",
        "Completed updating config for user u1.",
    ),
    (
        ("--client", "c1", "--add-config", "producer_byte_rate=512"),
        "Completed updating config for entity: client-id 'c1'.",
        "Completed updating config for client c1.",
    ),
    (
        ("--entity-type", "users", "--entity-default", "--entity-type", "clients", "--entity-default",
         "--add-config", "producer_byte_rate=4096"),
        "Completed updating config for entity: default user-principal, default client-id.",
        "Completed updating default config for users in the cluster.",
    ),
    (
        ("--client-defaults", "--add-config", "consumer_byte_rate=100"),
        "Completed updating config for entity: default client-id.",
        "Completed updating default config for clients in the cluster.",
    ),
    (
        ("--entity-type", "clients", "--entity-name", "c1", "--entity-type", "users", "--entity-name", "u1",
         "--delete-config", "consumer_byte_rate"),
        "Completed updating config for entity: user-principal 'u1', client-id 'c1'.",
        "Completed updating config for client c1.",
    ),
]  # fmt: skip


def quota_znodes(zk: KafkaZkClient) -> dict[str, bytes]:
    return {path: data for root in ("/config/users", "/config/clients") for path, data in read_tree(zk, root).items()}


@pytest.mark.parametrize("mode", MODES)
def test_configs_of_users_and_clients_in_both_modes(tools: Tools, mode: str):
    """Users, clients, <user, client-id> pairs and the defaults: each mode's Kafka text, the same znodes."""
    for args, zk_text, bootstrap_text in QUOTA_ALTERATIONS:
        result = tools.run(mode, "configs", "--alter", *args)
        expected = zk_text if mode == "zookeeper" else bootstrap_text
        assert (result.exit_code, result.stdout) == (0, expected + "\n"), (args, result.stderr)
    json_of = {path: json.loads(data) for path, data in quota_znodes(tools.zk).items() if data}
    assert json_of == {
        "/config/users/u1": {"version": 1, "config": {"request_percentage": "50.5"}},
        "/config/users/u1/clients/c1": {"version": 1, "config": {"producer_byte_rate": "1024"}},
        "/config/users/<default>/clients/<default>": {"version": 1, "config": {"producer_byte_rate": "4096"}},
        "/config/clients/c1": {"version": 1, "config": {"producer_byte_rate": "512"}},
        "/config/clients/<default>": {"version": 1, "config": {"consumer_byte_rate": "100"}},
    }
    if mode == "zookeeper":
        return
    for args, lines in [
        (
            ("--entity-type", "users", "--entity-name", "u1", "--entity-type", "clients", "--entity-name", "c1"),
            ["Quota configs for user-principal 'u1', client-id 'c1' are producer_byte_rate=1024.0"],
        ),
        (("--entity-type", "users"), ["Quota configs for user-principal 'u1' are request_percentage=50.5"]),
        (
            ("--entity-type", "clients"),
            [
                "Quota configs for client-id 'c1' are producer_byte_rate=512.0",
                "Quota configs for the default client-id are consumer_byte_rate=100.0",
            ],
        ),
        (
            ("--user-defaults", "--client-defaults"),
            ["Quota configs for the default user-principal, the default client-id are producer_byte_rate=4096.0"],
        ),
        (("--entity-type", "users", "--entity-name", "nobody"), []),
    ]:
        result = tools.run(mode, "configs", "--describe", *args)
        assert result.exit_code == 0, result.stderr
        assert sorted(result.stdout.splitlines()) == sorted(lines), args


QUOTA_REFUSALS: list[tuple[tuple[str, ...], str]] = [
    (
        ("--alter", "--entity-type", "clients", "--entity-name", "c1", "--add-config", "SCRAM-SHA-256=[password=x]"),
        "Only quota configs can be added for 'clients' using --bootstrap-server. "
        "Unexpected config names: Set(SCRAM-SHA-256)",
    ),
    (
        ("--alter", "--user", "u1", "--client", "c1", "--delete-config", "bogus,SCRAM-SHA-512"),
        "Only quota configs can be deleted for 'clients' using --bootstrap-server. "
        "Unexpected config names: ArrayBuffer(bogus, SCRAM-SHA-512)",
    ),
    (
        ("--alter", "--user", "u1", "--delete-config", "bogus"),
        "Only quota and SCRAM credential configs can be deleted for 'users' using --bootstrap-server. "
        "Unexpected config names: ArrayBuffer(bogus)",
    ),
    (
        ("--alter", "--user-defaults", "--add-config", "SCRAM-SHA-256=[password=x]"),
        "The use of --entity-default or --user-defaults is not allowed with User SCRAM Credentials using "
        "--bootstrap-server.",
    ),
    (
        ("--alter", "--user", "u1", "--add-config", "SCRAM-SHA-256=[password=x],producer_byte_rate=1"),
        "Cannot alter both quota and SCRAM credential configs simultaneously for 'users' using --bootstrap-server.",
    ),
    (
        ("--alter", "--user", "u1", "--add-config", "SCRAM-SHA-256=[iterations=100,password=x]"),
        "Iterations 100 is less than the minimum 4096 required for SCRAM-SHA-256",
    ),
    (
        ("--alter", "--user", "u1", "--add-config", "SCRAM-SHA-512=secret"),
        "Invalid credential property SCRAM_SHA_512=secret",
    ),
    (("--alter", "--client", "c1", "--delete-config", "producer_byte_rate"), "Invalid config(s): producer_byte_rate"),
    (
        ("--alter", "--client", "c1", "--add-config", "producer_byte_rate=abc"),
        "Cannot parse quota configuration value for producer_byte_rate: abc",
    ),
    (
        ("--alter", "--client", "c1", "--add-config", "producer_byte_rate=10.5"),
        "Configuration producer_byte_rate must be a LONG value",  # the broker's InvalidRequestException
    ),
    (
        ("--alter", "--entity-type", "users", "--entity-type", "clients", "--entity-name", "u1",
         "--add-config", "producer_byte_rate=1"),
        "An entity name must be specified for every entity type",
    ),
    (
        ("--describe", "--entity-type", "users", "--entity-name", "a", "--entity-name", "b"),
        "More entity names specified than entity types",
    ),
]  # fmt: skip


def test_configs_of_users_and_clients_bad_input(tools: Tools):
    """Kafka's message, exit 1, ZooKeeper unchanged; an unknown key in both modes."""
    tools.run("zookeeper", "configs", "--alter", "--client", "c1", "--add-config", "request_percentage=10")
    # the brokers' first high-watermark checkpoint comes on a timer: before the snapshots, not between them
    checkpoints = [
        tools.local.broker_dir(b) / "data" / "replication-offset-checkpoint" for b in tools.local.broker_ids()
    ]
    wait_for(lambda: all(c.exists() for c in checkpoints), what="the brokers' first checkpoint")
    for args, message in QUOTA_REFUSALS:
        assert_refused(tools, "bootstrap-server", "configs", args, message)
    for mode, message in [
        ("zookeeper", "requirement failed: Unknown Dynamic Configuration: HashSet(bogus)."),
        (
            "bootstrap-server",
            "Only quota and SCRAM credential configs can be added for 'users' using --bootstrap-server. "
            "Unexpected config names: Set(bogus)",
        ),
    ]:
        assert_refused(tools, mode, "configs", ("--alter", "--user", "u1", "--add-config", "bogus=1"), message)


# --- reassign-partitions --------------------------------------------------------------------------


def _file(tmp_path: Path, name: str, document: dict[str, Any]) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(document))
    return str(path)


@pytest.mark.parametrize("mode", MODES)
def test_reassignment_execute_verify_list_in_both_modes(tools: Tools, mode: str, tmp_path: Path):
    tools.create("moving", "0:1,1:2")
    plan = _file(
        tmp_path, "plan.json", {"version": 1, "partitions": [{"topic": "moving", "partition": 0, "replicas": [2, 1]}]}
    )
    result = tools.run(
        mode, "reassign-partitions", "--execute", "--reassignment-json-file", plan, "--throttle", "10000000"
    )
    assert result.exit_code == 0, result.stderr
    assert result.stdout == (
        "Current partition replica assignment\n\n"
        '{"version":1,"partitions":[{"topic":"moving","partition":0,"replicas":[0,1],"log_dirs":["any","any"]}]}\n\n'
        "Save this to use as the --reassignment-json-file option during rollback\n"
        "Warning: You must run --verify periodically, until the reassignment completes, to ensure the throttle is removed.\n"
        "The inter-broker throttle limit was set to 10000000 B/s\n"
        "Successfully started partition reassignment for moving-0\n"
    )
    assert tools.zk.get_entity_config("topics", "moving")[0] == {
        "leader.replication.throttled.replicas": "0:0,0:1",
        "follower.replication.throttled.replicas": "0:2",
    }
    result = tools.run(mode, "reassign-partitions", "--verify", "--wait", "--reassignment-json-file", plan)
    assert result.exit_code == 0, result.stderr
    blank = ["\n"] if mode == "bootstrap-server" else []  # Kafka's AdminClient path prints its log-dir report
    assert result.stdout.endswith(
        "".join(
            [
                "Status of partition reassignment:\n",
                "Reassignment of partition moving-0 is complete.\n",
                *blank,
                "Clearing broker-level throttles on brokers 0,1,2\n",
                "Clearing topic-level throttles on topic moving\n",
            ]
        )
    )
    assert tools.zk.get_entity_config("topics", "moving")[0] == {}
    assert tools.zk.get_topic_assignments(["moving"])["moving"].partitions[0].replicas == (2, 1)
    result = tools.run(mode, "reassign-partitions", "--list")
    assert (result.exit_code, result.stdout) == (0, "No partition reassignments found.\n")
    result = tools.run(mode, "reassign-partitions", "--cancel", "--reassignment-json-file", plan)
    assert result.stdout.startswith("None of the specified partition reassignments are active.\n")


@pytest.mark.parametrize("mode", MODES)
def test_reassignment_bad_input_in_both_modes(tools: Tools, mode: str, tmp_path: Path):
    tools.create("stay", "0:1")
    missing = _file(
        tmp_path, "m.json", {"version": 1, "partitions": [{"topic": "stay", "partition": 5, "replicas": [1, 2]}]}
    )
    assert_refused(
        tools,
        mode,
        "reassign-partitions",
        ("--execute", "--reassignment-json-file", missing, "--throttle", "1000"),
        "Error: The proposed assignment contains non-existent partitions: List(stay-5)",
    )


@pytest.mark.parametrize("mode", MODES)
def test_generate_reads_the_cluster_in_both_modes(tools: Tools, mode: str, tmp_path: Path):
    tools.create("spread", "0:1,0:1,0:1")
    topics = _file(tmp_path, "t.json", {"version": 1, "topics": [{"topic": "spread"}]})
    result = tools.run(
        mode, "reassign-partitions", "--generate", "--topics-to-move-json-file", topics, "--broker-list", "0,1,2"
    )
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith(
        "Current partition replica assignment\n"
        '{"version":1,"partitions":[{"topic":"spread","partition":0,"replicas":[0,1],"log_dirs":["any","any"]},'
    )


@pytest.mark.parametrize("mode", MODES)
def test_generate_over_the_wire_weighs_the_brokers_log_sizes(tools: Tools, mode: str, tmp_path: Path):
    tools.create("sized", "0:1,0:1,0:1")
    with KafkaClient(tools.bootstrap) as client:
        client.produce("sized", 0, [(None, b"x" * 1000, ())] * 50)
    topics = _file(tmp_path, "t.json", {"version": 1, "topics": [{"topic": "sized"}]})
    stats = tmp_path / f"stats-{mode}.json"
    args = ("--generate", "--topics-to-move-json-file", topics, "--broker-list", "0,1,2", "--stats-json", str(stats))
    result = tools.run(mode, "reassign-partitions", *args)
    assert result.exit_code == 0, result.stderr
    document = json.loads(stats.read_text())
    if mode == "zookeeper":  # ZooKeeper knows no sizes: replica counts only, as Kafka's --generate
        assert document["bytes_moved"] is None
    else:  # DescribeLogDirs: partition 0 holds every byte, the planner weighs it without a sizes file
        assert document["bytes_per_broker"]["before"]["max"] > 50_000
        assert isinstance(document["bytes_moved"], int)


# --- elections and replica verification ----------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_preferred_election_in_both_modes(tools: Tools, mode: str):
    tools.create("lead", "0:1")
    result = tools.run(mode, "leader-election", "--election-type", "preferred", "--topic", "lead", "--partition", "0")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "Valid replica already elected for partitions lead-0\n"


def test_replica_verification_takes_the_bootstrap_server(tools: Tools):
    tools.create("same", "0:1")
    result = tools.run_cli(
        "replica-verification", "--bootstrap-server", tools.bootstrap, "--once", "--topic-white-list", "same"
    )
    assert result.exit_code == 0, result.stderr


def test_reassignment_moves_a_replica_between_log_dirs(
    request: pytest.FixtureRequest, zk: KafkaZkClient, zk_connect: str, run_cli: Any, tmp_path: Path
):
    """`log_dirs` in the reassignment JSON (--bootstrap-server only, as Kafka): the replica moves to the
    named dir, --verify reports it with Kafka's texts, then clears the throttles."""
    local = request.getfixturevalue("two_dir_cluster")(2)
    tools = Tools(local, zk, zk_connect, run_cli)
    tools.create("moved", "0:1")
    with KafkaClient(tools.bootstrap) as client:
        current = replica_dirs(client, "moved", 0, [0])[0].current_replica_log_dir
    target = next(str(d) for d in data_dirs(local, 0) if str(d) != current)
    plan = _file(
        tmp_path,
        "dirs.json",
        {
            "version": 1,
            "partitions": [{"topic": "moved", "partition": 0, "replicas": [0, 1], "log_dirs": [target, "any"]}],
        },
    )
    result = tools.run(
        "bootstrap-server",
        "reassign-partitions",
        "--execute",
        "--reassignment-json-file",
        plan,
        "--replica-alter-log-dirs-throttle",
        "100000000",
    )
    assert result.exit_code == 0, result.stderr
    assert result.stdout.endswith(
        "The replica-alter-dir throttle limit was set to 100000000 B/s\n"
        "Successfully started partition reassignment for moved-0\n"
        "Successfully started log directory move for: moved-0-0\n"
    )

    def verified() -> str | None:
        out = tools.run("bootstrap-server", "reassign-partitions", "--verify", "--reassignment-json-file", plan).stdout
        return out if "Reassignment of replica moved-0-0 completed successfully." in out else None

    out = wait_for(verified, timeout_s=60)
    assert out == (
        "Status of partition reassignment:\n"
        "Reassignment of partition moved-0 is complete.\n"
        "Reassignment of replica moved-0-0 completed successfully.\n"
        "Clearing broker-level throttles on brokers 0,1\n"
        "Clearing topic-level throttles on topic moved\n"
    )
    with KafkaClient(tools.bootstrap) as client:
        assert replica_dirs(client, "moved", 0, [0])[0].current_replica_log_dir == target


@pytest.mark.parametrize("mode", MODES)
def test_reassignment_additional_and_cancel_in_both_modes(tools: Tools, mode: str, tmp_path: Path):
    tools.create("first", "0")
    tools.create("other", "2")
    plan = _file(
        tmp_path, "p.json", {"version": 1, "partitions": [{"topic": "first", "partition": 0, "replicas": [1]}]}
    )
    more = _file(
        tmp_path, "m.json", {"version": 1, "partitions": [{"topic": "other", "partition": 0, "replicas": [1]}]}
    )
    result = tools.run(mode, "reassign-partitions", "--execute", "--reassignment-json-file", plan)
    assert result.exit_code == 0, result.stderr
    result = tools.run(mode, "reassign-partitions", "--execute", "--additional", "--reassignment-json-file", more)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.endswith("Successfully started partition reassignment for other-0\n")
    for done in (plan, more):
        result = tools.run(mode, "reassign-partitions", "--verify", "--wait", "--reassignment-json-file", done)
        assert result.exit_code == 0, result.stderr
    result = tools.run(
        mode, "reassign-partitions", "--cancel", "--reassignment-json-file", plan, "--preserve-throttles"
    )
    assert (result.exit_code, result.stdout) == (
        0,
        "None of the specified partition reassignments are active.\nNone of the specified partition moves are active.\n",
    ), result.stderr
    assert tools.zk.get_topic_assignments(["first"])["first"].partitions[0].replicas == (1,)
