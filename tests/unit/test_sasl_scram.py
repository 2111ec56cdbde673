"""SCRAM and PLAIN mechanics (RFC 5802/7677, Kafka's ScramSaslServer/Client, PlainSaslServer, JaasConfig)."""

from __future__ import annotations

import base64

import pytest

from kafkaops.cluster.common.errors import InvalidArgumentError, SaslAuthenticationFailedError
from kafkaops.cluster.common.sasl import (
    PlainSaslServer,
    client_login,
    create_sasl_client,
    jaas_config_text,
    parse_jaas_config,
    plain_users,
)
from kafkaops.cluster.common.scram import (
    ClientFirstMessage,
    SaslException,
    ScramCredential,
    ScramMechanism,
    ScramSaslClient,
    ScramSaslServer,
    credential_from_salted_password,
    generate_credential,
    salted_password,
    sasl_name,
    secure_random_string,
    username,
)

SHA256, SHA512 = ScramMechanism.SCRAM_SHA_256, ScramMechanism.SCRAM_SHA_512

# RFC 7677 section 3: user "user", password "pencil"
RFC_CLIENT_NONCE = "rOprNGfwEbeRWgbNEkqO"
RFC_SERVER_NONCE = "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"
RFC_SALT = base64.b64decode("W22ZaJ0SNY7soEsUEjb6gQ==")
RFC_CLIENT_FIRST = b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO"
RFC_SERVER_FIRST = b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
RFC_CLIENT_FINAL = (
    b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
)
RFC_SERVER_FINAL = b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="


def rfc_credential() -> ScramCredential:
    return credential_from_salted_password(SHA256, RFC_SALT, salted_password(SHA256, "pencil", RFC_SALT, 4096), 4096)


def test_rfc7677_client_side() -> None:
    client = ScramSaslClient(SHA256, "user", "pencil", lambda: RFC_CLIENT_NONCE)
    assert client.first_message() == RFC_CLIENT_FIRST
    assert client.evaluate_challenge(RFC_SERVER_FIRST) == RFC_CLIENT_FINAL
    assert not client.complete
    assert client.evaluate_challenge(RFC_SERVER_FINAL) == b""
    assert client.complete


def test_rfc7677_server_side() -> None:
    credential = rfc_credential()
    server = ScramSaslServer(SHA256, {"user": credential}.get, lambda: RFC_SERVER_NONCE)
    assert server.evaluate_response(RFC_CLIENT_FIRST) == RFC_SERVER_FIRST
    assert server.evaluate_response(RFC_CLIENT_FINAL) == RFC_SERVER_FINAL
    assert server.complete and server.authorization_id == "user"


def test_client_refuses_a_forged_server_signature() -> None:
    client = ScramSaslClient(SHA256, "user", "pencil", lambda: RFC_CLIENT_NONCE)
    client.first_message()
    client.evaluate_challenge(RFC_SERVER_FIRST)
    with pytest.raises(SaslException, match="Invalid server signature"):
        client.evaluate_challenge(b"v=" + base64.b64encode(b"x" * 32))


@pytest.mark.parametrize("mechanism", [SHA256, SHA512])
def test_client_and_server_agree(mechanism: ScramMechanism) -> None:
    credential = generate_credential(mechanism, "alice-secret", 4096)
    server = ScramSaslServer(mechanism, {"al,i=ce": credential}.get)
    client = ScramSaslClient(mechanism, "al,i=ce", "alice-secret")
    final = client.evaluate_challenge(server.evaluate_response(client.first_message()))
    client.evaluate_challenge(server.evaluate_response(final))
    assert client.complete and server.complete and server.authorization_id == "al,i=ce"


@pytest.mark.parametrize("mechanism", [SHA256, SHA512])
def test_wrong_password_fails_the_server(mechanism: ScramMechanism) -> None:
    credential = generate_credential(mechanism, "right", 4096)
    server = ScramSaslServer(mechanism, {"bob": credential}.get)
    client = ScramSaslClient(mechanism, "bob", "wrong")
    final = client.evaluate_challenge(server.evaluate_response(client.first_message()))
    with pytest.raises(SaslException, match="Invalid client credentials"):
        server.evaluate_response(final)
    assert server.state == "FAILED"


def test_unknown_user_and_bad_messages() -> None:
    server = ScramSaslServer(SHA512, {}.get)
    with pytest.raises(SaslException, match="Authentication failed: Invalid user credentials"):
        server.evaluate_response(b"n,,n=nobody,r=abc")
    with pytest.raises(SaslException, match="Invalid SCRAM client first message format: hello"):
        ScramSaslServer(SHA512, {}.get).evaluate_response(b"hello")
    credential = generate_credential(SHA512, "p", 4096)
    server = ScramSaslServer(SHA512, {"u": credential}.get)
    with pytest.raises(SaslAuthenticationFailedError, match="authorization id that is different"):
        server.evaluate_response(b"n,a=other,n=u,r=abc")


def test_final_message_with_another_nonce_is_refused() -> None:
    server = ScramSaslServer(SHA256, {"user": rfc_credential()}.get, lambda: RFC_SERVER_NONCE)
    server.evaluate_response(RFC_CLIENT_FIRST)
    with pytest.raises(SaslException, match="nonce"):
        server.evaluate_response(RFC_CLIENT_FINAL.replace(b"k0,p", b"k1,p"))


def test_credential_string_round_trip_and_known_kafka_string() -> None:
    # ScramCredentialUtils.credentialToString of the RFC 7677 credential
    credential = rfc_credential()
    text = credential.to_string()
    assert text.startswith("salt=W22ZaJ0SNY7soEsUEjb6gQ==,stored_key=") and text.endswith(",iterations=4096")
    assert ScramCredential.from_string(text) == credential
    # RFC 7677's StoredKey and ServerKey for "pencil"
    assert base64.b64encode(credential.stored_key) == b"WG5d8oPm3OtcPnkdi4Uo7BkeZkBFzpcXkuLmtbsT4qY="
    assert base64.b64encode(credential.server_key) == b"wfPLwcE6nTWhTAmQ7tl2KeoiWGPlZqQxSrmfPwDl2dU="
    with pytest.raises(ValueError, match="Credentials not valid: salt=abc"):
        ScramCredential.from_string("salt=abc")


def test_generated_salt_is_kafkas_base36_string() -> None:
    credential = generate_credential(SHA256, "x", 4096, lambda: "abc123")
    assert credential.salt == b"abc123"
    assert all(c in "0123456789abcdefghijklmnopqrstuvwxyz" for c in secure_random_string())


def test_sasl_names() -> None:
    assert sasl_name("a=b,c") == "a=3Db=2Cc"
    assert username("a=3Db=2Cc") == "a=b,c"
    with pytest.raises(SaslException, match="Invalid username"):
        username("a=b")
    assert ClientFirstMessage.parse(b"n,,n=u,r=x,ext=1").bare() == "n=u,r=x,ext=1"


def test_plain_server() -> None:
    users = {"alice": "alice-secret"}
    server = PlainSaslServer(users)
    assert server.evaluate_response(b"\0alice\0alice-secret") == b""
    assert server.complete and server.authorization_id == "alice"
    for token, text in [
        (b"\0alice\0wrong", "Authentication failed: Invalid username or password"),
        (b"\0bob\0x", "Authentication failed: Invalid username or password"),
        (b"\0\0x", "Authentication failed: username not specified"),
        (b"\0alice\0", "Authentication failed: password not specified"),
        (b"alice", "Invalid SASL/PLAIN response: expected 3 tokens, got 1"),
    ]:
        with pytest.raises(SaslAuthenticationFailedError, match=text):
            PlainSaslServer(users).evaluate_response(token)


def test_jaas_config() -> None:
    text = (
        "org.apache.kafka.common.security.plain.PlainLoginModule required\n"
        '  username="admin" password="admin-secret" user_admin="admin-secret" user_alice=alice-secret;'
    )
    [entry] = parse_jaas_config(text)
    assert entry.login_module.endswith("PlainLoginModule") and entry.control_flag == "required"
    assert plain_users(entry.options) == {"admin": "admin-secret", "alice": "alice-secret"}
    login = client_login("SCRAM-SHA-512", jaas_config_text("SCRAM-SHA-512", 'ad"min', "p;w"))
    assert (login.username, login.password) == ('ad"min', "p;w")
    assert isinstance(create_sasl_client(login), ScramSaslClient)
    with pytest.raises(InvalidArgumentError, match="not terminated by semi-colon"):
        parse_jaas_config('x.Module required username="a"')
    with pytest.raises(InvalidArgumentError, match="Value not specified for key 'username'"):
        parse_jaas_config("x.Module required username=;")
    with pytest.raises(InvalidArgumentError, match="control flag"):
        parse_jaas_config('x.Module needed username="a";')
    with pytest.raises(InvalidArgumentError, match="contains 2 login modules"):
        client_login("PLAIN", "a.B required username=a password=b; c.D required username=a password=b;")
