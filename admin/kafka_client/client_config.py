"""A `KafkaClient` from a tool's `--bootstrap-server` and `--command-config` (Kafka's client properties
file; `--admin.config` for the election tools).

Kafka's tools load the file with `Utils.loadProps`, put `--bootstrap-server` over its `bootstrap.servers`
and hand it to an admin client or a consumer. The settings our client has are applied (`client.id`,
`request.timeout.ms`, `default.api.timeout.ms`, `retries`, `retry.backoff.ms`); a value that is not a
number gets Java's `ConfigException` text. Other keys are accepted and ignored, as Kafka's clients only
log them ("supplied but isn't a known config"). `security.protocol` PLAINTEXT, SSL, SASL_PLAINTEXT or
SASL_SSL, with the PEM `ssl.*` settings (cluster/common/ssl_factory.py: `ssl.truststore.type=PEM`,
`ssl.truststore.location` or `ssl.truststore.certificates`, `ssl.keystore.*` and `ssl.key.password` for a
client certificate, `ssl.endpoint.identification.algorithm`, `ssl.enabled.protocols`); for SASL the client
logs in with `sasl.mechanism` (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512) and the user and password of
`sasl.jaas.config`'s login module.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path

from kafkaops.admin.configs import load_properties
from kafkaops.admin.kafka_client.client import KafkaClient
from kafkaops.cluster.common.client_channel import PLAINTEXT_CHANNEL, SECURITY_PROTOCOLS, ClientChannel, client_channel
from kafkaops.cluster.common.errors import InvalidArgumentError, InvalidConfigurationError
from kafkaops.cluster.common.sasl import client_login

SPOKEN_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
"""The security protocols our client speaks: all of Kafka's but GSSAPI's Kerberos (refused by mechanism)."""
INT_MAX = 2147483647


@dataclasses.dataclass(frozen=True)
class AdminClientConfig:
    """What our KafkaClient takes from Kafka's client settings (Kafka's defaults)."""

    client_id: str = "kafkaops-admin"
    request_timeout_ms: int = 30000
    default_api_timeout_ms: int = 60000
    retries: int = INT_MAX
    retry_backoff_ms: int = 100
    channel: ClientChannel = dataclasses.field(default=PLAINTEXT_CHANNEL, compare=False)
    """`security.protocol` with its `ssl.*` settings: how connections are made."""

    @property
    def api_timeout_ms(self) -> int:
        """How long a whole admin call may take: `default.api.timeout.ms`, never below the request
        timeout (Kafka's admin client raises it to `request.timeout.ms` with a warning)."""
        return max(self.default_api_timeout_ms, self.request_timeout_ms)


def load_command_config(path: str | Path | None) -> dict[str, str]:
    """The properties of `--command-config` (none without one), read as Java does. Raises InvalidArgumentError."""
    return {} if path is None else load_properties(Path(path))


def _int_setting(properties: Mapping[str, str], key: str, default: int, minimum: int) -> int:
    if key not in properties:
        return default
    text = properties[key].strip()
    try:
        value = int(text)
    except ValueError:
        raise InvalidArgumentError(f"Invalid value {text} for configuration {key}: Not a number of type INT") from None
    if value < minimum:
        raise InvalidArgumentError(f"Invalid value {value} for configuration {key}: Value must be at least {minimum}")
    return value


def channel_from_properties(properties: Mapping[str, str]) -> ClientChannel:
    """How a client with these Kafka client properties connects: `security.protocol` and its `ssl.*`
    settings (any tool's properties: --command-config, --producer.config, --consumer-property ...). Raises
    InvalidArgumentError with Kafka's `ConfigException` texts, or for a security protocol our client does
    not speak yet."""
    protocol = properties.get("security.protocol", "PLAINTEXT").strip().upper()
    if protocol not in SECURITY_PROTOCOLS:
        raise InvalidArgumentError(
            f"Invalid value {protocol} for configuration security.protocol: String must be one of: "
            + ", ".join(SECURITY_PROTOCOLS)
        )
    if protocol not in SPOKEN_PROTOCOLS:
        raise InvalidArgumentError(
            f"security.protocol={protocol} in --command-config: kafkaops' Kafka client speaks "
            + " and ".join(SPOKEN_PROTOCOLS)
        )
    sasl = None
    if protocol.startswith("SASL_"):
        sasl = client_login(properties.get("sasl.mechanism", "GSSAPI").strip(), properties.get("sasl.jaas.config"))
    try:
        return client_channel(protocol, properties, sasl)
    except InvalidConfigurationError as error:
        raise InvalidArgumentError(str(error)) from None


def admin_client_config(properties: Mapping[str, str], default_client_id: str) -> AdminClientConfig:
    """The settings of a command-config file's properties; `client.id` from the file, else the tool's.
    Raises InvalidArgumentError with Kafka's `ConfigException` texts, or for a security protocol our
    client does not speak."""
    channel = channel_from_properties(properties)
    return AdminClientConfig(
        client_id=properties.get("client.id", "").strip() or default_client_id,
        request_timeout_ms=_int_setting(properties, "request.timeout.ms", 30000, 0),
        default_api_timeout_ms=_int_setting(properties, "default.api.timeout.ms", 60000, 0),
        retries=_int_setting(properties, "retries", INT_MAX, 0),
        retry_backoff_ms=_int_setting(properties, "retry.backoff.ms", 100, 0),
        channel=channel,
    )


def read_command_config(path: str | Path | None, default_client_id: str) -> AdminClientConfig:
    """`--command-config` (or `--admin.config`): the file's settings, or the defaults without one."""
    return admin_client_config(load_command_config(path), default_client_id)


def open_admin_client(bootstrap_server: str, config: AdminClientConfig) -> KafkaClient:
    """A KafkaClient on `--bootstrap-server` with the command config's settings. Raises
    InvalidArgumentError (Kafka's texts) for a malformed server list."""
    return KafkaClient(
        bootstrap_server,
        client_id=config.client_id,
        request_timeout_ms=max(config.request_timeout_ms, 1),
        retries=config.retries,
        retry_backoff_ms=config.retry_backoff_ms,
        delivery_timeout_ms=config.api_timeout_ms,
        channel=config.channel,
    )


def client_from_properties(bootstrap_servers: str, properties: Mapping[str, str], client_id: str) -> KafkaClient:
    """A client on `bootstrap_servers` named `client_id` (the tool's, over the file's, as the tools that
    name their client do). Raises InvalidArgumentError (Kafka's texts)."""
    config = dataclasses.replace(admin_client_config(properties, client_id), client_id=client_id)
    return open_admin_client(bootstrap_servers, config)
