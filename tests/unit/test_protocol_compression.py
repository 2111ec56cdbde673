"""Pure-Python snappy and lz4 decompression (`protocol.compression`) on hand-built payloads with known bytes;
real client payloads are checked in tests/cluster/test_dump_log_cluster.py."""

from __future__ import annotations

import struct

import pytest

from kafkaops.cluster.common.errors import CorruptMessageError
from kafkaops.cluster.protocol.compression import lz4_decompress, snappy_decompress

# length 12 | literal "abc" (tag (3-1)<<2) | copy 9 bytes from 3 back, 1-byte offset (tag (9-4)<<2 | 1)
SNAPPY_RAW = b"\x0c\x08abc\x15\x03"


def test_snappy_raw_block_with_an_overlapping_copy() -> None:
    assert snappy_decompress(SNAPPY_RAW) == b"abc" * 4


def test_snappy_xerial_framing_as_kafkas_java_producer_writes_it() -> None:
    framed = b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1)
    framed += struct.pack(">i", len(SNAPPY_RAW)) + SNAPPY_RAW + struct.pack(">i", 3) + b"\x01\x00z"
    assert snappy_decompress(framed) == b"abc" * 4 + b"z"


def test_snappy_long_literal_and_two_byte_offsets() -> None:
    literal = bytes(range(100))
    # literal of 100: tag 60<<2 (one extra length byte, 99), then copy 20 bytes from 100 back (2-byte offset)
    block = b"\x78" + bytes([60 << 2, 99]) + literal + bytes([(20 - 1) << 2 | 2]) + struct.pack("<H", 100)
    assert snappy_decompress(block) == literal + literal[:20]


def test_snappy_refuses_bad_input() -> None:
    with pytest.raises(CorruptMessageError, match="its header says 13"):
        snappy_decompress(b"\x0d" + SNAPPY_RAW[1:])
    with pytest.raises(CorruptMessageError, match="back"):
        snappy_decompress(b"\x04\x15\x03")


def lz4_frame(*blocks: bytes, flags: int = 0x60) -> bytes:
    frame = struct.pack("<I", 0x184D2204) + bytes([flags, 0x40, 0x82])
    for block in blocks:
        frame += struct.pack("<I", len(block)) + block
    return frame + b"\x00\x00\x00\x00"


def test_lz4_frame() -> None:
    # token 3 literals / match 4+5 | "abc" | offset 3 | token 1 literal | "d"
    block = b"\x35abc\x03\x00\x10d"
    assert lz4_decompress(lz4_frame(block)) == b"abc" * 4 + b"d"
    # a stored block (size high bit), then a linked block whose match reaches into the first
    stored = struct.pack("<I", 0x80000000 | 4) + b"wxyz"
    linked = b"\x00\x04\x00\x10!"  # no literals, 4 bytes from 4 back, then "!"
    frame = struct.pack("<I", 0x184D2204) + bytes([0x40, 0x40, 0]) + stored + struct.pack("<I", len(linked)) + linked
    assert lz4_decompress(frame + b"\x00" * 4) == b"wxyzwxyz!"


def test_lz4_long_lengths_and_bad_input() -> None:
    literals = bytes(300)
    # literal length 15 + 255 + 30 = 300; match length 4 + 15 + 5 = 24 from 1 back
    block = b"\xff" + bytes([255, 30]) + literals + b"\x01\x00" + bytes([5]) + b"\x10."
    assert lz4_decompress(lz4_frame(block)) == literals + bytes(24) + b"."
    with pytest.raises(CorruptMessageError, match="not an LZ4 frame"):
        lz4_decompress(b"\x00" * 8)
    with pytest.raises(CorruptMessageError, match="literals run past the block"):
        lz4_decompress(lz4_frame(b"\x35ab"))
