"""SCRAM (RFC 5802, RFC 7677) as Kafka speaks it: `ScramMechanism`, `ScramFormatter`, `ScramMessages`,
`ScramCredentialUtils`, `ScramSaslServer` and `ScramSaslClient`, shared by the brokers (their SASL
listeners, the Admin API that stores credentials) and the tools (`configs --entity-type users`, the
client's login).

    client                                         server
      client-first   n,,n=<saslname>,r=<cnonce>   -->
                                                   <--  server-first   r=<cnonce><snonce>,s=<salt b64>,i=<iterations>
      client-final   c=biws,r=<nonce>,p=<proof b64> -->
                                                   <--  server-final   v=<server signature b64>

    SaltedPassword = Hi(password, salt, i)          (PBKDF2-HMAC)
    ClientKey = HMAC(SaltedPassword, "Client Key")  StoredKey = H(ClientKey)
    ServerKey = HMAC(SaltedPassword, "Server Key")
    AuthMessage = client-first-bare "," server-first "," client-final-without-proof
    ClientProof = ClientKey XOR HMAC(StoredKey, AuthMessage)
    ServerSignature = HMAC(ServerKey, AuthMessage)

A credential is stored as `salt=<b64>,stored_key=<b64>,server_key=<b64>,iterations=<n>` (Kafka's
`ScramCredentialUtils.credentialToString`), never the password. Pure: the random source is passed in.
"""

from __future__ import annotations

import base64
import binascii
import enum
import hashlib
import hmac
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass

from kafkaops.cluster.common.errors import KafkaOpsError, SaslAuthenticationFailedError

RandomString = Callable[[], str]
"""The nonce and salt source (`secure_random_string`), injected so tests can pin it."""


class SaslException(KafkaOpsError):
    """Java's `SaslException`: the exchange failed. The server tells the client only that the credentials
    were invalid ("Authentication failed during authentication due to invalid credentials with SASL
    mechanism ..."); the message stays in the broker. `SaslAuthenticationFailedError` carries a message the
    client may see."""


class ScramMechanism(enum.Enum):
    """Kafka's `ScramMechanism` (internals) with the public one's type byte (Admin API)."""

    SCRAM_SHA_256 = ("SCRAM-SHA-256", "sha256", 1)
    SCRAM_SHA_512 = ("SCRAM-SHA-512", "sha512", 2)

    def __init__(self, mechanism_name: str, hash_name: str, type_byte: int) -> None:
        self.mechanism_name = mechanism_name
        self.hash_name = hash_name
        self.type_byte = type_byte
        self.min_iterations = 4096

    def __str__(self) -> str:
        return self.name

    @classmethod
    def for_mechanism_name(cls, name: str) -> ScramMechanism | None:
        return next((m for m in cls if m.mechanism_name == name), None)

    @classmethod
    def from_type(cls, type_byte: int) -> ScramMechanism | None:
        return next((m for m in cls if m.type_byte == type_byte), None)


MECHANISM_NAMES = tuple(m.mechanism_name for m in ScramMechanism)
DEFAULT_ITERATIONS = 4096
"""ConfigCommand's `DefaultScramIterations`."""
MAX_ITERATIONS = 16384
"""ZkAdminManager's limit on AlterUserScramCredentials."""


def is_scram(mechanism_name: str) -> bool:
    return mechanism_name in MECHANISM_NAMES


# --- ScramFormatter ----------------------------------------------------------------------------------


def _hmac(mechanism: ScramMechanism, key: bytes, data: bytes) -> bytes:
    return hmac.new(key, data, mechanism.hash_name).digest()


def _hash(mechanism: ScramMechanism, data: bytes) -> bytes:
    return hashlib.new(mechanism.hash_name, data).digest()


def _xor(first: bytes, second: bytes) -> bytes:
    if len(first) != len(second):
        raise ValueError("Argument arrays must be of the same length")
    return bytes(a ^ b for a, b in zip(first, second, strict=True))


def salted_password(mechanism: ScramMechanism, password: str, salt: bytes, iterations: int) -> bytes:
    """`Hi(password, salt, i)`: PBKDF2 with the mechanism's HMAC and one block of output (RFC 5802 §2.2).
    Kafka normalizes the password as plain UTF-8 (no SASLprep), and so do we."""
    return hashlib.pbkdf2_hmac(mechanism.hash_name, password.encode(), salt, iterations)


def client_key(mechanism: ScramMechanism, salted: bytes) -> bytes:
    return _hmac(mechanism, salted, b"Client Key")


def server_key(mechanism: ScramMechanism, salted: bytes) -> bytes:
    return _hmac(mechanism, salted, b"Server Key")


def stored_key(mechanism: ScramMechanism, key: bytes) -> bytes:
    return _hash(mechanism, key)


def secure_random_string() -> str:
    """`ScramFormatter.secureRandomString`: `new BigInteger(130, random).toString(36)`."""
    value = secrets.randbits(130)
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    text = ""
    while True:
        value, digit = divmod(value, 36)
        text = digits[digit] + text
        if value == 0:
            return text


@dataclass(frozen=True)
class ScramCredential:
    """Kafka's `ScramCredential`: what a broker needs to check a SCRAM login, not the password."""

    salt: bytes
    stored_key: bytes
    server_key: bytes
    iterations: int

    def to_string(self) -> str:
        """`ScramCredentialUtils.credentialToString`: the value of `SCRAM-SHA-*` in `/config/users/<user>`."""
        b64 = base64.b64encode
        return (
            f"salt={b64(self.salt).decode()},stored_key={b64(self.stored_key).decode()},"
            f"server_key={b64(self.server_key).decode()},iterations={self.iterations}"
        )

    @classmethod
    def from_string(cls, text: str) -> ScramCredential:
        """`ScramCredentialUtils.credentialFromString`. Raises ValueError (`Credentials not valid: ...`)."""
        props: dict[str, str] = {}
        for token in text.split(","):
            index = token.find("=")
            if index <= 0:
                raise ValueError(f"Credentials not valid: {text}")
            props[token[:index]] = token[index + 1 :]
        if set(props) != {"salt", "stored_key", "server_key", "iterations"}:
            raise ValueError(f"Credentials not valid: {text}")
        try:
            return cls(
                base64.b64decode(props["salt"], validate=True),
                base64.b64decode(props["stored_key"], validate=True),
                base64.b64decode(props["server_key"], validate=True),
                int(props["iterations"]),
            )
        except (binascii.Error, ValueError):
            raise ValueError(f"Credentials not valid: {text}") from None


def credential_from_salted_password(
    mechanism: ScramMechanism, salt: bytes, salted: bytes, iterations: int
) -> ScramCredential:
    """`ScramFormatter.generateCredential(salt, saltedPassword, iterations)`: what AlterUserScramCredentials
    stores from the salted password a client sends."""
    return ScramCredential(
        salt, stored_key(mechanism, client_key(mechanism, salted)), server_key(mechanism, salted), iterations
    )


def generate_credential(
    mechanism: ScramMechanism, password: str, iterations: int, random_string: RandomString = secure_random_string
) -> ScramCredential:
    """`ScramFormatter.generateCredential(password, iterations)`: a fresh salt (the UTF-8 bytes of a
    random base-36 string, as Kafka's), then the keys."""
    salt = random_string().encode()
    return credential_from_salted_password(
        mechanism, salt, salted_password(mechanism, password, salt, iterations), iterations
    )


def sasl_name(username: str) -> str:
    """`ScramFormatter.saslName`: ',' and '=' escaped (RFC 5802 §5.1)."""
    return username.replace("=", "=3D").replace(",", "=2C")


def username(name: str) -> str:
    """`ScramFormatter.username`. Raises SaslException for a stray '='."""
    text = name.replace("=2C", ",")
    if "=" in text.replace("=3D", ""):
        raise SaslException(f"Invalid username: {name}")
    return text.replace("=3D", "=")


# --- ScramMessages -----------------------------------------------------------------------------------

_VALUE = r"[\x01-\x2b\x2d-\x7f]+"  # [\x01-\x7F&&[^,]]
_VALUE_SAFE = r"[\x01-\x2b\x2d-\x3c\x3e-\x7f]+"  # [\x01-\x7F&&[^=,]]
_PRINTABLE = r"[\x21-\x2b\x2d-\x7e]+"  # [\x21-\x7E&&[^,]]
_SASLNAME = r"(?:[\x01-\x2b\x2d-\x3c\x3e-\x7f]|=2C|=3D)+"
_BASE64 = r"(?:[a-zA-Z0-9/+]{4})*(?:[a-zA-Z0-9/+]{3}=|[a-zA-Z0-9/+]{2}==)?"
_RESERVED = rf"(?:m={_VALUE},)?"
_EXTENSIONS = rf"(?:,[A-Za-z]+={_VALUE})*"

_CLIENT_FIRST = re.compile(
    rf"n,(?:a=(?P<authzid>{_SASLNAME}))?,{_RESERVED}n=(?P<saslname>{_SASLNAME}),r=(?P<nonce>{_PRINTABLE})"
    rf"(?P<extensions>{_EXTENSIONS})"
)
_SERVER_FIRST = re.compile(
    rf"{_RESERVED}r=(?P<nonce>{_PRINTABLE}),s=(?P<salt>{_BASE64}),i=(?P<iterations>[0-9]+){_EXTENSIONS}"
)
_CLIENT_FINAL = re.compile(rf"c=(?P<channel>{_BASE64}),r=(?P<nonce>{_PRINTABLE}){_EXTENSIONS},p=(?P<proof>{_BASE64})")
_SERVER_FINAL = re.compile(rf"(?:e=(?P<error>{_VALUE_SAFE}))|(?:v=(?P<signature>{_BASE64})){_EXTENSIONS}")


def _text(message: bytes) -> str:
    return message.decode("utf-8", errors="replace")


@dataclass(frozen=True)
class ClientFirstMessage:
    sasl_name: str
    nonce: str
    authorization_id: str = ""
    extensions: str = ""
    """The extensions as sent (`k=v,...`, without the leading comma): kept for the AuthMessage."""

    @classmethod
    def parse(cls, message: bytes) -> ClientFirstMessage:
        text = _text(message)
        match = _CLIENT_FIRST.fullmatch(text)
        if match is None:
            raise SaslException(f"Invalid SCRAM client first message format: {text}")
        return cls(match["saslname"], match["nonce"], match["authzid"] or "", match["extensions"][1:])

    def bare(self) -> str:
        base = f"n={self.sasl_name},r={self.nonce}"
        return f"{base},{self.extensions}" if self.extensions else base

    def to_bytes(self) -> bytes:
        return f"n,{self.authorization_id},{self.bare()}".encode()


@dataclass(frozen=True)
class ServerFirstMessage:
    nonce: str
    salt: bytes
    iterations: int

    @classmethod
    def parse(cls, message: bytes) -> ServerFirstMessage:
        text = _text(message)
        match = _SERVER_FIRST.fullmatch(text)
        if match is None:
            raise SaslException(f"Invalid SCRAM server first message format: {text}")
        iterations = int(match["iterations"])
        if iterations <= 0 or iterations > 2**31 - 1:
            raise SaslException(f"Invalid SCRAM server first message format: invalid iterations {iterations}")
        return cls(match["nonce"], base64.b64decode(match["salt"]), iterations)

    def to_message(self) -> str:
        return f"r={self.nonce},s={base64.b64encode(self.salt).decode()},i={self.iterations}"


@dataclass(frozen=True)
class ClientFinalMessage:
    channel_binding: bytes
    nonce: str
    proof: bytes = b""

    @classmethod
    def parse(cls, message: bytes) -> ClientFinalMessage:
        text = _text(message)
        match = _CLIENT_FINAL.fullmatch(text)
        if match is None:
            raise SaslException(f"Invalid SCRAM client final message format: {text}")
        return cls(base64.b64decode(match["channel"]), match["nonce"], base64.b64decode(match["proof"]))

    def without_proof(self) -> str:
        return f"c={base64.b64encode(self.channel_binding).decode()},r={self.nonce}"

    def to_bytes(self) -> bytes:
        return f"{self.without_proof()},p={base64.b64encode(self.proof).decode()}".encode()


@dataclass(frozen=True)
class ServerFinalMessage:
    error: str | None
    server_signature: bytes | None

    @classmethod
    def parse(cls, message: bytes) -> ServerFinalMessage:
        text = _text(message)
        match = _SERVER_FINAL.fullmatch(text)
        if match is None:
            raise SaslException(f"Invalid SCRAM server final message format: {text}")
        if match["error"] is not None:
            return cls(match["error"], None)
        return cls(None, base64.b64decode(match["signature"]))

    def to_bytes(self) -> bytes:
        if self.error is not None:
            return f"e={self.error}".encode()
        return f"v={base64.b64encode(self.server_signature or b'').decode()}".encode()


def auth_message(first: ClientFirstMessage, server_first: ServerFirstMessage, final: ClientFinalMessage) -> bytes:
    return f"{first.bare()},{server_first.to_message()},{final.without_proof()}".encode()


def client_proof(
    mechanism: ScramMechanism,
    salted: bytes,
    first: ClientFirstMessage,
    server_first: ServerFirstMessage,
    final: ClientFinalMessage,
) -> bytes:
    key = client_key(mechanism, salted)
    signature = _hmac(mechanism, stored_key(mechanism, key), auth_message(first, server_first, final))
    return _xor(key, signature)


def server_signature(
    mechanism: ScramMechanism,
    key: bytes,
    first: ClientFirstMessage,
    server_first: ServerFirstMessage,
    final: ClientFinalMessage,
) -> bytes:
    return _hmac(mechanism, key, auth_message(first, server_first, final))


# --- ScramSaslServer / ScramSaslClient ---------------------------------------------------------------

CredentialLookup = Callable[[str], "ScramCredential | None"]
"""The broker's credential cache for one mechanism: user name → credential, None if it has none."""


class ScramSaslServer:
    """Kafka's `ScramSaslServer`: two client messages, two answers; `authorization_id` once complete.

    `evaluate_response` raises SaslException (the client learns only that its credentials were invalid)
    or SaslAuthenticationFailedError (a message meant for the client); the server is FAILED after either.
    """

    def __init__(
        self,
        mechanism: ScramMechanism,
        credentials: CredentialLookup,
        random_string: RandomString = secure_random_string,
    ) -> None:
        self.mechanism = mechanism
        self.credentials = credentials
        self.random_string = random_string
        self.state = "RECEIVE_CLIENT_FIRST_MESSAGE"
        self.authorization_id = ""
        self._first: ClientFirstMessage | None = None
        self._server_first: ServerFirstMessage | None = None
        self._credential: ScramCredential | None = None

    @property
    def complete(self) -> bool:
        return self.state == "COMPLETE"

    def evaluate_response(self, response: bytes) -> bytes:
        try:
            if self.state == "RECEIVE_CLIENT_FIRST_MESSAGE":
                return self._client_first(response)
            if self.state == "RECEIVE_CLIENT_FINAL_MESSAGE":
                return self._client_final(response)
            raise SaslException(f"Unexpected challenge in Sasl server state {self.state}")
        except (SaslException, SaslAuthenticationFailedError):
            self._credential = self._first = self._server_first = None
            self.state = "FAILED"
            raise

    def _client_first(self, response: bytes) -> bytes:
        first = ClientFirstMessage.parse(response)
        user = username(first.sasl_name)
        credential = self.credentials(user)
        if credential is None:
            raise SaslException("Authentication failed: Invalid user credentials")
        if first.authorization_id and first.authorization_id != user:
            raise SaslAuthenticationFailedError(
                "Authentication failed: Client requested an authorization id that is different from username"
            )
        if credential.iterations < self.mechanism.min_iterations:
            raise SaslException(
                f"Iterations {credential.iterations} is less than the minimum "
                f"{self.mechanism.min_iterations} for {self.mechanism}"
            )
        server_nonce = self.random_string()
        self._first, self._credential, self.authorization_id = first, credential, user
        self._server_first = ServerFirstMessage(first.nonce + server_nonce, credential.salt, credential.iterations)
        self.state = "RECEIVE_CLIENT_FINAL_MESSAGE"
        return self._server_first.to_message().encode()

    def _client_final(self, response: bytes) -> bytes:
        final = ClientFinalMessage.parse(response)
        first, server_first, credential = self._first, self._server_first, self._credential
        if first is None or server_first is None or credential is None:
            raise SaslException(f"Unexpected challenge in Sasl server state {self.state}")
        # Kafka 3's check (2.8 has none): the nonce ends with the server-first's, as librdkafka sends it
        # prefixed with its client nonce once more
        if not final.nonce.endswith(server_first.nonce):
            raise SaslException("Invalid client nonce in the final client message.")
        signature = _hmac(self.mechanism, credential.stored_key, auth_message(first, server_first, final))
        try:
            computed = stored_key(self.mechanism, _xor(signature, final.proof))
        except ValueError:
            raise SaslException("Invalid client credentials") from None
        if not hmac.compare_digest(computed, credential.stored_key):
            raise SaslException("Invalid client credentials")
        answer = ServerFinalMessage(
            None, server_signature(self.mechanism, credential.server_key, first, server_first, final)
        )
        self._credential = self._first = self._server_first = None
        self.state = "COMPLETE"
        return answer.to_bytes()


class ScramSaslClient:
    """Kafka's `ScramSaslClient`: `first_message()`, then `evaluate_challenge` for the server-first (the
    client-final comes back) and for the server-final (b"" back once the server's signature is checked).
    Raises SaslException."""

    def __init__(
        self,
        mechanism: ScramMechanism,
        user: str,
        password: str,
        random_string: RandomString = secure_random_string,
    ) -> None:
        self.mechanism = mechanism
        self.password = password
        self._first = ClientFirstMessage(sasl_name(user), random_string())
        self._server_first: ServerFirstMessage | None = None
        self._final: ClientFinalMessage | None = None
        self._salted = b""
        self.complete = False

    def first_message(self) -> bytes:
        return self._first.to_bytes()

    def evaluate_challenge(self, challenge: bytes) -> bytes:
        if self._server_first is None:
            return self._client_final(challenge)
        if self.complete:
            raise SaslException("Unexpected challenge in Sasl client state COMPLETE")
        return self._check_server_final(challenge)

    def _client_final(self, challenge: bytes) -> bytes:
        server_first = ServerFirstMessage.parse(challenge)
        if not server_first.nonce.startswith(self._first.nonce):
            raise SaslException("Invalid server nonce: does not start with client nonce")
        if server_first.iterations < self.mechanism.min_iterations:
            raise SaslException(
                f"Requested iterations {server_first.iterations} is less than the minimum "
                f"{self.mechanism.min_iterations} for {self.mechanism}"
            )
        self._server_first = server_first
        self._salted = salted_password(self.mechanism, self.password, server_first.salt, server_first.iterations)
        unsigned = ClientFinalMessage(b"n,,", server_first.nonce)
        proof = client_proof(self.mechanism, self._salted, self._first, server_first, unsigned)
        self._final = ClientFinalMessage(unsigned.channel_binding, unsigned.nonce, proof)
        return self._final.to_bytes()

    def _check_server_final(self, challenge: bytes) -> bytes:
        final = ServerFinalMessage.parse(challenge)
        if final.error is not None:
            raise SaslException(
                f"Sasl authentication using {self.mechanism.mechanism_name} failed with error: {final.error}"
            )
        if self._server_first is None or self._final is None:
            raise SaslException("Unexpected server final message before the client final message")
        expected = server_signature(
            self.mechanism, server_key(self.mechanism, self._salted), self._first, self._server_first, self._final
        )
        if not hmac.compare_digest(expected, final.server_signature or b""):
            raise SaslException("Invalid server signature in server final message")
        self.complete = True
        return b""
