"""Hostile peers against a real broker: garbage, oversized frames and corrupt batches cost the sender its
connection or its request, never the broker, and nothing corrupt reaches the log."""

from __future__ import annotations

import socket
import struct

from kafkaops.admin import topics as admin_topics
from kafkaops.admin.assignment import JavaRandom
from kafkaops.cluster.common.errors import CorruptMessageError
from kafkaops.cluster.local.waiting import wait_for
from kafkaops.cluster.protocol.framing import frame, read_frame_blocking
from kafkaops.cluster.protocol.messages import RequestHeader, decode_response, encode_request
from kafkaops.cluster.protocol.records import Record, build_batch
from kafkaops.cluster.protocol.schemas import ApiKey
from kafkaops.cluster.zk.values import TopicPartition


def _address(local) -> tuple[str, int]:
    host, port = local.status().brokers[0].endpoint.removeprefix("PLAINTEXT://").rsplit(":", 1)
    return host, int(port)


def _request(address: tuple[str, int], key: ApiKey, version: int, body: dict) -> dict:
    with socket.create_connection(address, timeout=10) as sock:
        sock.sendall(frame(encode_request(RequestHeader(key, version, 1, "hostile-test"), body)))
        return decode_response(key, version, read_frame_blocking(sock))[1]


def _produce(address: tuple[str, int], records: bytes) -> dict:
    body = {
        "transactional_id": None,
        "acks": 1,
        "timeout_ms": 5000,
        "topic_data": [{"name": "h", "partition_data": [{"index": 0, "records": records}]}],
    }
    return _request(address, ApiKey.PRODUCE, 8, body)["responses"][0]["partition_responses"][0]


def _closed(sock: socket.socket) -> bool:
    sock.settimeout(10)
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True


def test_garbage_and_oversized_frames_close_only_their_connection(cluster, zk):
    local = cluster(brokers=1)
    address = _address(local)
    with socket.create_connection(address) as garbage:
        garbage.sendall(frame(b"\x00\x03\xff\xff" + b"\xab" * 40))  # Metadata v65535, then noise
        assert _closed(garbage)
    with socket.create_connection(address) as huge:
        huge.sendall(struct.pack(">i", 2**31 - 1))  # a 2 GiB request: refused before any allocation
        assert _closed(huge)
    with socket.create_connection(address) as negative:
        negative.sendall(struct.pack(">i", -5))
        assert _closed(negative)
    body = _request(address, ApiKey.METADATA, 8, {"topics": None})
    assert [b["node_id"] for b in body["brokers"]] == [0]  # still serving


def test_a_batch_with_a_bad_crc_is_refused_and_nothing_is_appended(cluster, zk):
    local = cluster(brokers=1)
    admin_topics.create_topic(zk, "h", 1, 1, None, {}, rng=JavaRandom(1))
    wait_for(lambda: zk.get_partition_states([TopicPartition("h", 0)])[TopicPartition("h", 0)] is not None)
    address = _address(local)
    good = build_batch([Record(0, 1_700_000_000_000, b"k", b"value")])
    wait_for(lambda: _produce(address, good)["error_code"] == 0)
    corrupt = bytearray(good)
    corrupt[-3] ^= 0xFF  # inside the record: the CRC no longer matches
    answer = _produce(address, bytes(corrupt))
    assert answer["error_code"] == CorruptMessageError.code
    assert answer["base_offset"] == -1
    end = _request(
        address,
        ApiKey.LIST_OFFSETS,
        5,
        {
            "replica_id": -1,
            "isolation_level": 0,
            "topics": [
                {"name": "h", "partitions": [{"partition_index": 0, "current_leader_epoch": -1, "timestamp": -1}]}
            ],
        },
    )["topics"][0]["partitions"][0]
    assert end["offset"] == 1  # only the good batch
    assert _produce(address, good)["base_offset"] == 1  # and the partition still takes appends
