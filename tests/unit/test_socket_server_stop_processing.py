"""A broker whose controlled shutdown is over stops processing requests first (Kafka's
`SocketServer.stopProcessingRequests`): open connections end, a request in the middle of being handled
gets no answer, and no new connection is accepted; the loop's other work goes on."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kafkaops.cluster.broker.config import parse_broker_config
from kafkaops.cluster.broker.request_channel import RequestContext
from kafkaops.cluster.broker.socket_server import SocketServer
from kafkaops.cluster.protocol.framing import read_frame, write_frame
from kafkaops.cluster.protocol.messages import Request, RequestHeader, decode_response, encode_request
from kafkaops.cluster.protocol.schemas import ApiKey


class SlowSecondRequest:
    """Answers ApiVersions at once, except the second request, which waits (as a delayed Produce does)."""

    served = frozenset({ApiKey.API_VERSIONS})

    def __init__(self) -> None:
        self.calls = 0
        self.waiting = asyncio.Event()

    async def handle(self, request: Request, context: RequestContext | None = None) -> dict[str, Any] | None:
        self.calls += 1
        if self.calls == 2:
            self.waiting.set()
            await asyncio.sleep(60)
        return {"error_code": 0, "api_keys": [], "throttle_time_ms": 0}


def test_stopping_request_processing_ends_connections_and_refuses_new_ones() -> None:
    async def main() -> None:
        config = parse_broker_config({"zookeeper.connect": "127.0.0.1:1", "listeners": "PLAINTEXT://127.0.0.1:0"})
        handler = SlowSecondRequest()
        server = SocketServer(config, handler)
        [endpoint] = await server.startup()
        server.start_processing_requests()
        other_work = asyncio.create_task(asyncio.sleep(60))  # the loop's own work (a fetcher, a timer)
        reader, writer = await asyncio.open_connection("127.0.0.1", endpoint.port)
        write_frame(writer, encode_request(RequestHeader(ApiKey.API_VERSIONS, 2, 1, "c"), {}))
        frame = await read_frame(reader)
        assert frame is not None and decode_response(ApiKey.API_VERSIONS, 2, frame)[1]["error_code"] == 0
        write_frame(writer, encode_request(RequestHeader(ApiKey.API_VERSIONS, 2, 2, "c"), {}))
        await writer.drain()
        await asyncio.wait_for(handler.waiting.wait(), 10)
        await asyncio.wait_for(server.stop_processing_requests(), 10)  # does not wait for the slow request
        assert await asyncio.wait_for(reader.read(), 10) == b""  # closed, the waiting request unanswered
        with pytest.raises(OSError):
            await asyncio.open_connection("127.0.0.1", endpoint.port)
        assert not other_work.done()
        other_work.cancel()
        writer.close()

    asyncio.run(main())
