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

import struct
from collections.abc import Mapping, Sequence
from typing import Any

from kafkaops.cluster.common.errors import CorruptMessageError, EncodeError, UnsupportedVersionError

from .types import BYTES, NULLABLE_BYTES, NULLABLE_STRING, STRING, Array, Buffer, Fixed, Type, unpack


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
    versions in which the value may be null.
    """

    __slots__ = ("name", "type", "versions", "nullable", "default")

    def __init__(
        self,
        name: str,
        type_: Type | Struct | ArrayOf,
        versions: str = "0+",
        nullable: str = "none",
        default: Any = REQUIRED,
    ) -> None:
        self.name = name
        self.type = type_
        self.versions = parse_versions(versions)
        self.nullable = parse_versions(nullable)
        self.default = default


class Struct:
    """A declared list of fields, compiled per version (a message body or an array's element)."""

    def __init__(self, *fields: Field) -> None:
        self.fields = fields

    def compile(self, version: int, name: str) -> Schema:
        present: list[tuple[Field, Type]] = []
        absent: list[Field] = []
        for field in self.fields:
            if version in field.versions:
                path = f"{name}.{field.name}"
                present.append((field, _compile(field.type, version, version in field.nullable, path)))
            else:
                absent.append(field)
        return Schema(name, present, absent)


class ArrayOf:
    """ARRAY of a declared struct or of a primitive type."""

    def __init__(self, elem: Type | Struct) -> None:
        self.elem = elem


_NULLABLE_VARIANT: dict[Type, Type] = {STRING: NULLABLE_STRING, BYTES: NULLABLE_BYTES}


def _compile(declared: Type | Struct | ArrayOf, version: int, nullable: bool, path: str) -> Type:
    if isinstance(declared, ArrayOf):
        return Array(_compile(declared.elem, version, False, path), nullable)
    if isinstance(declared, Struct):
        if nullable:
            raise ValueError(f"{path}: nullable structs are not supported")
        return declared.compile(version, path)
    if nullable:
        if declared not in _NULLABLE_VARIANT:
            raise ValueError(f"{path}: {declared.name} has no nullable form")
        return _NULLABLE_VARIANT[declared]
    return declared


def _fresh(default: Any) -> Any:
    # Defaults are shared by every decoded value: hand out a new container each time.
    return type(default)(default) if isinstance(default, list | dict) else default


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
    """The compiled layout of one struct at one version: itself a wire type (nested in arrays)."""

    def __init__(self, name: str, present: list[tuple[Field, Type]], absent: list[Field]) -> None:
        self.name = name
        self.present = present
        self.min_size = sum(t.min_size for _, t in present)
        self._absent = [(f.name, f.default) for f in absent]
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
        for step in self._steps:
            if isinstance(step, _Run):
                args = [self._get(value, n, d) for n, d in zip(step.names, step.defaults, strict=True)]
                try:
                    out.append(step.struct.pack(*args))
                except struct.error as exc:
                    raise EncodeError(f"{self.name}: {dict(zip(step.names, args, strict=True))}: {exc}") from None
            else:
                step.type.encode(self._get(value, step.name, step.default), out)

    def decode(self, buf: Buffer, offset: int) -> tuple[dict[str, Any], int]:
        value: dict[str, Any] = {}
        for step in self._steps:
            if isinstance(step, _Run):
                value.update(zip(step.names, unpack(step.struct, buf, offset), strict=True))
                offset += step.struct.size
            else:
                value[step.name], offset = step.type.decode(buf, offset)
        for name, default in self._absent:
            value[name] = _fresh(default)
        return value, offset

    def describe(self, indent: str = "") -> list[str]:
        """The layout as indented `name TYPE` lines, nested arrays of structs one level deeper."""
        lines = []
        for field, type_ in self.present:
            if isinstance(type_, Array) and isinstance(type_.elem, Schema):
                lines.append(f"{indent}{field.name} {'NULLABLE_' if type_.nullable else ''}ARRAY")
                lines.extend(type_.elem.describe(indent + "  "))
            else:
                lines.append(f"{indent}{field.name} {type_.name}")
        return lines


def _check_defaults(fields: Sequence[Field], versions: range, path: str) -> None:
    """A field absent from some version its parent exists in must declare a default (see module doc)."""
    for field in fields:
        present = [v for v in versions if v in field.versions]
        if len(present) != len(versions) and field.default is REQUIRED:
            raise ValueError(f"{path}.{field.name}: absent from some versions but has no default")
        declared = field.type.elem if isinstance(field.type, ArrayOf) else field.type
        if isinstance(declared, Struct):
            _check_defaults(declared.fields, range(present[0], present[-1] + 1) if present else range(0), path)


class Message:
    """A request or response body (or a header) declared once and compiled for each valid version."""

    def __init__(self, name: str, versions: str, fields: Sequence[Field]) -> None:
        self.name = name
        self.versions = parse_versions(versions)
        _check_defaults(fields, self.versions, name)
        struct_ = Struct(*fields)
        self.schemas: dict[int, Schema] = {v: struct_.compile(v, f"{name} v{v}") for v in self.versions}

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
