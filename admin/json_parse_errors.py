"""The JSON parser's own message for text that is not JSON, as Kafka 2.8 passes it on.

Kafka 2.8's `ReassignPartitionsCommand.parsePartitionReassignmentData` reads a reassignment file with
`Json.tryParseFull`, which is Jackson's `ObjectMapper.readTree(String)` (jackson-core 2.10.5), and throws
`new AdminOperationException(e)` with the parser's `JsonParseException`: the tool prints `Error: ` and that
exception's `getMessage()`, which is the parser's message, a newline, and ` at ` the location where it stopped:

    Unexpected close marker '}': expected ']' (for Array starting at [Source: (String)"{...}"; line: 1, column: 27])
     at [Source: (String)"{...}"; line: 1, column: 29]

`jackson_parse_error` finds the first error exactly as jackson-core 2.10's `ReaderBasedJsonParser` does (the
same scanning order, the same texts, the same line and column: 1-based lines; the column is that of the
parser's input pointer, usually just past the offending character), and returns that message; None for text
Jackson reads. Like `readTree`, it reads one root value and ignores what follows it. The source is quoted
whole up to 500 characters, then `[truncated N chars]`. Columns count code points where Java counts UTF-16
units, so they differ after a character outside the Basic Multilingual Plane (rare in these files).

The known answers in tests/unit/test_json_parse_errors.py were printed by jackson-core 2.10.5 itself.
"""

from __future__ import annotations

import json
import unicodedata
from dataclasses import dataclass, field
from typing import Any

from kafkaops.cluster.common.errors import AdminOperationError, InvalidArgumentError

VALID_VALUES = "(JSON String, Number, Array, Object or token 'null', 'true' or 'false')"
NON_NUMERIC = "': enable JsonParser.Feature.ALLOW_NON_NUMERIC_NUMBERS to allow"
MAX_CONTENT_SNIPPET = 500
MAX_ERROR_TOKEN_LENGTH = 256
EMPTY_INPUT = "The input string shouldn't be empty\n at [Source: UNKNOWN; line: -1, column: -1]"
"""`Json.tryParseFull("")`: a JsonParseException over MissingNode's parser, whose location is JsonLocation.NA."""

LITERALS = {"t": "true", "f": "false", "n": "null", "N": "NaN", "I": "Infinity"}
_START_CATEGORIES = {"Lu", "Ll", "Lt", "Lm", "Lo", "Nl", "Sc", "Pc"}
_PART_CATEGORIES = _START_CATEGORIES | {"Nd", "Mn", "Mc", "Cf"}


class JacksonError(Exception):
    """The first parse error: its message, and where the parser's input pointer was."""

    def __init__(self, message: str, ptr: int) -> None:
        super().__init__(message)
        self.message = message
        self.ptr = ptr


def _java_identifier_start(c: str) -> bool:
    return unicodedata.category(c) in _START_CATEGORIES


def _java_identifier_part(c: str) -> bool:
    o = ord(c)
    # Character.isIdentifierIgnorable: these controls count as identifier parts in Java
    if 0 <= o <= 8 or 0x0E <= o <= 0x1B or 0x7F <= o <= 0x9F:
        return True
    return unicodedata.category(c) in _PART_CATEGORIES


def char_desc(c: str) -> str:
    """ParserMinimalBase._getCharDesc."""
    o = ord(c)
    if o < 0x20 or 0x7F <= o <= 0x9F:  # Character.isISOControl
        return f"(CTRL-CHAR, code {o})"
    if o > 255:
        return f"'{c}' (code {o} / 0x{o:x})"
    return f"'{c}' (code {o})"


@dataclass
class _Context:
    kind: str  # "root", "Array" or "Object"
    line: int
    column: int
    first: bool = True
    """No entry read yet: the next token is a close marker or the first entry, without a comma."""


@dataclass
class _Parser:
    """ReaderBasedJsonParser over one String: `ptr` is its `_inputPtr`, `row`/`row_start` its row counters."""

    text: str
    ptr: int = 0
    row: int = 0
    row_start: int = 0
    contexts: list[_Context] = field(default_factory=list)

    # --- locations and errors ----------------------------------------------------------------------------

    def source(self) -> str:
        shown = self.text[:MAX_CONTENT_SNIPPET]
        left = len(self.text) - len(shown)
        return f'(String)"{shown}"' + (f"[truncated {left} chars]" if left > 0 else "")

    def location(self, line: int, column: int) -> str:
        return f"[Source: {self.source()}; line: {line}, column: {column}]"

    def error(self, message: str, ptr: int | None = None) -> JacksonError:
        at = self.ptr if ptr is None else ptr
        return JacksonError(f"{message}\n at {self.location(self.row + 1, at - self.row_start + 1)}", at)

    def unexpected(self, c: str, comment: str) -> JacksonError:
        return self.error(f"Unexpected character ({char_desc(c)}): {comment}")

    def unexpected_in_number(self, c: str, comment: str) -> JacksonError:
        return self.error(f"Unexpected character ({char_desc(c)}) in numeric value: {comment}")

    def eof(self, message: str) -> JacksonError:
        return self.error(f"Unexpected end-of-input{message}")

    def context_eof(self) -> JacksonError:
        context = self.contexts[-1]
        start = self.location(context.line, context.column)
        return self.eof(f": expected close marker for {context.kind} (start marker at {start})")

    # --- white space -------------------------------------------------------------------------------------

    def next_char(self) -> str | None:
        """_skipWSOrEnd: the next character after white space (consumed), or None at the end."""
        text = self.text
        while self.ptr < len(text):
            c = text[self.ptr]
            self.ptr += 1
            if c in " \t":
                continue
            if c == "\n":
                self.row += 1
                self.row_start = self.ptr
            elif c == "\r":
                if self.ptr < len(text) and text[self.ptr] == "\n":
                    self.ptr += 1
                self.row += 1
                self.row_start = self.ptr
            elif c == "/":
                raise self.unexpected(
                    c,
                    "maybe a (non-standard) comment? (not recognized as one since Feature 'ALLOW_COMMENTS' not "
                    "enabled for parser)",
                )
            elif ord(c) < 0x20:
                raise self.error(
                    f"Illegal character ({char_desc(c)}): only regular white space (\\r, \\n, \\t) is allowed "
                    "between tokens"
                )
            else:
                return c
        return None

    # --- the token loop ----------------------------------------------------------------------------------

    def parse(self) -> None:
        """readTree: one root value, every token of it read (a loop, not a recursion: nesting is unbounded)."""
        self.contexts = [_Context("root", 1, 0)]
        c = self.next_char()
        if c is None:
            return
        if c in "]}":
            self.close_scope(c)
        self.value(c)
        while len(self.contexts) > 1:
            self.next_token()

    def next_token(self) -> None:
        """nextToken inside an Array or Object: a close marker, else (after a comma unless first) an entry."""
        context = self.contexts[-1]
        c = self.next_char()
        if c is None:
            raise self.context_eof()
        if c in "]}":
            self.close_scope(c)
            return
        if not context.first:
            if c != ",":
                raise self.unexpected(c, f"was expecting comma to separate {context.kind} entries")
            after = self.next_char()
            if after is None:
                raise self.error(f"Unexpected end-of-input within/between {context.kind} entries")
            c = after
        context.first = False
        if context.kind == "Object":
            self.field(c)
        else:
            self.value(c)

    def close_scope(self, c: str) -> None:
        """_closeScope: a close marker must be the current context's."""
        context = self.contexts[-1]
        if (c == "]" and context.kind != "Array") or (c == "}" and context.kind != "Object"):
            expected = "}" if c == "]" else "]"
            start = self.location(context.line, context.column)
            raise self.error(
                f"Unexpected close marker '{c}': expected '{expected}' (for {context.kind} starting at {start})"
            )
        self.contexts.pop()

    def field(self, c: str) -> None:
        """A field name, its colon and its value."""
        if c != '"':
            raise self.unexpected(c, "was expecting double-quote to start field name")
        self.string(" in field name", "name")
        colon = self.next_char()
        if colon is None:
            raise self.error("Unexpected end-of-input within/between Object entries")
        if colon != ":":
            raise self.unexpected(colon, "was expecting a colon to separate field name and value")
        first = self.next_char()
        if first is None:
            raise self.error("Unexpected end-of-input within/between Object entries")
        self.value(first)

    def value(self, c: str) -> None:
        """A value starting with `c` (consumed): nextToken's switch, then _handleOddValue. An Array or Object
        only opens its context here; the loop in `parse` reads its entries."""
        start = self.ptr - 1
        if c == '"':
            self.string(": was expecting closing quote for a string value", "string value")
        elif c in "[{":
            self.contexts.append(_Context("Array" if c == "[" else "Object", self.row + 1, start - self.row_start + 1))
        elif c == "}":  # a '}' in an entry's place (a close marker where one may stand is handled before)
            raise self.unexpected(c, "expected a value")
        elif c == "-" or "0" <= c <= "9":
            self.number(c, start)
        elif c == "+":
            if self.ptr >= len(self.text):
                raise self.eof(" in a Number value")
            self.ptr += 1
            self.invalid_number_start(self.text[self.ptr - 1], negative=False)
        elif c in "tfnNI" or _java_identifier_start(c):
            self.token(c, start)
        else:
            raise self.unexpected(c, f"expected a valid value {VALID_VALUES}")

    def token(self, c: str, start: int) -> None:
        """true, false, null (NaN and Infinity refused), else an unrecognized token: _matchToken, which takes a
        whole literal followed by a character below '0', ']' or '}' (even one Java counts as part of an
        identifier), then _reportInvalidToken, which shows the run of identifier characters from `start`."""
        text = self.text
        literal = LITERALS.get(c)
        if literal is not None and text.startswith(literal, start):
            end = start + len(literal)
            after = text[end] if end < len(text) else None
            if after is None or after < "0" or after in "]}" or not _java_identifier_part(after):
                self.ptr = end
                if literal in ("NaN", "Infinity"):
                    raise self.error(f"Non-standard token '{literal}{NON_NUMERIC}")
                return
        end = start + 1
        while end < len(text) and _java_identifier_part(text[end]):
            end += 1
            if end - start >= MAX_ERROR_TOKEN_LENGTH:
                break
        self.ptr = end
        shown = text[start:end] + ("..." if end - start >= MAX_ERROR_TOKEN_LENGTH else "")
        raise self.error(f"Unrecognized token '{shown}': was expecting {VALID_VALUES}")

    def string(self, eof_message: str, what: str) -> None:
        """The rest of a string (the opening quote consumed): escapes checked, control characters refused."""
        text = self.text
        while True:
            if self.ptr >= len(text):
                raise self.eof(eof_message)
            c = text[self.ptr]
            self.ptr += 1
            if c == '"':
                return
            if c == "\\":
                self.escape()
            elif ord(c) < 0x20:
                raise self.error(
                    f"Illegal unquoted character ({char_desc(c)}): has to be escaped using backslash to be "
                    f"included in {what}"
                )

    def escape(self) -> None:
        """_decodeEscaped."""
        text = self.text
        if self.ptr >= len(text):
            raise self.eof(" in character escape sequence")
        c = text[self.ptr]
        self.ptr += 1
        if c in '"\\/bfnrt':
            return
        if c != "u":
            raise self.error(f"Unrecognized character escape {char_desc(c)}")
        for _ in range(4):
            if self.ptr >= len(text):
                raise self.eof(" in character escape sequence")
            h = text[self.ptr]
            self.ptr += 1
            if h not in "0123456789abcdefABCDEF":
                raise self.unexpected(h, "expected a hex-digit for character escape sequence")

    # --- numbers: the fast path (_parsePosNumber / _parseNegNumber / _parseFloat) and the slow one --------

    def number(self, c: str, start: int) -> None:
        text, end = self.text, len(self.text)
        negative = c == "-"
        ptr = self.ptr
        if negative:
            if ptr >= end:
                self.slow_number(True, start)
                return
            c = text[ptr]
            ptr += 1
            if not "0" <= c <= "9":
                self.ptr = ptr
                self.invalid_number_start(c, negative=True)
                return
        if c == "0":
            self.slow_number(negative, start)
            return
        while True:
            if ptr >= end:
                self.slow_number(negative, start)
                return
            c = text[ptr]
            ptr += 1
            if not "0" <= c <= "9":
                break
        if c in ".eE":
            self.ptr = ptr  # errors of the fast float path point just past the '.' or 'e'
            self.fast_float(c, negative, start, ptr)
            return
        self.ptr = ptr - 1
        if len(self.contexts) == 1:
            self.verify_root_space(c)

    def fast_float(self, c: str, negative: bool, start: int, ptr: int) -> None:
        text, end = self.text, len(self.text)
        if c == ".":
            digits = 0
            while True:
                if ptr >= end:
                    self.slow_number(negative, start)
                    return
                c = text[ptr]
                ptr += 1
                if not "0" <= c <= "9":
                    break
                digits += 1
            if digits == 0:
                raise self.unexpected_in_number(c, "Decimal point not followed by a digit")
        if c in "eE":
            if ptr >= end:
                self.slow_number(negative, start)
                return
            c = text[ptr]
            ptr += 1
            if c in "-+":
                if ptr >= end:
                    self.slow_number(negative, start)
                    return
                c = text[ptr]
                ptr += 1
            digits = 0
            while "0" <= c <= "9":
                digits += 1
                if ptr >= end:
                    self.slow_number(negative, start)
                    return
                c = text[ptr]
                ptr += 1
            if digits == 0:
                raise self.unexpected_in_number(c, "Exponent indicator not followed by a digit")
        self.ptr = ptr - 1
        if len(self.contexts) == 1:
            self.verify_root_space(c)

    def slow_number(self, negative: bool, start: int) -> None:
        """_parseNumber2: re-reads the number from its start; errors point past the character read last."""
        text, end = self.text, len(self.text)
        self.ptr = start + 1 if negative else start

        def next_or_eof(message: str) -> str:
            if self.ptr >= end:
                raise self.eof(message)
            self.ptr += 1
            return text[self.ptr - 1]

        c = next_or_eof("No digit following minus sign")
        if c == "0" and self.ptr < end and "0" <= text[self.ptr] <= "9":
            raise self.error("Invalid numeric value: Leading zeroes not allowed")
        eof = False
        digits = 0
        while "0" <= c <= "9":
            digits += 1
            if self.ptr >= end:
                eof = True
                break
            c = next_or_eof("")
        if digits == 0:
            self.invalid_number_start(c, negative)
            return
        if c == "." and not eof:
            fraction = 0
            while True:
                if self.ptr >= end:
                    eof = True
                    break
                c = next_or_eof("")
                if not "0" <= c <= "9":
                    break
                fraction += 1
            if fraction == 0:
                raise self.unexpected_in_number(c, "Decimal point not followed by a digit")
        if c in "eE" and not eof:
            c = next_or_eof("expected a digit for number exponent")
            if c in "-+":
                c = next_or_eof("expected a digit for number exponent")
            exponent = 0
            while "0" <= c <= "9":
                exponent += 1
                if self.ptr >= end:
                    eof = True
                    break
                c = next_or_eof("")
            if exponent == 0:
                raise self.unexpected_in_number(c, "Exponent indicator not followed by a digit")
        if not eof:
            self.ptr -= 1
            if len(self.contexts) == 1:
                self.verify_root_space(c)

    def invalid_number_start(self, c: str, negative: bool) -> None:
        """_handleInvalidNumberStart: `-Infinity`-like words are refused as non-standard; anything else."""
        if c == "I":
            if self.ptr >= len(self.text):
                raise self.eof(" in a Number value")
            following = self.text[self.ptr]
            self.ptr += 1
            word = {"N": "INF", "n": "Infinity"}.get(following)
            if word is not None and self.text.startswith(word[1:], self.ptr - 1):
                match = ("-" if negative else "+") + word
                self.ptr += len(word) - 2
                raise self.error(f"Non-standard token '{match}{NON_NUMERIC}")
            c = following
        raise self.unexpected_in_number(c, "expected digit (0-9) to follow minus sign, for valid numeric value")

    def verify_root_space(self, c: str) -> None:
        """_verifyRootSpace: a root-level number must be followed by white space (or the end)."""
        self.ptr += 1
        if c in " \t\r\n":
            return
        raise self.unexpected(c, "Expected space separating root-level values")


def jackson_parse_error(text: str) -> str | None:
    """Jackson 2.10's `JsonParseException.getMessage()` for `text` read by `ObjectMapper.readTree`, or None if
    it reads (trailing content after the root value ignored, as readTree does); the empty string gets
    `Json.tryParseFull`'s own text."""
    if not text:
        return EMPTY_INPUT
    parser = _Parser(text)
    try:
        parser.parse()
    except JacksonError as error:
        return error.message
    return None


def read_tree(text: str) -> Any:
    """Kafka's `Json.tryParseFull(text)`, failing as `parsePartitionReassignmentData` does: the root value, or
    AdminOperationError with Jackson's message (`jackson_parse_error`). White space alone is Jackson's
    MissingNode, which Kafka's `asJsonObject` then refuses (InvalidArgumentError, its text)."""
    message = jackson_parse_error(text)
    if message is not None:
        raise AdminOperationError(message)
    stripped = text.lstrip(" \t\r\n")
    if not stripped:
        raise InvalidArgumentError("Expected JSON object, received ")  # MissingNode.toString is ""
    value, _ = json.JSONDecoder().raw_decode(stripped)  # what follows the root value is ignored, as by readTree
    return value
