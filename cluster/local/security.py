"""`cluster up --security MODE`: what each mode sets up for a local cluster, in one table.

A mode names the security protocol of every listener (the inter-broker one included), whether it needs
certificates, and what its `prepare` step writes into the state dir: the broker settings every broker gets
and the client properties file the tools use (`<state dir>/client.properties`, Kafka's `--command-config`
format). `sasl_plaintext` and `sasl_ssl` create an admin user (SCRAM-SHA-512) in ZooKeeper before the
brokers start (their inter-broker login) and put its `sasl.*` settings in the client properties
(sasl_setup.py).

    <state-dir>/ssl/ca.pem            the CA's certificate (the clients' trust store)
    <state-dir>/ssl/ca-key.pem        the CA's key (private to the owner: issue client certificates with it)
    <state-dir>/ssl/broker.pem        the brokers' key store: encrypted key, certificate, CA (PEM)
    <state-dir>/client.properties     security.protocol and ssl.truststore.* for the tools
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kafkaops.cluster.common.errors import UserError

CLIENT_PROPERTIES = "client.properties"
SSL_DIR = "ssl"
CA_FILE = "ca.pem"
CA_KEY_FILE = "ca-key.pem"
BROKER_KEYSTORE = "broker.pem"


@dataclass(frozen=True)
class SecuritySetup:
    """What a mode prepared: settings for every broker, and the tools' client properties (none: PLAINTEXT)."""

    broker_overrides: dict[str, Any] = field(default_factory=dict)
    client_properties: dict[str, str] = field(default_factory=dict)
    before_brokers: Callable[[str], None] | None = None
    """Run with the ZooKeeper connect string before the brokers first start (SASL: the admin user)."""


@dataclass(frozen=True)
class SecurityMode:
    name: str
    security_protocol: str
    """The protocol of every listener; the listener is named after it (Kafka's default map)."""
    prepare: Callable[[Path], SecuritySetup]
    """Writes what the mode needs under the state dir (called once, by the first `up`)."""


def _plaintext(state_dir: Path) -> SecuritySetup:
    return SecuritySetup()


def ssl_files(state_dir: Path) -> tuple[Path, Path, str]:
    """The CA file, the brokers' key store and its key password, created on first use (kept afterwards)."""
    from kafkaops.cluster.local.certificates import create_ca, issue, write_private

    directory = state_dir / SSL_DIR
    ca_file, keystore, password_file = directory / CA_FILE, directory / BROKER_KEYSTORE, directory / "broker.password"
    if not (ca_file.exists() and keystore.exists() and password_file.exists()):
        ca = create_ca()
        password = secrets.token_urlsafe(18)
        write_private(directory / CA_KEY_FILE, ca.key_pem)
        write_private(password_file, password.encode())
        write_private(keystore, issue(ca, "kafkaops-broker", password, organizational_unit="brokers"))
        ca_file.write_bytes(ca.pem)
    return ca_file, keystore, password_file.read_text().strip()


def issue_client_keystore(state_dir: Path, common_name: str, key_password: str, organizational_unit: str) -> Path:
    """A client's PEM key store signed by the cluster's CA, `<state dir>/ssl/<name>.pem`: for listeners with
    `ssl.client.auth=required` (its principal is `CN=<name>,OU=<unit>,O=kafkaops` through the mapping rules)."""
    from kafkaops.cluster.local.certificates import CertificateAuthority, issue, write_private

    directory = state_dir / SSL_DIR
    ca = CertificateAuthority.load((directory / CA_FILE).read_bytes(), (directory / CA_KEY_FILE).read_bytes())
    store = issue(ca, common_name, key_password, organizational_unit=organizational_unit, server=False)
    return write_private(directory / f"{common_name}.pem", store)


def tls_settings(state_dir: Path) -> tuple[dict[str, Any], dict[str, str]]:
    """The brokers' `ssl.*` settings and the clients' trust settings of a TLS mode."""
    ca_file, keystore, password = ssl_files(state_dir)
    brokers = {
        "ssl.keystore.type": "PEM",
        "ssl.keystore.location": str(keystore),
        "ssl.key.password": password,
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": str(ca_file),
    }
    clients = {"ssl.truststore.type": "PEM", "ssl.truststore.location": str(ca_file)}
    return brokers, clients


def _ssl(state_dir: Path) -> SecuritySetup:
    brokers, clients = tls_settings(state_dir)
    return SecuritySetup(
        {**brokers, "inter.broker.listener.name": "SSL"},
        {"security.protocol": "SSL", **clients},
    )


def _sasl(security_protocol: str, state_dir: Path) -> SecuritySetup:
    from kafkaops.cluster.local import sasl_setup

    password = sasl_setup.new_password()
    brokers = sasl_setup.broker_overrides(security_protocol, password)
    clients = sasl_setup.client_properties(security_protocol, password)
    if security_protocol == "SASL_SSL":
        tls_brokers, tls_clients = tls_settings(state_dir)
        brokers, clients = {**tls_brokers, **brokers}, {**clients, **tls_clients}
    return SecuritySetup(
        brokers,
        clients,
        lambda connect: sasl_setup.create_scram_user(
            connect, sasl_setup.ADMIN_USER, password, sasl_setup.ADMIN_MECHANISM
        ),
    )


def _sasl_plaintext(state_dir: Path) -> SecuritySetup:
    return _sasl("SASL_PLAINTEXT", state_dir)


def _sasl_ssl(state_dir: Path) -> SecuritySetup:
    return _sasl("SASL_SSL", state_dir)


SECURITY_MODES: dict[str, SecurityMode] = {
    mode.name: mode
    for mode in (
        SecurityMode("plaintext", "PLAINTEXT", _plaintext),
        SecurityMode("ssl", "SSL", _ssl),
        SecurityMode("sasl_plaintext", "SASL_PLAINTEXT", _sasl_plaintext),
        SecurityMode("sasl_ssl", "SASL_SSL", _sasl_ssl),
    )
}


def security_mode(name: str) -> SecurityMode:
    """Raises UserError for a mode not in the table."""
    mode = SECURITY_MODES.get(name.lower())
    if mode is None:
        raise UserError(f"Unknown security mode {name}: one of {', '.join(SECURITY_MODES)}")
    return mode


def write_client_properties(path: Path, properties: dict[str, str]) -> None:
    """Kafka's client properties format (`key=value` lines; no escaping is needed for these values), readable
    by its owner only (a SASL mode's holds the admin's password)."""
    path.touch(mode=0o600, exist_ok=True)
    path.write_text("".join(f"{key}={value}\n" for key, value in properties.items()), encoding="utf-8")
