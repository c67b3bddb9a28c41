"""The one place that sends provider requests: client factory, deadline, error translation."""

from __future__ import annotations

import asyncio
import codecs
import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any

import httpx

from sourcewise.errors import NoNetwork, ParseError, TransientError
from sourcewise.net.online import no_route
from sourcewise.net.reasons import failure
from sourcewise.net.tls import tls_context

if TYPE_CHECKING:  # a type only: config imports the providers, which import this
    from sourcewise.config import Settings

__all__ = ["HttpRequest", "HttpResponse", "make_client", "retry_after_seconds", "send"]


@dataclass(frozen=True)
class HttpRequest:
    """A provider's request, built by its ``build`` and sent by ``send`` (no I/O in providers)."""

    method: str
    url: str
    params: Mapping[str, str | int] = field(default_factory=dict)
    headers: Mapping[str, str] = field(default_factory=dict)
    json: Any = None
    data: Mapping[str, str] | None = None


@dataclass(frozen=True)
class HttpResponse:
    """What ``send`` read of the answer, handed to a provider's ``parse``."""

    status: int
    text: str
    headers: Mapping[str, str] = field(default_factory=dict)  # lower-case names
    url: str = ""
    retry_after: float | None = None  # seconds, from a Retry-After header
    received_at: float | None = None  # POSIX time the answer came; relative dates count from it


def make_client(settings: Settings, transport: httpx.AsyncBaseTransport | None = None) -> httpx.AsyncClient:
    """An ``httpx.AsyncClient`` with the configured timeout and an honest User-Agent."""
    return httpx.AsyncClient(
        verify=tls_context(),
        timeout=httpx.Timeout(settings.timeout),
        headers={"User-Agent": settings.user_agent},
        follow_redirects=True,
        max_redirects=settings.max_redirects,
        transport=transport,
    )


def retry_after_seconds(headers: Mapping[str, str], now: float) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or HTTP date), else ``None``."""
    value = headers.get("retry-after")
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - now)
    except (TypeError, ValueError):
        return None


async def send(
    client: httpx.AsyncClient,
    request: HttpRequest,
    provider: str,
    deadline: float,
    now: float,
    *,
    max_bytes: int = 5_000_000,
) -> HttpResponse:
    """Send ``request``; a timeout or a connection failure becomes ``TransientError``.

    The body is read as a stream and refused (``ParseError``) once it passes ``max_bytes``
    counted after decompression, so a compressed bomb costs at most that much memory.
    Messages name the failure and the host but never the URL, which may carry a key (Google's does).
    A connection failure to a public host on a machine with no route is ``NoNetwork``.
    """
    try:
        async with (
            asyncio.timeout(deadline),
            client.stream(
                request.method,
                request.url,
                params=dict(request.params) or None,
                headers=dict(request.headers),
                json=request.json,
                data=dict(request.data) if request.data is not None else None,
            ) as response,
        ):
            body = await _capped(response, provider, max_bytes)
    except (TimeoutError, httpx.TimeoutException) as exc:
        raise TransientError(provider, f"no answer within {deadline:g} s") from exc
    except httpx.DecodingError as exc:
        raise ParseError(provider, f"the answer could not be decompressed ({type(exc).__name__})") from exc
    except httpx.TransportError as exc:
        if isinstance(exc, httpx.ConnectError) and not _local(request.url) and no_route():
            raise NoNetwork(provider, "no network (no route to the internet)") from exc
        raise TransientError(provider, failure(exc, request.url)) from exc
    headers = {k.lower(): v for k, v in response.headers.items()}
    return HttpResponse(
        status=response.status_code,
        text=body.decode(_encoding(response), "replace"),
        headers=headers,
        url=str(response.url.copy_with(query=None)),
        retry_after=retry_after_seconds(headers, now),
        received_at=now,
    )


async def _capped(response: httpx.Response, provider: str, max_bytes: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > max_bytes:
            raise ParseError(provider, f"the answer is larger than {max_bytes} bytes (max_bytes)")
        chunks.append(chunk)
    return b"".join(chunks)


def _encoding(response: httpx.Response) -> str:
    name = response.charset_encoding or "utf-8"
    try:
        return codecs.lookup(name).name
    except LookupError:
        return "utf-8"


def _local(url: str) -> bool:
    """A loopback or private host (a self-hosted provider): reachable without the internet."""
    host = httpx.URL(url).host
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private
