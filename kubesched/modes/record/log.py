"""The recording's on-disk log: compressed, append-only, resumable.

A recording is a directory of segments ``segment-NNNNNN.jsonl.gz``. Each segment is a series of
gzip members (RFC 1952 allows any number in one file; ``gzip -dc`` and :mod:`gzip` read them as one
stream); every flush appends one member holding the records buffered since the previous flush,
then ``fsync``\\ s the file. So a crash loses at most the records of the flush in progress: the
members written before it are complete, and :func:`read_records` stops at a member cut short
(reporting it) and goes on with the next segment. A recorder never appends to a segment it did not
open: each run (a *session*) starts a new segment after the highest one present, so restarting
``kubesched record`` on the same directory keeps everything written and adds to it. A segment is
also closed after ``segment_seconds`` (1 h), so a day's recording is a few dozen files.

A record is one JSON object per line (UTF-8, compact)::

    {"op": "session", "t": 1733360000.5, "version": 1, "kinds": [...], "namespace": null, ...}
    {"op": "add" | "update" | "delete", "t": 1733360001.2, "kind": "Pod", "object": {...}}
    {"op": "synced", "t": ..., "kind": "Pod"}       # the kind's initial list is complete

``t`` is the recorder's wall clock (epoch seconds) when it received the change. No upstream
counterpart (the API server's audit log and ``kubectl get -w -o json`` are the nearest).
"""

from __future__ import annotations

import logging
import os
import re
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from kubesched.client.json_codec import dumps, loads
from kubesched.errors import KubeschedError

__all__ = ["RecordWriter", "read_records", "segments", "FORMAT_VERSION", "RecordingError"]

log = logging.getLogger(__name__)

#: version of the record format (the session record's ``version``)
FORMAT_VERSION = 1
_SEGMENT = re.compile(r"^segment-(\d{6})\.jsonl\.gz$")


class RecordingError(KubeschedError):
    """A recording directory cannot be written or read (names the path)."""


def segments(directory: str | Path) -> list[Path]:
    """The segment files of a recording, in order. Raises RecordingError when ``directory`` is
    not a directory."""
    d = Path(directory)
    if not d.is_dir():
        raise RecordingError(f"recording {d}: not a directory")
    found = [(int(m.group(1)), p) for p in d.iterdir() if (m := _SEGMENT.match(p.name))]
    return [p for _, p in sorted(found)]


class RecordWriter:
    """Appends records to a recording directory (see the module docstring). Thread-safe.

    ``append(record)`` buffers; ``flush()`` writes the buffer as one gzip member and fsyncs (the
    recorder calls it every ``flush_seconds``); ``close()`` flushes and closes. ``clock`` gives epoch
    seconds (segment age)."""

    def __init__(
        self,
        directory: str | Path,
        *,
        segment_seconds: float = 3600.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.directory = Path(directory)
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise RecordingError(f"recording {self.directory}: {e.strerror or e}") from None
        existing = segments(self.directory)
        self._next = int(_SEGMENT.match(existing[-1].name).group(1)) + 1 if existing else 1  # type: ignore[union-attr]
        self.segment_seconds = segment_seconds
        self.clock = clock
        self._lock = threading.Lock()
        self._buffer: list[bytes] = []
        self._file: BinaryIO | None = None
        self._opened_at = 0.0
        #: records and gzip members written so far, compressed bytes written
        self.records = 0
        self.members = 0
        self.bytes_written = 0
        self.paths: list[Path] = []

    def append(self, record: dict[str, Any]) -> None:
        """Buffer one record (written at the next :meth:`flush`)."""
        line = dumps(record) + b"\n"
        with self._lock:
            self._buffer.append(line)

    def _open(self) -> BinaryIO:
        if self._file is not None and self.clock() - self._opened_at >= self.segment_seconds:
            self._file.close()
            self._file = None
        if self._file is None:
            path = self.directory / f"segment-{self._next:06d}.jsonl.gz"
            self._next += 1
            try:
                self._file = open(path, "xb")  # noqa: SIM115 - kept open across flushes, closed in close()
            except OSError as e:
                raise RecordingError(f"recording {path}: {e.strerror or e}") from None
            self._opened_at = self.clock()
            self.paths.append(path)
        return self._file

    def flush(self) -> int:
        """Write the buffered records as one gzip member and fsync; returns how many were written."""
        with self._lock:
            if not self._buffer:
                return 0
            lines, self._buffer = self._buffer, []
            f = self._open()
            member = zlib.compressobj(6, zlib.DEFLATED, 31)
            data = member.compress(b"".join(lines)) + member.flush()
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
            self.records += len(lines)
            self.members += 1
            self.bytes_written += len(data)
            return len(lines)

    def close(self) -> None:
        """Flush and close the current segment (idempotent)."""
        self.flush()
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None


def _members(data: bytes) -> Iterator[tuple[bytes, bool]]:
    """``(decompressed bytes, complete)`` of each gzip member in ``data``; the last one is
    incomplete when the file was cut short (a crash during a write)."""
    while data:
        d = zlib.decompressobj(31)
        try:
            out = d.decompress(data)
        except zlib.error:
            yield b"", False
            return
        if not d.eof:
            yield out, False
            return
        yield out, True
        data = d.unused_data


def read_records(directory: str | Path, problems: list[str] | None = None) -> Iterator[dict[str, Any]]:
    """Every complete record of a recording, in the order written (segments by number). A member
    cut short (the flush a crash interrupted) is skipped with a line in ``problems``, as is an
    unreadable line; reading goes on with the next segment. Raises RecordingError when the
    directory does not exist or holds no segment."""
    paths = segments(directory)
    if not paths:
        raise RecordingError(f"recording {directory}: no segment-NNNNNN.jsonl.gz files")
    for path in paths:
        try:
            data = path.read_bytes()
        except OSError as e:
            raise RecordingError(f"recording {path}: {e.strerror or e}") from None
        for i, (text, complete) in enumerate(_members(data)):
            if not complete:
                msg = (
                    f"{path.name}: member {i + 1} is cut short (a write interrupted); its records are skipped"
                )
                log.warning("%s", msg)
                if problems is not None:
                    problems.append(msg)
                break
            for n, line in enumerate(text.splitlines()):
                if not line.strip():
                    continue
                try:
                    rec = loads(line)
                except ValueError:
                    rec = None
                if not isinstance(rec, dict):
                    if problems is not None:
                        problems.append(f"{path.name}: member {i + 1} line {n + 1}: not a JSON object")
                    continue
                yield rec
