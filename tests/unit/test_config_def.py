"""Topic and broker config validation against Kafka 2.8's texts (kafka-reference.md §2.2).

Sources checked where the reference is terse: `ConfigDef.parseType` / `Range` / `ValidString` / `ValidList`
(clients/.../config/ConfigDef.java), `ConfigException(name, value, message)` =
"Invalid value <value> for configuration <name>: <message>" where <value> is the *parsed* value for a
validator failure (so a DOUBLE prints as Java's Double.toString) and the raw string for a parse failure,
`LogConfig.validate` (core/.../log/LogConfig.scala), `ApiVersion.apply`, `ThrottledReplicaListValidator`
(core/.../server/ConfigHandler.scala), `DynamicBrokerConfig.validateConfigs`.
"""

from __future__ import annotations

import pytest

from kafkaops.admin.config_def import (
    TOPIC_CONFIGS,
    topic_config_value,
    validate_broker_config,
    validate_topic_config,
    validate_topic_config_names,
)
from kafkaops.cluster.common.errors import InvalidConfigurationError

LONG_MAX = 2**63 - 1
THROTTLE_FORMAT = (
    "must be the literal '*' or a list of replicas in the following format: "
    "[partitionId]:[brokerId],[partitionId]:[brokerId],..."
)


def topic_error(config: dict[str, str]) -> str:
    with pytest.raises(InvalidConfigurationError) as info:
        validate_topic_config(config)
    return str(info.value)


# --- names -------------------------------------------------------------------------------------------

# §2.2's table: LogConfig.configNames in 2.8, with each Kafka default as ConfigDef parses it.
KAFKA_DEFAULTS = {
    "cleanup.policy": ["delete"],
    "compression.type": "producer",
    "delete.retention.ms": 86400000,
    "file.delete.delay.ms": 60000,
    "flush.messages": LONG_MAX,
    "flush.ms": LONG_MAX,
    "follower.replication.throttled.replicas": [],
    "index.interval.bytes": 4096,
    "leader.replication.throttled.replicas": [],
    "max.compaction.lag.ms": LONG_MAX,
    "max.message.bytes": 1048588,
    "message.downconversion.enable": True,
    "message.format.version": "2.8-IV1",
    "message.timestamp.difference.max.ms": LONG_MAX,
    "message.timestamp.type": "CreateTime",
    "min.cleanable.dirty.ratio": 0.5,
    "min.compaction.lag.ms": 0,
    "min.insync.replicas": 1,
    "preallocate": False,
    "retention.bytes": -1,
    "retention.ms": 604800000,
    "segment.bytes": 1073741824,
    "segment.index.bytes": 10485760,
    "segment.jitter.ms": 0,
    "segment.ms": 604800000,
    "unclean.leader.election.enable": False,
}


def test_topic_config_names_are_kafka_28s() -> None:
    assert sorted(TOPIC_CONFIGS) == sorted(KAFKA_DEFAULTS)


@pytest.mark.parametrize("name", ["x", "retention.hours", "log.retention.ms", "Retention.ms", "retention.ms "])
def test_unknown_topic_config_name(name: str) -> None:
    assert topic_error({name: "1"}) == f"Unknown topic config name: {name}"


def test_unknown_name_is_reported_before_bad_values() -> None:
    # LogConfig.validate: validateNames first, then configDef.parse.
    assert topic_error({"retention.ms": "abc", "foo": "1"}) == "Unknown topic config name: foo"


def test_validate_names_takes_a_list_of_names() -> None:
    validate_topic_config_names(["retention.ms", "cleanup.policy"])
    with pytest.raises(InvalidConfigurationError, match="^Unknown topic config name: bar$"):
        validate_topic_config_names(["retention.ms", "bar"])


# --- parse and validator errors ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "value", "shown", "reason"),
    [
        # LONG / INT: Long.parseLong / Integer.parseInt on the trimmed string; the raw value is shown
        ("retention.ms", "abc", "abc", "Not a number of type LONG"),
        ("retention.ms", "1.5", "1.5", "Not a number of type LONG"),
        ("retention.ms", "", "", "Not a number of type LONG"),
        ("retention.ms", "9223372036854775808", "9223372036854775808", "Not a number of type LONG"),
        ("retention.bytes", "-9223372036854775809", "-9223372036854775809", "Not a number of type LONG"),
        ("segment.bytes", "2147483648", "2147483648", "Not a number of type INT"),
        ("min.insync.replicas", "-2147483649", "-2147483649", "Not a number of type INT"),
        ("max.message.bytes", "1e6", "1e6", "Not a number of type INT"),
        ("min.cleanable.dirty.ratio", "abc", "abc", "Not a number of type DOUBLE"),
        # BOOLEAN: equalsIgnoreCase("true"/"false") only
        ("preallocate", "yes", "yes", "Expected value to be either true or false"),
        ("unclean.leader.election.enable", "1", "1", "Expected value to be either true or false"),
        # Range.atLeast / between on the parsed value
        ("segment.bytes", "1", "1", "Value must be at least 14"),
        ("segment.bytes", "13", "13", "Value must be at least 14"),
        ("segment.ms", "0", "0", "Value must be at least 1"),
        ("retention.ms", "-2", "-2", "Value must be at least -1"),
        ("min.insync.replicas", "0", "0", "Value must be at least 1"),
        ("max.compaction.lag.ms", "0", "0", "Value must be at least 1"),
        ("min.compaction.lag.ms", "-1", "-1", "Value must be at least 0"),
        ("max.message.bytes", "-1", "-1", "Value must be at least 0"),
        ("min.cleanable.dirty.ratio", "2", "2.0", "Value must be no more than 1"),  # Double 2.0
        ("min.cleanable.dirty.ratio", "1.5", "1.5", "Value must be no more than 1"),
        ("min.cleanable.dirty.ratio", "-0.5", "-0.5", "Value must be at least 0"),
        # ValidString / ValidList (case-sensitive, after trimming)
        ("cleanup.policy", "compact,foo", "foo", "String must be one of: compact, delete"),
        ("cleanup.policy", "Compact", "Compact", "String must be one of: compact, delete"),
        (
            "compression.type",
            "brotli",
            "brotli",
            "String must be one of: uncompressed, zstd, lz4, snappy, gzip, producer",
        ),
        ("message.timestamp.type", "createtime", "createtime", "String must be one of: CreateTime, LogAppendTime"),
        # ApiVersionValidator
        ("message.format.version", "3.9", "3.9", "Version `3.9` is not a valid version"),
        ("message.format.version", "2.8-IV2", "2.8-IV2", "Version `2.8-IV2` is not a valid version"),
        ("message.format.version", "0.10.3", "0.10.3", "Version `0.10.3` is not a valid version"),
        ("message.format.version", "0.7", "0.7", "Version `0.7` is not a valid version"),
    ],
)
def test_value_error_text(name: str, value: str, shown: str, reason: str) -> None:
    assert topic_error({name: value}) == f"Invalid value {shown} for configuration {name}: {reason}"


@pytest.mark.parametrize("name", ["leader.replication.throttled.replicas", "follower.replication.throttled.replicas"])
@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("0:1,x", "[0:1, x]"),  # the parsed java.util.List is shown
        ("1", "[1]"),
        ("0:1, 1:*", "[0:1, 1:*]"),
        ("0:1,*", "[0:1, *]"),
        ("all", "[all]"),
    ],
)
def test_throttled_replicas_error_text(name: str, value: str, shown: str) -> None:
    assert topic_error({name: value}) == f"Invalid value {shown} for configuration {name}: {name} {THROTTLE_FORMAT}"


def test_throttled_replicas_star_must_stand_alone() -> None:
    name = "leader.replication.throttled.replicas"
    assert topic_error({name: "*,0:1"}) == f"Invalid value [*, 0:1] for configuration {name}: {name} {THROTTLE_FORMAT}"


@pytest.mark.parametrize(("value", "expected"), [("1.", 1.0), ("0x1p-1", 0.5)])
def test_double_accepts_java_syntax(value: str, expected: float) -> None:
    assert validate_topic_config({"min.cleanable.dirty.ratio": value}) == {"min.cleanable.dirty.ratio": expected}


def test_double_shown_as_java_prints_it() -> None:
    assert topic_error({"min.cleanable.dirty.ratio": "10000000"}) == (
        "Invalid value 1.0E7 for configuration min.cleanable.dirty.ratio: Value must be no more than 1"
    )


# --- values that pass ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "value", "parsed"),
    [
        ("retention.ms", " 5 ", 5),  # trimmed
        ("retention.ms", "+5", 5),  # Long.parseLong takes a leading '+'
        ("retention.ms", "-1", -1),
        ("retention.bytes", "-9223372036854775808", -(2**63)),  # no validator: any LONG
        ("flush.messages", "9223372036854775807", LONG_MAX),
        ("segment.bytes", "14", 14),
        ("segment.bytes", "2147483647", 2**31 - 1),
        ("preallocate", "TRUE", True),
        ("preallocate", " False ", False),
        ("min.cleanable.dirty.ratio", "0", 0.0),
        ("min.cleanable.dirty.ratio", "1", 1.0),
        ("min.cleanable.dirty.ratio", ".25", 0.25),
        ("min.cleanable.dirty.ratio", "5e-1", 0.5),
        ("cleanup.policy", "compact, delete", ["compact", "delete"]),
        ("cleanup.policy", "", []),
        ("compression.type", " zstd ", "zstd"),
        ("leader.replication.throttled.replicas", "*", ["*"]),
        ("leader.replication.throttled.replicas", " * ", ["*"]),
        ("follower.replication.throttled.replicas", "0:1 , 1:2", ["0:1", "1:2"]),
        ("follower.replication.throttled.replicas", "", []),
    ],
)
def test_parsed_value(name: str, value: str, parsed: object) -> None:
    assert validate_topic_config({name: value}) == {name: parsed}


@pytest.mark.parametrize(
    "version",
    ["2.8", "2.8-IV1", "2.8-IV0", "0.10.2.1", "2.8.1", "0.8.0", "0.9.0", "0.10.0-IV1", "0.11.0", "1.0", "2.7-IV2"],
)
def test_message_format_version_valid(version: str) -> None:
    assert validate_topic_config({"message.format.version": version}) == {"message.format.version": version}


# --- cross-config check ----------------------------------------------------------------------------------


def test_min_compaction_lag_above_max_is_a_conflict() -> None:
    assert topic_error({"min.compaction.lag.ms": "10", "max.compaction.lag.ms": "5"}) == (
        "conflict topic config setting min.compaction.lag.ms (10) > max.compaction.lag.ms (5)"
    )


def test_equal_compaction_lags_are_fine() -> None:
    assert validate_topic_config({"min.compaction.lag.ms": "5", "max.compaction.lag.ms": "5"}) == {
        "min.compaction.lag.ms": 5,
        "max.compaction.lag.ms": 5,
    }


def test_value_error_comes_before_the_lag_conflict() -> None:
    # configDef.parse throws before validateValues runs.
    config = {"min.compaction.lag.ms": "10", "max.compaction.lag.ms": "5", "segment.bytes": "1"}
    assert topic_error(config) == "Invalid value 1 for configuration segment.bytes: Value must be at least 14"


# --- effective topic config ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "expected"), sorted(KAFKA_DEFAULTS.items()))
def test_kafka_default_when_nothing_is_set(name: str, expected: object) -> None:
    assert topic_config_value({}, name, {}) == expected


@pytest.mark.parametrize(
    ("overrides", "broker_defaults", "expected"),
    [
        ({"retention.ms": "1000"}, {"log.retention.ms": "2000"}, 1000),  # topic override wins
        ({"retention.ms": "1000"}, {}, 1000),
        ({}, {"log.retention.ms": "2000"}, 2000),  # cluster default, under its KafkaConfig name
        ({}, {"retention.ms": "2000"}, 604800000),  # the topic name is not a broker config
        ({"segment.ms": "1"}, {"log.retention.ms": "2000"}, 2000),  # other names do not leak
    ],
)
def test_topic_config_value_precedence(
    overrides: dict[str, str], broker_defaults: dict[str, str], expected: int
) -> None:
    assert topic_config_value(overrides, "retention.ms", broker_defaults) == expected


@pytest.mark.parametrize(
    ("name", "broker_name", "raw", "expected"),
    [
        ("segment.ms", "log.roll.ms", "1000", 1000),
        ("max.message.bytes", "message.max.bytes", "2000000", 2000000),
        ("min.insync.replicas", "min.insync.replicas", "2", 2),
        ("cleanup.policy", "log.cleanup.policy", "compact", ["compact"]),
        ("preallocate", "log.preallocate", "true", True),
    ],
)
def test_topic_config_value_broker_synonyms(name: str, broker_name: str, raw: str, expected: object) -> None:
    # LogConfig.TopicConfigSynonyms
    assert topic_config_value({}, name, {broker_name: raw}) == expected


# --- broker dynamic configs ------------------------------------------------------------------------------------

RATES = [
    "leader.replication.throttled.rate",
    "follower.replication.throttled.rate",
    "replica.alter.log.dirs.io.max.bytes.per.second",
]


def broker_error(config: dict[str, str]) -> str:
    with pytest.raises(InvalidConfigurationError) as info:
        validate_broker_config(config)
    return str(info.value)


@pytest.mark.parametrize("name", RATES)
@pytest.mark.parametrize("value", ["0", "10485760", str(LONG_MAX)])
def test_throttle_rates_accept_longs_from_zero(name: str, value: str) -> None:
    validate_broker_config({name: value})


@pytest.mark.parametrize("name", RATES)
@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("-1", "Value must be at least 0"),
        ("1.5", "Not a number of type LONG"),
        ("10MB", "Not a number of type LONG"),
        ("9223372036854775808", "Not a number of type LONG"),
    ],
)
def test_throttle_rates_must_be_longs_from_zero(name: str, value: str, reason: str) -> None:
    assert broker_error({name: value}) == f"Invalid value {value} for configuration {name}: {reason}"


@pytest.mark.parametrize("name", ["broker.id", "log.dirs", "zookeeper.connect", "num.partitions"])
def test_static_broker_configs_are_refused(name: str) -> None:
    assert broker_error({name: "1"}) == f"Cannot update these configs dynamically: Set({name})"


def test_static_configs_are_refused_before_values_are_parsed() -> None:
    # DynamicBrokerConfig.validateConfigs: nonDynamicConfigs first, then validateConfigTypes.
    config = {"leader.replication.throttled.rate": "-1", "broker.id": "1"}
    assert broker_error(config) == "Cannot update these configs dynamically: Set(broker.id)"


def test_several_static_configs_print_as_kafkas_scala_set() -> None:
    # props.asScala.keySet.intersect(nonDynamicProps): the Properties' order, a HashSet beyond four
    # (both texts printed by Kafka's code on Scala 2.13)
    three = {"zookeeper.connect": "z", "log.dirs": "/d", "broker.id": "1"}
    assert broker_error(three) == "Cannot update these configs dynamically: Set(zookeeper.connect, broker.id, log.dirs)"
    five = dict.fromkeys(
        ["broker.id", "log.dirs", "num.partitions", "zookeeper.connect", "log.retention.hours", "my.custom"], "1"
    )
    assert broker_error(five) == (
        "Cannot update these configs dynamically: "
        "HashSet(num.partitions, log.dirs, zookeeper.connect, log.retention.hours, broker.id)"
    )


@pytest.mark.parametrize("name", ["my.custom.config", "metric.reporters.custom", "x"])
def test_custom_broker_configs_are_allowed(name: str) -> None:
    validate_broker_config({name: "anything at all"})


def test_dynamic_log_default_is_validated() -> None:
    # log.cleanup.policy is a DynamicLogConfig name; KafkaConfig gives it ValidList.in(compact, delete).
    assert broker_error({"log.cleanup.policy": "foo"}) == (
        "Invalid value foo for configuration log.cleanup.policy: String must be one of: compact, delete"
    )


@pytest.mark.parametrize("name", ["listeners", "advertised.listeners"])
def test_listener_configs_are_dynamic_per_broker(name: str) -> None:
    validate_broker_config({name: "PLAINTEXT://:9092"})


@pytest.mark.parametrize("name", ["log.message.format.version", "log.retention.hours"])
def test_other_static_kafka_configs_are_refused(name: str) -> None:
    assert broker_error({name: "1"}) == f"Cannot update these configs dynamically: Set({name})"


def test_broker_log_retention_ms_has_kafkaconfig_validation() -> None:
    validate_broker_config({"log.retention.ms": "-2"})
