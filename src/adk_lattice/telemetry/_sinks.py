"""Where audit records go: a JSON Lines file, Python ``logging``, or any callable."""

from __future__ import annotations

import atexit
import json
import logging
import os
import queue
import threading
import weakref
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any, Final, TypeAlias

logger = logging.getLogger("adk_lattice")

#: An audit sink: called with each record (a JSON-ready dict); may be async.
Sink: TypeAlias = Callable[[Mapping[str, Any]], Awaitable[None] | None]
#: What may be given as an audit sink: a JSON Lines file's path, a logger, or a sink.
SinkTarget: TypeAlias = str | os.PathLike[str] | logging.Logger | Sink


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
        path: the file to append to; its folder must exist.
        fsync: also ``fsync`` after each record (durable across a power loss; slower).

    Raises:
        FileNotFoundError: when the file's folder does not exist (checked here, so a typo in
            the path fails when the app starts, not at its first audited turn).
        IsADirectoryError: when ``path`` is a folder.
    """

    def __init__(self, path: str | os.PathLike[str], *, fsync: bool = False) -> None:
        self.path = Path(path)
        if self.path.is_dir():
            raise IsADirectoryError(f"audit file {str(self.path)!r} is a folder: name a file in it")
        folder = self.path.parent
        if not folder.is_dir():
            raise FileNotFoundError(
                f"audit file {str(self.path)!r}: the folder {str(folder)!r} does not exist; "
                "create it first or name a file in an existing folder"
            )
        self.fsync = fsync
        self.name = f"jsonl:{self.path.name}"
        self._lock = threading.Lock()
        self._fd: int | None = None

    def __call__(self, record: Mapping[str, Any]) -> None:
        self._append((to_json_line(record) + "\n").encode("utf-8"))

    def write_many(self, records: list[Mapping[str, Any]]) -> None:
        """Append several records with one ``write`` (whole lines, as ``__call__`` writes).

        Args:
            records: the records, in order.

        Raises:
            OSError: when the write fails or is cut short (then none of them is in the file).
        """
        self._append("".join(to_json_line(r) + "\n" for r in records).encode("utf-8"))

    def _append(self, data: bytes) -> None:
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


_FLUSH: Final = object()
_STOP: Final = object()


class BackgroundWriter:
    """Hands records to a worker thread through a bounded queue, off the caller's path.

    The caller only puts the record on the queue; the worker formats and writes it with
    ``deliver``, in batches: it writes what has queued up ``flush_interval`` seconds after
    the first record of a batch, or at once when ``flush`` or ``close`` asks. A record the
    full queue cannot take is not lost silently: ``reject`` is called with it on the
    caller's thread (it counts and logs it) and :attr:`dropped` counts it.

    Args:
        deliver: writes one batch of records (called on the worker thread).
        reject: called with each record the full queue turned away.
        max_pending: how many records may wait for the worker.
        flush_interval: seconds the worker waits after a batch's first record.
        name: the worker thread's name.
    """

    def __init__(
        self,
        deliver: Callable[[list[Mapping[str, Any]]], None],
        reject: Callable[[Mapping[str, Any]], None],
        *,
        max_pending: int,
        flush_interval: float,
        name: str,
    ) -> None:
        self._deliver = deliver
        self._reject = reject
        self._queue: queue.Queue[object] = queue.Queue(max_pending)
        self._interval = flush_interval
        self._name = name
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()
        #: Set by ``flush`` and ``close``: the worker writes at once instead of at the
        #: interval's end.
        self._urgent = threading.Event()
        self.dropped = 0
        atexit.register(_flush_at_exit, weakref.ref(self))

    def submit(self, record: Mapping[str, Any]) -> None:
        """Queue one record for the worker; a full queue rejects it (counted, reported)."""
        if self._thread is None or not self._thread.is_alive():
            self._start()
        try:
            self._queue.put_nowait(record)
        except queue.Full:
            self.dropped += 1
            self._reject(record)

    def flush(self) -> None:
        """Block until every record queued so far is written."""
        if self._thread is None or not self._thread.is_alive():
            return
        self._queue.put(_FLUSH)
        self._urgent.set()
        self._queue.join()

    def close(self) -> None:
        """Write what is queued, then stop the worker (a later record starts a new one)."""
        thread = self._thread
        if thread is None or not thread.is_alive():
            return
        self._queue.put(_STOP)
        self._urgent.set()
        thread.join()
        self._thread = None

    def _start(self) -> None:
        with self._start_lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
                self._thread.start()

    def _run(self) -> None:
        # The worker sleeps through a batch's interval instead of waking for each record: in
        # CPython every wake-up takes the GIL from the thread running the turns, so waking
        # per record made a background audit cost more on the turn than writing it there.
        get, urgent = self._queue.get, self._urgent
        while True:
            item = get()
            if item is not _FLUSH and item is not _STOP:
                urgent.wait(self._interval)  # a flush or close cuts the wait short
            urgent.clear()
            batch: list[Mapping[str, Any]] = []
            taken, stop = 1, item is _STOP
            while True:
                if item is _STOP:
                    stop = True
                elif item is not _FLUSH:
                    batch.append(item)  # type: ignore[arg-type]
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                taken += 1
            if batch:
                try:
                    self._deliver(batch)
                except Exception:  # deliver reports its own failures; never kill the worker
                    logger.exception("adk_lattice: the audit writer failed on a batch")
            for _ in range(taken):
                self._queue.task_done()
            if stop:
                return


def _flush_at_exit(ref: weakref.ref[BackgroundWriter]) -> None:
    """Write what is still queued when the interpreter exits."""
    writer = ref()
    if writer is not None:
        writer.close()
