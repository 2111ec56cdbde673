"""The network layer mutes a throttled connection (Kafka's ThrottledChannel, KIP-219): the response goes out
at once, and the next request on that connection is read only once the throttle time has passed."""

from __future__ import annotations

import asyncio
from typing import Any

from kafkaops.cluster.broker.config import parse_broker_config
from kafkaops.cluster.broker.request_channel import RequestContext
from kafkaops.cluster.broker.socket_server import SocketServer
from kafkaops.cluster.protocol.framing import read_frame, write_frame
from kafkaops.cluster.protocol.messages import Request, RequestHeader, decode_response, encode_request
from kafkaops.cluster.protocol.schemas import ApiKey

THROTTLE_MS = 300


class ThrottlingHandler:
    """Answers ApiVersions, throttling the first request; notes when each was handled and the request size
    it was told."""

    served = frozenset({ApiKey.API_VERSIONS})

    def __init__(self) -> None:
        self.handled: list[float] = []
        self.sizes: list[int] = []

    async def handle(self, request: Request, context: RequestContext | None = None) -> dict[str, Any] | None:
        assert context is not None
        self.handled.append(asyncio.get_running_loop().time())
        self.sizes.append(context.size_in_bytes)
        if len(self.handled) == 1:
            context.throttle_time_ms = THROTTLE_MS
        return {"error_code": 0, "api_keys": [], "throttle_time_ms": context.throttle_time_ms}


def test_a_throttled_connection_is_muted_after_its_response() -> None:
    async def main() -> tuple[ThrottlingHandler, list[int]]:
        config = parse_broker_config({"zookeeper.connect": "127.0.0.1:1", "listeners": "PLAINTEXT://127.0.0.1:0"})
        handler = ThrottlingHandler()
        server = SocketServer(config, handler)
        [endpoint] = await server.startup()
        server.start_processing_requests()
        reader, writer = await asyncio.open_connection("127.0.0.1", endpoint.port)
        throttles: list[int] = []
        payloads = [encode_request(RequestHeader(ApiKey.API_VERSIONS, 2, i, "c"), {}) for i in (1, 2)]
        for payload in payloads:  # both sent at once: the second waits in the socket while muted
            write_frame(writer, payload)
        await writer.drain()
        for _ in payloads:
            frame = await read_frame(reader)
            assert frame is not None
            throttles.append(decode_response(ApiKey.API_VERSIONS, 2, frame)[1]["throttle_time_ms"])
        writer.close()
        await server.shutdown()
        return handler, throttles

    handler, throttles = asyncio.run(main())
    assert throttles == [THROTTLE_MS, 0]
    assert handler.sizes == [len(encode_request(RequestHeader(ApiKey.API_VERSIONS, 2, 1, "c"), {}))] * 2
    # the second request, sent with the first, was not even read before the first one's throttle had passed
    # (a lower bound: load can only make it later; the loop may wake a clock tick early)
    assert handler.handled[1] >= handler.handled[0] + THROTTLE_MS / 1000 - 0.01
