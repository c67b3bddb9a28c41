"""Each source's own worker threads: where its blocking work (file reads, SQLite, tantivy) runs.

Why not ``asyncio.to_thread``: the event loop's default executor is shared by every source and
every request of a server worker. A source whose read never returns (a hung network file
system, a device, a plug-in's bug) kept one of its few threads per call, and after a handful of
calls a plain knowledge-base search queued behind them until the door's time limit. Here each
source has at most ``limit`` threads; a call waiting for one is only queued, so the caller's
deadline cancels it before it ever starts, and a blocked source holds its own threads, never
another source's.

The threads are daemons: a read that never returns cannot keep a CLI command from exiting (the
default executor's threads are joined at interpreter exit, so one blocked read hung the exit).
A thread left idle for ``idle_seconds`` ends (a server that searched a source once an hour ago
holds no threads for it; a new call starts one again, which costs well under a millisecond).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import functools
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["Workers"]

T = TypeVar("T")
_Item = tuple[concurrent.futures.Future[Any], Callable[[], Any]] | None


IDLE_SECONDS = 10.0


class Workers:
    """At most ``limit`` daemon threads for one source, started on demand; each ends after
    ``idle_seconds`` without a call, or when the source closes."""

    def __init__(self, name: str, limit: int, idle_seconds: float = IDLE_SECONDS) -> None:
        if idle_seconds <= 0:
            raise ValueError("idle_seconds must be above 0")
        self.name = name
        self.limit = limit
        self.idle_seconds = idle_seconds
        self._queue: queue.SimpleQueue[_Item] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._threads = 0
        self._idle = 0  # threads waiting for a call
        self._waiting = 0  # calls queued that no thread took yet
        self._closed = False
        self._started = 0  # threads ever started: names them

    async def run(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        """``fn(*args, **kwargs)`` in one of the source's threads, with the caller's context
        (``contextvars``: the request's access grant). Cancelling the caller before a thread took
        the call means it never runs; after, the thread finishes it and the result is dropped."""
        if self._closed:
            raise RuntimeError(f"the workers of source {self.name!r} are closed")
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        call = functools.partial(contextvars.copy_context().run, fn, *args, **kwargs)
        self._queue.put((future, call))
        self._grow()
        return await asyncio.wrap_future(future)

    def _grow(self) -> None:
        # A new thread only when the calls waiting outnumber the idle threads, up to the limit.
        with self._lock:
            self._waiting += 1
            if self._waiting <= self._idle or self._threads >= self.limit:
                return
            self._threads += 1
            self._started += 1
            name = f"sourcewise-{self.name}-{self._started}"
        threading.Thread(target=self._work, name=name, daemon=True).start()

    def _work(self) -> None:
        while True:
            with self._lock:
                self._idle += 1
            try:
                item = self._queue.get(timeout=self.idle_seconds)
            except queue.Empty:
                if self._retire():
                    return
                continue
            with self._lock:
                self._idle -= 1
                self._waiting -= item is not None
            if item is None:
                with self._lock:
                    self._threads -= 1
                return
            future, call = item
            if future.set_running_or_notify_cancel():  # False: its caller gave up while it waited
                try:
                    future.set_result(call())
                except BaseException as exc:  # handed to the caller, as an executor does
                    future.set_exception(exc)

    def _retire(self) -> bool:
        """After an idle wait: end this thread unless a queued call counts on it. ``_grow`` starts
        no thread while idle ones cover the calls waiting, so one that leaves must check, under
        the same lock, that the calls still waiting are covered without it."""
        with self._lock:
            self._idle -= 1
            if self._waiting > self._idle:
                return False  # it waits again (and counts itself idle again)
            self._threads -= 1
            return True

    @property
    def threads(self) -> int:
        """Threads alive now (running a call or waiting for one)."""
        with self._lock:
            return self._threads

    @property
    def busy(self) -> int:
        """Threads running a call now (a blocked source shows ``limit`` here)."""
        with self._lock:
            return self._threads - self._idle

    def close(self) -> None:
        """Let idle threads end; calls still queued are cancelled. A thread blocked in a call ends
        when the call returns (it is a daemon: it never delays the process's exit)."""
        self._closed = True
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                break
            if item is not None:
                item[0].cancel()
                with self._lock:
                    self._waiting -= 1
        with self._lock:
            alive = self._threads
        for _ in range(alive):
            self._queue.put(None)
