"""How a broker reaches another broker for a rare call (forwarding ElectLeaders to the controller, asking
the controller for a controlled shutdown): the active controller's endpoint from ZooKeeper, and one
blocking request/response on a fresh connection (Kafka's `NetworkClientUtils.sendAndReceive`), logged in
first when the inter-broker listener uses SASL.

Blocking: call from a thread that may block (an executor thread, the shutdown path), never the loop.
"""

from __future__ import annotations

import socket
from collections.abc import Mapping
from typing import Any

from kafkaops.cluster.common.sasl import SaslClientLogin
from kafkaops.cluster.protocol.framing import frame, read_frame_blocking
from kafkaops.cluster.protocol.messages import RequestHeader, decode_response, encode_request
from kafkaops.cluster.protocol.sasl_client_authenticator import authenticate_socket
from kafkaops.cluster.protocol.schemas import ApiKey
from kafkaops.cluster.zk.client import KafkaZkClient
from kafkaops.cluster.zk.values import EndPoint


def send_request(
    host: str,
    port: int,
    api_key: ApiKey,
    version: int,
    body: Mapping[str, Any],
    client_id: str,
    timeout_s: float = 30.0,
    sasl: SaslClientLogin | None = None,
) -> dict[str, Any]:
    """One blocking request/response on a fresh connection; returns the response body."""
    with socket.create_connection((host, port), timeout=timeout_s) as sock:
        if sasl is not None:
            authenticate_socket(sock, sasl, client_id)
        sock.sendall(frame(encode_request(RequestHeader(api_key, version, 1, client_id), body)))
        _, response = decode_response(api_key, version, read_frame_blocking(sock))
        return response


def broker_endpoint(zk: KafkaZkClient, broker_id: int) -> EndPoint | None:
    """The first endpoint a live broker registered, or None if it is not registered."""
    registration = zk.get_broker(broker_id)
    return None if registration is None else registration.endpoints[0]
