"""Listener and `ssl.*` settings with Kafka's texts, and Kafka's `SslPrincipalMapper` rules (its own test cases)."""

from __future__ import annotations

from typing import Any

import pytest

from kafkaops.cluster.broker.config import parse_broker_config
from kafkaops.cluster.common.errors import InvalidConfigurationError
from kafkaops.cluster.common.ssl_factory import SslConfig
from kafkaops.cluster.common.ssl_principal_mapper import NoMatchingRule, SslPrincipalMapper
from kafkaops.cluster.zk import znodes
from kafkaops.cluster.zk.values import BrokerRegistration, EndPoint

BASE = {"zookeeper.connect": "zk:2181"}
PEM_STORE = {"ssl.keystore.type": "PEM", "ssl.keystore.location": "/k.pem", "ssl.key.password": "p"}


def _error(values: dict[str, Any]) -> str:
    with pytest.raises(InvalidConfigurationError) as raised:
        parse_broker_config({**BASE, **values})
    return str(raised.value)


@pytest.mark.parametrize(
    ("values", "text"),
    [
        (
            {"inter.broker.listener.name": "INTERNAL"},
            "Listener with name INTERNAL defined in inter.broker.listener.name not found in "
            "listener.security.protocol.map.",
        ),
        (
            {"inter.broker.listener.name": "PLAINTEXT", "security.inter.broker.protocol": "PLAINTEXT"},
            "Only one of inter.broker.listener.name and security.inter.broker.protocol should be set.",
        ),
        (
            {"security.inter.broker.protocol": "TLS"},
            "Invalid security protocol `TLS` defined in security.inter.broker.protocol",
        ),
        (
            {"security.inter.broker.protocol": "SSL"},
            "requirement failed: inter.broker.listener.name must be a listener name defined in advertised.listeners. "
            "The valid options based on currently configured listeners are PLAINTEXT",
        ),
        (
            {
                "listeners": "SSL://:9093",
                "security.inter.broker.protocol": "SSL",
                "ssl.keystore.type": "PEM",
                "ssl.keystore.location": "/k.pem",
            },
            "SSL PEM key store is specified, but key password is not specified.",
        ),
        (
            {"ssl.client.auth": "always"},
            "Invalid value always for configuration ssl.client.auth: String must be one of: required, requested, none",
        ),
    ],
)
def test_listener_settings_are_refused_with_kafkas_texts(values: dict[str, Any], text: str) -> None:
    assert _error(values) == text


def test_listeners_protocols_and_the_inter_broker_listener() -> None:
    config = parse_broker_config(
        {
            **BASE,
            **PEM_STORE,
            "listeners": "INTERNAL://127.0.0.1:9093,external://127.0.0.1:9094",
            "advertised.listeners": "INTERNAL://broker:9093,EXTERNAL://public:9094",
            "listener.security.protocol.map": "INTERNAL:SSL,EXTERNAL:PLAINTEXT",
            "inter.broker.listener.name": "internal",
            "listener.name.internal.ssl.client.auth": "required",
        }
    )
    assert config.effective_inter_broker_listener_name == "INTERNAL"
    assert config.inter_broker_security_protocol == "SSL"
    assert [str(e) for e in config.effective_advertised_listeners] == [
        "INTERNAL://broker:9093",
        "EXTERNAL://public:9094",
    ]
    assert config.ssl_config("INTERNAL").client_auth == "required"
    assert config.ssl_config("EXTERNAL").client_auth == "none"
    by_protocol = parse_broker_config(
        {**BASE, **PEM_STORE, "listeners": "SSL://:9093"} | {"security.inter.broker.protocol": "ssl"}
    )
    assert by_protocol.effective_inter_broker_listener_name == "SSL"


@pytest.mark.parametrize(
    ("properties", "text"),
    [
        ({"ssl.keystore.key": "k"}, "SSL private key can be specified only for PEM, but key store type is JKS."),
        (
            {"ssl.keystore.type": "PEM", "ssl.keystore.key": "k"},
            "SSL private key is specified, but certificate chain is not specified.",
        ),
        (
            {
                "ssl.keystore.type": "PEM",
                "ssl.keystore.key": "k",
                "ssl.keystore.certificate.chain": "c",
                "ssl.keystore.location": "/x",
            },
            "Both SSL key store location and separate private key are specified.",
        ),
        (
            {"ssl.keystore.certificate.chain": "c"},
            "SSL certificate chain is specified, but private key is not specified",
        ),
        (
            {"ssl.truststore.certificates": "c"},
            "SSL trust store certs can be specified only for PEM, but trust store type is JKS.",
        ),
        (
            {"ssl.truststore.type": "PEM", "ssl.truststore.location": "/t", "ssl.truststore.password": "p"},
            "SSL trust store password cannot be specified for PEM format.",
        ),
        (
            {"ssl.keystore.location": "/k.jks", "ssl.keystore.password": "p"},
            "ssl.keystore.type JKS is not supported: kafkaops reads PEM key stores (ssl.keystore.type=PEM)",
        ),
    ],
)
def test_store_settings_are_refused_with_kafkas_texts(properties: dict[str, str], text: str) -> None:
    with pytest.raises(InvalidConfigurationError) as raised:
        SslConfig.from_properties(properties)
    assert str(raised.value) == text


def test_host_name_verification_is_on_unless_set_empty() -> None:
    assert SslConfig.from_properties({}).endpoint_identification_algorithm == "https"
    assert (
        SslConfig.from_properties({"ssl.endpoint.identification.algorithm": ""}).endpoint_identification_algorithm == ""
    )


def test_principal_mapping_rules_as_kafkas_tests() -> None:
    rules = (
        "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/,"
        "RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/L,"
        "RULE:^cn=(.*?),ou=(.*?),dc=(.*?),dc=(.*?)$/$1@$2/U,"
        "RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/U,"
        "DEFAULT"
    )
    mapper = SslPrincipalMapper.from_rules(rules)
    assert mapper.get_name("CN=Duke,OU=ServiceUsers,O=Org,C=US") == "Duke"
    assert mapper.get_name("CN=Duke,OU=SME,O=mycp,L=Fulton,ST=MD,C=US") == "duke@sme"
    assert mapper.get_name("cn=duke,ou=sme,dc=mycp,dc=com") == "DUKE@SME"
    assert mapper.get_name("cN=duke,OU=JavaSoft,O=Sun Microsystems") == "DUKE"
    assert mapper.get_name("OU=JavaSoft,O=Sun Microsystems,C=US") == "OU=JavaSoft,O=Sun Microsystems,C=US"
    # a back reference past the last group is literal text (Kafka's escapeLiteralBackReferences)
    assert SslPrincipalMapper.from_rules("RULE:^CN=(.*),OU=(.*)$/$1$3/").get_name("CN=a,OU=b") == "a$3"
    with pytest.raises(NoMatchingRule, match="^No rules apply to OU=x, rules \\[RULE:\\^CN=\\(\\.\\*\\)\\$/\\$1\\]$"):
        SslPrincipalMapper.from_rules("RULE:^CN=(.*)$/$1/").get_name("OU=x")


@pytest.mark.parametrize(
    ("rules", "text"),
    [
        (
            "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/LU",
            "Invalid rule: `RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/LU`, unmatched substring: `U`",
        ),
        ("DEFAULT,RULE:^CN=(.*)$/$1/x", "Invalid rule: `RULE:^CN=(.*)$/$1/x`, unmatched substring: `x`"),
    ],
)
def test_malformed_rules_are_refused(rules: str, text: str) -> None:
    with pytest.raises(ValueError) as raised:
        SslPrincipalMapper.from_rules(rules)
    assert str(raised.value) == text


def test_registration_of_several_listeners_is_kafkas() -> None:
    registration = BrokerRegistration(
        1,
        (EndPoint("SSL", "h", 9093), EndPoint("PLAINTEXT", "h", 9092)),
        1700000000000,
        listener_security_protocol_map={"SSL": "SSL", "PLAINTEXT": "PLAINTEXT"},
    )
    assert znodes.BrokerIdZNode.encode(registration) == (
        b'{"listener_security_protocol_map":{"SSL":"SSL","PLAINTEXT":"PLAINTEXT"},'
        b'"endpoints":["SSL://h:9093","PLAINTEXT://h:9092"],"jmx_port":-1,"features":{},"host":"h",'
        b'"timestamp":"1700000000000","port":9092,"version":5}'
    )
    only_ssl = BrokerRegistration(1, (EndPoint("SSL", "h", 9093),), 1, listener_security_protocol_map={"SSL": "SSL"})
    assert b'"host":null' in znodes.BrokerIdZNode.encode(only_ssl)
    assert b'"port":-1' in znodes.BrokerIdZNode.encode(only_ssl)


def test_advertised_listeners_may_share_a_port_and_a_port_of_0_registers_the_bound_one() -> None:
    from kafkaops.cluster.broker.socket_server import registered_endpoints

    config = parse_broker_config(
        {
            **BASE,
            **PEM_STORE,
            "listeners": "PLAINTEXT://127.0.0.1:0,SSL://:9093",
            "advertised.listeners": "PLAINTEXT://proxy:9000,SSL://proxy:9000",
        }
    )
    assert [str(e) for e in registered_endpoints(config, {"PLAINTEXT": 4242, "SSL": 9093})] == [
        "PLAINTEXT://proxy:9000",
        "SSL://proxy:9000",
    ]
    unadvertised = parse_broker_config({**BASE, **PEM_STORE, "listeners": "PLAINTEXT://127.0.0.1:0,SSL://:9093"})
    assert [str(e) for e in registered_endpoints(unadvertised, {"PLAINTEXT": 4242, "SSL": 9093})] == [
        "PLAINTEXT://127.0.0.1:4242",
        "SSL://127.0.0.1:9093",
    ]
