"""Frame reading on asyncio streams: the size limit is checked before the body is read, a clean end of
stream is told from a frame cut short, correlation ids are numbered and checked."""

from __future__ import annotations

import asyncio

import pytest

from kafkaops.cluster.common.errors import CorrelationIdMismatchError, CorruptMessageError, InvalidFrameError
from kafkaops.cluster.protocol.framing import (
    DEFAULT_MAX_REQUEST_BYTES,
    CorrelationIds,
    check_correlation_id,
    frame,
    read_frame,
    request_correlation_id,
    write_frame,
)


def reader_with(data: bytes, eof: bool = True) -> asyncio.StreamReader:
    reader = asyncio.StreamReader()
    reader.feed_data(data)
    if eof:
        reader.feed_eof()
    return reader


def read(data: bytes, max_size: int = DEFAULT_MAX_REQUEST_BYTES) -> list[bytes | None]:
    async def go() -> list[bytes | None]:
        reader = reader_with(data)
        frames = []
        while (payload := await read_frame(reader, max_size)) is not None:
            frames.append(payload)
        return frames

    return asyncio.run(go())


def test_frames_are_read_in_order_until_a_clean_end() -> None:
    assert read(frame(b"abc") + frame(b"") + frame(b"\x00" * 5)) == [b"abc", b"", b"\x00" * 5]
    assert read(b"") == []


def test_size_limit_is_checked_before_the_body() -> None:
    """Only the 4-byte prefix is consumed: the 2 GiB body it announces is never awaited."""

    async def go() -> None:
        reader = reader_with(b"\x7f\xff\xff\xff", eof=False)
        with pytest.raises(InvalidFrameError, match="invalid frame size 2147483647 \\(limit 104857600\\)"):
            await asyncio.wait_for(read_frame(reader), timeout=5)

    asyncio.run(go())


def test_a_frame_at_the_limit_is_read() -> None:
    assert read(frame(b"x" * 16), max_size=16) == [b"x" * 16]
    with pytest.raises(InvalidFrameError, match="limit 15"):
        read(frame(b"x" * 16), max_size=15)


def test_negative_size_is_invalid() -> None:
    with pytest.raises(InvalidFrameError, match="size -1"):
        read(b"\xff\xff\xff\xff")


@pytest.mark.parametrize(
    ("data", "match"), [(b"\x00\x00", "inside a size prefix"), (b"\x00\x00\x00\x05ab", "2 bytes into a 5-byte")]
)
def test_stream_ending_mid_frame_is_invalid(data: bytes, match: str) -> None:
    with pytest.raises(InvalidFrameError, match=match):
        read(data)


def test_write_frame_writes_prefix_and_payload() -> None:
    class Sink:
        def __init__(self) -> None:
            self.chunks: list[bytes] = []

        def write(self, data: bytes) -> None:
            self.chunks.append(bytes(data))

    sink = Sink()
    write_frame(sink, memoryview(b"hello"))  # type: ignore[arg-type]
    assert b"".join(sink.chunks) == frame(b"hello") == b"\x00\x00\x00\x05hello"


def test_request_correlation_id_is_at_bytes_4_to_7() -> None:
    assert request_correlation_id(bytes.fromhex("0012 0003 0000002a ffff")) == 42
    with pytest.raises(CorruptMessageError):
        request_correlation_id(b"\x00\x12\x00\x03\x00")


def test_correlation_ids_count_up_and_wrap_at_int32() -> None:
    ids = CorrelationIds()
    assert [ids.next() for _ in range(3)] == [0, 1, 2]
    ids._next = 2**31 - 1
    assert [ids.next(), ids.next()] == [2**31 - 1, 0]


def test_a_response_to_another_request_is_a_protocol_violation() -> None:
    check_correlation_id(5, 5)
    with pytest.raises(CorrelationIdMismatchError, match="expected a response to correlation id 5, received 6"):
        check_correlation_id(5, 6)
