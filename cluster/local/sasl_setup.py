"""The SASL part of a local cluster's `--security sasl_plaintext|sasl_ssl` modes (security.py's table):
every SASL listener enables SCRAM-SHA-512, SCRAM-SHA-256 and PLAIN; the brokers log in to each other as an
admin user (a super user) with a SCRAM-SHA-512 credential, created in ZooKeeper before they start; the
tools' client properties log in as that user.
"""

from __future__ import annotations

import secrets
from typing import Any

from kafkaops.cluster.common.sasl import PLAIN_LOGIN_MODULE, jaas_config_text
from kafkaops.cluster.common.scram import ScramMechanism, generate_credential
from kafkaops.cluster.zk.client import KafkaZkClient
from kafkaops.cluster.zk.znodes import ConfigType, sanitize_entity_name

ADMIN_USER = "admin"
ADMIN_MECHANISM = ScramMechanism.SCRAM_SHA_512
ENABLED_MECHANISMS = "SCRAM-SHA-512,SCRAM-SHA-256,PLAIN"
SASL_LISTENERS = ("SASL_PLAINTEXT", "SASL_SSL")
"""The listener names a local cluster's SASL listeners take (Kafka's default protocol map)."""


def new_password() -> str:
    return secrets.token_urlsafe(18)


def broker_overrides(inter_broker_listener: str, admin_password: str) -> dict[str, Any]:
    """The brokers' SASL settings: the login modules of both SASL listener names (a cluster may have both),
    the admin user among the PLAIN users too, so clients without SCRAM can log in as it."""
    mechanism = ADMIN_MECHANISM.mechanism_name
    overrides: dict[str, Any] = {
        "inter.broker.listener.name": inter_broker_listener,
        "sasl.enabled.mechanisms": ENABLED_MECHANISMS,
        "sasl.mechanism.inter.broker.protocol": mechanism,
        # the admin is a super user: with an authorizer (authorizer.class.name) it may do anything, as the
        # brokers themselves, which log in as it, must
        "super.users": f"User:{ADMIN_USER}",
    }
    for listener in SASL_LISTENERS:
        prefix = f"listener.name.{listener.lower()}"
        overrides[f"{prefix}.{mechanism.lower()}.sasl.jaas.config"] = jaas_config_text(
            mechanism, ADMIN_USER, admin_password
        )
        overrides[f"{prefix}.plain.sasl.jaas.config"] = (
            f'{PLAIN_LOGIN_MODULE} required username="{ADMIN_USER}" password="{admin_password}" '
            f'user_{ADMIN_USER}="{admin_password}";'
        )
    return overrides


def client_properties(security_protocol: str, admin_password: str) -> dict[str, str]:
    mechanism = ADMIN_MECHANISM.mechanism_name
    return {
        "security.protocol": security_protocol,
        "sasl.mechanism": mechanism,
        "sasl.jaas.config": jaas_config_text(mechanism, ADMIN_USER, admin_password),
    }


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
