"""A local cluster's SASL (`kafkaops cluster up --security sasl_plaintext`): every listener, the
inter-broker one included, speaks SASL; an admin user with a SCRAM-SHA-512 credential is created in
ZooKeeper before the brokers start (they log in to each other as that user), and a Kafka client properties
file for it is written to `<state dir>/client.properties`, as a Kafka client or `--command-config` reads it.

`sasl_ssl` and `ssl` come with the TLS listeners (they need the cluster's CA and certificates).
"""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

from kafkaops.cluster.common.sasl import PLAIN_LOGIN_MODULE, client_login, jaas_config_text
from kafkaops.cluster.common.scram import ScramMechanism, generate_credential
from kafkaops.cluster.zk.client import KafkaZkClient
from kafkaops.cluster.zk.znodes import ConfigType, sanitize_entity_name

PLAINTEXT = "plaintext"
SASL_PLAINTEXT = "sasl_plaintext"
SECURITY_CHOICES = (PLAINTEXT, SASL_PLAINTEXT)
ADMIN_USER = "admin"
ADMIN_MECHANISM = ScramMechanism.SCRAM_SHA_512
CLIENT_PROPERTIES = "client.properties"
ENABLED_MECHANISMS = "SCRAM-SHA-512,SCRAM-SHA-256,PLAIN"


def listener_name(security: str) -> str:
    return security.upper()


def broker_overrides(security: str, admin_password: str) -> dict[str, Any]:
    """The broker settings of a cluster with this security (none for plaintext). The PLAIN login module lists
    the admin user too, so clients without SCRAM can log in as it."""
    if security == PLAINTEXT:
        return {}
    listener = listener_name(security)
    prefix = f"listener.name.{listener.lower()}"
    mechanism = ADMIN_MECHANISM.mechanism_name
    return {
        "inter.broker.listener.name": listener,
        "sasl.enabled.mechanisms": ENABLED_MECHANISMS,
        "sasl.mechanism.inter.broker.protocol": mechanism,
        f"{prefix}.{mechanism.lower()}.sasl.jaas.config": jaas_config_text(mechanism, ADMIN_USER, admin_password),
        f"{prefix}.plain.sasl.jaas.config": (
            f'{PLAIN_LOGIN_MODULE} required username="{ADMIN_USER}" password="{admin_password}" '
            f'user_{ADMIN_USER}="{admin_password}";'
        ),
    }


def security_of(overrides: dict[str, Any]) -> str:
    """The `--security` a cluster was created with, from its saved broker overrides."""
    listener = str(overrides.get("inter.broker.listener.name", "PLAINTEXT"))
    return listener.lower() if listener.lower() in SECURITY_CHOICES else PLAINTEXT


def new_password() -> str:
    return secrets.token_urlsafe(18)


def create_scram_user(zookeeper_connect: str, user: str, password: str, mechanism: ScramMechanism) -> None:
    """Store a SCRAM credential for `user` as kafka-configs does (with its change notification)."""
    with KafkaZkClient(zookeeper_connect) as zk:
        zk.ensure_paths(["/config/users", "/config/changes"])
        path = sanitize_entity_name(user)
        config, version = zk.get_entity_config(ConfigType.USER, path)
        credential = generate_credential(mechanism, password, 4096)
        zk.set_entity_config_and_notify(
            ConfigType.USER, path, {**config, mechanism.mechanism_name: credential.to_string()}, version
        )


def client_properties(security: str, admin_password: str) -> dict[str, str]:
    mechanism = ADMIN_MECHANISM.mechanism_name
    return {
        "security.protocol": listener_name(security),
        "sasl.mechanism": mechanism,
        "sasl.jaas.config": jaas_config_text(mechanism, ADMIN_USER, admin_password),
    }


def write_client_properties(state_dir: Path, properties: dict[str, str]) -> Path:
    """`<state dir>/client.properties`, readable by its owner only (it holds the admin's password)."""
    path = state_dir / CLIENT_PROPERTIES
    text = "".join(f"{key}={_escape(value)}\n" for key, value in properties.items())
    path.touch(mode=0o600, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _escape(value: str) -> str:
    # java.util.Properties: a backslash escapes; '=' and ':' in a value need none
    return value.replace("\\", "\\\\")


def admin_password_of(overrides: dict[str, Any], security: str) -> str | None:
    """The admin password a SASL cluster was created with (its brokers' own login), None for another."""
    if security == PLAINTEXT:
        return None
    listener = listener_name(security).lower()
    text = overrides.get(f"listener.name.{listener}.{ADMIN_MECHANISM.mechanism_name.lower()}.sasl.jaas.config")
    if not isinstance(text, str):
        return None
    return client_login(ADMIN_MECHANISM.mechanism_name, text).password
