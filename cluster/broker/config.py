"""A broker's static configuration: Kafka's property names, types, defaults and checks, read from YAML.

Kafka 2.8 `KafkaConfig` (its `ConfigDef` in definition order, `Defaults`, `validateValues`) and
`CoreUtils.listenerListToEndPoints` for the keys a kafkaops broker honours (issue 3), plus those of
Kafka's stock `config/server.properties`, so that a converted `server.properties` loads. A value is
parsed as Kafka parses the string form of a property and refused with Kafka's text; an unknown key is
refused (Kafka only warns: here a typo must not pass silently).

Listeners as Kafka's: several `NAME://host:port` in `listeners`, their protocols from
`listener.security.protocol.map`, `advertised.listeners`, and the inter-broker listener from
`inter.broker.listener.name` or `security.inter.broker.protocol` (not both). Per-listener settings use
Kafka's prefix, `listener.name.<listener, lower-case>.<key>` (e.g. `listener.name.ssl.ssl.client.auth`),
for the `ssl.*` (and `sasl.*`) keys; `listener_settings(name)` resolves them over the broker-wide ones.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from kafkaops.cluster.common.client_channel import SECURITY_PROTOCOLS, TLS_PROTOCOLS
from kafkaops.cluster.common.config_types import (
    LATEST_API_VERSION,
    ConfigKey,
    ConfigType,
    api_version,
    at_least,
    config_error,
    each_one_of,
    one_of,
)
from kafkaops.cluster.common.errors import InvalidConfigurationError
from kafkaops.cluster.common.jvm_text import LONG_MAX
from kafkaops.cluster.common.ssl_factory import SSL_KEYS, SslConfig
from kafkaops.cluster.zk.acls import DigestCredentials
from kafkaops.cluster.zk.values import EndPoint

_INT, _LONG, _SHORT = ConfigType.INT, ConfigType.LONG, ConfigType.SHORT
_BOOL, _STRING, _LIST = ConfigType.BOOLEAN, ConfigType.STRING, ConfigType.LIST
_DOUBLE = ConfigType.DOUBLE
_null = ConfigKey.null_default

DEFAULT_SECURITY_PROTOCOL_MAP = "PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL"
COMPRESSION_TYPES = ("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer")
"""`BrokerCompressionCodec.brokerCompressionOptions`, in Kafka's order (it prints them)."""

ACL_AUTHORIZER_CLASS_NAME = "kafka.security.authorizer.AclAuthorizer"
AUTHORIZER_CLASS_NAMES = (ACL_AUTHORIZER_CLASS_NAME, "kafka.security.auth.SimpleAclAuthorizer")
"""The authorizers a broker can run: Kafka's AclAuthorizer, and the name it had before 2.4."""

BROKER_CONFIGS: dict[str, ConfigKey] = {
    key.name: key
    for key in (
        # Kafka's KafkaConfig definition order: parsing reports the first bad value in this order
        _null("zookeeper.connect", _STRING),
        ConfigKey("zookeeper.session.timeout.ms", _INT, "18000"),
        _null("zookeeper.connection.timeout.ms", _INT),
        ConfigKey("zookeeper.max.in.flight.requests", _INT, "10", at_least(1)),
        ConfigKey("zookeeper.set.acl", _BOOL, "false"),
        # Ours: the digest identity Kafka takes from a JAAS DigestLoginModule (cluster/zk/acls.py)
        _null("zookeeper.digest.username", _STRING),
        _null("zookeeper.digest.password", _STRING),
        ConfigKey("broker.id.generation.enable", _BOOL, "true"),
        ConfigKey("reserved.broker.max.id", _INT, "1000", at_least(0)),
        ConfigKey("broker.id", _INT, "-1"),
        ConfigKey("message.max.bytes", _INT, "1048588", at_least(0)),
        ConfigKey("num.network.threads", _INT, "3", at_least(1)),
        ConfigKey("num.io.threads", _INT, "8", at_least(1)),
        ConfigKey("listeners", _STRING, "PLAINTEXT://:9092"),
        _null("advertised.listeners", _STRING),
        ConfigKey("listener.security.protocol.map", _STRING, DEFAULT_SECURITY_PROTOCOL_MAP),
        ConfigKey("socket.send.buffer.bytes", _INT, "102400"),
        ConfigKey("socket.receive.buffer.bytes", _INT, "102400"),
        ConfigKey("socket.request.max.bytes", _INT, "104857600", at_least(1)),
        _null("broker.rack", _STRING),
        ConfigKey("num.partitions", _INT, "1", at_least(1)),
        ConfigKey("log.dir", _STRING, "/tmp/kafka-logs"),
        _null("log.dirs", _STRING),
        ConfigKey("log.segment.bytes", _INT, "1073741824", at_least(14)),
        _null("log.roll.ms", _LONG),
        ConfigKey("log.roll.hours", _INT, "168", at_least(1)),
        _null("log.roll.jitter.ms", _LONG),
        ConfigKey("log.roll.jitter.hours", _INT, "0", at_least(0)),
        _null("log.retention.ms", _LONG),
        _null("log.retention.minutes", _INT),
        ConfigKey("log.retention.hours", _INT, "168"),
        ConfigKey("log.retention.bytes", _LONG, "-1"),
        ConfigKey("log.retention.check.interval.ms", _LONG, "300000", at_least(1)),
        ConfigKey("log.cleanup.policy", _LIST, "delete", each_one_of("compact", "delete")),
        ConfigKey("log.cleaner.threads", _INT, "1", at_least(0)),
        ConfigKey("log.cleaner.io.max.bytes.per.second", _DOUBLE, "1.7976931348623157E308"),
        ConfigKey("log.cleaner.dedupe.buffer.size", _LONG, "134217728"),
        ConfigKey("log.cleaner.io.buffer.size", _INT, "524288", at_least(0)),
        ConfigKey("log.cleaner.io.buffer.load.factor", _DOUBLE, "0.9"),
        ConfigKey("log.cleaner.backoff.ms", _LONG, "15000", at_least(0)),
        ConfigKey("log.cleaner.min.cleanable.ratio", _DOUBLE, "0.5"),
        ConfigKey("log.cleaner.enable", _BOOL, "true"),
        ConfigKey("log.cleaner.delete.retention.ms", _LONG, "86400000"),
        ConfigKey("log.cleaner.min.compaction.lag.ms", _LONG, "0"),
        ConfigKey("log.cleaner.max.compaction.lag.ms", _LONG, str(LONG_MAX)),
        ConfigKey("log.index.size.max.bytes", _INT, "10485760", at_least(4)),
        ConfigKey("log.index.interval.bytes", _INT, "4096", at_least(0)),
        ConfigKey("log.flush.interval.messages", _LONG, str(LONG_MAX), at_least(1)),
        ConfigKey("log.segment.delete.delay.ms", _LONG, "60000", at_least(0)),
        ConfigKey("log.flush.scheduler.interval.ms", _LONG, str(LONG_MAX)),
        _null("log.flush.interval.ms", _LONG),
        ConfigKey("log.flush.offset.checkpoint.interval.ms", _INT, "60000", at_least(0)),
        ConfigKey("log.preallocate", _BOOL, "false"),
        ConfigKey("num.recovery.threads.per.data.dir", _INT, "1", at_least(1)),
        ConfigKey("auto.create.topics.enable", _BOOL, "true"),
        ConfigKey("min.insync.replicas", _INT, "1", at_least(1)),
        ConfigKey("log.message.format.version", _STRING, LATEST_API_VERSION, api_version),
        ConfigKey("log.message.timestamp.type", _STRING, "CreateTime", one_of("CreateTime", "LogAppendTime")),
        ConfigKey("log.message.timestamp.difference.max.ms", _LONG, str(LONG_MAX)),
        ConfigKey("controller.socket.timeout.ms", _INT, "30000"),
        ConfigKey("default.replication.factor", _INT, "1"),
        ConfigKey("replica.lag.time.max.ms", _LONG, "30000"),
        ConfigKey("replica.socket.timeout.ms", _INT, "30000"),
        ConfigKey("replica.socket.receive.buffer.bytes", _INT, "65536"),
        ConfigKey("replica.fetch.max.bytes", _INT, "1048576", at_least(0)),
        ConfigKey("replica.fetch.wait.max.ms", _INT, "500"),
        ConfigKey("replica.fetch.backoff.ms", _INT, "1000", at_least(0)),
        ConfigKey("replica.fetch.min.bytes", _INT, "1"),
        ConfigKey("replica.fetch.response.max.bytes", _INT, "10485760", at_least(0)),
        ConfigKey("num.replica.fetchers", _INT, "1"),
        ConfigKey("replica.high.watermark.checkpoint.interval.ms", _LONG, "5000"),
        ConfigKey("auto.leader.rebalance.enable", _BOOL, "true"),
        ConfigKey("leader.imbalance.per.broker.percentage", _INT, "10"),
        ConfigKey("leader.imbalance.check.interval.seconds", _LONG, "300", at_least(1)),
        ConfigKey("unclean.leader.election.enable", _BOOL, "false"),
        ConfigKey("security.inter.broker.protocol", _STRING, "PLAINTEXT"),
        ConfigKey("inter.broker.protocol.version", _STRING, LATEST_API_VERSION, api_version),
        _null("inter.broker.listener.name", _STRING),
        ConfigKey("controlled.shutdown.max.retries", _INT, "3"),
        ConfigKey("controlled.shutdown.retry.backoff.ms", _LONG, "5000"),
        ConfigKey("controlled.shutdown.enable", _BOOL, "true"),
        ConfigKey("group.min.session.timeout.ms", _INT, "6000"),
        ConfigKey("group.max.session.timeout.ms", _INT, "1800000"),
        ConfigKey("group.initial.rebalance.delay.ms", _INT, "3000"),
        ConfigKey("group.max.size", _INT, "2147483647", at_least(1)),
        # offset management (Kafka's definition order); offsets.topic.compression.codec 0 is "none"
        ConfigKey("offset.metadata.max.bytes", _INT, "4096"),
        ConfigKey("offsets.load.buffer.size", _INT, "5242880", at_least(1)),
        ConfigKey("offsets.topic.replication.factor", _SHORT, "3", at_least(1)),
        ConfigKey("offsets.topic.num.partitions", _INT, "50", at_least(1)),
        ConfigKey("offsets.topic.segment.bytes", _INT, "104857600", at_least(1)),
        ConfigKey("offsets.retention.minutes", _INT, "10080", at_least(1)),
        ConfigKey("offsets.retention.check.interval.ms", _LONG, "600000", at_least(1)),
        ConfigKey("offsets.commit.timeout.ms", _INT, "5000", at_least(1)),
        ConfigKey("delete.topic.enable", _BOOL, "true"),
        ConfigKey("compression.type", _STRING, "producer"),
        ConfigKey("transaction.state.log.min.isr", _INT, "2", at_least(1)),
        ConfigKey("transaction.state.log.replication.factor", _SHORT, "3", at_least(1)),
        # client quotas (ClientQuotaManagerConfig): rates over quota.window.num samples of this many seconds
        ConfigKey("quota.window.num", _INT, "11", at_least(1)),
        ConfigKey("quota.window.size.seconds", _INT, "1", at_least(1)),
        # deprecated in Kafka 2.8 (dynamic <default> quotas replace them), still honoured
        ConfigKey("quota.producer.default", _LONG, str(LONG_MAX), at_least(1)),
        ConfigKey("quota.consumer.default", _LONG, str(LONG_MAX), at_least(1)),
        # SASL (cluster/broker/sasl_config.py): Kafka's names and defaults; GSSAPI is not implemented
        ConfigKey("sasl.mechanism.inter.broker.protocol", _STRING, "GSSAPI"),
        ConfigKey("sasl.enabled.mechanisms", _LIST, "GSSAPI"),
        # TLS (Kafka's SslConfigs and BrokerSecurityConfigs; PEM stores only, see ssl_factory.py)
        ConfigKey("ssl.principal.mapping.rules", _STRING, "DEFAULT"),
        ConfigKey("ssl.protocol", _STRING, "TLSv1.3"),
        ConfigKey("ssl.enabled.protocols", _LIST, "TLSv1.2,TLSv1.3"),
        ConfigKey("ssl.keystore.type", _STRING, "JKS"),
        _null("ssl.keystore.location", _STRING),
        _null("ssl.keystore.password", _STRING),
        _null("ssl.key.password", _STRING),
        _null("ssl.keystore.key", _STRING),
        _null("ssl.keystore.certificate.chain", _STRING),
        ConfigKey("ssl.truststore.type", _STRING, "JKS"),
        _null("ssl.truststore.location", _STRING),
        _null("ssl.truststore.password", _STRING),
        _null("ssl.truststore.certificates", _STRING),
        ConfigKey("ssl.endpoint.identification.algorithm", _STRING, "https"),
        ConfigKey("ssl.client.auth", _STRING, "none", one_of("required", "requested", "none")),
        # the authorizer (Kafka's authorizer.class.name; the other two are AclAuthorizer's own configs)
        ConfigKey("authorizer.class.name", _STRING, "", one_of("", *AUTHORIZER_CLASS_NAMES)),
        ConfigKey("super.users", _STRING, ""),
        ConfigKey("allow.everyone.if.no.acl.found", _BOOL, "false"),
    )
}

LISTENER_SASL_CONFIG = re.compile(r"listener\.name\.([^.]+)\.(?:([^.]+)\.sasl\.jaas\.config|sasl\.enabled\.mechanisms)")
"""The per-listener SASL properties (`listener.name.<l>.<mechanism>.sasl.jaas.config`,
`listener.name.<l>.sasl.enabled.mechanisms`), kept as given in `BrokerConfig.listener_sasl_configs`."""

LISTENER_PREFIX = "listener.name."
LISTENER_CONFIG_PREFIXES = ("ssl.", "sasl.")
"""The broker configs a listener may override with `listener.name.<listener>.<key>`."""


def attribute_name(kafka_name: str) -> str:
    """`log.retention.ms` → `log_retention_ms`: BrokerConfig's field for a Kafka property."""
    return kafka_name.replace(".", "_")


@dataclass(frozen=True)
class BrokerConfig:
    """Every property of `BROKER_CONFIGS`, parsed, under its snake_case name; `get()` by Kafka name.

    Properties whose Kafka default is null are None when not given. Structured values: `listeners` and
    `advertised_listeners` are endpoints, `listener_security_protocol_map` a dict, `log_dirs` a tuple,
    LIST properties tuples. The `effective_*` properties resolve Kafka's fallbacks (log.dirs → log.dir,
    ms → minutes → hours, ...).
    """

    zookeeper_connect: str
    zookeeper_session_timeout_ms: int
    zookeeper_connection_timeout_ms: int | None
    zookeeper_max_in_flight_requests: int
    zookeeper_set_acl: bool
    zookeeper_digest_username: str | None
    zookeeper_digest_password: str | None
    broker_id_generation_enable: bool
    reserved_broker_max_id: int
    broker_id: int
    message_max_bytes: int
    num_network_threads: int
    num_io_threads: int
    listeners: tuple[EndPoint, ...]
    advertised_listeners: tuple[EndPoint, ...] | None
    listener_security_protocol_map: dict[str, str]
    socket_send_buffer_bytes: int
    socket_receive_buffer_bytes: int
    socket_request_max_bytes: int
    broker_rack: str | None
    num_partitions: int
    log_dir: str
    log_dirs: tuple[str, ...] | None
    log_segment_bytes: int
    log_roll_ms: int | None
    log_roll_hours: int
    log_roll_jitter_ms: int | None
    log_roll_jitter_hours: int
    log_retention_ms: int | None
    log_retention_minutes: int | None
    log_retention_hours: int
    log_retention_bytes: int
    log_retention_check_interval_ms: int
    log_cleanup_policy: tuple[str, ...]
    log_cleaner_threads: int
    log_cleaner_io_max_bytes_per_second: float
    log_cleaner_dedupe_buffer_size: int
    log_cleaner_io_buffer_size: int
    log_cleaner_io_buffer_load_factor: float
    log_cleaner_backoff_ms: int
    log_cleaner_min_cleanable_ratio: float
    log_cleaner_enable: bool
    log_cleaner_delete_retention_ms: int
    log_cleaner_min_compaction_lag_ms: int
    log_cleaner_max_compaction_lag_ms: int
    log_index_size_max_bytes: int
    log_index_interval_bytes: int
    log_flush_interval_messages: int
    log_segment_delete_delay_ms: int
    log_flush_scheduler_interval_ms: int
    log_flush_interval_ms: int | None
    log_flush_offset_checkpoint_interval_ms: int
    log_preallocate: bool
    num_recovery_threads_per_data_dir: int
    auto_create_topics_enable: bool
    min_insync_replicas: int
    log_message_format_version: str
    log_message_timestamp_type: str
    log_message_timestamp_difference_max_ms: int
    controller_socket_timeout_ms: int
    default_replication_factor: int
    replica_lag_time_max_ms: int
    replica_socket_timeout_ms: int
    replica_socket_receive_buffer_bytes: int
    replica_fetch_max_bytes: int
    replica_fetch_wait_max_ms: int
    replica_fetch_backoff_ms: int
    replica_fetch_min_bytes: int
    replica_fetch_response_max_bytes: int
    num_replica_fetchers: int
    replica_high_watermark_checkpoint_interval_ms: int
    auto_leader_rebalance_enable: bool
    leader_imbalance_per_broker_percentage: int
    leader_imbalance_check_interval_seconds: int
    unclean_leader_election_enable: bool
    security_inter_broker_protocol: str
    inter_broker_protocol_version: str
    inter_broker_listener_name: str | None
    controlled_shutdown_max_retries: int
    controlled_shutdown_retry_backoff_ms: int
    controlled_shutdown_enable: bool
    group_min_session_timeout_ms: int
    group_max_session_timeout_ms: int
    group_initial_rebalance_delay_ms: int
    group_max_size: int
    offset_metadata_max_bytes: int
    offsets_load_buffer_size: int
    offsets_topic_replication_factor: int
    offsets_topic_num_partitions: int
    offsets_topic_segment_bytes: int
    offsets_retention_minutes: int
    offsets_retention_check_interval_ms: int
    offsets_commit_timeout_ms: int
    delete_topic_enable: bool
    compression_type: str
    transaction_state_log_min_isr: int
    transaction_state_log_replication_factor: int
    quota_window_num: int
    quota_window_size_seconds: int
    quota_producer_default: int
    quota_consumer_default: int
    sasl_mechanism_inter_broker_protocol: str
    sasl_enabled_mechanisms: tuple[str, ...]
    ssl_principal_mapping_rules: str
    ssl_protocol: str
    ssl_enabled_protocols: tuple[str, ...]
    ssl_keystore_type: str
    ssl_keystore_location: str | None
    ssl_keystore_password: str | None
    ssl_key_password: str | None
    ssl_keystore_key: str | None
    ssl_keystore_certificate_chain: str | None
    ssl_truststore_type: str
    ssl_truststore_location: str | None
    ssl_truststore_password: str | None
    ssl_truststore_certificates: str | None
    ssl_endpoint_identification_algorithm: str
    ssl_client_auth: str
    authorizer_class_name: str
    super_users: str
    allow_everyone_if_no_acl_found: bool
    listener_overrides: dict[str, dict[str, Any]] = field(default_factory=dict)
    """`listener.name.<listener>.<key>` values, parsed, by listener name (upper-case) and key."""
    listener_sasl_configs: dict[str, str] = field(default_factory=dict)
    """`listener.name.<listener>.<mechanism>.sasl.jaas.config` and `listener.name.<listener>.sasl.enabled.mechanisms`
    as given (`sasl_config.py` reads them)."""

    def get(self, kafka_name: str) -> Any:
        """The value of a property by its Kafka name; KeyError for a name that is not a broker config."""
        if kafka_name not in BROKER_CONFIGS:
            raise KeyError(f"Unknown broker config name: {kafka_name}")
        return getattr(self, attribute_name(kafka_name))

    @property
    def effective_log_dirs(self) -> tuple[str, ...]:
        """`KafkaConfig.logDirs`: log.dirs if given, else log.dir, either a comma-separated list."""
        return self.log_dirs if self.log_dirs is not None else _csv_list(self.log_dir)

    @property
    def effective_advertised_listeners(self) -> tuple[EndPoint, ...]:
        """What the broker registers in ZooKeeper: advertised.listeners, else listeners."""
        return self.advertised_listeners if self.advertised_listeners is not None else self.listeners

    @property
    def effective_inter_broker_listener_name(self) -> str:
        """`interBrokerListenerName`: inter.broker.listener.name, else the listener named after
        `security.inter.broker.protocol` (`ListenerName.forSecurityProtocol`)."""
        return self.inter_broker_listener_name or self.security_inter_broker_protocol

    @property
    def inter_broker_security_protocol(self) -> str:
        """`interBrokerSecurityProtocol`: the inter-broker listener's protocol."""
        return self.listener_security_protocol_map.get(
            self.effective_inter_broker_listener_name, self.security_inter_broker_protocol
        )

    def security_protocol(self, listener_name: str) -> str:
        """The protocol of a listener (`listener.security.protocol.map`)."""
        return self.listener_security_protocol_map[listener_name]

    def listener_settings(self, listener_name: str, prefix: str = "ssl.") -> dict[str, Any]:
        """Every broker config starting with `prefix` as `listener_name` sees it: its
        `listener.name.<listener>.` override, else the broker-wide value (Kafka's
        `valuesWithPrefixOverride`)."""
        overrides = self.listener_overrides.get(listener_name.upper(), {})
        return {
            name: overrides.get(name, getattr(self, attribute_name(name)))
            for name in BROKER_CONFIGS
            if name.startswith(prefix)
        }

    def ssl_config(self, listener_name: str) -> SslConfig:
        """The `ssl.*` settings of a listener (for the inter-broker client too, as Kafka's inter-broker
        channel takes the inter-broker listener's). Raises InvalidConfigurationError."""
        return SslConfig.from_properties(
            {k: v for k, v in self.listener_settings(listener_name).items() if k in SSL_KEYS}
        )

    @property
    def zookeeper_credentials(self) -> DigestCredentials | None:
        if self.zookeeper_digest_username is None or self.zookeeper_digest_password is None:
            return None
        return DigestCredentials(self.zookeeper_digest_username, self.zookeeper_digest_password)

    @property
    def effective_zookeeper_connection_timeout_ms(self) -> int:
        return (
            self.zookeeper_connection_timeout_ms
            if self.zookeeper_connection_timeout_ms is not None
            else self.zookeeper_session_timeout_ms
        )

    @property
    def effective_log_roll_ms(self) -> int:
        return self.log_roll_ms if self.log_roll_ms is not None else self.log_roll_hours * 3_600_000

    @property
    def effective_log_roll_jitter_ms(self) -> int:
        return (
            self.log_roll_jitter_ms if self.log_roll_jitter_ms is not None else self.log_roll_jitter_hours * 3_600_000
        )

    @property
    def effective_log_retention_ms(self) -> int:
        """`getLogRetentionTimeMillis`: ms, else minutes, else hours; any negative value means -1."""
        if self.log_retention_ms is not None:
            millis = self.log_retention_ms
        elif self.log_retention_minutes is not None:
            millis = self.log_retention_minutes * 60_000
        else:
            millis = self.log_retention_hours * 3_600_000
        return -1 if millis < 0 else millis

    @property
    def effective_log_flush_interval_ms(self) -> int:
        return (
            self.log_flush_interval_ms
            if self.log_flush_interval_ms is not None
            else self.log_flush_scheduler_interval_ms
        )


# --- parsing -------------------------------------------------------------------------------------


def load_broker_config(path: str | Path) -> BrokerConfig:
    """Read a YAML file of flat Kafka properties (`broker.id: 1`, `log.dirs: /data`, ...).

    Raises InvalidConfigurationError, its message starting with the file's path.
    """
    try:
        document = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except OSError as error:
        raise InvalidConfigurationError(f"{path}: cannot read broker config: {error.strerror or error}") from None
    except yaml.YAMLError as error:
        raise InvalidConfigurationError(f"{path}: not valid YAML: {error}") from None
    if document is None:
        document = {}
    if not isinstance(document, dict):
        raise InvalidConfigurationError(f"{path}: a broker config is a mapping of Kafka property names to values")
    try:
        return parse_broker_config(document)
    except InvalidConfigurationError as error:
        raise InvalidConfigurationError(f"{path}: {error}") from None


def parse_broker_config(values: Mapping[Any, Any]) -> BrokerConfig:
    """Parse and validate broker properties given as YAML scalars (or lists, for list-valued ones).

    Every name must be a broker config; every value must parse (Kafka's ConfigException text) and the
    whole must pass Kafka's `validateValues` checks (`requirement failed: ...`). Raises
    InvalidConfigurationError naming the offending key.
    """
    listener_sasl = {name: _text(name, value) for name, value in values.items() if _is_listener_sasl_config(name)}
    values = {name: value for name, value in values.items() if name not in listener_sasl}
    prefixed = {name: value for name, value in values.items() if isinstance(name, str) and _is_listener_key(name)}
    for name in values:
        if name in prefixed:
            continue
        if not isinstance(name, str) or name not in BROKER_CONFIGS:
            raise InvalidConfigurationError(f"Unknown broker config name: {name}")
    texts = {name: _text(name, value) for name, value in values.items() if name not in prefixed}
    parsed: dict[str, Any] = {}
    for name, key in BROKER_CONFIGS.items():
        text = texts.get(name)
        if text is None:
            parsed[name] = None if key.optional else key.parse(key.default)
        else:
            parsed[name] = key.parse(text)
    if parsed["zookeeper.connect"] is None:
        raise InvalidConfigurationError(
            "Missing required configuration `zookeeper.connect` which has no default value."
        )
    digest = (parsed["zookeeper.digest.username"], parsed["zookeeper.digest.password"])
    if (digest[0] is None) != (digest[1] is None):
        raise InvalidConfigurationError("zookeeper.digest.username and zookeeper.digest.password go together")
    if parsed["zookeeper.set.acl"] and digest[0] is None:
        raise InvalidConfigurationError(
            "zookeeper.set.acl is true but the broker has no ZooKeeper credentials "
            "(zookeeper.digest.username and zookeeper.digest.password)"
        )
    protocol_map = _security_protocol_map(parsed["listener.security.protocol.map"])
    parsed["listener.security.protocol.map"] = protocol_map
    parsed["listeners"] = _endpoints("listeners", parsed["listeners"], protocol_map)
    if parsed["advertised.listeners"] is not None:
        parsed["advertised.listeners"] = _endpoints(
            "advertised.listeners", parsed["advertised.listeners"], protocol_map, require_distinct_ports=False
        )
    if parsed["log.dirs"] is not None:
        parsed["log.dirs"] = _csv_list(parsed["log.dirs"])
    parsed["log.cleanup.policy"] = tuple(parsed["log.cleanup.policy"])
    parsed["sasl.enabled.mechanisms"] = tuple(parsed["sasl.enabled.mechanisms"])
    parsed["ssl.enabled.protocols"] = tuple(parsed["ssl.enabled.protocols"])
    _inter_broker_listener(parsed, "security.inter.broker.protocol" in values, protocol_map)
    config = BrokerConfig(
        **{attribute_name(name): value for name, value in parsed.items()},
        listener_overrides=_listener_overrides(prefixed),
        listener_sasl_configs={k: v for k, v in listener_sasl.items() if v is not None},
    )
    _validate(config)
    return config


def _is_listener_sasl_config(name: Any) -> bool:
    return isinstance(name, str) and LISTENER_SASL_CONFIG.fullmatch(name) is not None


def _is_listener_key(name: str) -> bool:
    if not name.startswith(LISTENER_PREFIX):
        return False
    _, _, key = name[len(LISTENER_PREFIX) :].partition(".")
    return key.startswith(LISTENER_CONFIG_PREFIXES) and key in BROKER_CONFIGS


def _listener_overrides(prefixed: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """`listener.name.<listener>.<key>` values parsed as `<key>` is, by upper-case listener name."""
    overrides: dict[str, dict[str, Any]] = {}
    for name, value in prefixed.items():
        listener, _, key = name[len(LISTENER_PREFIX) :].partition(".")
        text = _text(name, value)
        if text is None:
            continue
        parsed = BROKER_CONFIGS[key].parse(text)
        overrides.setdefault(listener.upper(), {})[key] = tuple(parsed) if isinstance(parsed, list) else parsed
    return overrides


def _inter_broker_listener(parsed: dict[str, Any], protocol_given: bool, protocol_map: Mapping[str, str]) -> None:
    """`getInterBrokerListenerNameAndSecurityProtocol`: one of the two settings; the name normalised."""
    name = parsed["inter.broker.listener.name"]
    if name is not None:
        if protocol_given:
            raise InvalidConfigurationError(
                "Only one of inter.broker.listener.name and security.inter.broker.protocol should be set."
            )
        listener = name.upper()
        if listener not in protocol_map:
            raise InvalidConfigurationError(
                f"Listener with name {listener} defined in inter.broker.listener.name not found in "
                "listener.security.protocol.map."
            )
        parsed["inter.broker.listener.name"] = listener
        return
    protocol = parsed["security.inter.broker.protocol"]
    if protocol.upper() not in SECURITY_PROTOCOLS:
        raise InvalidConfigurationError(
            f"Invalid security protocol `{protocol}` defined in security.inter.broker.protocol"
        )
    parsed["security.inter.broker.protocol"] = protocol.upper()


def _text(name: str, value: Any) -> str | None:
    """A YAML value as the string Kafka would read from a properties file; None (YAML null) = not set."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float | str):
        return str(value)
    if isinstance(value, list) and all(
        isinstance(item, int | float | str) and not isinstance(item, bool) for item in value
    ):
        return ",".join(str(item) for item in value)
    raise config_error(name, value, "Expected a string, a number, a boolean or a list of them")


def _csv_list(text: str) -> tuple[str, ...]:
    """`CoreUtils.parseCsvList`: split on commas, trim, drop empty entries."""
    return tuple(item for item in re.split(r"\s*,\s*", text.strip()) if item)


def _security_protocol_map(text: str) -> dict[str, str]:
    """`KafkaConfig.listenerSecurityProtocolMap`: `LISTENER:PROTOCOL` entries (split at the last `:`),
    listener names upper-cased, protocols matched case-insensitively."""
    name = "listener.security.protocol.map"
    mapping: dict[str, str] = {}
    for entry in _csv_list(text):
        listener, sep, protocol = entry.rpartition(":")
        if not sep:
            raise InvalidConfigurationError(
                f"Error parsing configuration property '{name}': Map entry '{entry}' is not of the form key:value"
            )
        if protocol.strip().upper() not in SECURITY_PROTOCOLS:
            raise InvalidConfigurationError(f"Invalid security protocol `{protocol.strip()}` defined in {name}")
        mapping[listener.strip().upper()] = protocol.strip().upper()
    return mapping


_ENDPOINT_RE = re.compile(r"^(.*)://\[?([0-9a-zA-Z\-%._:]*)\]?:(-?[0-9]+)$")
"""`EndPoint.uriParseExp`, matched against the whole entry as Scala's extractor does."""


def _endpoints(
    name: str, text: str, protocol_map: Mapping[str, str], require_distinct_ports: bool = True
) -> tuple[EndPoint, ...]:
    """`CoreUtils.listenerListToEndPoints`: `NAME://host:port` entries, names distinct, and ports too unless
    `require_distinct_ports` is off (advertised listeners may share a port, behind a proxy)."""
    endpoints = []
    for entry in _csv_list(text):
        match = _ENDPOINT_RE.match(entry)
        if match is None:
            raise InvalidConfigurationError(
                f"Error creating broker listeners from '{text}': Unable to parse {entry} to a broker endpoint"
            )
        listener, host, port = match.group(1).upper(), match.group(2), int(match.group(3))
        if listener not in protocol_map:
            raise InvalidConfigurationError(
                f"Error creating broker listeners from '{text}': No security protocol defined for listener {listener}"
            )
        if not 0 <= port <= 65535:
            raise config_error(name, text, f"Port {port} of listener {listener} is not between 0 and 65535")
        endpoints.append(EndPoint(listener, host, port))
    names = [e.listener for e in endpoints]
    if len(set(names)) != len(names):
        raise InvalidConfigurationError(
            f"requirement failed: Each listener must have a different name, listeners: {text}"
        )
    ports = [e.port for e in endpoints if e.port != 0]
    if require_distinct_ports and len(set(ports)) != len(ports):
        raise InvalidConfigurationError(
            f"requirement failed: Each listener must have a different port, listeners: {text}"
        )
    return tuple(endpoints)


def _require(condition: bool, message: str) -> None:
    # Scala's `require`: IllegalArgumentException("requirement failed: " + message)
    if not condition:
        raise InvalidConfigurationError(f"requirement failed: {message}")


def _validate(config: BrokerConfig) -> None:
    """`KafkaConfig.validateValues` (2.8, ZooKeeper mode), for the properties defined here."""
    if config.broker_id_generation_enable:
        _require(
            -1 <= config.broker_id <= config.reserved_broker_max_id,
            "broker.id must be greater than or equal to -1 and not greater than reserved.broker.max.id",
        )
    else:
        _require(config.broker_id >= 0, "broker.id must be greater than or equal to 0")
    _require(config.effective_log_roll_ms >= 1, "log.roll.ms must be greater than or equal to 1")
    _require(config.effective_log_roll_jitter_ms >= 0, "log.roll.jitter.ms must be greater than or equal to 0")
    retention = config.effective_log_retention_ms
    _require(
        retention >= 1 or retention == -1, "log.retention.ms must be unlimited (-1) or, greater than or equal to 1"
    )
    _require(bool(config.effective_log_dirs), "At least one log directory must be defined via log.dirs or log.dir.")
    _require(
        config.replica_fetch_wait_max_ms <= config.replica_socket_timeout_ms,
        "replica.socket.timeout.ms should always be at least replica.fetch.wait.max.ms to prevent unnecessary "
        "socket timeouts",
    )
    _require(
        config.replica_fetch_wait_max_ms <= config.replica_lag_time_max_ms,
        "replica.fetch.wait.max.ms should always be less than or equal to replica.lag.time.max.ms to prevent "
        "frequent changes in ISR",
    )
    _require(
        config.compression_type in COMPRESSION_TYPES,
        f"compression.type : {config.compression_type} is not valid. Valid options are {','.join(COMPRESSION_TYPES)}",
    )
    advertised = [e.listener for e in config.effective_advertised_listeners]
    listeners = [e.listener for e in config.listeners]
    _require(
        config.effective_inter_broker_listener_name in advertised,
        "inter.broker.listener.name must be a listener name defined in advertised.listeners. The valid options "
        f"based on currently configured listeners are {','.join(advertised)}",
    )
    _require(
        set(advertised) <= set(listeners),
        "advertised.listeners listener names must be equal to or a subset of the ones defined in listeners. "
        f"Found {','.join(advertised)}. The valid options based on the current configuration are "
        f"{','.join(listeners)}",
    )
    inter_broker = config.effective_inter_broker_listener_name
    if config.listener_security_protocol_map.get(inter_broker, "").startswith("SASL_"):
        override = config.listener_sasl_configs.get(f"listener.name.{inter_broker.lower()}.sasl.enabled.mechanisms")
        enabled = config.sasl_enabled_mechanisms if override is None else tuple(m.strip() for m in override.split(","))
        _require(
            config.sasl_mechanism_inter_broker_protocol in enabled,
            "sasl.mechanism.inter.broker.protocol must be included in sasl.enabled.mechanisms when SASL is used "
            "for inter-broker communication",
        )
    _require(
        all(e.host != "0.0.0.0" for e in config.effective_advertised_listeners),
        "advertised.listeners cannot use the nonroutable meta-address 0.0.0.0. Use a routable IP address.",
    )
    for endpoint in config.listeners:
        if config.security_protocol(endpoint.listener) in TLS_PROTOCOLS:
            ssl_config = config.ssl_config(endpoint.listener)  # Kafka's store checks, with its texts
            if not ssl_config.has_keystore:
                raise InvalidConfigurationError(
                    f"Listener {endpoint.listener} uses {config.security_protocol(endpoint.listener)} but has no "
                    "SSL key store (ssl.keystore.location, or ssl.keystore.key and ssl.keystore.certificate.chain)"
                )
