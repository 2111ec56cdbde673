"""Kafka wire protocol: primitive types, headers, request/response schemas, record batch v2, framing.

A pure codec library (no sockets, no clocks): the broker, the controller and `admin` build and read
Kafka frames with it. It imports nothing of ours but the floor, `kafkaops.cluster.common`, whose
`errors` holds Kafka's error codes as one registry of classes (code, name, retriable; for_code(),
check(); CorruptMessageError for any malformed bytes, InvalidRequestError for bad requests). The facts
it encodes are in `shared/kafka-protocol.md`.

    types     INT8..INT64, UINT16, FLOAT64, BOOLEAN, UUID, STRING, BYTES, RECORDS, Array, varints,
              TAG_BUFFER, and the COMPACT_* forms of flexible versions
    schema    the declarative engine: Field, Struct, ArrayOf, Message (one compiled Schema per version;
              flexible versions: compact forms, tagged fields by name)
    message/  Kafka 2.8.2's message JSON files, the one source of truth for every body
    message_specs  the loader: the files as Message objects (snake_case names)
    schemas   ApiKey (every Kafka 2.8 key), REQUESTS/RESPONSES (Kafka 2.8's ranges), SUPPORTED_VERSIONS
              (what we speak), the controller APIs' helpers
    messages  header + body: decode_request, encode_response (broker); encode_request,
              decode_response (our clients); the header-version rule; the ApiVersions refusal
    records   record batch v2: read_header, iter_batches, iter_records, patch_batch,
              validate_produce_records, build_batch, control batches, CRC-32C
    framing   read_frame (size checked against a limit first), write_frame, correlation ids

Values are plain dicts with Kafka's field names in snake_case, the same keys at every version
(schema.py); RECORDS fields are bytes, parsed by records.py only where needed.

A broker connection, in outline:

    payload = await read_frame(reader, max_request_bytes)       # None: the client closed
    request = decode_request(payload)                           # InvalidRequestError: close
    if is_unsupported_api_versions(request.header):
        body, version = api_versions_refusal(), 0
    else:
        body, version = handle(request), request.header.api_version
    write_frame(writer, encode_response(request.header.api_key, version,
                                        request.header.correlation_id, body))
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
from collections.abc import Sequence
from types import ModuleType

from kafkaops.cluster.common.compiled import build_description, why_pure_python

COMPILED = ("types", "schema", "records")
"""The modules `setup_codec_compiled.py` compiles with mypyc, in place (`<name>.cpython-*.so` beside
`<name>.py`, their code in one shared library, `codec__mypyc.cpython-*.so`): the primitive types, the schema
engine's struct and array walkers, the record-batch header walk. Python's import prefers an extension module
to a source."""

_HERE = os.path.dirname(os.path.abspath(__file__))
_SHARED_LIBRARY = os.path.join(_HERE, "codec__mypyc" + importlib.machinery.EXTENSION_SUFFIXES[0])


PURE_PYTHON_REASON = why_pure_python(_SHARED_LIBRARY, [os.path.join(_HERE, f"{name}.py") for name in COMPILED])
"""Why the `.py` modules run, or None: KAFKAOPS_PURE_PYTHON=1 (the fallback, tested both ways), no build, or a
stale one (all or none: the compiled modules call each other natively)."""
PURE_PYTHON = PURE_PYTHON_REASON is not None


def codec_description() -> str:
    """Which codec this process runs, as a broker's start and the benchmarks print it."""
    return build_description("mypyc", PURE_PYTHON_REASON)


class _PurePythonFinder(importlib.abc.MetaPathFinder):
    """Finds the `.py` source of a compiled module first, so that its extension module is not loaded."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        package, _, name = fullname.rpartition(".")
        if package != __name__ or name not in COMPILED:
            return None
        return importlib.util.spec_from_file_location(fullname, os.path.join(_HERE, f"{name}.py"))


if PURE_PYTHON:
    sys.meta_path.insert(0, _PurePythonFinder())


def compiled_modules() -> list[str]:
    """The modules of `COMPILED` this process runs compiled (imports them)."""
    names = []
    for name in COMPILED:
        module = importlib.import_module(f"{__name__}.{name}")
        if (module.__file__ or "").endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES)):
            names.append(name)
    return names
