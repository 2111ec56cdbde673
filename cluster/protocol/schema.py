"""A small declarative schema engine, modelled on Kafka's message JSON files.

A message is declared once, as Kafka declares it: a list of `Field`s, each with the versions it exists
in (`"0+"`, `"1-4"`, `"8"`), the versions in which it may be null, and a default. `Message` compiles
that declaration into one flat `Schema` per version at import time, so `Message.schemas[v]` is the
schema of version v, and runs of fixed-width fields are fused into one precompiled `struct.Struct`
(a Fetch partition, `partition INT32 current_leader_epoch INT32 fetch_offset INT64 log_start_offset
INT64 partition_max_bytes INT32`, is read by a single `unpack_from`).

Values are plain dicts keyed by the field names (Kafka's JSON names in snake_case); arrays are lists,
nested structs are dicts, RECORDS are bytes. Two rules keep the shape of a value independent of the
version it travels at, so that handler code never branches on versions just to read a field:

* decoding fills every field the message has in *any* version: fields the version lacks get their
  default (Fetch v4 partitions come out with `current_leader_epoch = -1`, as in Kafka's generated
  classes);
* encoding ignores keys the version lacks, and a field with a declared default may be left out.

Hence the definition-time rule, checked when a `Message` is built: a field missing from some version
must declare a default. Fields without a default are required when encoding; a missing one is an
EncodeError naming the schema and the field.
"""

from __future__ import annotations

import copy
import struct
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kafkaops.cluster.common.errors import CorruptMessageError, EncodeError, UnsupportedVersionError

from .shared_array import SharedStruct
from .types import (
    BYTES,
    COMPACT_BYTES,
    COMPACT_NULLABLE_BYTES,
    COMPACT_NULLABLE_STRING,
    COMPACT_RECORDS,
    COMPACT_STRING,
    NULLABLE_BYTES,
    NULLABLE_STRING,
    RECORDS,
    STRING,
    Array,
    Buffer,
    CompactArray,
    Fixed,
    Type,
    read_tag_header,
    tag_varint,
    unpack,
)


class _Missing:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Missing()
"""The default of a field that has none: it must be given when encoding."""

_UNBOUNDED = 1 << 15  # versions are INT16 on the wire


def parse_versions(spec: str) -> range:
    """Kafka's version-range syntax: "3+", "1-4", "8", or "none"."""
    if spec == "none":
        return range(0)
    if spec.endswith("+"):
        return range(int(spec[:-1]), _UNBOUNDED)
    low, _, high = spec.partition("-")
    return range(int(low), int(high or low) + 1)


class Field:
    """One field of a message or nested struct, as in Kafka's message JSON.

    `versions` and `nullable` use Kafka's range syntax; `nullable` (strings and arrays only) names the
    versions in which the value may be null. `tagged` names the (flexible) versions in which the field
    travels in its struct's tagged-field buffer under `tag` instead of in line (KIP-482).
    """

    __slots__ = ("name", "type", "versions", "nullable", "default", "tagged", "tag")

    def __init__(
        self,
        name: str,
        type_: Type | Struct | ArrayOf,
        versions: str = "0+",
        nullable: str = "none",
        default: Any = REQUIRED,
        tagged: str = "none",
        tag: int | None = None,
    ) -> None:
        self.name = name
        self.type = type_
        self.versions = parse_versions(versions)
        self.nullable = parse_versions(nullable)
        self.default = default
        self.tagged = parse_versions(tagged)
        self.tag = tag
        if self.tagged and tag is None:
            raise ValueError(f"{name}: tagged versions without a tag")


class Struct:
    """A declared list of fields, compiled per version (a message body or an array's element)."""

    def __init__(self, *fields: Field) -> None:
        self.fields = fields

    def compile(self, version: int, name: str, flexible: bool = False) -> Schema:
        present: list[tuple[Field, Type]] = []
        tagged: list[tuple[Field, Type]] = []
        absent: list[Field] = []
        for field in self.fields:
            if version in field.versions:
                path = f"{name}.{field.name}"
                type_ = _compile(field.type, version, version in field.nullable, path, flexible)
                (tagged if flexible and version in field.tagged else present).append((field, type_))
            else:
                absent.append(field)
        return Schema(name, present, absent, tagged, flexible)


class ArrayOf:
    """ARRAY of a declared struct or of a primitive type."""

    def __init__(self, elem: Type | Struct) -> None:
        self.elem = elem


# (declared type, nullable, flexible) -> the wire type of that version
_VARIANTS: dict[tuple[Type, bool, bool], Type] = {
    (STRING, False, False): STRING,
    (STRING, True, False): NULLABLE_STRING,
    (STRING, False, True): COMPACT_STRING,
    (STRING, True, True): COMPACT_NULLABLE_STRING,
    (BYTES, False, False): BYTES,
    (BYTES, True, False): NULLABLE_BYTES,
    (BYTES, False, True): COMPACT_BYTES,
    (BYTES, True, True): COMPACT_NULLABLE_BYTES,
    (RECORDS, False, False): RECORDS,
    (RECORDS, True, False): RECORDS,
    (RECORDS, False, True): COMPACT_RECORDS,
    (RECORDS, True, True): COMPACT_RECORDS,
}


def _compile(declared: Type | Struct | ArrayOf, version: int, nullable: bool, path: str, flexible: bool) -> Type:
    if isinstance(declared, ArrayOf):
        elem = _compile(declared.elem, version, False, path, flexible)
        return CompactArray(elem, nullable) if flexible else Array(elem, nullable)
    if isinstance(declared, Struct):
        if nullable:
            raise ValueError(f"{path}: nullable structs are not supported")
        return declared.compile(version, path, flexible)
    if (declared, nullable, flexible) in _VARIANTS:
        return _VARIANTS[declared, nullable, flexible]
    if nullable:
        raise ValueError(f"{path}: {declared.name} has no nullable form")
    return declared


def _copier(default: list[Any] | dict[str, Any]) -> Callable[[Any], Any]:
    """How to copy a container default: defaults are shared by every decoded value, so each gets its own."""
    if isinstance(default, list):
        return list
    if any(isinstance(v, list | dict) for v in default.values()):
        return copy.deepcopy  # a struct's default (tagged fields) with containers inside
    return dict


class _Run:
    """Consecutive fixed-width fields read and written by one struct call."""

    __slots__ = ("struct", "names", "defaults")

    def __init__(self, fields: Sequence[tuple[Field, Fixed]]) -> None:
        self.struct = struct.Struct(">" + "".join(t.fmt for _, t in fields))
        self.names = tuple(f.name for f, _ in fields)
        self.defaults = tuple(f.default for f, _ in fields)


class _One:
    """One variable-width field."""

    __slots__ = ("name", "type", "default")

    def __init__(self, field: Field, type_: Type) -> None:
        self.name = field.name
        self.type = type_
        self.default = field.default


class Schema(Type):
    """The compiled layout of one struct at one version: itself a wire type (nested in arrays).

    At a flexible version the struct ends with its tagged-field buffer: the declared tagged fields of
    this version, by name, written only when they differ from their default (as Kafka does); unknown
    tags are read past.
    """

    def __init__(
        self,
        name: str,
        present: list[tuple[Field, Type]],
        absent: list[Field],
        tagged: Sequence[tuple[Field, Type]] = (),
        flexible: bool = False,
    ) -> None:
        self.name = name
        self.present = present
        self.tagged = sorted(tagged, key=lambda ft: ft[0].tag or 0)
        self.flexible = flexible
        self.min_size = sum(t.min_size for _, t in present) + (1 if flexible else 0)
        # Tagged fields are filled with their defaults first, then overwritten by those the buffer carries.
        self._absent = [(f.name, f.default) for f in absent] + [(f.name, f.default) for f, _ in self.tagged]
        # Immutable defaults go in with one dict.update; lists and dicts are copied per decoded value.
        self._shared_defaults = {n: d for n, d in self._absent if not isinstance(d, list | dict)}
        self._copied_defaults = [(n, _copier(d), d) for n, d in self._absent if isinstance(d, list | dict)]
        self._no_tags = flexible and not self.tagged
        self._by_tag = {f.tag: (f.name, t) for f, t in self.tagged}
        self._steps: list[_Run | _One] = []
        run: list[tuple[Field, Fixed]] = []
        for field, type_ in present:
            if isinstance(type_, Fixed):
                run.append((field, type_))
                continue
            if run:
                self._steps.append(_Run(run))
                run = []
            self._steps.append(_One(field, type_))
        if run:
            self._steps.append(_Run(run))

    def _get(self, value: Mapping[str, Any], name: str, default: Any) -> Any:
        if default is REQUIRED:
            try:
                return value[name]
            except KeyError:
                raise EncodeError(f"{self.name}: missing field {name!r}") from None
        return value.get(name, default)

    def encode(self, value: Mapping[str, Any], out: list[bytes]) -> None:
        if type(value) is SharedStruct:
            encoded = value.encoded.get(self)
            if encoded is None:  # two send threads may both get here: they make the same bytes
                parts: list[bytes] = []
                self._encode_fields(value, parts)
                encoded = value.encoded[self] = b"".join(parts)
            out.append(encoded)
            return
        self._encode_fields(value, out)

    def _encode_fields(self, value: Mapping[str, Any], out: list[bytes]) -> None:
        for step in self._steps:
            if isinstance(step, _Run):
                # indexed rather than zipped: mypyc compiles this loop natively
                args = [self._get(value, name, step.defaults[i]) for i, name in enumerate(step.names)]
                try:
                    out.append(step.struct.pack(*args))
                except struct.error as exc:
                    raise EncodeError(f"{self.name}: {dict(zip(step.names, args, strict=True))}: {exc}") from None
            else:
                step.type.encode(self._get(value, step.name, step.default), out)
        if self.flexible:
            if self._no_tags:
                out.append(b"\x00")
            else:
                self._encode_tagged(value, out)

    def _encode_tagged(self, value: Mapping[str, Any], out: list[bytes]) -> None:
        written: list[tuple[int, list[bytes]]] = []
        for field, type_ in self.tagged:
            item = value.get(field.name, field.default)
            if item != field.default:
                data: list[bytes] = []
                type_.encode(item, data)
                written.append((field.tag or 0, data))
        out.append(tag_varint(len(written)))
        for tag, data in written:
            out.append(tag_varint(tag))
            out.append(tag_varint(sum(map(len, data))))
            out.extend(data)

    def decode(self, buf: Buffer, offset: int) -> tuple[dict[str, Any], int]:
        value: dict[str, Any] = {}
        for step in self._steps:
            if isinstance(step, _Run):
                numbers = unpack(step.struct, buf, offset)
                for i, name in enumerate(step.names):
                    value[name] = numbers[i]
                offset += step.struct.size
            else:
                value[step.name], offset = step.type.decode(buf, offset)
        if self._shared_defaults:
            value.update(self._shared_defaults)
        for name, copy_, default in self._copied_defaults:
            value[name] = copy_(default)
        if self.flexible:
            if offset < len(buf) and buf[offset] == 0:
                offset += 1  # no tagged fields: the common case
            else:
                offset = self._decode_tagged(buf, offset, value)
        return value, offset

    def _decode_tagged(self, buf: Buffer, offset: int, value: dict[str, Any]) -> int:
        count, offset = read_tag_header(buf, offset)
        previous = -1
        for _ in range(count):
            tag, offset = read_tag_header(buf, offset)
            if tag <= previous:  # Kafka requires strictly increasing tags
                raise CorruptMessageError(f"{self.name}: tagged field {tag} out of order after {previous}")
            size, offset = read_tag_header(buf, offset)
            end = offset + size
            if end > len(buf):
                raise CorruptMessageError(f"{self.name}: tagged field {tag} of {size} bytes exceeds the buffer")
            known = self._by_tag.get(tag)
            if known is not None:
                name, type_ = known
                value[name], read = type_.decode(buf, offset)
                if read != end:
                    raise CorruptMessageError(f"{self.name}: tagged field {name} is {size} bytes, read {read - offset}")
            offset, previous = end, tag
        return offset

    def describe(self, indent: str = "") -> list[str]:
        """The layout as indented `name TYPE` lines, nested arrays of structs one level deeper; tagged
        fields follow as `name TYPE (tag N)`."""
        lines = []
        for field, type_ in [*self.present, *self.tagged]:
            suffix = f" (tag {field.tag})" if (field, type_) in self.tagged else ""
            if isinstance(type_, Array) and isinstance(type_.elem, Schema):
                lines.append(f"{indent}{field.name} {'NULLABLE_' if type_.nullable else ''}ARRAY{suffix}")
                lines.extend(type_.elem.describe(indent + "  "))
            elif isinstance(type_, Schema):
                lines.append(f"{indent}{field.name} STRUCT{suffix}")
                lines.extend(type_.describe(indent + "  "))
            else:
                lines.append(f"{indent}{field.name} {type_.name}{suffix}")
        return lines


def _check_defaults(fields: Sequence[Field], versions: range, path: str) -> None:
    """A field absent from some version its parent exists in must declare a default (see module doc)."""
    for field in fields:
        present = [v for v in versions if v in field.versions]
        if (len(present) != len(versions) or field.tagged) and field.default is REQUIRED:
            raise ValueError(f"{path}.{field.name}: absent from some versions but has no default")
        declared = field.type.elem if isinstance(field.type, ArrayOf) else field.type
        if isinstance(declared, Struct):
            _check_defaults(declared.fields, range(present[0], present[-1] + 1) if present else range(0), path)


class Message:
    """A request or response body (or a header) declared once and compiled for each valid version.

    `flexible` names the versions that use KIP-482's compact forms and tagged fields (Kafka's
    `flexibleVersions`).
    """

    def __init__(self, name: str, versions: str, fields: Sequence[Field], flexible: str = "none") -> None:
        self.name = name
        self.versions = parse_versions(versions)
        self.flexible_versions = parse_versions(flexible)
        _check_defaults(fields, self.versions, name)
        struct_ = Struct(*fields)
        self.schemas: dict[int, Schema] = {
            v: struct_.compile(v, f"{name} v{v}", v in self.flexible_versions) for v in self.versions
        }

    @property
    def first_flexible_version(self) -> int | None:
        """The first flexible version, or None when no valid version is flexible."""
        flexible = [v for v in self.versions if v in self.flexible_versions]
        return flexible[0] if flexible else None

    def schema(self, version: int) -> Schema:
        """The compiled schema of `version`; UnsupportedVersionError outside the declared range."""
        try:
            return self.schemas[version]
        except KeyError:
            raise UnsupportedVersionError(
                f"{self.name} v{version} (supported: {self.versions.start}-{self.versions.stop - 1})"
            ) from None

    def encode(self, value: Mapping[str, Any], version: int) -> bytes:
        """The bytes of `value` at `version`. Raises EncodeError when the value does not fit the schema."""
        out: list[bytes] = []
        self.encode_into(value, version, out)
        return b"".join(out)

    def encode_into(self, value: Mapping[str, Any], version: int, out: list[bytes]) -> None:
        """`encode`, appending to `out`: a header and a body are joined once."""
        schema = self.schema(version)
        try:
            schema.encode(value, out)
        except (struct.error, TypeError, AttributeError, ValueError, OverflowError) as exc:
            # A wrong type or an out-of-range number somewhere below: our bug, reported with the schema.
            raise EncodeError(f"{schema.name}: {exc}") from exc

    def decode(self, buf: Buffer, version: int, offset: int = 0) -> dict[str, Any]:
        """Read a value of `version` from `buf[offset:]`, which it must fill exactly.

        Raises CorruptMessageError on malformed input or leftover bytes.
        """
        schema = self.schema(version)
        value, end = schema.decode(buf, offset)
        if end != len(buf):
            raise CorruptMessageError(f"{schema.name}: {len(buf) - end} bytes left over")
        return value
