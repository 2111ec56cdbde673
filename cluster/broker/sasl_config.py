"""A broker's SASL settings per listener, from Kafka's property names (the JAAS file's `KafkaServer`
section has no YAML form: its login modules are given per listener and mechanism, as Kafka 2.x allows):

    sasl.enabled.mechanisms: PLAIN,SCRAM-SHA-512                 (or listener.name.<l>.sasl.enabled.mechanisms)
    sasl.mechanism.inter.broker.protocol: SCRAM-SHA-512
    listener.name.<l>.plain.sasl.jaas.config: >-
      org.apache.kafka.common.security.plain.PlainLoginModule required
      username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";
    listener.name.<l>.scram-sha-512.sasl.jaas.config: >-
      org.apache.kafka.common.security.scram.ScramLoginModule required username="admin" password="admin-secret";

The PLAIN users a listener accepts are its PLAIN login module's `user_<name>` options; SCRAM users are in
ZooKeeper. The `username` / `password` of the inter-broker listener's module for
`sasl.mechanism.inter.broker.protocol` are this broker's own login to the others.
"""

from __future__ import annotations

from kafkaops.cluster.broker.config import BrokerConfig
from kafkaops.cluster.common.config_types import config_error
from kafkaops.cluster.common.errors import InvalidArgumentError
from kafkaops.cluster.common.sasl import (
    PLAIN,
    SUPPORTED_MECHANISMS,
    AppConfigurationEntry,
    SaslClientLogin,
    client_login,
    parse_jaas_config,
    plain_users,
)

SASL_PROTOCOLS = ("SASL_PLAINTEXT", "SASL_SSL")


def _prefix(listener: str) -> str:
    return f"listener.name.{listener.lower()}."


def jaas_config(config: BrokerConfig, listener: str, mechanism: str) -> str | None:
    """`listener.name.<listener>.<mechanism>.sasl.jaas.config`, names lower-cased as Kafka's."""
    return config.listener_sasl_configs.get(f"{_prefix(listener)}{mechanism.lower()}.sasl.jaas.config")


def enabled_mechanisms(config: BrokerConfig, listener: str) -> tuple[str, ...]:
    override = config.listener_sasl_configs.get(f"{_prefix(listener)}sasl.enabled.mechanisms")
    if override is None:
        return config.sasl_enabled_mechanisms
    return tuple(m.strip() for m in override.split(",") if m.strip())


def check_sasl_listeners(config: BrokerConfig) -> None:
    """`check_listener` for every SASL listener, and the inter-broker login: at start-up, before anything runs.
    Raises InvalidConfigurationError."""
    for endpoint in config.listeners:
        if is_sasl(config.listener_security_protocol_map.get(endpoint.listener, "PLAINTEXT")):
            check_listener(config, endpoint.listener)
    inter_broker_login(config)


def check_listener(config: BrokerConfig, listener: str) -> None:
    """What a SASL listener needs before it binds: only mechanisms kafkaops implements, and a PLAIN login
    module (its `user_<name>` options) if PLAIN is enabled, as Kafka needs one for every mechanism. Raises
    InvalidConfigurationError."""
    mechanisms = enabled_mechanisms(config, listener)
    missing = [m for m in mechanisms if m not in SUPPORTED_MECHANISMS]
    if missing or not mechanisms:
        raise config_error(
            "sasl.enabled.mechanisms",
            ",".join(mechanisms),
            f"kafkaops brokers implement {', '.join(SUPPORTED_MECHANISMS)} (listener {listener})",
        )
    if PLAIN in mechanisms and jaas_config(config, listener, PLAIN) is None:
        raise config_error(
            f"{_prefix(listener)}plain.sasl.jaas.config", None, "PLAIN is enabled but has no login module"
        )
    listener_plain_users(config, listener)


def listener_plain_users(config: BrokerConfig, listener: str) -> dict[str, str]:
    """The PLAIN users of a listener (none if PLAIN has no login module there). Raises
    InvalidConfigurationError for a JAAS config that does not parse."""
    text = jaas_config(config, listener, PLAIN)
    if text is None:
        return {}
    users: dict[str, str] = {}
    for entry in _parse(text, f"{_prefix(listener)}plain.sasl.jaas.config"):
        users.update(plain_users(entry.options))
    return users


def is_sasl(security_protocol: str) -> bool:
    return security_protocol in SASL_PROTOCOLS


def inter_broker_login(config: BrokerConfig) -> SaslClientLogin | None:
    """This broker's SASL login to the others, None if the inter-broker listener does not use SASL.
    Raises InvalidConfigurationError when the login module or its username/password are missing."""
    listener = config.effective_inter_broker_listener_name
    if not is_sasl(config.listener_security_protocol_map.get(listener, "PLAINTEXT")):
        return None
    mechanism = config.sasl_mechanism_inter_broker_protocol
    name = f"{_prefix(listener)}{mechanism.lower()}.sasl.jaas.config"
    text = jaas_config(config, listener, mechanism)
    if text is None:
        raise config_error(name, None, f"the inter-broker listener {listener} needs a login module for {mechanism}")
    try:
        return client_login(mechanism, text)
    except InvalidArgumentError as error:  # a password config: Kafka prints its value as [hidden]
        raise config_error(name, "[hidden]", str(error)) from None


def _parse(text: str, name: str) -> list[AppConfigurationEntry]:
    try:
        return parse_jaas_config(text)
    except InvalidArgumentError as error:
        raise config_error(name, "[hidden]", str(error)) from None
