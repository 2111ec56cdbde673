"""Broker config from YAML: Kafka 2.8's names, defaults, parsing and `validateValues` texts."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from kafkaops.cluster.broker.config import (
    BROKER_CONFIGS,
    BrokerConfig,
    attribute_name,
    load_broker_config,
    parse_broker_config,
)
from kafkaops.cluster.common.errors import InvalidConfigurationError
from kafkaops.cluster.zk.values import EndPoint

ZK = {"zookeeper.connect": "127.0.0.1:2181/kafka"}


def config(**values: Any) -> BrokerConfig:
    """Properties given as keyword arguments with `_` for `.`: Kafka's names contain no `_`."""
    return parse_broker_config({**ZK, **{k.replace("_", "."): v for k, v in values.items()}})


def error(values: dict[str, Any]) -> str:
    with pytest.raises(InvalidConfigurationError) as info:
        parse_broker_config({**ZK, **values})
    return str(info.value)


# Kafka 2.8 `Defaults` for the properties issue 3 names, and the others a broker needs.
KAFKA_DEFAULTS = {
    "broker.id": -1,
    "zookeeper.session.timeout.ms": 18000,
    "zookeeper.connection.timeout.ms": None,
    "broker.rack": None,
    "num.partitions": 1,
    "default.replication.factor": 1,
    "min.insync.replicas": 1,
    "unclean.leader.election.enable": False,
    "delete.topic.enable": True,
    "auto.leader.rebalance.enable": True,
    "leader.imbalance.per.broker.percentage": 10,
    "leader.imbalance.check.interval.seconds": 300,
    "replica.lag.time.max.ms": 30000,
    "controlled.shutdown.enable": True,
    "controlled.shutdown.max.retries": 3,
    "controlled.shutdown.retry.backoff.ms": 5000,
    "log.dir": "/tmp/kafka-logs",
    "log.dirs": None,
    "advertised.listeners": None,
    "inter.broker.protocol.version": "2.8-IV1",
    "inter.broker.listener.name": None,
    "replica.fetch.max.bytes": 1048576,
    "replica.fetch.min.bytes": 1,
    "replica.fetch.wait.max.ms": 500,
    "replica.fetch.backoff.ms": 1000,
    "replica.fetch.response.max.bytes": 10485760,
    "socket.request.max.bytes": 104857600,
    "log.segment.bytes": 1073741824,
    "log.retention.hours": 168,
    "log.retention.ms": None,
    "log.retention.bytes": -1,
    "log.retention.check.interval.ms": 300000,
    "log.roll.hours": 168,
    "log.roll.jitter.hours": 0,
    "log.index.interval.bytes": 4096,
    "log.cleanup.policy": ("delete",),
    "offsets.topic.replication.factor": 3,
    "offsets.topic.num.partitions": 50,
    "offsets.topic.segment.bytes": 104857600,
    "offsets.retention.minutes": 10080,
    "offsets.retention.check.interval.ms": 600000,
    "offsets.commit.timeout.ms": 5000,
    "offsets.load.buffer.size": 5242880,
    "offset.metadata.max.bytes": 4096,
    "reserved.broker.max.id": 1000,
    "broker.id.generation.enable": True,
    "message.max.bytes": 1048588,
    "log.message.format.version": "2.8-IV1",
    "compression.type": "producer",
}


@pytest.mark.parametrize(("name", "value"), KAFKA_DEFAULTS.items())
def test_kafka_defaults(name: str, value: Any) -> None:
    assert config().get(name) == value


def test_derived_defaults() -> None:
    c = config()
    assert c.listeners == (EndPoint("PLAINTEXT", "", 9092),)
    assert c.effective_advertised_listeners == c.listeners
    assert c.effective_inter_broker_listener_name == "PLAINTEXT"
    assert c.effective_log_dirs == ("/tmp/kafka-logs",)
    assert c.effective_zookeeper_connection_timeout_ms == 18000
    assert c.effective_log_retention_ms == c.effective_log_roll_ms == 7 * 24 * 3_600_000
    assert c.effective_log_roll_jitter_ms == 0
    assert c.effective_log_flush_interval_ms == 2**63 - 1


def test_fields_are_the_kafka_names_in_snake_case() -> None:
    # every field but the `listener.name.<listener>.<key>` overrides (parsed, and SASL's as given) is a property
    fields = [f.name for f in dataclasses.fields(BrokerConfig)]
    assert fields == [attribute_name(n) for n in BROKER_CONFIGS] + ["listener_overrides", "listener_sasl_configs"]
    c = config()
    assert all(c.get(name) == getattr(c, attribute_name(name)) for name in BROKER_CONFIGS)
    with pytest.raises(KeyError, match="Unknown broker config name: borker.id"):
        c.get("borker.id")


def test_yaml_values_become_kafka_strings() -> None:
    c = config(
        broker_id=3,
        broker_rack="r1",
        unclean_leader_election_enable=True,
        log_dirs=["/data/a", "/data/b"],
        log_cleanup_policy=["compact", "delete"],
        replica_lag_time_max_ms="10000",
        zookeeper_connection_timeout_ms=None,  # YAML null: not set
    )
    assert (c.broker_id, c.broker_rack, c.unclean_leader_election_enable) == (3, "r1", True)
    assert c.effective_log_dirs == ("/data/a", "/data/b")
    assert c.log_cleanup_policy == ("compact", "delete")
    assert c.replica_lag_time_max_ms == 10000
    assert c.zookeeper_connection_timeout_ms is None
    assert config(log_dirs=" /x ,, /y ").log_dirs == ("/x", "/y")


def test_fallbacks() -> None:
    c = config(
        log_retention_minutes=10, log_roll_ms=5000, log_roll_jitter_hours=1, zookeeper_connection_timeout_ms=6000
    )
    assert c.effective_log_retention_ms == 600_000
    assert config(log_retention_ms=42, log_retention_minutes=10).effective_log_retention_ms == 42
    assert config(log_retention_ms=-5).effective_log_retention_ms == -1
    assert (c.effective_log_roll_ms, c.effective_log_roll_jitter_ms) == (5000, 3_600_000)
    assert c.effective_zookeeper_connection_timeout_ms == 6000
    assert config(log_flush_interval_ms=7).effective_log_flush_interval_ms == 7


# --- refusals, with Kafka's texts ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "text"),
    [
        ({"borker.id": 1}, "Unknown broker config name: borker.id"),
        ({"port": 9092}, "Unknown broker config name: port"),
        ({"broker.id": "one"}, "Invalid value one for configuration broker.id: Not a number of type INT"),
        ({"num.partitions": 0}, "Invalid value 0 for configuration num.partitions: Value must be at least 1"),
        (
            {"unclean.leader.election.enable": "yes"},
            "Invalid value yes for configuration unclean.leader.election.enable: Expected value to be either true "
            "or false",
        ),
        (
            {"inter.broker.protocol.version": "9.9"},
            "Invalid value 9.9 for configuration inter.broker.protocol.version: Version `9.9` is not a valid version",
        ),
        (
            {"offsets.topic.replication.factor": 40000},
            "Invalid value 40000 for configuration offsets.topic.replication.factor: Not a number of type SHORT",
        ),
        (
            {"log.message.timestamp.type": "Now"},
            "Invalid value Now for configuration log.message.timestamp.type: String must be one of: CreateTime, "
            "LogAppendTime",
        ),
        (
            {"log.cleanup.policy": ["delete", "shred"]},
            "Invalid value shred for configuration log.cleanup.policy: String must be one of: compact, delete",
        ),
        (
            {"replica.lag.time.max.ms": 3e4},
            "Invalid value 30000.0 for configuration replica.lag.time.max.ms: Not a number of type LONG",
        ),
        (
            {"log.dirs": {"a": 1}},
            "Invalid value {'a': 1} for configuration log.dirs: Expected a string, a number, a boolean or a list of "
            "them",
        ),
        (
            {"broker.id": 1001},
            "requirement failed: broker.id must be greater than or equal to -1 and not greater than "
            "reserved.broker.max.id",
        ),
        (
            {"broker.id.generation.enable": False},
            "requirement failed: broker.id must be greater than or equal to 0",
        ),
        (
            {"log.retention.ms": 0},
            "requirement failed: log.retention.ms must be unlimited (-1) or, greater than or equal to 1",
        ),
        ({"log.roll.ms": 0}, "requirement failed: log.roll.ms must be greater than or equal to 1"),
        ({"log.roll.jitter.ms": -1}, "requirement failed: log.roll.jitter.ms must be greater than or equal to 0"),
        (
            {"log.dirs": " , "},
            "requirement failed: At least one log directory must be defined via log.dirs or log.dir.",
        ),
        (
            {"replica.fetch.wait.max.ms": 40000},
            "requirement failed: replica.socket.timeout.ms should always be at least replica.fetch.wait.max.ms to "
            "prevent unnecessary socket timeouts",
        ),
        (
            {"replica.fetch.wait.max.ms": 20000, "replica.lag.time.max.ms": 10000},
            "requirement failed: replica.fetch.wait.max.ms should always be less than or equal to "
            "replica.lag.time.max.ms to prevent frequent changes in ISR",
        ),
        (
            {"compression.type": "brotli"},
            "requirement failed: compression.type : brotli is not valid. Valid options are "
            "uncompressed,zstd,lz4,snappy,gzip,producer",
        ),
    ],
)
def test_refused(values: dict[str, Any], text: str) -> None:
    assert error(values) == text


def test_zookeeper_connect_is_required() -> None:
    with pytest.raises(InvalidConfigurationError) as info:
        parse_broker_config({"broker.id": 1})
    assert str(info.value) == "Missing required configuration `zookeeper.connect` which has no default value."


def test_first_bad_value_in_kafka_definition_order() -> None:
    # broker.id is defined before num.partitions
    assert "broker.id" in error({"num.partitions": 0, "broker.id": "x"})


# --- listeners ---------------------------------------------------------------------------------------------


def test_listeners() -> None:
    c = config(
        listeners="INTERNAL://0.0.0.0:9093, external://[::1]:9094",
        advertised_listeners="INTERNAL://10.0.0.1:9093,EXTERNAL://kafka.example.com:9094",
        listener_security_protocol_map="INTERNAL:PLAINTEXT,EXTERNAL:plaintext",
        inter_broker_listener_name="INTERNAL",
    )
    assert c.listeners == (EndPoint("INTERNAL", "0.0.0.0", 9093), EndPoint("EXTERNAL", "::1", 9094))
    assert [str(e) for e in c.effective_advertised_listeners] == [
        "INTERNAL://10.0.0.1:9093",
        "EXTERNAL://kafka.example.com:9094",
    ]
    assert c.listener_security_protocol_map == {"INTERNAL": "PLAINTEXT", "EXTERNAL": "PLAINTEXT"}
    assert c.effective_inter_broker_listener_name == "INTERNAL"
    assert (
        config(
            listeners="PLAINTEXT://:0,PLAINTEXT2://:0",
            listener_security_protocol_map="PLAINTEXT:PLAINTEXT,PLAINTEXT2:PLAINTEXT",
        )
        .listeners[1]
        .port
        == 0
    )


@pytest.mark.parametrize(
    ("values", "text"),
    [
        (
            {"listeners": "127.0.0.1:9092"},
            "Error creating broker listeners from '127.0.0.1:9092': Unable to parse 127.0.0.1:9092 to a broker endpoint",
        ),
        (
            {"listeners": "PLAINTEXT://127.0.0.1:9092,FOO://127.0.0.1:9093"},
            "Error creating broker listeners from 'PLAINTEXT://127.0.0.1:9092,FOO://127.0.0.1:9093': No security "
            "protocol defined for listener FOO",
        ),
        (
            # an SSL listener needs a key store (Kafka fails when it builds the listener's SSL engine)
            {"listeners": "PLAINTEXT://:9092,SSL://:9093"},
            "Listener SSL uses SSL but has no SSL key store (ssl.keystore.location, or ssl.keystore.key and "
            "ssl.keystore.certificate.chain)",
        ),
        (
            {"listeners": "PLAINTEXT://:70000"},
            "Invalid value PLAINTEXT://:70000 for configuration listeners: Port 70000 of listener PLAINTEXT is not "
            "between 0 and 65535",
        ),
        (
            {"listeners": "PLAINTEXT://a:9092,plaintext://b:9093"},
            "requirement failed: Each listener must have a different name, listeners: "
            "PLAINTEXT://a:9092,plaintext://b:9093",
        ),
        (
            {
                "listeners": "PLAINTEXT://a:9092,B://b:9092",
                "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,B:PLAINTEXT",
            },
            "requirement failed: Each listener must have a different port, listeners: PLAINTEXT://a:9092,B://b:9092",
        ),
        (
            {"listener.security.protocol.map": "PLAINTEXT:TLS"},
            "Invalid security protocol `TLS` defined in listener.security.protocol.map",
        ),
        (
            {"listener.security.protocol.map": "PLAINTEXT"},
            "Error parsing configuration property 'listener.security.protocol.map': Map entry 'PLAINTEXT' is not of "
            "the form key:value",
        ),
        (
            {"listeners": "A://:9092", "listener.security.protocol.map": "A:PLAINTEXT"},
            "requirement failed: inter.broker.listener.name must be a listener name defined in advertised.listeners. "
            "The valid options based on currently configured listeners are A",
        ),
        (
            {
                "listeners": "PLAINTEXT://:9092",
                "advertised.listeners": "PLAINTEXT://h:9092,B://h:9093",
                "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,B:PLAINTEXT",
            },
            "requirement failed: advertised.listeners listener names must be equal to or a subset of the ones "
            "defined in listeners. Found PLAINTEXT,B. The valid options based on the current configuration are "
            "PLAINTEXT",
        ),
        (
            {"listeners": "PLAINTEXT://0.0.0.0:9092"},
            "requirement failed: advertised.listeners cannot use the nonroutable meta-address 0.0.0.0. Use a "
            "routable IP address.",
        ),
    ],
)
def test_listener_refusals(values: dict[str, Any], text: str) -> None:
    assert error(values) == text


# --- the YAML file --------------------------------------------------------------------------------------------


def test_load_from_yaml(tmp_path: Path) -> None:
    path = tmp_path / "broker.yaml"
    path.write_text(
        "broker.id: 2\n"
        "listeners: PLAINTEXT://127.0.0.1:19092\n"
        "log.dirs: /var/lib/kafkaops/2\n"
        "zookeeper.connect: 127.0.0.1:2181/kafkaops\n"
        "zookeeper.session.timeout.ms: 6000\n"
        "broker.rack: rack-a\n"
        "unclean.leader.election.enable: false\n"
    )
    c = load_broker_config(path)
    assert (c.broker_id, c.broker_rack, c.zookeeper_session_timeout_ms) == (2, "rack-a", 6000)
    assert c.listeners == (EndPoint("PLAINTEXT", "127.0.0.1", 19092),)
    assert c.effective_log_dirs == ("/var/lib/kafkaops/2",)


def test_yaml_file_errors_name_the_file(tmp_path: Path) -> None:
    path = tmp_path / "broker.yaml"

    def load_error() -> str:
        with pytest.raises(InvalidConfigurationError) as info:
            load_broker_config(path)
        return str(info.value)

    assert load_error().startswith(f"{path}: cannot read broker config: ")
    path.write_text("zookeeper.connect: zk:2181\nbroker.id: x\n")
    assert load_error() == f"{path}: Invalid value x for configuration broker.id: Not a number of type INT"
    path.write_text("broker.id: [1\n")
    assert load_error().startswith(f"{path}: not valid YAML: ")
    path.write_text("- broker.id\n")
    assert load_error() == f"{path}: a broker config is a mapping of Kafka property names to values"
    path.write_text("")
    assert load_error() == f"{path}: Missing required configuration `zookeeper.connect` which has no default value."
    path.write_text("zookeeper.connect: zk:2181\n1: 2\n")
    assert load_error() == f"{path}: Unknown broker config name: 1"


def test_sasl_listener_settings() -> None:
    from kafkaops.cluster.broker import sasl_config

    jaas = (
        'org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-pw" '
        'user_admin="admin-pw" user_alice="alice-pw";'
    )
    c = parse_broker_config(
        {
            **ZK,
            "listeners": "SASL_PLAINTEXT://127.0.0.1:0",
            "inter.broker.listener.name": "SASL_PLAINTEXT",
            "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-512",
            "sasl.mechanism.inter.broker.protocol": "PLAIN",
            "listener.name.sasl_plaintext.plain.sasl.jaas.config": jaas,
        }
    )
    assert sasl_config.enabled_mechanisms(c, "SASL_PLAINTEXT") == ("PLAIN", "SCRAM-SHA-512")
    assert sasl_config.listener_plain_users(c, "SASL_PLAINTEXT") == {"admin": "admin-pw", "alice": "alice-pw"}
    login = sasl_config.inter_broker_login(c)
    assert login is not None and (login.mechanism, login.username, login.password) == ("PLAIN", "admin", "admin-pw")
    with pytest.raises(InvalidConfigurationError, match="Unknown broker config name: listener.name.x.ssl.foo"):
        parse_broker_config({**ZK, "listener.name.x.ssl.foo": "1"})


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            {"sasl.enabled.mechanisms": "PLAIN"},
            "requirement failed: sasl.mechanism.inter.broker.protocol must be included in sasl.enabled.mechanisms "
            "when SASL is used for inter-broker communication",
        ),
    ],
)
def test_sasl_inter_broker_mechanism_must_be_enabled(extra: dict[str, str], message: str) -> None:
    values = {
        **ZK,
        "listeners": "SASL_PLAINTEXT://127.0.0.1:0",
        "inter.broker.listener.name": "SASL_PLAINTEXT",
        "sasl.mechanism.inter.broker.protocol": "SCRAM-SHA-512",
        **extra,
    }
    with pytest.raises(InvalidConfigurationError) as raised:
        parse_broker_config(values)
    assert str(raised.value) == message


def test_sasl_listener_checks() -> None:
    from kafkaops.cluster.broker import sasl_config

    base = {**ZK, "listeners": "SASL_PLAINTEXT://127.0.0.1:0", "inter.broker.listener.name": "SASL_PLAINTEXT"}
    with pytest.raises(InvalidConfigurationError, match="kafkaops brokers implement PLAIN, SCRAM-SHA-256"):
        sasl_config.check_sasl_listeners(parse_broker_config(base))  # Kafka's default: GSSAPI
    plain_only = {**base, "sasl.enabled.mechanisms": "PLAIN", "sasl.mechanism.inter.broker.protocol": "PLAIN"}
    with pytest.raises(InvalidConfigurationError, match="PLAIN is enabled but has no login module"):
        sasl_config.check_sasl_listeners(parse_broker_config(plain_only))
    scram = {
        **base,
        "sasl.enabled.mechanisms": "SCRAM-SHA-256",
        "sasl.mechanism.inter.broker.protocol": "SCRAM-SHA-256",
    }
    with pytest.raises(InvalidConfigurationError, match="needs a login module for SCRAM-SHA-256"):
        sasl_config.check_sasl_listeners(parse_broker_config(scram))
