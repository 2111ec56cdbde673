"""SASL mechanisms both sides share: `sasl.jaas.config` in Kafka's syntax (`JaasConfig`), PLAIN (RFC 4616,
Kafka's `PlainSaslServer` with the `user_<name>="<password>"` options of `PlainLoginModule`), and the
factories of servers and clients for PLAIN and SCRAM-SHA-256/512.

    org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="alice-secret";

Pure: no I/O. The broker's authenticator and the tools' client feed these with tokens off the wire.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from kafkaops.cluster.common.errors import InvalidArgumentError, SaslAuthenticationFailedError
from kafkaops.cluster.common.scram import (
    CredentialLookup,
    RandomString,
    SaslException,
    ScramMechanism,
    ScramSaslClient,
    ScramSaslServer,
    secure_random_string,
)

PLAIN = "PLAIN"
GSSAPI = "GSSAPI"
SUPPORTED_MECHANISMS = (PLAIN, *(m.mechanism_name for m in ScramMechanism))
PLAIN_LOGIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"
SCRAM_LOGIN_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"
JAAS_USER_PREFIX = "user_"
"""`PlainServerCallbackHandler`: the PLAIN users a broker knows are its login module's `user_<name>` options."""


# --- JaasConfig ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AppConfigurationEntry:
    """One login module of a `sasl.jaas.config`: its class, control flag and options."""

    login_module: str
    control_flag: str
    options: dict[str, str] = field(default_factory=dict)


_TOKEN = re.compile(r'\s*(?:(?P<quoted>"(?:[^"\\]|\\.)*")|(?P<semi>;)|(?P<eq>=)|(?P<word>[^\s;="]+))', re.DOTALL)
_FLAGS = ("required", "requisite", "sufficient", "optional")


def _tokens(text: str) -> list[tuple[str, str]]:
    tokens: list[tuple[str, str]] = []
    position = 0
    while position < len(text):
        if text[position:].strip() == "":
            break
        match = _TOKEN.match(text, position)
        if match is None:
            raise InvalidArgumentError(f"Unexpected character in JAAS config: {text[position:].strip()[:20]}")
        kind = match.lastgroup or ""
        value = match.group(kind)
        if kind == "quoted":
            value = re.sub(r"\\(.)", r"\1", value[1:-1])
        tokens.append((kind, value))
        position = match.end()
    return tokens


def parse_jaas_config(text: str) -> list[AppConfigurationEntry]:
    """Kafka's `JaasConfig`: login modules, each `<class> <flag> [key=value ...];`.

    Raises InvalidArgumentError with Kafka's texts for a malformed config."""
    tokens = _tokens(text)
    entries: list[AppConfigurationEntry] = []
    index = 0
    while index < len(tokens):
        kind, module = tokens[index]
        if kind != "word":
            raise InvalidArgumentError(f"Login module not specified in JAAS config: {text}")
        if index + 1 >= len(tokens) or tokens[index + 1][1].lower() not in _FLAGS:
            flag = tokens[index + 1][1] if index + 1 < len(tokens) else ""
            raise InvalidArgumentError(f"Invalid login module control flag '{flag}' in JAAS config")
        flag = tokens[index + 1][1].lower()
        index += 2
        options: dict[str, str] = {}
        while index < len(tokens) and tokens[index][0] != "semi":
            key_kind, key = tokens[index]
            if key_kind not in ("word", "quoted"):
                raise InvalidArgumentError(f"Unexpected token in JAAS config: {key}")
            if (
                index + 2 >= len(tokens)
                or tokens[index + 1][0] != "eq"
                or tokens[index + 2][0] not in ("word", "quoted")
            ):
                raise InvalidArgumentError(f"Value not specified for key '{key}' in JAAS config")
            options[key] = tokens[index + 2][1]
            index += 3
        if index >= len(tokens):
            raise InvalidArgumentError("JAAS config entry not terminated by semi-colon")
        index += 1
        entries.append(AppConfigurationEntry(module, flag, options))
    if not entries:
        raise InvalidArgumentError("JAAS config property does not contain any login modules")
    return entries


@dataclass(frozen=True)
class SaslClientLogin:
    """A client's login: the mechanism it asks for and the user and password of its login module."""

    mechanism: str
    username: str
    password: str


def client_login(mechanism: str, jaas_config: str | None) -> SaslClientLogin:
    """A client's `sasl.mechanism` and `sasl.jaas.config` (exactly one login module with `username` and
    `password`, as Kafka's `JaasContext.loadClientContext` wants). Raises InvalidArgumentError."""
    if mechanism not in SUPPORTED_MECHANISMS:
        raise InvalidArgumentError(
            f"Unsupported SASL mechanism {mechanism}: kafkaops speaks {', '.join(SUPPORTED_MECHANISMS)}"
        )
    if jaas_config is None:
        raise InvalidArgumentError(
            "Could not find a 'KafkaClient' entry in the JAAS configuration. System property "
            "'java.security.auth.login.config' is not set"
        )
    entries = parse_jaas_config(jaas_config)
    if len(entries) != 1:
        raise InvalidArgumentError(f"JAAS config property contains {len(entries)} login modules, should be 1 module")
    options = entries[0].options
    if "username" not in options or "password" not in options:
        raise InvalidArgumentError(f"sasl.jaas.config for {mechanism} needs the options username and password")
    return SaslClientLogin(mechanism, options["username"], options["password"])


# --- PLAIN ---------------------------------------------------------------------------------------------


class PlainSaslServer:
    """Kafka's `PlainSaslServer` with `PlainServerCallbackHandler`: one message
    `[authzid] NUL authcid NUL passwd`, checked against the listener's `user_<name>` options.
    Raises SaslAuthenticationFailedError with Kafka's texts (PLAIN tells the client why)."""

    def __init__(self, users: Mapping[str, str]) -> None:
        self.users = users
        self.complete = False
        self.authorization_id = ""

    def evaluate_response(self, response: bytes) -> bytes:
        if self.complete:
            raise SaslException("Unexpected challenge in Sasl server state COMPLETE")
        tokens = response.decode("utf-8", errors="replace").split("\0")
        if len(tokens) != 3:
            raise SaslAuthenticationFailedError(
                f"Invalid SASL/PLAIN response: expected 3 tokens, got {min(len(tokens), 4)}"
            )
        authorization_id, user, password = tokens
        if not user:
            raise SaslAuthenticationFailedError("Authentication failed: username not specified")
        if not password:
            raise SaslAuthenticationFailedError("Authentication failed: password not specified")
        expected = self.users.get(user)
        if expected is None or not secrets.compare_digest(expected.encode(), password.encode()):
            raise SaslAuthenticationFailedError("Authentication failed: Invalid username or password")
        if authorization_id and authorization_id != user:
            raise SaslAuthenticationFailedError(
                "Authentication failed: Client requested an authorization id that is different from username"
            )
        self.authorization_id = user
        self.complete = True
        return b""


class PlainSaslClient:
    """PLAIN's one message; the server's empty answer completes it."""

    def __init__(self, user: str, password: str) -> None:
        self.user = user
        self.password = password
        self.complete = False

    def first_message(self) -> bytes:
        return f"\0{self.user}\0{self.password}".encode()

    def evaluate_challenge(self, challenge: bytes) -> bytes:
        self.complete = True
        return b""


def plain_users(options: Mapping[str, str]) -> dict[str, str]:
    """The `user_<name>="<password>"` options of a broker's PlainLoginModule."""
    return {k.removeprefix(JAAS_USER_PREFIX): v for k, v in options.items() if k.startswith(JAAS_USER_PREFIX)}


# --- factories -----------------------------------------------------------------------------------------


class SaslServer(Protocol):
    """Java's `SaslServer`, as the broker's authenticator drives it."""

    @property
    def complete(self) -> bool: ...

    @property
    def authorization_id(self) -> str: ...

    def evaluate_response(self, response: bytes) -> bytes: ...


class SaslClient(Protocol):
    @property
    def complete(self) -> bool: ...

    def first_message(self) -> bytes: ...

    def evaluate_challenge(self, challenge: bytes) -> bytes: ...


ScramCredentials = Callable[[ScramMechanism], CredentialLookup]
"""The broker's credential cache: for a mechanism, its user → credential lookup."""


def create_sasl_server(
    mechanism: str,
    plain_users: Mapping[str, str],
    scram_credentials: ScramCredentials,
    random_string: RandomString = secure_random_string,
) -> SaslServer:
    """A server for an enabled mechanism the client asked for. Raises SaslException for one kafkaops
    does not implement (GSSAPI, OAUTHBEARER)."""
    if mechanism == PLAIN:
        return PlainSaslServer(plain_users)
    scram = ScramMechanism.for_mechanism_name(mechanism)
    if scram is None:
        raise SaslException(f"Requested mechanism '{mechanism}' is not supported")
    return ScramSaslServer(scram, scram_credentials(scram), random_string)


def create_sasl_client(login: SaslClientLogin, random_string: RandomString = secure_random_string) -> SaslClient:
    if login.mechanism == PLAIN:
        return PlainSaslClient(login.username, login.password)
    scram = ScramMechanism.for_mechanism_name(login.mechanism)
    if scram is None:
        raise InvalidArgumentError(f"Unsupported SASL mechanism {login.mechanism}")
    return ScramSaslClient(scram, login.username, login.password, random_string)


def jaas_config_text(mechanism: str, user: str, password: str) -> str:
    """The client `sasl.jaas.config` Kafka's docs show for a mechanism (what `cluster up` writes)."""
    module = PLAIN_LOGIN_MODULE if mechanism == PLAIN else SCRAM_LOGIN_MODULE
    return f'{module} required username="{_quote(user)}" password="{_quote(password)}";'


def _quote(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')
