"""TLS contexts from Kafka's `ssl.*` settings (Kafka's `SslFactory` / `DefaultSslEngineFactory`), for the
broker's SSL listeners, its inter-broker connections and the tools' `--command-config`: one reading of the
keys for all of them.

PEM stores only (Kafka 2.7+, KIP-651): `ssl.keystore.type=PEM` with `ssl.keystore.location` (a file holding
the private key and the certificate chain; Kafka requires `ssl.key.password` for it) or inline
`ssl.keystore.key` + `ssl.keystore.certificate.chain`; `ssl.truststore.type=PEM` with
`ssl.truststore.location` or inline `ssl.truststore.certificates`. JKS and PKCS12 stores need Java: refused
with a clear message. Without a truststore, the system's CAs are trusted (Kafka: the JVM's).
`ssl.client.auth` none/requested/required (server side), `ssl.enabled.protocols` (TLSv1.2/TLSv1.3 bound the
versions), `ssl.endpoint.identification.algorithm` (`https`, the default, checks the server's host name;
empty turns the check off; client side).

Pure but for reading the store files when a context is built.
"""

from __future__ import annotations

import os
import ssl
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kafkaops.cluster.common.errors import InvalidConfigurationError
from kafkaops.cluster.common.kafka_principal import ANONYMOUS, USER_TYPE, KafkaPrincipal
from kafkaops.cluster.common.ssl_principal_mapper import SslPrincipalMapper

PEM_TYPE = "PEM"
CLIENT_AUTH = ("required", "requested", "none")
"""`SslClientAuth` values (`ssl.client.auth`), lower-case as Kafka's `forConfig` reads them."""
DEFAULT_ENABLED_PROTOCOLS = ("TLSv1.2", "TLSv1.3")
_TLS_VERSIONS = {
    "TLSv1": ssl.TLSVersion.TLSv1,
    "TLSv1.1": ssl.TLSVersion.TLSv1_1,
    "TLSv1.2": ssl.TLSVersion.TLSv1_2,
    "TLSv1.3": ssl.TLSVersion.TLSv1_3,
}

SSL_KEYS = (
    "ssl.protocol",
    "ssl.enabled.protocols",
    "ssl.keystore.type",
    "ssl.keystore.location",
    "ssl.keystore.password",
    "ssl.key.password",
    "ssl.keystore.key",
    "ssl.keystore.certificate.chain",
    "ssl.truststore.type",
    "ssl.truststore.location",
    "ssl.truststore.password",
    "ssl.truststore.certificates",
    "ssl.endpoint.identification.algorithm",
    "ssl.client.auth",
    "ssl.principal.mapping.rules",
)
"""The `ssl.*` settings read here, in Kafka's `SslConfigs` / `BrokerSecurityConfigs` names."""


@dataclass(frozen=True)
class SslConfig:
    """The `ssl.*` settings of one side (a listener, a client), Kafka's defaults where unset."""

    keystore_type: str = "JKS"
    keystore_location: str | None = None
    keystore_password: str | None = None
    key_password: str | None = None
    keystore_key: str | None = None
    keystore_certificate_chain: str | None = None
    truststore_type: str = "JKS"
    truststore_location: str | None = None
    truststore_password: str | None = None
    truststore_certificates: str | None = None
    enabled_protocols: tuple[str, ...] = DEFAULT_ENABLED_PROTOCOLS
    endpoint_identification_algorithm: str = "https"
    client_auth: str = "none"
    principal_mapping_rules: str = "DEFAULT"

    @classmethod
    def from_properties(cls, properties: Mapping[str, Any]) -> SslConfig:
        """From Kafka properties (strings, or a broker config's parsed values; a LIST as a list). Raises
        InvalidConfigurationError with Kafka's texts."""

        def text(key: str) -> str | None:
            value = properties.get(key)
            if value is None:
                return None
            return ",".join(map(str, value)) if isinstance(value, list | tuple) else str(value).strip()

        protocols = text("ssl.enabled.protocols")
        enabled = DEFAULT_ENABLED_PROTOCOLS if protocols is None else tuple(p.strip() for p in protocols.split(","))
        client_auth = (text("ssl.client.auth") or "none").lower()
        if client_auth not in CLIENT_AUTH:
            raise InvalidConfigurationError(
                f"Invalid value {client_auth} for configuration ssl.client.auth: String must be one of: "
                + ", ".join(CLIENT_AUTH)
            )
        config = cls(
            keystore_type=(text("ssl.keystore.type") or "JKS").upper(),
            keystore_location=text("ssl.keystore.location"),
            keystore_password=text("ssl.keystore.password"),
            key_password=text("ssl.key.password"),
            keystore_key=text("ssl.keystore.key"),
            keystore_certificate_chain=text("ssl.keystore.certificate.chain"),
            truststore_type=(text("ssl.truststore.type") or "JKS").upper(),
            truststore_location=text("ssl.truststore.location"),
            truststore_password=text("ssl.truststore.password"),
            truststore_certificates=text("ssl.truststore.certificates"),
            enabled_protocols=tuple(p for p in enabled if p),
            # unset is https (Kafka's default); set but empty turns host name checking off
            endpoint_identification_algorithm=text("ssl.endpoint.identification.algorithm") or ""
            if properties.get("ssl.endpoint.identification.algorithm") is not None
            else "https",
            client_auth=client_auth,
            principal_mapping_rules=text("ssl.principal.mapping.rules") or "DEFAULT",
        )
        config.check()
        return config

    def check(self) -> None:
        """Kafka's `createKeystore` / `createTruststore` checks, and ours for what Python cannot load."""
        _check_keystore(self)
        _check_truststore(self)
        for protocol in self.enabled_protocols:
            if protocol not in _TLS_VERSIONS:
                raise InvalidConfigurationError(
                    f"Invalid value {protocol} for configuration ssl.enabled.protocols: kafkaops speaks "
                    + ", ".join(_TLS_VERSIONS)
                )
        if not self.enabled_protocols:
            raise InvalidConfigurationError("ssl.enabled.protocols is empty: no TLS version is enabled")
        try:
            SslPrincipalMapper.from_rules(self.principal_mapping_rules)
        except ValueError as error:
            raise InvalidConfigurationError(
                f"Invalid value {self.principal_mapping_rules} for configuration ssl.principal.mapping.rules: {error}"
            ) from None

    @property
    def has_keystore(self) -> bool:
        return self.keystore_location is not None or self.keystore_key is not None

    @property
    def principal_mapper(self) -> SslPrincipalMapper:
        return SslPrincipalMapper.from_rules(self.principal_mapping_rules)


def _check_keystore(c: SslConfig) -> None:
    if c.keystore_key is not None:
        if c.keystore_type != PEM_TYPE:
            raise InvalidConfigurationError(
                f"SSL private key can be specified only for PEM, but key store type is {c.keystore_type}."
            )
        if c.keystore_certificate_chain is None:
            raise InvalidConfigurationError("SSL private key is specified, but certificate chain is not specified.")
        if c.keystore_location is not None:
            raise InvalidConfigurationError("Both SSL key store location and separate private key are specified.")
        if c.keystore_password is not None:
            raise InvalidConfigurationError(
                "SSL key store password cannot be specified with PEM format, only key password may be specified."
            )
    elif c.keystore_certificate_chain is not None:
        raise InvalidConfigurationError("SSL certificate chain is specified, but private key is not specified")
    elif c.keystore_type == PEM_TYPE and c.keystore_location is not None:
        if c.keystore_password is not None:
            raise InvalidConfigurationError(
                "SSL key store password cannot be specified with PEM format, only key password may be specified"
            )
        if c.key_password is None:
            raise InvalidConfigurationError("SSL PEM key store is specified, but key password is not specified.")
    elif c.keystore_location is None and c.keystore_password is not None:
        raise InvalidConfigurationError("SSL key store is not specified, but key store password is specified.")
    elif c.keystore_location is not None and c.keystore_password is None:
        raise InvalidConfigurationError("SSL key store is specified, but key store password is not specified.")
    elif c.keystore_location is not None:
        raise InvalidConfigurationError(
            f"ssl.keystore.type {c.keystore_type} is not supported: kafkaops reads PEM key stores "
            "(ssl.keystore.type=PEM)"
        )


def _check_truststore(c: SslConfig) -> None:
    if c.truststore_certificates is not None:
        if c.truststore_type != PEM_TYPE:
            raise InvalidConfigurationError(
                f"SSL trust store certs can be specified only for PEM, but trust store type is {c.truststore_type}."
            )
        if c.truststore_location is not None:
            raise InvalidConfigurationError(
                "Both SSL trust store location and separate trust certificates are specified."
            )
        if c.truststore_password is not None:
            raise InvalidConfigurationError("SSL trust store password cannot be specified for PEM format.")
    elif c.truststore_type == PEM_TYPE and c.truststore_location is not None:
        if c.truststore_password is not None:
            raise InvalidConfigurationError("SSL trust store password cannot be specified for PEM format.")
    elif c.truststore_location is None and c.truststore_password is not None:
        raise InvalidConfigurationError("SSL trust store is not specified, but trust store password is specified.")
    elif c.truststore_location is not None:
        raise InvalidConfigurationError(
            f"ssl.truststore.type {c.truststore_type} is not supported: kafkaops reads PEM trust stores "
            "(ssl.truststore.type=PEM)"
        )


# --- contexts --------------------------------------------------------------------------------------------


def _base_context(config: SslConfig, purpose: int) -> ssl.SSLContext:
    context = ssl.SSLContext(purpose)
    versions = sorted(_TLS_VERSIONS[p] for p in config.enabled_protocols)
    context.minimum_version, context.maximum_version = versions[0], versions[-1]
    _load_keystore(context, config)
    _load_truststore(context, config)
    return context


def _load_keystore(context: ssl.SSLContext, config: SslConfig) -> None:
    password = config.key_password
    if config.keystore_location is not None:
        try:
            context.load_cert_chain(config.keystore_location, password=password)
        except (OSError, ssl.SSLError, ValueError) as error:
            raise InvalidConfigurationError(
                f"Failed to load PEM SSL keystore {config.keystore_location}: {error}"
            ) from None
    elif config.keystore_key is not None and config.keystore_certificate_chain is not None:
        # Python loads a key only from a file: a private one, removed at once
        fd, path = tempfile.mkstemp(prefix="kafkaops-keystore-", suffix=".pem")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write(_pem_block(config.keystore_key) + _pem_block(config.keystore_certificate_chain))
            context.load_cert_chain(path, password=password)
        except (OSError, ssl.SSLError, ValueError) as error:
            raise InvalidConfigurationError(f"Invalid PEM keystore configs: {error}") from None
        finally:
            Path(path).unlink(missing_ok=True)


def _pem_block(text: str) -> str:
    return text.strip() + "\n"


def _load_truststore(context: ssl.SSLContext, config: SslConfig) -> None:
    try:
        if config.truststore_location is not None:
            context.load_verify_locations(cafile=config.truststore_location)
        elif config.truststore_certificates is not None:
            context.load_verify_locations(cadata=_pem_block(config.truststore_certificates))
        else:
            context.load_default_certs(ssl.Purpose.SERVER_AUTH)
    except (OSError, ssl.SSLError, ValueError) as error:
        where = config.truststore_location or "ssl.truststore.certificates"
        raise InvalidConfigurationError(f"Failed to load PEM SSL truststore {where}: {error}") from None


def server_context(config: SslConfig) -> ssl.SSLContext:
    """The context of an SSL listener: its key store, client certificates checked as `ssl.client.auth`
    says. Raises InvalidConfigurationError."""
    if not config.has_keystore:
        raise InvalidConfigurationError("SSL key store is not specified: an SSL listener needs ssl.keystore.*")
    context = _base_context(config, ssl.PROTOCOL_TLS_SERVER)
    context.verify_mode = {"required": ssl.CERT_REQUIRED, "requested": ssl.CERT_OPTIONAL}.get(
        config.client_auth, ssl.CERT_NONE
    )
    return context


def client_context(config: SslConfig) -> ssl.SSLContext:
    """The context of a client (a tool, a broker reaching another): the server's certificate verified, its
    host name checked unless `ssl.endpoint.identification.algorithm` is empty, our key store as the client
    certificate if there is one. Raises InvalidConfigurationError."""
    context = _base_context(config, ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = config.endpoint_identification_algorithm.lower() == "https"
    return context


# --- the peer's principal -------------------------------------------------------------------------------


def distinguished_name(der_certificate: bytes) -> str:
    """A certificate's subject as Java's `X500Principal.getName()` writes it (RFC 2253: most specific
    attribute first, `CN=...,OU=...,O=...,C=...`)."""
    from cryptography import x509

    return x509.load_der_x509_certificate(der_certificate).subject.rfc4514_string()


def ssl_principal(der_certificate: bytes | None, mapper: SslPrincipalMapper) -> KafkaPrincipal:
    """Kafka's `DefaultKafkaPrincipalBuilder` for SSL: the client certificate's DN through the mapping
    rules; ANONYMOUS when the client sent none. Raises NoMatchingRule."""
    if der_certificate is None:
        return ANONYMOUS
    return KafkaPrincipal(USER_TYPE, mapper.get_name(distinguished_name(der_certificate)))
