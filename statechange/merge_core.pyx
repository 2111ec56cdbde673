# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The streaming merger's compiled core (Cython): a k-way merge over offsets into each stream's read buffer.

`merge.merge_logs`, the block-wise merge in Python, makes a bytes object and a key per line and sorts
them; that is as fast as Python gets, about half the speed of `sort -m`. This core does the same merge
without a Python object per entry: each stream finds its next entry in its buffer (`memchr` for the line
ends, the timestamp read into an int that orders as the timestamp's bytes do), a binary heap of stream
numbers ordered by (merge key, stream number) picks the next entry, which is copied to the output batch.
Filters work on the raw bytes: the time window compares the int keys, required literals are searched in
the buffer, and only the entries that pass both reach the `accept` callback (`filters.raw_plan`).

Semantics are `merge.merge_logs`'s (its module docstring): an entry's merge key is its timestamp raised to
the running maximum of its stream's kept entries; ties keep stream order, then position. A line starts an
entry when it begins with `[yyyy-MM-dd HH:mm:ss,SSS]` or `yyyy-MM-dd HH:mm:ss,SSS ` (`parse.split_entries`),
every other line continues the entry above it, and lines before a file's first timestamp form an orphan
entry that sorts first in its stream. `setup_merger_compiled.py` builds it in place; `merge.compiled_core`
loads it (not when its source is newer, nor with KAFKAOPS_PURE_PYTHON=1).
"""

import gzip
import zlib

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memchr, memcmp, memcpy

from kafkaops.cluster.common.errors import InvalidArgumentError

cdef enum:
    ORPHAN_KEY = -1  # below every timestamp
    NOT_AN_ENTRY = -2
    EXHAUSTED = -3
    UNKNOWN = -4

ORPHAN = ORPHAN_KEY
NO_BOUND = 1 << 62
"""Above every key: `high` when there is no upper bound."""


cdef inline bint _digits(const unsigned char* p, int n, long long* value) noexcept nogil:
    cdef int i
    cdef unsigned int digit
    for i in range(n):
        digit = p[i] - 48
        if digit > 9:
            return False
        value[0] = value[0] * 10 + digit
    return True


cdef long long _key_at(const unsigned char* p, Py_ssize_t n) noexcept nogil:
    """The timestamp of the line p[:n] as the int yyyyMMddHHmmssSSS (fixed-width digit fields: ints order
    as the timestamps' bytes do), or NOT_AN_ENTRY."""
    cdef const unsigned char* q
    cdef unsigned char close
    cdef long long value = 0
    if n >= 25 and p[0] == b'[':
        q = p + 1
        close = b']'
    elif n >= 24:
        q = p
        close = b' '  # after the time, in the layout without brackets
    else:
        return NOT_AN_ENTRY
    if (q[4] != b'-' or q[7] != b'-' or q[10] != b' ' or q[13] != b':' or q[16] != b':' or q[19] != b','
            or q[23] != close):
        return NOT_AN_ENTRY
    if (_digits(q, 4, &value) and _digits(q + 5, 2, &value) and _digits(q + 8, 2, &value)
            and _digits(q + 11, 2, &value) and _digits(q + 14, 2, &value) and _digits(q + 17, 2, &value)
            and _digits(q + 20, 3, &value)):
        return value
    return NOT_AN_ENTRY


def key_of(bytes line):
    """The int key of a line (see `_key_at`), or None when it does not start an entry."""
    cdef long long key = _key_at(<const unsigned char*>PyBytes_AS_STRING(line), PyBytes_GET_SIZE(line))
    return None if key == NOT_AN_ENTRY else key


cdef bint _contains(const char* data, Py_ssize_t size, bytes needle) noexcept:
    cdef const char* n = PyBytes_AS_STRING(needle)
    cdef Py_ssize_t length = PyBytes_GET_SIZE(needle)
    cdef const char* end = data + size - length + 1
    cdef const char* hit
    if length == 0:
        return True
    while data < end:
        hit = <const char*>memchr(data, n[0], end - data)
        if hit == NULL:
            return False
        if memcmp(hit, n, length) == 0:
            return True
        data = hit + 1
    return False


cdef class LogStream:
    """One broker's log, its files oldest first. After `advance()`, the current kept entry is
    buf[start:end] (with its final `\\n`, unless it ends a file without one), keyed `key`."""

    cdef list files
    cdef Py_ssize_t file_index, block_size, max_entry
    cdef object file
    cdef str path
    cdef bytes buf
    cdef Py_ssize_t base, pos, start, end
    cdef bint eof, newline
    cdef long long pending, low, high
    cdef readonly long long key, floor
    cdef bytes line_needle, text_needle
    cdef object accept

    def __init__(self, list files, Py_ssize_t block_size, Py_ssize_t max_entry, long long low=ORPHAN_KEY,
                 long long high=NO_BOUND, bytes line_needle=None, bytes text_needle=None, accept=None):
        """Entries are kept when low <= raw key <= high (an orphan's is ORPHAN), their first line contains
        `line_needle` and their text `text_needle`, and accept(orphan, text) is true."""
        self.files = files
        self.block_size = max(block_size, 1)
        self.max_entry = max_entry
        self.low = low
        self.high = high
        self.line_needle = line_needle or None
        self.text_needle = text_needle or None
        self.accept = accept
        self.file_index = -1
        self.file = None
        self.path = ""
        self.buf = b""
        self.eof = True
        self.pending = UNKNOWN
        self.floor = ORPHAN_KEY
        self.key = ORPHAN_KEY

    cdef bint _open_next(self) except -1:
        self.close()
        self.file_index += 1
        if self.file_index >= len(self.files):
            return False
        self.path = self.files[self.file_index]
        try:
            self.file = gzip.open(self.path, "rb") if self.path.endswith(".gz") else open(self.path, "rb")
        except OSError as error:
            raise self._error(error) from None
        self.buf = b""
        self.base = self.pos = self.start = self.end = 0
        self.eof = False
        self.pending = UNKNOWN
        return True

    def close(self):
        if self.file is not None:
            self.file.close()
            self.file = None

    cdef object _error(self, error):
        self.close()
        reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        return InvalidArgumentError(f"Cannot read state-change log {self.path}: {reason}")

    cdef int _refill(self) except -1:
        """Drop what precedes the current entry and read on (at least as much as is kept, so that a long
        entry costs linear time). Offsets move down by the old `start`."""
        cdef Py_ssize_t keep = self.start
        cdef Py_ssize_t size = PyBytes_GET_SIZE(self.buf)
        if size - keep > self.max_entry:  # no line starts an entry in all that
            self.close()
            raise InvalidArgumentError(
                f"Cannot read state-change log {self.path}: no line starts a log entry in its "
                f"{self.max_entry >> 20} MiB from byte {self.base + keep} on (is it a state-change log?)"
            )
        try:
            data = self.file.read(max(self.block_size, size - keep))
        except (OSError, EOFError, zlib.error) as error:
            raise self._error(error) from None
        if not data:
            self.eof = True
        self.base += keep
        self.buf = self.buf[keep:] + data if keep < size else data
        self.start = 0
        return 0

    cdef Py_ssize_t _line_end(self, Py_ssize_t offset) except -2:
        """The index of the `\\n` ending the line at start + offset, reading on as needed (which moves
        `start`); len(buf) for an unterminated last line, -1 at the end of the file."""
        cdef Py_ssize_t p, size
        cdef const char* data
        cdef const char* hit
        while True:
            p = self.start + offset
            size = PyBytes_GET_SIZE(self.buf)
            data = PyBytes_AS_STRING(self.buf)
            if p < size:
                hit = <const char*>memchr(data + p, b'\n', size - p)
                if hit != NULL:
                    return hit - data
            if self.eof:
                return -1 if p >= size else size
            self._refill()

    cdef long long _scan(self) except -5:
        """Take the entry at pos into start, end and newline; returns its raw key, or EXHAUSTED."""
        cdef Py_ssize_t nl, end, following
        cdef long long raw, key
        cdef const unsigned char* data
        while True:
            if self.file is None and not self._open_next():
                return EXHAUSTED
            self.start = self.pos
            nl = self._line_end(0)
            if nl >= 0:
                break
            if not self._open_next():
                return EXHAUSTED
        raw = self.pending
        if raw == UNKNOWN:
            data = <const unsigned char*>PyBytes_AS_STRING(self.buf)
            raw = _key_at(data + self.start, nl - self.start)
            if raw == NOT_AN_ENTRY:  # only a file's first line can be one: it starts an orphan
                raw = ORPHAN_KEY
        self.pending = UNKNOWN
        end = nl - self.start  # relative to start, which a read moves
        while self.start + end < PyBytes_GET_SIZE(self.buf):  # continuation lines
            following = self._line_end(end + 1)
            if following < 0:
                break
            data = <const unsigned char*>PyBytes_AS_STRING(self.buf)
            key = _key_at(data + self.start + end + 1, following - self.start - end - 1)
            if key != NOT_AN_ENTRY:
                self.pending = key
                break
            end = following - self.start
        end += self.start
        self.newline = end < PyBytes_GET_SIZE(self.buf)
        self.end = end + 1 if self.newline else end
        self.pos = self.end
        return raw

    cpdef bint advance(self) except -1:
        """Move to the next kept entry; False when there is none."""
        cdef long long raw
        cdef const char* data
        cdef const char* first_end
        while True:
            raw = self._scan()
            if raw == EXHAUSTED:
                self.close()
                return False
            if raw < self.low or raw > self.high:
                continue
            data = PyBytes_AS_STRING(self.buf)
            if self.line_needle is not None:
                first_end = <const char*>memchr(data + self.start, b'\n', self.end - self.start)
                if first_end == NULL:
                    first_end = data + self.end
                if not _contains(data + self.start, first_end - data - self.start, self.line_needle):
                    continue
            if self.text_needle is not None and not _contains(
                data + self.start, self.end - self.start, self.text_needle
            ):
                continue
            if self.accept is not None and not self.accept(raw == ORPHAN_KEY, self.text()):
                continue
            self.key = raw if raw > self.floor else self.floor
            self.floor = self.key
            return True

    def text(self):
        """The current entry without its final `\\n`."""
        return self.buf[self.start : self.end - 1 if self.newline else self.end]


cdef class Merger:
    """`next_batch()` until it returns b"": the streams' entries merged, about `batch_size` bytes at a time;
    the first batch is out after one read per stream (`| head` returns at once)."""

    cdef list streams
    cdef int* heap
    cdef long long* keys
    cdef int size
    cdef char* out
    cdef Py_ssize_t capacity, batch_size
    cdef readonly long long count

    def __cinit__(self, list streams, Py_ssize_t batch_size=256 * 1024):
        cdef int n = max(len(streams), 1)
        self.heap = <int*>malloc(n * sizeof(int))
        self.keys = <long long*>malloc(n * sizeof(long long))
        self.capacity = batch_size + 4096
        self.out = <char*>malloc(self.capacity)
        if self.heap == NULL or self.keys == NULL or self.out == NULL:
            raise MemoryError()

    def __init__(self, list streams, Py_ssize_t batch_size=256 * 1024):
        cdef int i
        cdef LogStream stream
        self.streams = streams
        self.batch_size = batch_size
        self.size = 0
        self.count = 0
        for i in range(len(streams)):
            stream = <LogStream>streams[i]
            if stream.advance():
                self.keys[i] = stream.key
                self.heap[self.size] = i
                self.size += 1
        for i in range(self.size // 2 - 1, -1, -1):
            self._sift_down(i)

    def __dealloc__(self):
        free(self.heap)
        free(self.keys)
        free(self.out)

    cdef inline bint _before(self, int a, int b) noexcept:
        return self.keys[a] < self.keys[b] or (self.keys[a] == self.keys[b] and a < b)

    cdef void _sift_down(self, int i) noexcept:
        cdef int child
        cdef int item = self.heap[i]
        while True:
            child = 2 * i + 1
            if child >= self.size:
                break
            if child + 1 < self.size and self._before(self.heap[child + 1], self.heap[child]):
                child += 1
            if not self._before(self.heap[child], item):
                break
            self.heap[i] = self.heap[child]
            i = child
        self.heap[i] = item

    def next_batch(self):
        cdef Py_ssize_t used = 0, length
        cdef int top
        cdef LogStream stream
        cdef char* grown
        while self.size and used < self.batch_size:
            top = self.heap[0]
            stream = <LogStream>self.streams[top]
            length = stream.end - stream.start
            if used + length + 1 > self.capacity:
                grown = <char*>realloc(self.out, used + length + 1 + self.capacity)
                if grown == NULL:
                    raise MemoryError()
                self.out = grown
                self.capacity = used + length + 1 + self.capacity
            memcpy(self.out + used, PyBytes_AS_STRING(stream.buf) + stream.start, length)
            used += length
            if not stream.newline:
                self.out[used] = b'\n'
                used += 1
            self.count += 1
            if stream.advance():
                self.keys[top] = stream.key
            else:
                self.size -= 1
                self.heap[0] = self.heap[self.size]
            if self.size:
                self._sift_down(0)
        return PyBytes_FromStringAndSize(self.out, used)

    def close(self):
        for stream in self.streams:
            stream.close()
        self.size = 0
