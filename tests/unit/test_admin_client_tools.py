"""The pure parts of the tools' --bootstrap-server mode: --command-config, option checks, texts, and the
descriptions built from Admin API answers."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkaops.admin import topics_admin_ops
from kafkaops.admin.kafka_client.admin_calls import _says_not_controller, broker_error
from kafkaops.admin.kafka_client.client_config import AdminClientConfig, admin_client_config, read_command_config
from kafkaops.admin.kafka_client.config_admin import ConfigEntry, ConfigSource, ConfigSynonym, _entry
from kafkaops.admin.kafka_client.metadata import PartitionInfo, TopicInfo, uuid_text
from kafkaops.admin.topics import DescribeFilters
from kafkaops.cli import configs as cli_configs
from kafkaops.cli import topics as cli_topics
from kafkaops.cluster.common.errors import InvalidArgumentError, TopicExistsError, UsageError
from kafkaops.cluster.zk.values import ReplicaAssignment, TopicPartition

# --- --command-config ------------------------------------------------------------------------------


def test_command_config_defaults_are_kafkas():
    assert admin_client_config({}, "tool") == AdminClientConfig("tool", 30000, 60000, 2147483647, 100)


def test_command_config_settings_are_applied():
    config = admin_client_config(
        {
            "client.id": "ci-job",
            "request.timeout.ms": "5000",
            "default.api.timeout.ms": "20000",
            "retries": "3",
            "retry.backoff.ms": "50",
            "security.protocol": "plaintext",
            "sasl.mechanism": "PLAIN",  # unknown to our client: ignored, as Kafka only logs it
        },
        "tool",
    )
    assert config == AdminClientConfig("ci-job", 5000, 20000, 3, 50)


def test_the_api_timeout_is_never_below_the_request_timeout():
    assert admin_client_config({"request.timeout.ms": "90000"}, "t").api_timeout_ms == 90000


def test_a_setting_that_is_not_a_number_gets_javas_config_exception_text():
    with pytest.raises(InvalidArgumentError) as raised:
        admin_client_config({"request.timeout.ms": "soon"}, "t")
    assert str(raised.value) == "Invalid value soon for configuration request.timeout.ms: Not a number of type INT"
    with pytest.raises(
        InvalidArgumentError, match="^Invalid value -1 for configuration retries: Value must be at least 0$"
    ):
        admin_client_config({"retries": "-1"}, "t")


def test_sasl_logs_in_with_the_jaas_config_user():
    jaas = 'org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="a-pw";'
    for protocol in ("sasl_plaintext", "SASL_SSL"):
        config = admin_client_config(
            {"security.protocol": protocol, "sasl.mechanism": "SCRAM-SHA-512", "sasl.jaas.config": jaas}, "t"
        )
        login = config.channel.sasl
        assert login is not None and config.channel.security_protocol == protocol.upper()
        assert (login.mechanism, login.username, login.password) == ("SCRAM-SHA-512", "alice", "a-pw")
    with pytest.raises(InvalidArgumentError, match="Unsupported SASL mechanism GSSAPI"):
        admin_client_config({"security.protocol": "SASL_PLAINTEXT", "sasl.jaas.config": jaas}, "t")


def test_ssl_takes_the_pem_settings_with_kafkas_texts():
    assert admin_client_config({"security.protocol": "ssl"}, "t").channel.security_protocol == "SSL"
    with pytest.raises(InvalidArgumentError) as raised:
        admin_client_config({"security.protocol": "SSL", "ssl.keystore.key": "k", "ssl.keystore.type": "PEM"}, "t")
    assert str(raised.value) == "SSL private key is specified, but certificate chain is not specified."


def test_an_unknown_protocol_gets_kafkas_text():
    with pytest.raises(InvalidArgumentError) as raised:
        admin_client_config({"security.protocol": "TLS"}, "t")
    assert str(raised.value) == (
        "Invalid value TLS for configuration security.protocol: String must be one of: "
        "PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL"
    )


def test_the_file_is_read_with_java_properties_syntax(tmp_path: Path):
    path = tmp_path / "admin.properties"
    path.write_text("# a comment\n! another\nclient.id : from-file\nrequest.timeout.ms=\\\n  7000\n")
    assert read_command_config(path, "t") == AdminClientConfig("from-file", 7000)
    assert read_command_config(None, "t") == AdminClientConfig("t")


def test_a_missing_file_is_a_clear_error(tmp_path: Path):
    with pytest.raises(InvalidArgumentError, match="Cannot read"):
        read_command_config(tmp_path / "nope.properties", "t")


# --- answers ---------------------------------------------------------------------------------------


def test_broker_errors_carry_the_brokers_message_or_kafkas_default_text():
    assert str(broker_error(36, "Topic 'a' already exists.")) == "Topic 'a' already exists."
    error = broker_error(36, None)
    assert isinstance(error, TopicExistsError)
    assert str(error) == "Topic with this name already exists."


def test_not_controller_is_recognised_at_the_top_or_on_every_item():
    assert _says_not_controller({"error_code": 41, "topics": []})
    assert _says_not_controller({"topics": [{"error_code": 41}, {"error_code": 41}]})
    assert not _says_not_controller({"topics": [{"error_code": 41}, {"error_code": 0}]})
    assert not _says_not_controller({"topics": []})


def test_topic_ids_print_as_kafkas_uuid_text():
    raw = bytes(range(16))
    assert uuid_text(raw) == "AAECAwQFBgcICQoLDA0ODw"
    assert uuid_text(bytes(16)) is None
    assert uuid_text(None) is None
    assert uuid_text("AAECAwQFBgcICQoLDA0ODw") == "AAECAwQFBgcICQoLDA0ODw"


def test_describe_configs_entries_and_their_sources():
    entry = _entry(
        {
            "name": "retention.ms",
            "value": "1000",
            "read_only": False,
            "config_source": 1,
            "is_sensitive": False,
            "synonyms": [
                {"name": "retention.ms", "value": "1000", "source": 1},
                {"name": "log.retention.hours", "value": "168", "source": 5},
            ],
        }
    )
    assert entry.source is ConfigSource.DYNAMIC_TOPIC_CONFIG and not entry.is_default
    assert cli_configs.config_entry_line(entry) == (
        "  retention.ms=1000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=1000, "
        "DEFAULT_CONFIG:log.retention.hours=168}"
    )
    v0 = _entry({"name": "a", "value": None, "read_only": True, "is_default": True, "is_sensitive": True})
    assert v0.is_default
    assert cli_configs.config_entry_line(v0) == "  a=null sensitive=true synonyms={}"


# --- topics --describe over the wire -----------------------------------------------------------------


def _info() -> TopicInfo:
    partitions = (
        PartitionInfo("t", 0, 1, 0, (1, 2), (1, 2)),
        PartitionInfo("t", 1, -1, 0, (2, 3), (2,)),
        PartitionInfo("t", 2, 3, 0, (3, 1, 2), (3, 1)),
    )
    return TopicInfo("t", 0, False, partitions, "AAECAwQFBgcICQoLDA0ODw")


ENTRIES = [
    ConfigEntry("min.insync.replicas", "2", ConfigSource.DYNAMIC_TOPIC_CONFIG, False, False),
    ConfigEntry("segment.bytes", "1073741824", ConfigSource.STATIC_BROKER_CONFIG, False, False),
    ConfigEntry("cleanup.policy", "delete", ConfigSource.DEFAULT_CONFIG, False, False),
]


def test_the_topic_line_shows_every_non_default_config_in_the_brokers_order():
    reassigning = {TopicPartition("t", 2): ReplicaAssignment((3, 1, 2), (2,), ())}
    description = topics_admin_ops._description(_info(), ENTRIES, {1, 2, 3}, reassigning, DescribeFilters())
    assert cli_topics.describe_lines(description) == [
        "Topic: t\tTopicId: AAECAwQFBgcICQoLDA0ODw\tPartitionCount: 3\tReplicationFactor: 2\t"
        "Configs: min.insync.replicas=2,segment.bytes=1073741824",
        "\tTopic: t\tPartition: 0\tLeader: 1\tReplicas: 1,2\tIsr: 1,2",
        "\tTopic: t\tPartition: 1\tLeader: none\tReplicas: 2,3\tIsr: 2",
        "\tTopic: t\tPartition: 2\tLeader: 3\tReplicas: 3,1,2\tIsr: 3,1\tAdding Replicas: 2\tRemoving Replicas: ",
    ]


@pytest.mark.parametrize(
    ("filters", "partitions"),
    [
        (DescribeFilters(under_replicated=True), [1]),  # partition 2's adding replica does not count
        (DescribeFilters(unavailable=True), [1, 2]),  # broker 3 is not live
        (DescribeFilters(under_min_isr=True), [1]),
        (DescribeFilters(at_min_isr=True), [0, 2]),
    ],
)
def test_the_partition_filters(filters, partitions):
    reassigning = {TopicPartition("t", 2): ReplicaAssignment((3, 1, 2), (2,), ())}
    description = topics_admin_ops._description(_info(), ENTRIES, {1, 2}, reassigning, filters)
    assert not description.show_topic_line
    assert [p.partition for p in description.partitions] == partitions


def test_topics_with_overrides_shows_only_topics_with_a_non_default_config():
    only_defaults = [e for e in ENTRIES if e.is_default]
    filters = DescribeFilters(topics_with_overrides=True)
    assert not topics_admin_ops._description(_info(), only_defaults, {1, 2, 3}, {}, filters).show_topic_line
    shown = topics_admin_ops._description(_info(), ENTRIES, {1, 2, 3}, {}, filters)
    assert shown.show_topic_line and shown.partitions == ()


# --- option checks of the --bootstrap-server mode ----------------------------------------------------


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"list", "bootstrap-server", "zookeeper"}, "Only one of --bootstrap-server or --zookeeper must be specified"),
        (
            {"alter", "bootstrap-server", "topic", "config", "partitions"},
            'Option combination "[bootstrap-server],[config]" can\'t be used with option "[alter]" '
            "(the kafka-configs CLI supports altering topic configs with a --bootstrap-server option)",
        ),
        ({"alter", "bootstrap-server", "topic"}, 'Missing required argument "[partitions]"'),
        (
            {"alter", "bootstrap-server", "topic", "partitions", "delete-config"},
            'Option "[delete-config]" can\'t be used with option "[bootstrap-server]"',
        ),
    ],
)
def test_topics_option_checks_with_bootstrap_server(given, message):
    with pytest.raises(UsageError) as raised:
        cli_topics.check_args(given, has_args=True)
    assert str(raised.value) == message


def test_topics_create_needs_no_counts_with_bootstrap_server():
    cli_topics.check_args({"create", "bootstrap-server", "topic"}, has_args=True)
    with pytest.raises(UsageError, match=r'Missing required argument "\[partitions\]"'):
        cli_topics.check_args({"create", "topic"}, has_args=True)


def test_configs_entity_types_allowed_depend_on_the_connection():
    with pytest.raises(InvalidArgumentError) as raised:
        cli_configs.resolve_entity(["groups"], [], [], False, bootstrap=True)
    assert str(raised.value) == (
        "Invalid entity type groups, the entity type must be one of "
        "topics,clients,users,brokers,broker-loggers,ips with the --bootstrap-server argument"
    )
    with pytest.raises(InvalidArgumentError, match="with the --zookeeper argument$"):
        cli_configs.resolve_entity(["broker-loggers"], [], [], False)


def test_synonym_values_print_null_as_java_does():
    entry = ConfigEntry(
        "ssl.key.password",
        None,
        ConfigSource.DYNAMIC_BROKER_CONFIG,
        True,
        False,
        (ConfigSynonym("ssl.key.password", None, ConfigSource.DYNAMIC_BROKER_CONFIG),),
    )
    assert cli_configs.config_entry_line(entry) == (
        "  ssl.key.password=null sensitive=true synonyms={DYNAMIC_BROKER_CONFIG:ssl.key.password=null}"
    )


# --- log dir moves in a reassignment -----------------------------------------------------------------


def test_log_dir_move_states_and_kafkas_texts():
    from kafkaops.admin.kafka_client.log_dirs import TopicPartitionReplica as R
    from kafkaops.admin.log_dir_moves import ReplicaDirs, move_state_lines, move_states, moves_started_line

    targets = {R("t", 0, 2): "/d2", R("t", 0, 1): "/d1", R("t", 1, 1): "/d1", R("t", 1, 3): "/d3", R("t", 1, 4): "/d4"}
    targets[R("t", 1, 5)] = "/d5"
    found = {
        R("t", 0, 1): ReplicaDirs("/d1", None),
        R("t", 0, 2): ReplicaDirs("/d0", "/d2"),
        R("t", 1, 1): ReplicaDirs("/d0", "/dx"),
        R("t", 1, 3): ReplicaDirs("/d0", None),
        R("t", 1, 4): ReplicaDirs(None, None),
    }
    states = move_states(targets, found)
    assert [s.done for s in states.values()] == [True, False, False, True, False, False]
    assert move_state_lines(states) == [
        "Reassignment of replica t-0-1 completed successfully.",
        "Partition t-1 on broker 1 is being moved to log dir /dx instead of /d1.",
        "Reassignment of replica t-0-2 is still in progress.",
        "Partition t-1 on broker 3 is not being moved from log dir /d0 to /d3.",
        "Partition t-1 is not found in any live log dir on broker 4. There is likely an offline log directory on the broker.",
        "Partition t-1 cannot be found in any live log directory on broker 5.",
    ]
    assert move_state_lines({}) == [""]
    assert (
        moves_started_line([R("t", 1, 1), R("t", 0, 2)]) == "Successfully started log directory moves for: t-1-1,t-0-2"
    )
