"""Kafka's primitive wire types (`Type.java`; kafka-protocol.md §2.3), big-endian.

    INT8 / INT16 / INT32 / INT64      1 / 2 / 4 / 8 bytes, two's complement
    BOOLEAN                           1 byte, 0 = false (any other byte reads as true, as in Kafka)
    STRING                            INT16 length N >= 0, N bytes of UTF-8
    NULLABLE_STRING                   as STRING; length -1 = null
    BYTES / NULLABLE_BYTES            INT32 length (-1 = null when nullable), then the bytes
    RECORDS                           NULLABLE_BYTES holding whole record batches (see records.py)
    ARRAY(T)                          INT32 count (-1 = null when nullable), then the elements
    VARINT / VARLONG                  zig-zag, then base-128, low group first, 0x80 = more (records only)
    UNSIGNED_VARINT                   base-128 without zig-zag (flexible versions only)
    TAG_BUFFER                        UNSIGNED_VARINT count, then per field: tag, size, bytes

    UINT16 / FLOAT64                  2 bytes unsigned / 8 bytes IEEE 754 double
    UUID                              16 bytes (a `uuid.UUID`; Kafka's zero UUID is `UUID(int=0)`)

Flexible versions (KIP-482) use the compact forms: COMPACT_STRING, COMPACT_BYTES, COMPACT_RECORDS and
CompactArray write an UNSIGNED_VARINT of length + 1 (0 = null when nullable) instead of the INT16/INT32
length. The struct-level tagged-field buffer of a flexible version is written by schema.py, which knows
the tagged fields by name; TAG_BUFFER below carries the tags of a header as raw bytes.

Every type has `encode(value, out)`, which appends bytes to a list (joined once per message), and
`decode(buf, offset) -> (value, offset)`, which raises CorruptMessageError for anything malformed:
a buffer too short, a negative length, invalid UTF-8, an array count larger than the bytes left could
hold. Fixed-width types expose their `struct` format so that schema.py can fuse runs of them into one
precompiled `struct.Struct`.
"""

from __future__ import annotations

import struct
import uuid
from typing import Any

from kafkaops.cluster.common.errors import CorruptMessageError, EncodeError
from kafkaops.cluster.protocol.shared_array import SharedArray

from .records_send import TransferableRecords

Buffer = bytes | bytearray | memoryview

_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")


class Type:
    """One wire type: `min_size` is the fewest bytes any value of it takes.

    Not an `abc.ABC`: mypyc's compiled subclasses would share one ABC instance-check cache, so that an
    `isinstance` against one subclass would answer for another."""

    name: str
    min_size: int

    def encode(self, value: Any, out: list[bytes]) -> None:
        """Append the encoding of `value` to `out`."""
        raise NotImplementedError

    def decode(self, buf: Buffer, offset: int) -> tuple[Any, int]:
        """Read one value at `offset`; return it and the offset just past it."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return self.name


class Fixed(Type):
    """A fixed-width number; `fmt` is its `struct` format character (schema.py fuses runs of them)."""

    def __init__(self, name: str, fmt: str) -> None:
        self.name = name
        self.fmt = fmt
        self.struct = struct.Struct(">" + fmt)
        self.min_size = self.struct.size

    def encode(self, value: Any, out: list[bytes]) -> None:
        out.append(self.struct.pack(value))

    def decode(self, buf: Buffer, offset: int) -> tuple[Any, int]:
        return unpack(self.struct, buf, offset)[0], offset + self.min_size


INT8 = Fixed("INT8", "b")
INT16 = Fixed("INT16", "h")
INT32 = Fixed("INT32", "i")
INT64 = Fixed("INT64", "q")
BOOLEAN = Fixed("BOOLEAN", "?")
UINT16 = Fixed("UINT16", "H")
FLOAT64 = Fixed("FLOAT64", "d")


def unpack(st: struct.Struct, buf: Buffer, offset: int) -> tuple[Any, ...]:
    """`st.unpack_from` with a short buffer reported as CorruptMessageError."""
    try:
        return st.unpack_from(buf, offset)
    except struct.error:
        raise CorruptMessageError(f"need {st.size} bytes at offset {offset}, have {len(buf) - offset}") from None


def _take(buf: Buffer, offset: int, size: int) -> int:
    """The end offset of `size` bytes at `offset`, checked against the buffer."""
    end = offset + size
    if end > len(buf):
        raise CorruptMessageError(f"need {size} bytes at offset {offset}, have {len(buf) - offset}")
    return end


class _String(Type):
    def __init__(self, name: str, nullable: bool) -> None:
        self.name = name
        self.nullable = nullable
        self.min_size = 2

    def encode(self, value: str | None, out: list[bytes]) -> None:
        if value is None:
            if not self.nullable:
                raise EncodeError(f"{self.name} cannot be null")
            out.append(_I16.pack(-1))
            return
        data = value.encode()
        out.append(_I16.pack(len(data)))
        out.append(data)

    def decode(self, buf: Buffer, offset: int) -> tuple[str | None, int]:
        (size,) = unpack(_I16, buf, offset)
        offset += 2
        if size < 0:
            if size == -1 and self.nullable:
                return None, offset
            raise CorruptMessageError(f"{self.name} with length {size}")
        end = _take(buf, offset, size)
        try:
            return str(buf[offset:end], "utf-8"), end
        except UnicodeDecodeError as exc:
            raise CorruptMessageError(f"{self.name} is not UTF-8: {exc}") from None


STRING = _String("STRING", nullable=False)
NULLABLE_STRING = _String("NULLABLE_STRING", nullable=True)


class _Bytes(Type):
    def __init__(self, name: str, nullable: bool) -> None:
        self.name = name
        self.nullable = nullable
        self.min_size = 4

    def encode(self, value: Buffer | None, out: list[bytes]) -> None:
        if value is None:
            if not self.nullable:
                raise EncodeError(f"{self.name} cannot be null")
            out.append(_I32.pack(-1))
            return
        out.append(_I32.pack(len(value)))
        out.append(bytes(value))

    def decode(self, buf: Buffer, offset: int) -> tuple[Buffer | None, int]:
        (size,) = unpack(_I32, buf, offset)
        offset += 4
        if size < 0:
            if size == -1 and self.nullable:
                return None, offset
            raise CorruptMessageError(f"{self.name} with length {size}")
        end = _take(buf, offset, size)
        return bytes(buf[offset:end]), end


BYTES = _Bytes("BYTES", nullable=False)
NULLABLE_BYTES = _Bytes("NULLABLE_BYTES", nullable=True)


def _records_view(buf: Buffer, offset: int, end: int) -> tuple[Buffer, int]:
    """A RECORDS value as a view of the frame it came in, not a copy: a Produce's batch goes from the
    request's buffer to the log file as it is (Log.append_as_leader), a follower's fetched batches too. Only
    an immutable buffer is shared (a bytearray could change under the view, or be unable to resize)."""
    if isinstance(buf, bytes) or (isinstance(buf, memoryview) and buf.readonly):
        return memoryview(buf)[offset:end], end
    return bytes(buf[offset:end]), end


def _append_slice(out: list[Any], records: TransferableRecords) -> None:
    """A file slice goes into the output list as it is, for records_send.response_parts to send from its file
    (through a `list[Any]`: a `cast(bytes, ...)` is checked at run time in compiled code)."""
    out.append(records)


class _Records(_Bytes):
    """A RECORDS field is NULLABLE_BYTES on the wire; its content is parsed separately (records.py), because
    the broker stores batches as received and never needs them decoded while handling the request. A value
    that is a slice of a file (`TransferableRecords`) goes into the output list as is, for the network layer
    to send from its file (records_send.response_parts): only its size is written here."""

    def encode(self, value: Buffer | TransferableRecords | None, out: list[bytes]) -> None:
        if isinstance(value, TransferableRecords):
            out.append(_I32.pack(len(value)))
            _append_slice(out, value)
            return
        super().encode(value, out)

    def decode(self, buf: Buffer, offset: int) -> tuple[Buffer | None, int]:
        (size,) = unpack(_I32, buf, offset)
        offset += 4
        if size == -1:
            return None, offset
        if size < 0:
            raise CorruptMessageError(f"{self.name} with length {size}")
        return _records_view(buf, offset, _take(buf, offset, size))


RECORDS = _Records("RECORDS", nullable=True)


class Array(Type):
    """ARRAY(elem): an INT32 count, then the elements. A nullable array reads count -1 as None."""

    def __init__(self, elem: Type, nullable: bool = False) -> None:
        self.elem = elem
        self.nullable = nullable
        self.name = f"{'NULLABLE_' if nullable else ''}ARRAY({elem.name})"
        self.min_size = 4
        # Arrays of numbers ([]INT32 replica lists) are read and written with one struct call, by a Struct
        # per element count made once (`_numbers`).
        self._fmt = elem.fmt if isinstance(elem, Fixed) else None
        self._structs: dict[int, struct.Struct] = {}

    def _numbers(self, count: int) -> struct.Struct:
        """The Struct of `count` elements (the few counts replica lists have, cached)."""
        st = self._structs.get(count)
        if st is None:
            st = struct.Struct(f">{count}{self._fmt}")
            if len(self._structs) < 64:
                self._structs[count] = st
        return st

    def encode(self, value: list[Any] | None, out: list[bytes]) -> None:
        if value is None:
            if not self.nullable:
                raise EncodeError(f"{self.name} cannot be null")
            out.append(_I32.pack(-1))
            return
        if self._fmt is not None:
            out.append(_I32.pack(len(value)))
            out.append(self._numbers(len(value)).pack(*value))
            return
        if type(value) is SharedArray:
            out.append(self._encoded_once(value))
            return
        out.append(_I32.pack(len(value)))
        for item in value:
            self.elem.encode(item, out)

    def _encoded_once(self, value: SharedArray) -> bytes:
        encoded = value.encoded.get(self)
        if encoded is None:  # two send threads may both get here: they make the same bytes
            parts: list[bytes] = []
            self.encode(list(value), parts)
            encoded = value.encoded[self] = b"".join(parts)
        return encoded

    def decode(self, buf: Buffer, offset: int) -> tuple[list[Any] | None, int]:
        (count,) = unpack(_I32, buf, offset)
        offset += 4
        if count < 0:
            if count == -1 and self.nullable:
                return None, offset
            raise CorruptMessageError(f"{self.name} with count {count}")
        # Every element takes at least min_size bytes: a count the buffer cannot hold is garbage, and
        # refusing it here keeps a 4-byte lie from allocating a huge list.
        if count * max(self.elem.min_size, 1) > len(buf) - offset:
            raise CorruptMessageError(f"{self.name} count {count} exceeds the {len(buf) - offset} bytes left")
        if self._fmt is not None:
            st = self._numbers(count)
            return list(st.unpack_from(buf, offset)), offset + st.size
        items = []
        decode = self.elem.decode
        for _ in range(count):
            item, offset = decode(buf, offset)
            items.append(item)
        return items, offset


# --- variable-length integers ------------------------------------------------------------------------


def encode_unsigned_varint(value: int) -> bytes:
    """UNSIGNED_VARINT of 0 <= value < 2**32 (at most 5 bytes)."""
    if not 0 <= value < 1 << 32:
        raise EncodeError(f"unsigned varint out of range: {value}")
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _decode_base128(buf: Buffer, offset: int, max_bytes: int) -> tuple[int, int]:
    result = 0
    shift = 0
    for i in range(max_bytes):
        if offset + i >= len(buf):
            raise CorruptMessageError(f"varint cut short at offset {offset + i}")
        byte = buf[offset + i]
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, offset + i + 1
        shift += 7
    raise CorruptMessageError(f"varint longer than {max_bytes} bytes at offset {offset}")


def decode_unsigned_varint(buf: Buffer, offset: int) -> tuple[int, int]:
    """Read an UNSIGNED_VARINT (at most 5 bytes, value below 2**32)."""
    value, end = _decode_base128(buf, offset, 5)
    if value >= 1 << 32:
        raise CorruptMessageError(f"unsigned varint {value} exceeds 32 bits")
    return value, end


def encode_varint(value: int) -> bytes:
    """VARINT: zig-zag of a signed 32-bit value, then base-128."""
    if not -(1 << 31) <= value < 1 << 31:
        raise EncodeError(f"varint out of range: {value}")
    return encode_unsigned_varint((value << 1) ^ (value >> 31))


def decode_varint(buf: Buffer, offset: int) -> tuple[int, int]:
    """Read a VARINT (zig-zag, at most 5 bytes)."""
    zigzag, end = decode_unsigned_varint(buf, offset)
    return (zigzag >> 1) ^ -(zigzag & 1), end


def encode_varlong(value: int) -> bytes:
    """VARLONG: zig-zag of a signed 64-bit value, then base-128 (at most 10 bytes)."""
    if not -(1 << 63) <= value < 1 << 63:
        raise EncodeError(f"varlong out of range: {value}")
    zigzag = (value << 1) ^ (value >> 63)
    out = bytearray()
    while zigzag > 0x7F:
        out.append((zigzag & 0x7F) | 0x80)
        zigzag >>= 7
    out.append(zigzag)
    return bytes(out)


def decode_varlong(buf: Buffer, offset: int) -> tuple[int, int]:
    """Read a VARLONG (zig-zag, at most 10 bytes)."""
    zigzag, end = _decode_base128(buf, offset, 10)
    if zigzag >= 1 << 64:
        raise CorruptMessageError(f"varlong {zigzag} exceeds 64 bits")
    return (zigzag >> 1) ^ -(zigzag & 1), end


class _TaggedFields(Type):
    """TAG_BUFFER as {tag: raw bytes}: we carry tags without interpreting any of them."""

    name = "TAG_BUFFER"
    min_size = 1

    def encode(self, value: dict[int, bytes], out: list[bytes]) -> None:
        out.append(encode_unsigned_varint(len(value)))
        for tag in sorted(value):
            out.append(encode_unsigned_varint(tag))
            out.append(encode_unsigned_varint(len(value[tag])))
            out.append(bytes(value[tag]))

    def decode(self, buf: Buffer, offset: int) -> tuple[dict[int, bytes], int]:
        count, offset = decode_unsigned_varint(buf, offset)
        fields: dict[int, bytes] = {}
        previous = -1
        for _ in range(count):
            tag, offset = decode_unsigned_varint(buf, offset)
            if tag <= previous:  # Kafka requires strictly increasing tags
                raise CorruptMessageError(f"tagged field {tag} out of order after {previous}")
            size, offset = decode_unsigned_varint(buf, offset)
            end = _take(buf, offset, size)
            fields[tag] = bytes(buf[offset:end])
            offset, previous = end, tag
        return fields, offset


TAG_BUFFER = _TaggedFields()


# --- flexible versions (KIP-482) -----------------------------------------------------------------------

# One-byte varints (lengths below 127, the common case) without the loop.
_SMALL_VARINTS = [bytes((i,)) for i in range(0x80)]


def _varint(value: int) -> bytes:
    return _SMALL_VARINTS[value] if 0 <= value < 0x80 else encode_unsigned_varint(value)


def _read_varint(buf: Buffer, offset: int) -> tuple[int, int]:
    if offset < len(buf) and buf[offset] < 0x80:
        return buf[offset], offset + 1
    return decode_unsigned_varint(buf, offset)


class _CompactString(_String):
    """COMPACT_STRING / COMPACT_NULLABLE_STRING: UNSIGNED_VARINT length + 1 (0 = null), UTF-8."""

    def __init__(self, name: str, nullable: bool) -> None:
        super().__init__(name, nullable)
        self.min_size = 1

    def encode(self, value: str | None, out: list[bytes]) -> None:
        if value is None:
            if not self.nullable:
                raise EncodeError(f"{self.name} cannot be null")
            out.append(b"\x00")
            return
        data = value.encode()
        out.append(_varint(len(data) + 1))
        out.append(data)

    def decode(self, buf: Buffer, offset: int) -> tuple[str | None, int]:
        size, offset = _read_varint(buf, offset)
        if size == 0:
            if self.nullable:
                return None, offset
            raise CorruptMessageError(f"{self.name} is null")
        end = _take(buf, offset, size - 1)
        try:
            return str(buf[offset:end], "utf-8"), end
        except UnicodeDecodeError as exc:
            raise CorruptMessageError(f"{self.name} is not UTF-8: {exc}") from None


COMPACT_STRING = _CompactString("COMPACT_STRING", nullable=False)
COMPACT_NULLABLE_STRING = _CompactString("COMPACT_NULLABLE_STRING", nullable=True)


class _CompactBytes(_Bytes):
    """COMPACT_BYTES / COMPACT_NULLABLE_BYTES / COMPACT_RECORDS: UNSIGNED_VARINT length + 1 (0 = null)."""

    def __init__(self, name: str, nullable: bool) -> None:
        super().__init__(name, nullable)
        self.min_size = 1

    def encode(self, value: Buffer | None, out: list[bytes]) -> None:
        if value is None:
            if not self.nullable:
                raise EncodeError(f"{self.name} cannot be null")
            out.append(b"\x00")
            return
        out.append(_varint(len(value) + 1))
        out.append(bytes(value))

    def decode(self, buf: Buffer, offset: int) -> tuple[Buffer | None, int]:
        size, offset = _read_varint(buf, offset)
        if size == 0:
            if self.nullable:
                return None, offset
            raise CorruptMessageError(f"{self.name} is null")
        end = _take(buf, offset, size - 1)
        return bytes(buf[offset:end]), end


COMPACT_BYTES = _CompactBytes("COMPACT_BYTES", nullable=False)
COMPACT_NULLABLE_BYTES = _CompactBytes("COMPACT_NULLABLE_BYTES", nullable=True)


class _CompactRecords(_CompactBytes):
    """COMPACT_RECORDS: a slice of a file as in RECORDS (`_Records`)."""

    def encode(self, value: Buffer | TransferableRecords | None, out: list[bytes]) -> None:
        if isinstance(value, TransferableRecords):
            out.append(_varint(len(value) + 1))
            _append_slice(out, value)
            return
        super().encode(value, out)

    def decode(self, buf: Buffer, offset: int) -> tuple[Buffer | None, int]:
        size, offset = _read_varint(buf, offset)
        if size == 0:
            return None, offset
        return _records_view(buf, offset, _take(buf, offset, size - 1))


COMPACT_RECORDS = _CompactRecords("COMPACT_RECORDS", nullable=True)


class CompactArray(Array):
    """COMPACT_ARRAY(elem): an UNSIGNED_VARINT count + 1 (0 = null when nullable), then the elements."""

    def __init__(self, elem: Type, nullable: bool = False) -> None:
        super().__init__(elem, nullable)
        self.name = f"COMPACT_{self.name}"
        self.min_size = 1

    def encode(self, value: list[Any] | None, out: list[bytes]) -> None:
        if value is None:
            if not self.nullable:
                raise EncodeError(f"{self.name} cannot be null")
            out.append(b"\x00")
            return
        if type(value) is SharedArray:
            out.append(self._encoded_once(value))
            return
        out.append(_varint(len(value) + 1))
        if self._fmt is not None:
            out.append(self._numbers(len(value)).pack(*value))
            return
        for item in value:
            self.elem.encode(item, out)

    def decode(self, buf: Buffer, offset: int) -> tuple[list[Any] | None, int]:
        count, offset = _read_varint(buf, offset)
        if count == 0:
            if self.nullable:
                return None, offset
            raise CorruptMessageError(f"{self.name} is null")
        count -= 1
        if count * max(self.elem.min_size, 1) > len(buf) - offset:
            raise CorruptMessageError(f"{self.name} count {count} exceeds the {len(buf) - offset} bytes left")
        if self._fmt is not None:
            st = self._numbers(count)
            return list(st.unpack_from(buf, offset)), offset + st.size
        items = []
        decode = self.elem.decode
        for _ in range(count):
            item, offset = decode(buf, offset)
            items.append(item)
        return items, offset


class _Uuid(Type):
    """UUID: 16 bytes, as a `uuid.UUID` value."""

    name = "UUID"
    min_size = 16

    def encode(self, value: uuid.UUID, out: list[bytes]) -> None:
        out.append(value.bytes)

    def decode(self, buf: Buffer, offset: int) -> tuple[uuid.UUID, int]:
        end = _take(buf, offset, 16)
        return uuid.UUID(bytes=bytes(buf[offset:end])), end


UUID = _Uuid()
ZERO_UUID = uuid.UUID(int=0)
"""Kafka's `Uuid.ZERO_UUID`: no topic id."""


def read_tag_header(buf: Buffer, offset: int) -> tuple[int, int]:
    """An UNSIGNED_VARINT with the one-byte fast path (tag counts, tags, sizes)."""
    return _read_varint(buf, offset)


def tag_varint(value: int) -> bytes:
    """The UNSIGNED_VARINT of a tag count, tag or size."""
    return _varint(value)
