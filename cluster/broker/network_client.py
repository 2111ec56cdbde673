"""How a broker reaches another broker for a rare call (forwarding ElectLeaders to the controller, asking
the controller for a controlled shutdown): the other broker's endpoint on the inter-broker listener from
ZooKeeper, and one blocking request/response on a fresh connection of that listener's protocol (Kafka's
`NetworkClientUtils.sendAndReceive` over the inter-broker channel), logged in first when the listener uses
SASL.

Blocking: call from a thread that may block (an executor thread, the shutdown path), never the loop.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kafkaops.cluster.broker.config import BrokerConfig
from kafkaops.cluster.broker.sasl_config import inter_broker_login
from kafkaops.cluster.common.client_channel import PLAINTEXT_CHANNEL, TLS_PROTOCOLS, ClientChannel, client_channel
from kafkaops.cluster.protocol.framing import frame, read_frame_blocking
from kafkaops.cluster.protocol.messages import RequestHeader, decode_response, encode_request
from kafkaops.cluster.protocol.sasl_client_authenticator import connect_channel
from kafkaops.cluster.protocol.schemas import ApiKey
from kafkaops.cluster.zk.client import KafkaZkClient
from kafkaops.cluster.zk.values import BrokerRegistration, EndPoint


@dataclass(frozen=True)
class InterBrokerChannel:
    """The inter-broker listener's name and the client channel of its protocol: what the controller, the
    replica fetchers and these calls connect with (Kafka's `interBrokerListenerName` and its channel builder).
    For SASL_PLAINTEXT / SASL_SSL the channel carries the broker's login."""

    listener_name: str = "PLAINTEXT"
    channel: ClientChannel = PLAINTEXT_CHANNEL

    def endpoint(self, registration: BrokerRegistration) -> EndPoint | None:
        """A broker's endpoint on the inter-broker listener (None if it registered none)."""
        return next((e for e in registration.endpoints if e.listener == self.listener_name), None)


def inter_broker_channel(config: BrokerConfig) -> InterBrokerChannel:
    """The broker's inter-broker channel: TLS with the inter-broker listener's `ssl.*` settings (its key
    store is the client certificate), the broker's own SASL login for SASL_*. Raises
    InvalidConfigurationError."""
    listener = config.effective_inter_broker_listener_name
    protocol = config.inter_broker_security_protocol
    login = inter_broker_login(config)
    if protocol not in TLS_PROTOCOLS:
        return InterBrokerChannel(listener, ClientChannel(protocol, sasl=login))
    return InterBrokerChannel(listener, client_channel(protocol, config.listener_settings(listener), login))


def send_request(
    host: str,
    port: int,
    api_key: ApiKey,
    version: int,
    body: Mapping[str, Any],
    client_id: str,
    timeout_s: float = 30.0,
    channel: ClientChannel = PLAINTEXT_CHANNEL,
) -> dict[str, Any]:
    """One blocking request/response on a fresh connection of `channel` (logged in for SASL); returns the
    response body. Raises OSError."""
    with connect_channel(channel, host, port, timeout_s, client_id) as sock:
        sock.sendall(frame(encode_request(RequestHeader(api_key, version, 1, client_id), body)))
        _, response = decode_response(api_key, version, read_frame_blocking(sock))
        return response


def broker_endpoint(
    zk: KafkaZkClient, broker_id: int, inter_broker: InterBrokerChannel | None = None
) -> EndPoint | None:
    """A live broker's inter-broker endpoint, or None if it is not registered (or has no such listener)."""
    registration = zk.get_broker(broker_id)
    return None if registration is None else (inter_broker or InterBrokerChannel()).endpoint(registration)
