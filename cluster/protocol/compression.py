"""Decompression of snappy and lz4 record batches in pure Python (no native library on the machines).

    snappy   Kafka's Java producer writes xerial snappy-java framing:
                 magic "\\x82SNAPPY\\x00" | version INT32 | compatible INT32 | (length INT32 | raw block)*
             librdkafka writes one raw snappy block; both are read.
             raw block = uncompressed length VARINT (little-endian base 128) | elements, each a literal or
             a copy of earlier output (tag byte: low 2 bits the kind, 1/2/4-byte offsets)
    lz4      the LZ4 frame format (Kafka's KafkaLZ4BlockOutputStream since magic 1 with the fixed header
             checksum, librdkafka's LZ4F): magic 0x184D2204 | FLG | BD | [content size] | [dict id] | HC |
             (size UINT32 LE, high bit = stored | data | [block checksum])* | 0 | [content checksum]
             sequences = token (literal length << 4 | match length - 4), literals, offset UINT16 LE;
             blocks may reference earlier blocks (linked mode, librdkafka's default), so one output grows

Checksums are not verified: the batch's CRC-32C already covers these bytes. Malformed input raises
CorruptMessageError. Slow (a Python loop per sequence): meant for tools and tests, not for a data path.
"""

from __future__ import annotations

import struct

from kafkaops.cluster.common.errors import CorruptMessageError

_XERIAL_MAGIC = b"\x82SNAPPY\x00"
_XERIAL_HEADER_SIZE = 16
_LZ4_MAGIC = 0x184D2204
_U32_LE = struct.Struct("<I")
_U32_BE = struct.Struct(">I")


def _copy(out: bytearray, offset: int, length: int) -> None:
    """Append `length` bytes starting `offset` back (overlapping copies repeat the pattern, as both formats mean)."""
    if offset <= 0 or offset > len(out):
        raise CorruptMessageError(f"compressed copy from {offset} bytes back, only {len(out)} written")
    start = len(out) - offset
    if offset >= length:
        out += out[start : start + length]
        return
    for i in range(length):
        out.append(out[start + i])


# --- snappy ------------------------------------------------------------------------------------------------


def snappy_decompress(data: bytes | memoryview) -> bytes:
    """A snappy payload in xerial framing or as one raw block. Raises CorruptMessageError."""
    buf = bytes(data)
    if not buf.startswith(_XERIAL_MAGIC):
        return _snappy_block(buf)
    out = bytearray()
    position = _XERIAL_HEADER_SIZE
    while position < len(buf):
        if position + 4 > len(buf):
            raise CorruptMessageError("snappy: truncated xerial block length")
        (length,) = _U32_BE.unpack_from(buf, position)
        position += 4
        if position + length > len(buf):
            raise CorruptMessageError("snappy: xerial block runs past the payload")
        out += _snappy_block(buf[position : position + length])
        position += length
    return bytes(out)


def _snappy_block(buf: bytes) -> bytes:
    expected, position = 0, 0
    for shift in range(0, 35, 7):
        if position >= len(buf):
            raise CorruptMessageError("snappy: truncated length")
        byte = buf[position]
        position += 1
        expected |= (byte & 0x7F) << shift
        if not byte & 0x80:
            break
    out = bytearray()
    try:
        while position < len(buf):
            tag = buf[position]
            position += 1
            kind = tag & 3
            if kind == 0:
                length = tag >> 2
                if length >= 60:
                    extra = length - 59
                    length = int.from_bytes(buf[position : position + extra], "little")
                    position += extra
                length += 1
                if position + length > len(buf):
                    raise CorruptMessageError("snappy: literal runs past the block")
                out += buf[position : position + length]
                position += length
            elif kind == 1:
                length = ((tag >> 2) & 7) + 4
                offset = ((tag >> 5) << 8) | buf[position]
                position += 1
                _copy(out, offset, length)
            else:
                size = 2 if kind == 2 else 4
                offset = int.from_bytes(buf[position : position + size], "little")
                position += size
                _copy(out, offset, (tag >> 2) + 1)
    except IndexError:
        raise CorruptMessageError("snappy: truncated block") from None
    if len(out) != expected:
        raise CorruptMessageError(f"snappy: block of {len(out)} bytes, its header says {expected}")
    return bytes(out)


# --- lz4 ---------------------------------------------------------------------------------------------------


def lz4_decompress(data: bytes | memoryview) -> bytes:
    """An LZ4 frame. Raises CorruptMessageError."""
    buf = bytes(data)
    if len(buf) < 7 or _U32_LE.unpack_from(buf, 0)[0] != _LZ4_MAGIC:
        raise CorruptMessageError("lz4: not an LZ4 frame")
    flags = buf[4]
    if flags >> 6 != 1:
        raise CorruptMessageError(f"lz4: frame version {flags >> 6}")
    block_checksum, content_size, dictionary = flags & 0x10, flags & 0x08, flags & 0x01
    position = 6 + (8 if content_size else 0) + (4 if dictionary else 0) + 1  # FLG BD [size] [dict] HC
    out = bytearray()
    while True:
        if position + 4 > len(buf):
            raise CorruptMessageError("lz4: truncated block size")
        (size,) = _U32_LE.unpack_from(buf, position)
        position += 4
        if size == 0:
            return bytes(out)
        stored, size = size & 0x80000000, size & 0x7FFFFFFF
        if position + size > len(buf):
            raise CorruptMessageError("lz4: block runs past the frame")
        block = buf[position : position + size]
        position += size + (4 if block_checksum else 0)
        if stored:
            out += block
        else:
            _lz4_block(block, out)


def _lz4_length(block: bytes, position: int, length: int) -> tuple[int, int]:
    if length == 15:
        while True:
            byte = block[position]
            position += 1
            length += byte
            if byte != 255:
                break
    return length, position


def _lz4_block(block: bytes, out: bytearray) -> None:
    position = 0
    try:
        while True:
            token = block[position]
            position += 1
            literals, position = _lz4_length(block, position, token >> 4)
            if position + literals > len(block):
                raise CorruptMessageError("lz4: literals run past the block")
            out += block[position : position + literals]
            position += literals
            if position == len(block):
                return  # the last sequence has no match
            offset = block[position] | block[position + 1] << 8
            position += 2
            match, position = _lz4_length(block, position, token & 15)
            _copy(out, offset, match + 4)
            if position == len(block):
                return  # not what LZ4 writes (it ends with literals), but unambiguous
    except IndexError:
        raise CorruptMessageError("lz4: truncated block") from None
