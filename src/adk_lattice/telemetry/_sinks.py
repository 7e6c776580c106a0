"""Where audit records go: a JSON Lines file, Python ``logging``, or any callable."""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any, TypeAlias

#: An audit sink: called with each record (a JSON-ready dict); may be async.
Sink: TypeAlias = Callable[[Mapping[str, Any]], Awaitable[None] | None]


def to_json_line(record: Mapping[str, Any]) -> str:
    """One record as one line of JSON (no newline inside, UTF-8 text kept as is)."""
    return json.dumps(record, ensure_ascii=False, default=str, separators=(",", ":"))


class JsonlSink:
    """Appends each record to a JSON Lines file, one line per record, written at once.

    Each record is written with a single ``write`` on a file opened in append mode, so
    lines from concurrent tasks, threads and processes never interleave, and every line is
    on disk (in the OS) when the call returns. The file is created if missing; existing
    lines are never rewritten. A write a full disk cuts short raises ``OSError`` and its
    fragment is cut off again, so the file holds only whole lines.

    Args:
        path: the file to append to.
        fsync: also ``fsync`` after each record (durable across a power loss; slower).
    """

    def __init__(self, path: str | os.PathLike[str], *, fsync: bool = False) -> None:
        self.path = Path(path)
        self.fsync = fsync
        self.name = f"jsonl:{self.path.name}"
        self._lock = threading.Lock()
        self._fd: int | None = None

    def __call__(self, record: Mapping[str, Any]) -> None:
        data = (to_json_line(record) + "\n").encode("utf-8")
        with self._lock:
            if self._fd is None:
                self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            before = os.fstat(self._fd).st_size
            written = os.write(self._fd, data)
            if written != len(data):  # a full disk or a signal cut the write short
                self._drop_fragment(before, written)
                raise OSError(f"short write to {self.path}: {written} of {len(data)} bytes")
            if self.fsync:
                os.fsync(self._fd)

    def _drop_fragment(self, before: int, written: int) -> None:
        """Cut a partly written line off the end, so the next record starts a whole line."""
        assert self._fd is not None
        # Only when the file ends with exactly our fragment: a line another process
        # appended meanwhile is never cut. Otherwise the next record would be glued to the
        # fragment and unreadable too.
        if os.fstat(self._fd).st_size == before + written:
            os.ftruncate(self._fd, before)

    def close(self) -> None:
        """Close the file (a later record opens it again)."""
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    def __repr__(self) -> str:
        return f"JsonlSink({str(self.path)!r})"


class LoggingSink:
    """Logs each record as one JSON line; the record dict rides along as ``record.audit``.

    The message starts with a fixed prefix (``adk_lattice.audit `` by default), so a record
    is recognisable in a log format that prints no logger name (ADK's CLI): strip it to get
    the JSON, or read the dict from ``record.audit``.

    Args:
        logger: a logger or a logger name (default ``adk_lattice.audit``).
        level: the level records are logged at (default INFO).
        prefix: put before the JSON in the message (``""`` for the bare JSON line).
    """

    def __init__(
        self,
        logger: logging.Logger | str = "adk_lattice.audit",
        *,
        level: int = logging.INFO,
        prefix: str = "adk_lattice.audit ",
    ) -> None:
        self.logger = logging.getLogger(logger) if isinstance(logger, str) else logger
        self.level = level
        self.prefix = prefix
        self.name = f"logging:{self.logger.name}"

    def __call__(self, record: Mapping[str, Any]) -> None:
        if self.logger.isEnabledFor(self.level):
            line = self.prefix + to_json_line(record)
            self.logger.log(self.level, "%s", line, extra={"audit": record})

    def __repr__(self) -> str:
        return f"LoggingSink({self.logger.name!r})"


def as_sink(target: Any) -> Sink:
    """Turn what a user passed as a sink into one.

    Args:
        target: a path (``str`` or ``os.PathLike``) for a JSON Lines file, a
            ``logging.Logger``, or a callable taking the record.

    Raises:
        TypeError: for anything else.
    """
    if isinstance(target, str | os.PathLike):
        return JsonlSink(target)
    if isinstance(target, logging.Logger):
        return LoggingSink(target)
    if callable(target):
        return target  # type: ignore[no-any-return]
    raise TypeError(
        f"an audit sink is a file path, a logging.Logger or a callable, not {type(target).__name__}"
    )


def sink_name(sink: Sink) -> str:
    """The name a sink's failures are counted under."""
    name = getattr(sink, "name", None)
    if isinstance(name, str):
        return name
    return getattr(sink, "__qualname__", None) or type(sink).__name__
