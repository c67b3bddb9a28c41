"""Connections to MCP servers through the official SDK client: one path for the ``mcp`` provider
(a connection per call) and ``mcp`` sources (one connection for a session's life).

A server is a ``Server``: a ``command`` started over stdio (its stderr appended to a log file in
the state directory, never the user's terminal; its environment the SDK's safe default plus the
configured ``env``) or a Streamable HTTP ``url`` (with ``headers``). ``${VAR}`` in an ``env`` or
``headers`` value is the environment variable ``VAR`` of this process, so a token stays out of
the config file; an unset one is a ``ConfigError`` naming it.

``Connection`` keeps one client open in a task of its own (the SDK's transports must be entered
and left in one task), serves calls from any task of the same event loop, and after a failure of
the transport (a crashed server) connects again once per session.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import os
import re
import sys
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TextIO

from sourcewise.errors import ConfigError

if TYPE_CHECKING:
    from mcp import Client
    from mcp.types import CallToolResult, Tool

    from sourcewise.config import Settings

__all__ = ["Connection", "Server", "connect", "expand", "load_sdk", "server_log", "texts"]

log = logging.getLogger("sourcewise")
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]{0,127})\}")
_warned: set[str] = set()


def expand(value: str, where: str) -> str:
    """``value`` with each ``${VAR}`` replaced by that environment variable; ``ConfigError``
    naming the variable and ``where`` when one is unset."""

    def one(match: re.Match[str]) -> str:
        found = os.environ.get(match.group(1))
        if found is None:
            raise ConfigError(f"{where}: the environment variable {match.group(1)} is not set")
        return found

    return _VAR.sub(one, value)


@dataclass(frozen=True)
class Server:
    """Where an MCP server is: a stdio ``command`` or a Streamable HTTP ``url``."""

    command: tuple[str, ...] = ()
    url: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    headers: Mapping[str, str] = field(default_factory=dict)
    log_name: str = "mcp-server"

    def describe(self) -> str:
        """The server for a listing: the command as typed, or the URL (headers never shown)."""
        return " ".join(self.command) if self.command else str(self.url)


def server_log(settings: Settings, name: str = "mcp-server") -> TextIO:
    """Where a stdio server's stderr goes: ``state_dir/NAME.log``. When the state dir cannot be
    used, nowhere (the null device), with one warning per path."""
    path = settings.state_dir / f"{name}.log"
    try:
        settings.state_dir.mkdir(parents=True, exist_ok=True)
        return path.open("a", encoding="utf-8")
    except OSError as exc:
        if str(path) not in _warned:
            _warned.add(str(path))
            why = exc.strerror or type(exc).__name__
            log.warning("MCP server log %s cannot be written (%s); its messages are dropped", path, why)
        return open(os.devnull, "w", encoding="utf-8")  # closed by the caller's with


_SDK = ("mcp", "mcp.client.stdio", "mcp.client.streamable_http", "mcp_types", "httpx2")


def _import_sdk() -> None:
    for name in _SDK:
        importlib.import_module(name)


async def load_sdk() -> None:
    """Import the MCP SDK in a thread, not on the event loop: a cold import takes a second or
    more (several on a busy machine), and a deadline around the first call must still fire on
    time rather than after the import (issue 24: a call takes its deadline, not more)."""
    if not all(name in sys.modules for name in _SDK):
        await asyncio.to_thread(_import_sdk)


@asynccontextmanager
async def connect(server: Server, settings: Settings, seconds: float) -> AsyncIterator[Client]:
    """An open SDK client for ``server`` (connecting within ``seconds``)."""
    from mcp import StdioServerParameters  # here: the SDK is only needed when used
    from mcp.client.stdio import get_default_environment, stdio_client

    where = f"MCP server {server.describe()[:80]!r}"
    if server.command:
        command, *rest = (expand(part, where) for part in server.command)
        env = {**get_default_environment(), **{k: expand(v, where) for k, v in server.env.items()}}
        with server_log(settings, server.log_name) as errlog:
            params = StdioServerParameters(command=command, args=rest, env=env)
            async with _entered(stdio_client(params, errlog=errlog), seconds) as client:
                yield client
        return
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    headers = {k: expand(v, where) for k, v in server.headers.items()}
    async with httpx2.AsyncClient(headers=headers, timeout=seconds) as http:
        transport = streamable_http_client(str(server.url), http_client=http)
        async with _entered(transport, seconds) as client:
            yield client


@asynccontextmanager
async def _entered(transport: Any, seconds: float) -> AsyncIterator[Client]:
    """The SDK client over ``transport``, entered within ``seconds`` (its use is not timed here)."""
    from mcp import Client

    async with asyncio.timeout(seconds):
        client = await Client(transport, read_timeout_seconds=seconds).__aenter__()
    try:
        yield client
    finally:
        await client.__aexit__(None, None, None)


class Connection:
    """One server, connected on first use and kept open until ``aclose``; reconnects once after
    a transport failure. ``state`` says what ``sourcewise sources`` shows."""

    def __init__(self, server: Server, settings: Settings, *, restarts: int = 1) -> None:
        self.server = server
        self.settings = settings
        self.restarts_left = restarts
        self.state = "not connected"
        self.tools: list[Tool] = []
        self._client: Client | None = None
        self._task: asyncio.Task[None] | None = None
        self._closing: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock: asyncio.Lock | None = None

    async def _own(self, ready: asyncio.Future[None], closing: asyncio.Event, seconds: float) -> None:
        """The task that holds the client: enters it, lists the tools, waits to be told to close."""
        try:
            async with connect(self.server, self.settings, seconds) as client:
                async with asyncio.timeout(seconds):
                    self.tools = list((await client.list_tools()).tools)
                self._client = client
                ready.set_result(None)
                await closing.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc if isinstance(exc, Exception) else ConnectionError(str(exc)))
            if not isinstance(exc, Exception):
                raise
        finally:
            self._client = None

    async def client(self, seconds: float) -> Client:
        """The open client, connecting first when there is none (within ``seconds``)."""
        await load_sdk()
        loop = asyncio.get_running_loop()
        if self._loop is not loop:  # a new event loop (a sync call): the old one's tasks are gone
            self._client, self._task, self._loop, self._lock = None, None, loop, asyncio.Lock()
        assert self._lock is not None
        async with self._lock:
            if self._client is not None and self._task is not None and not self._task.done():
                return self._client
            await self._stop()
            ready: asyncio.Future[None] = loop.create_future()
            self._closing = asyncio.Event()
            self._task = asyncio.create_task(self._own(ready, self._closing, seconds))
            try:
                await ready
            except Exception as exc:
                self.state = f"failed: {describe(exc)}"
                await self._stop()
                raise
            self.state = "connected"
            assert self._client is not None
            return self._client

    async def call(self, tool: str, arguments: dict[str, Any], seconds: float) -> CallToolResult:
        """``tool`` called with ``arguments``; a transport failure (the server died) connects again
        once per session and repeats the call. A timeout leaves the connection open."""
        from mcp import MCPError
        from mcp_types import CONNECTION_CLOSED

        client = await self.client(seconds)
        try:
            return await client.call_tool(tool, arguments)
        except MCPError as exc:
            if exc.error.code != CONNECTION_CLOSED:
                raise  # the server answered: a refusal, not a crash
            failure: Exception = exc
        except (TimeoutError, asyncio.CancelledError):
            raise
        except Exception as exc:  # the transport broke (the SDK raises many kinds)
            failure = exc
        return await self._again(tool, arguments, seconds, failure)

    async def _again(
        self, tool: str, arguments: dict[str, Any], seconds: float, exc: Exception
    ) -> CallToolResult:
        """After a crash: connect again (once per session) and repeat the call."""
        self.state = f"failed: {describe(exc)}"
        if self.restarts_left <= 0:
            raise exc
        self.restarts_left -= 1
        log.warning(
            "MCP server %s failed (%s); starting it again", self.server.describe()[:80], describe(exc)
        )
        await self._stop()
        client = await self.client(seconds)
        return await client.call_tool(tool, arguments)

    async def _stop(self) -> None:
        task, self._task = self._task, None
        if task is None:
            return
        if self._closing is not None:
            self._closing.set()
        try:
            async with asyncio.timeout(5):
                await asyncio.gather(task, return_exceptions=True)
        except TimeoutError:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        self._client = None

    async def aclose(self) -> None:
        """Close the client (and stop a stdio server). Safe to call twice."""
        if self._loop is asyncio.get_running_loop():
            await self._stop()
        self._client = self._task = None
        if self.state == "connected":
            self.state = "closed"


class Connections:
    """The connections an owner keeps for its life, one per server (the engine's, for the MCP web
    provider: a server is started once per session, not once per search)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._open: dict[tuple[object, ...], Connection] = {}

    def get(self, server: Server) -> Connection:
        key = (
            server.command,
            server.url,
            tuple(sorted(server.env.items())),
            tuple(sorted(server.headers.items())),
        )
        if key not in self._open:
            self._open[key] = Connection(server, self.settings)
        return self._open[key]

    async def aclose(self) -> None:
        for connection in self._open.values():
            await connection.aclose()
        self._open.clear()


def describe(exc: BaseException) -> str:
    """A one-line reason for a failure of the SDK's transports (they raise groups of errors)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    said = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {said}" if said else type(exc).__name__


def texts(result: CallToolResult) -> list[str]:
    """The text blocks of a tool's answer."""
    return [block.text for block in result.content if block.type == "text"]
