"""Our client's ApiVersions negotiation (Kafka's NetworkClient with KIP-511): v3 first; a broker that does not
know it answers UNSUPPORTED_VERSION in a v0 body that lists its own ApiVersions range, and the client asks again
at the highest version both speak (v0 when the answer lists none)."""

from __future__ import annotations

import socket
import threading
from typing import Any

import pytest

from kafkaops.admin.kafka_client.connection import BrokerConnection
from kafkaops.cluster.protocol.framing import frame, read_frame_blocking
from kafkaops.cluster.protocol.messages import decode_request, encode_response
from kafkaops.cluster.protocol.schemas import ApiKey


class OldBroker:
    """Speaks ApiVersions up to `newest` and refuses above, as a broker before KIP-511 (Kafka < 2.4) does."""

    def __init__(self, newest: int, list_own_range: bool = True) -> None:
        self.newest = newest
        self.list_own_range = list_own_range
        self.asked: list[int] = []
        self._server = socket.create_server(("127.0.0.1", 0))
        self.port = self._server.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        conn, _ = self._server.accept()
        with conn:
            while True:
                try:
                    payload = read_frame_blocking(conn)
                except OSError:
                    return
                # the header alone: an old broker cannot parse a newer body
                version = int.from_bytes(payload[2:4], "big")
                correlation_id = int.from_bytes(payload[4:8], "big")
                self.asked.append(version)
                body: dict[str, Any]
                if version > self.newest:
                    keys = (
                        [{"api_key": 18, "min_version": 0, "max_version": self.newest}] if self.list_own_range else []
                    )
                    body, answer_version = {"error_code": 35, "api_keys": keys}, 0
                else:
                    decode_request(payload)
                    body = {
                        "error_code": 0,
                        "api_keys": [
                            {"api_key": 18, "min_version": 0, "max_version": self.newest},
                            {"api_key": 3, "min_version": 0, "max_version": 8},
                        ],
                    }
                    answer_version = version
                conn.sendall(frame(encode_response(ApiKey.API_VERSIONS, answer_version, correlation_id, body)))

    def close(self) -> None:
        self._server.close()


@pytest.mark.parametrize(("newest", "listed", "asked"), [(3, True, [3]), (2, True, [3, 2]), (2, False, [3, 0])])
def test_api_versions_v3_first_then_what_the_refusal_allows(newest: int, listed: bool, asked: list[int]) -> None:
    broker = OldBroker(newest, listed)
    connection = BrokerConnection("127.0.0.1", broker.port, "test", 5.0, "0")
    try:
        connection.connect()
        assert broker.asked == asked
        assert connection.versions[ApiKey.METADATA] == (0, 8)
        assert connection.version(ApiKey.METADATA) == 8
    finally:
        connection.close()
        broker.close()
