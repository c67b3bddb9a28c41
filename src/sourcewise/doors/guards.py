"""What stands in front of both network doors (the HTTP API and MCP over HTTP), as one ASGI
wrapper: the API key, the per-client rate limit and the request body limit.

The key is compared in constant time and never logged. The rate limit is a token bucket per
client address, per worker process (with N workers a client gets up to N times the rate; put a
proxy in front for a global limit). Bodies are read up to the limit before the app sees them.
"""

from __future__ import annotations

import base64
import hmac
import json
import math
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from sourcewise import access
from sourcewise.doors.service import DoorSettings

__all__ = ["RateLimiter", "guarded", "send_error"]

MAX_CLIENTS = 10_000  # buckets kept; the least recently seen client is forgotten first


class RateLimiter:
    """Token buckets: ``rate`` per minute, ``burst`` at once. ``allow`` returns the seconds to
    wait, 0 when the request may go."""

    def __init__(self, rate: float, burst: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.per_second = rate / 60.0
        self.burst = float(burst)
        self.clock = clock
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()

    def allow(self, client: str) -> float:
        if self.per_second <= 0:
            return 0.0
        now = self.clock()
        tokens, seen = self._buckets.pop(client, (self.burst, now))
        tokens = min(self.burst, tokens + (now - seen) * self.per_second)
        wait = 0.0 if tokens >= 1 else (1 - tokens) / self.per_second
        self._buckets[client] = (tokens - 1 if wait == 0 else tokens, now)
        while len(self._buckets) > MAX_CLIENTS:
            self._buckets.popitem(last=False)
        return wait


async def send_error(
    send: Send,
    status: int,
    kind: str,
    message: str,
    headers: Iterable[tuple[str, str]] = (),
    *,
    jsonrpc: bool = False,
) -> None:
    """The HTTP API's error body, ``{"error": {"type", "message", "status"}}``; for the MCP door
    (``jsonrpc``) a JSON-RPC error response with the same type and status in ``data``."""
    error = {"type": kind, "message": message, "status": status}
    if jsonrpc:
        rpc = {"code": -32000, "message": f"{kind}: {message}", "data": error}
        body = json.dumps({"jsonrpc": "2.0", "id": None, "error": rpc}).encode()
    else:
        body = json.dumps({"error": error}).encode()
    raw = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    raw += [(k.encode(), v.encode()) for k, v in headers]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key.lower() == name:
            return str(value.decode("latin-1"))
    return None


def _presented_key(scope: Scope) -> str | None:
    """The key as ``Bearer KEY``, ``X-API-Key: KEY`` or, from a browser on the web page, the
    password of HTTP Basic auth (any user name)."""
    auth = _header(scope, b"authorization")
    if auth and auth[:7].lower() == "bearer ":
        return auth[7:].strip()
    if auth and auth[:6].lower() == "basic ":
        try:
            return base64.b64decode(auth[6:].strip(), validate=True).decode().partition(":")[2]
        except (ValueError, UnicodeDecodeError):
            return None
    return _header(scope, b"x-api-key")


def guarded(
    app: ASGIApp,
    doors: DoorSettings,
    *,
    open_paths: Iterable[str] = ("/health",),
    grants: Mapping[str, access.Grant] | None = None,
    jsonrpc: bool = False,
) -> ASGIApp:
    """``app`` behind the key, the rate limit and the body limit; ``open_paths`` need no key.
    ``grants`` (``[access]`` sections): each user's own key, their grant bound to the request
    (``access``); the single ``api_key`` then opens nothing. ``jsonrpc``: refusals as JSON-RPC
    error responses (the MCP door)."""
    key = doors.api_key.get_secret_value().encode() if doors.api_key else None
    limiter = RateLimiter(doors.rate_limit, doors.rate_burst)
    free = frozenset(open_paths)

    async def guard(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        path = scope.get("path", "")
        grant = None
        if grants and path not in free:
            grant = access.authenticate(grants, _presented_key(scope))
            if grant is None:
                await _unauthorized(send, jsonrpc)
                return
            scope[access.SCOPE_KEY] = grant
        elif key is not None and path not in free:
            given = (_presented_key(scope) or "").encode()
            if not hmac.compare_digest(given, key):
                await _unauthorized(send, jsonrpc)
                return
        client = (scope.get("client") or ("unknown", 0))[0]
        wait = limiter.allow(str(client))
        if wait > 0:
            await send_error(
                send,
                429,
                "RateLimited",
                f"more than {doors.rate_limit:g} requests a minute from {client}; retry in {wait:.1f} s",
                [("retry-after", str(math.ceil(wait)))],
                jsonrpc=jsonrpc,
            )
            return
        with access.bound(grant):
            await _limited_body(app, scope, receive, send, doors.max_body_bytes, jsonrpc)

    return guard


async def _unauthorized(send: Send, jsonrpc: bool) -> None:
    message = "missing or wrong API key: send 'Authorization: Bearer KEY' or 'X-API-Key: KEY'"
    challenges = [("www-authenticate", "Bearer"), ("www-authenticate", 'Basic realm="sourcewise"')]
    await send_error(send, 401, "Unauthorized", message, challenges, jsonrpc=jsonrpc)


async def _limited_body(
    app: ASGIApp, scope: Scope, receive: Receive, send: Send, limit: int, jsonrpc: bool
) -> None:
    """Answer 413 for a body over ``limit`` bytes. A body framed by its ``Content-Length`` alone,
    within the limit, passes straight through (the server reads exactly that many bytes, never
    more: no copy); any other (chunked) is read up to the limit first, then replayed to ``app``."""
    declared = _header(scope, b"content-length")
    too_big = f"the request body is larger than {limit} bytes"
    if declared and declared.isdigit() and int(declared) > limit:
        await send_error(send, 413, "PayloadTooLarge", too_big, jsonrpc=jsonrpc)
        return
    framed = declared and declared.isdigit() and _header(scope, b"transfer-encoding") is None
    if framed or scope.get("method") in ("GET", "HEAD", "DELETE", "OPTIONS"):
        await app(scope, receive, send)
        return
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            await send_error(send, 413, "PayloadTooLarge", too_big, jsonrpc=jsonrpc)
            return
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    replayed = False

    async def replay() -> Message:
        nonlocal replayed
        if not replayed:
            replayed = True
            return {"type": "http.request", "body": b"".join(chunks), "more_body": False}
        return await receive()

    await app(scope, replay, send)
