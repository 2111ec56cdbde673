"""Certificates for a local TLS cluster (`cluster up --security ssl`): a CA, and PEM key stores signed by it,
made with the `cryptography` library.

A key store is one PEM file as Kafka's `ssl.keystore.type=PEM` reads it (KIP-651): the private key,
encrypted PKCS#8 (Kafka requires `ssl.key.password` for a key store file), then the certificate and the
CA's. Server certificates name 127.0.0.1 and localhost (the brokers listen on loopback), so host name
verification (`ssl.endpoint.identification.algorithm=https`) passes. librdkafka clients read the same
file (`ssl.key.location` and `ssl.certificate.location`), Python's `ssl` too.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

VALIDITY = datetime.timedelta(days=825)
LOOPBACK_NAMES = ("localhost",)
LOOPBACK_ADDRESSES = ("127.0.0.1",)


@dataclass(frozen=True)
class CertificateAuthority:
    key: ec.EllipticCurvePrivateKey
    certificate: x509.Certificate

    @property
    def pem(self) -> bytes:
        return self.certificate.public_bytes(serialization.Encoding.PEM)

    @property
    def key_pem(self) -> bytes:
        """The CA's private key, unencrypted PKCS#8 (kept private in the state dir to issue client
        certificates later)."""
        return self.key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )

    @classmethod
    def load(cls, certificate_pem: bytes, key_pem: bytes) -> CertificateAuthority:
        key = serialization.load_pem_private_key(key_pem, password=None)
        if not isinstance(key, ec.EllipticCurvePrivateKey):
            raise ValueError("the CA key is not an EC key")
        return cls(key, x509.load_pem_x509_certificate(certificate_pem))


def _name(common_name: str, organizational_unit: str | None = None) -> x509.Name:
    attributes = [x509.NameAttribute(NameOID.COMMON_NAME, common_name)]
    if organizational_unit is not None:
        attributes.append(x509.NameAttribute(NameOID.ORGANIZATIONAL_UNIT_NAME, organizational_unit))
    attributes.append(x509.NameAttribute(NameOID.ORGANIZATION_NAME, "kafkaops"))
    # X.509 lists the most general attribute first; the DN's text (RFC 2253) reverses it: CN=...,OU=...,O=...
    return x509.Name(list(reversed(attributes)))


def create_ca(common_name: str = "kafkaops local CA", now: datetime.datetime | None = None) -> CertificateAuthority:
    start = now or datetime.datetime.now(datetime.UTC)
    key = ec.generate_private_key(ec.SECP256R1())
    name = _name(common_name)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start - datetime.timedelta(minutes=5))
        .not_valid_after(start + VALIDITY)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
        .sign(key, hashes.SHA256())
    )
    return CertificateAuthority(key, certificate)


def issue(
    ca: CertificateAuthority,
    common_name: str,
    key_password: str,
    organizational_unit: str | None = None,
    server: bool = True,
    now: datetime.datetime | None = None,
) -> bytes:
    """A PEM key store: the encrypted private key, the certificate (subject `CN=<name>[,OU=<unit>],O=kafkaops`;
    a server's also names the loopback host) and the CA's certificate."""
    start = now or datetime.datetime.now(datetime.UTC)
    key = ec.generate_private_key(ec.SECP256R1())
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(common_name, organizational_unit))
        .issuer_name(ca.certificate.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start - datetime.timedelta(minutes=5))
        .not_valid_after(start + VALIDITY)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        # a broker's certificate also serves as its client certificate on inter-broker connections
        .add_extension(
            x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False
        )
    )
    if server:
        names: list[x509.GeneralName] = [x509.DNSName(n) for n in LOOPBACK_NAMES]
        names += [x509.IPAddress(ipaddress.ip_address(a)) for a in LOOPBACK_ADDRESSES]
        builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
    certificate = builder.sign(ca.key, hashes.SHA256())
    private = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.BestAvailableEncryption(key_password.encode()),
    )
    return private + certificate.public_bytes(serialization.Encoding.PEM) + ca.pem


def write_private(path: Path, data: bytes) -> Path:
    """Write a file only its owner may read (a key store holds a private key)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(data)
    return path
