"""Fetch records sent from their segment file (sendfile) against the copying path, over a real TCP connection.

A multi-partition Fetch response whose records are `FileRecords` slices of real logs is written by
`socket_server.send_response` on a PLAINTEXT listener (sendfile) and on a TLS one (read, then written);
both must put on the wire exactly the bytes `encode_response` gives for the same records held as bytes.
"""

from __future__ import annotations

import asyncio
import errno
import os
import ssl
from pathlib import Path

import pytest

from kafkaops.cluster.broker import responses
from kafkaops.cluster.broker.responses import FetchPartitionResult, FetchResult
from kafkaops.cluster.broker.socket_server import Listener, send_response
from kafkaops.cluster.common.errors import CorruptMessageError, InvalidFrameError
from kafkaops.cluster.log import Log, LogConfig
from kafkaops.cluster.log.file_records import FileRecords
from kafkaops.cluster.protocol.framing import read_frame
from kafkaops.cluster.protocol.messages import encode_response
from kafkaops.cluster.protocol.records import Record, build_batch
from kafkaops.cluster.protocol.schemas import RESPONSES, ApiKey
from kafkaops.cluster.zk.values import TopicPartition

T0 = 1_700_000_000_000
PLAINTEXT = Listener("PLAINTEXT", "PLAINTEXT")
TLS = Listener("SSL", "SSL", ssl_context=ssl.create_default_context())


def filled_log(directory: Path, partition: int, batches: int) -> Log:
    log = Log(directory / f"orders-{partition}", LogConfig(segment_bytes=256 * 1024))
    for n in range(batches):
        value = bytes([partition]) * (300 + 97 * n)
        log.append_as_leader(build_batch([Record(i, T0 + n, b"k", value) for i in range(5)]), 0)
    return log


def as_bytes(result: FetchResult) -> FetchResult:
    def read(records: object) -> bytes:
        return records.read_bytes() if isinstance(records, FileRecords) else bytes(records)  # type: ignore[arg-type]

    return FetchResult(
        result.error_code,
        result.session_id,
        [
            FetchPartitionResult(p.tp, p.error_code, p.high_watermark, p.log_start_offset, read(p.records))
            for p in result.partitions
        ],
    )


def fetch_of(logs: list[Log], offsets: list[int], limits: list[int]) -> FetchResult:
    """Partition i from offsets[i], limits[i] bytes at most, from logs that roll every 256 KiB."""
    answers = []
    for partition, (log, offset, limit) in enumerate(zip(logs, offsets, limits, strict=True)):
        read = log.read_file_records(offset, limit, min_one_batch=partition == 0)
        answers.append(FetchPartitionResult(TopicPartition("orders", partition), 0, 99, 0, read.records))
    return FetchResult(0, 0, answers)


async def sent_over_tcp(listener: Listener, version: int, body: dict[str, object]) -> bytes:
    """What `send_response` writes, read back by a client over loopback TCP."""
    received: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await send_response(writer, listener, ApiKey.FETCH, version, 7, body)
        except Exception as error:  # noqa: BLE001 - handed to the test
            received.set_exception(error)
        finally:
            writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.sockets[0].getsockname()[1])
        try:
            try:
                frame = await read_frame(reader)
            except InvalidFrameError:
                frame = None  # the server gave up mid-frame: its error says why
            if not received.done():
                received.set_result(frame or b"")
            return await received
        finally:
            writer.close()
    finally:
        server.close()


@pytest.mark.parametrize("version", [4, 11, 12])
@pytest.mark.parametrize("listener", [PLAINTEXT, TLS], ids=["sendfile", "copying"])
def test_a_multi_partition_fetch_sends_the_bytes_the_copying_path_encodes(
    tmp_path: Path, listener: Listener, version: int
) -> None:
    logs = [filled_log(tmp_path, p, 60) for p in range(4)]
    try:
        # partition 1 from an offset inside a later segment, partition 2 a small read (copied: below
        # MIN_FILE_RECORDS_BYTES), partition 3 at its end (empty)
        result = fetch_of(logs, [0, 151, 20, logs[3].log_end_offset], [100_000, 100_000, 10_000, 100_000])
        assert [type(p.records) for p in result.partitions] == [FileRecords, FileRecords, bytes, bytes]
        expected = encode_response(ApiKey.FETCH, version, 7, responses.fetch_response(as_bytes(result)))
        assert asyncio.run(sent_over_tcp(listener, version, responses.fetch_response(result))) == expected
        assert 150_000 < len(expected) < 220_000
    finally:
        for log in logs:
            log.close()


def test_the_response_size_counts_file_records_unread(tmp_path: Path) -> None:
    logs = [filled_log(tmp_path, p, 30) for p in range(2)]
    try:
        result = fetch_of(logs, [0, 10], [100_000, 100_000])
        expected = 4 + len(RESPONSES[ApiKey.FETCH].encode(responses.fetch_response(as_bytes(result)), 12))
        assert responses.fetch_response_size(result, 12) == expected
    finally:
        for log in logs:
            log.close()


def test_a_slice_outlives_its_segment_but_not_a_truncation(tmp_path: Path) -> None:
    log = filled_log(tmp_path, 0, 40)
    slice_ = log.read_file_records(0, 50_000).records
    assert isinstance(slice_, FileRecords)
    expected = log.read(0, 50_000).records
    segment_file = tmp_path / "orders-0" / "00000000000000000000.log"
    log.close()
    os.unlink(segment_file)  # retention or the cleaner removed the segment: the slice still reads it
    assert slice_.read_bytes() == expected
    slice_.close()

    log = filled_log(tmp_path / "again", 0, 40)
    try:
        result = fetch_of([log], [0], [100_000])
        segment = tmp_path / "again" / "orders-0" / "00000000000000000000.log"
        tls_result = fetch_of([log], [0], [100_000])
        os.truncate(segment, 1000)  # the file lost the bytes since the slices were taken
        for listener, taken in ((PLAINTEXT, result), (TLS, tls_result)):
            with pytest.raises(CorruptMessageError, match="truncated"):
                asyncio.run(sent_over_tcp(listener, 12, responses.fetch_response(taken)))
    finally:
        log.close()


def test_out_of_descriptors_a_read_is_copied_and_the_log_stays_online(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = filled_log(tmp_path, 0, 40)
    try:
        expected = log.read(0, 50_000).records

        def no_descriptors(fd: int) -> int:
            raise OSError(errno.EMFILE, "Too many open files")

        monkeypatch.setattr(os, "dup", no_descriptors)
        assert log.read_file_records(0, 50_000).records == expected
        assert not log.offline
    finally:
        monkeypatch.undo()
        log.close()
