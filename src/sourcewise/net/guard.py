"""The address guard: the fetcher never reaches private, loopback or metadata addresses unless
the user allows them.

The check runs inside the connection layer (``GuardedBackend.connect_tcp``), on the IP addresses
the host name resolves to, for every hop (redirects included), and the connection is then made
to the very address that was checked: a DNS answer cannot change between check and connect.
Decimal, octal and hex IPv4 forms are normalised (``2130706433`` is 127.0.0.1) and IPv6 forms
that embed an IPv4 address (``::ffff:127.0.0.1``, 6to4, NAT64) are judged by that address.

Cloud metadata endpoints stay refused even with ``allow_private``, unless the host is allowed
by name (``allow_hosts``).
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import httpcore
import httpx

from sourcewise.errors import AddressNotAllowed, FetchConnectionError, InvalidURL
from sourcewise.net.online import no_route
from sourcewise.net.tls import tls_context
from sourcewise.web.urlparse import parse_ipv4

__all__ = ["METADATA_ADDRESSES", "METADATA_NAMES", "AddressGuard", "GuardedTransport", "refusal"]

IP = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int], Awaitable[list[str]]]

METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(a)
    for a in (
        "169.254.169.254",  # AWS, GCP, Azure, OpenStack, DigitalOcean ...
        "169.254.170.2",  # AWS ECS task metadata
        "169.254.169.123",  # AWS time sync
        "100.100.100.200",  # Alibaba Cloud
        "192.0.0.192",  # Oracle Cloud (legacy)
        "fd00:ec2::254",  # AWS IPv6
        "fd00:ec2::23",  # AWS time sync IPv6
    )
)
METADATA_NAMES = frozenset(
    {"metadata.google.internal", "metadata", "instance-data", "instance-data.ec2.internal"}
)
_SHARED = ipaddress.ip_network("100.64.0.0/10")
# getaddrinfo's answers that a name does not exist (as opposed to EAI_AGAIN, "try again")
_NO_SUCH_NAME = frozenset({socket.EAI_NONAME, getattr(socket, "EAI_NODATA", socket.EAI_NONAME)})
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


def _embedded(ip: IP) -> IP:
    """The IPv4 address inside an IPv6 one (mapped, 6to4, NAT64), else the address itself."""
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped:
            return ip.ipv4_mapped
        if ip.sixtofour:
            return ip.sixtofour
        if ip in _NAT64:
            return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return ip


def refusal(address: str, *, allow_private: bool = False) -> str | None:
    """Why ``address`` must not be reached, or ``None`` when it may be. Pure: no network."""
    ip = _embedded(ipaddress.ip_address(address.split("%")[0]))
    if ip in METADATA_ADDRESSES:
        return "it is a cloud metadata address"
    if allow_private:
        return None
    if ip.is_loopback:
        return "it is a loopback address"
    if ip.is_link_local:
        return "it is a link-local address"
    if ip.is_multicast:
        return "it is a multicast address"
    if ip.is_unspecified:
        return "it is the unspecified address"
    if isinstance(ip, ipaddress.IPv4Address) and ip in _SHARED:
        return "it is in the shared (carrier-grade NAT) address space"
    if ip.is_private:
        return "it is a private network address"
    if ip.is_reserved or not ip.is_global:
        return "it is not a public internet address"
    return None


async def system_resolver(host: str, port: int) -> list[str]:
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


class AddressGuard:
    """Decides, per host, which addresses a connection may go to."""

    def __init__(
        self,
        *,
        allow_private: bool = False,
        allow_hosts: Iterable[str] = (),
        resolver: Resolver | None = None,
    ) -> None:
        self.allow_private = allow_private
        self.allow_hosts = frozenset(h.lower().rstrip(".") for h in allow_hosts)
        self.resolver = resolver or system_resolver
        #: (host, port) -> the addresses last checked and connected to, for the page cache
        self.approved: dict[tuple[str, int], list[str]] = {}

    def _literal(self, host: str) -> str | None:
        try:
            return str(ipaddress.ip_address(host.strip("[]")))
        except ValueError:
            pass
        try:
            return parse_ipv4(host)
        except InvalidURL:
            return None

    async def addresses(self, host: str, port: int) -> list[str]:
        """The addresses to connect to for ``host``; ``AddressNotAllowed`` if any is refused."""
        name = host.lower().rstrip(".")
        literal = self._literal(name)
        self.check(host, port, [])  # a metadata host name is refused before any DNS query
        try:
            found = [literal] if literal else await self.resolver(name, port)
        except OSError as exc:
            # Final, not worth a retry: a name DNS says does not exist, or any failure while this
            # machine has no route to the internet (the DNS server cannot be reached either).
            final = (isinstance(exc, socket.gaierror) and exc.errno in _NO_SUCH_NAME) or no_route()
            raise FetchConnectionError(host, f"cannot resolve {host} ({exc})", transient=not final) from exc
        except UnicodeError as exc:  # the idna codec refused the name (a label over 63 characters ...)
            raise InvalidURL(f"{host[:80]!r} is not a host name DNS can look up ({exc})") from exc
        self.check(host, port, found)
        self.approved[(name, port)] = found
        return found

    def check(self, host: str, port: int, found: Iterable[str]) -> None:
        """``AddressNotAllowed`` unless this policy lets ``host`` be reached at ``found``. Pure."""
        name = host.lower().rstrip(".")
        allowed = name in self.allow_hosts or f"{name}:{port}" in self.allow_hosts
        if not allowed and name in METADATA_NAMES:
            raise AddressNotAllowed(host, f"refused {host}: it is a cloud metadata host name", address=host)
        if allowed:
            return
        for address in found:
            why = refusal(address, allow_private=self.allow_private)
            if why:
                raise AddressNotAllowed(
                    host,
                    f"refused {host} -> {address}: {why}",
                    address=address,
                    settable="metadata" not in why,
                )


class GuardedBackend(httpcore.AsyncNetworkBackend):
    """httpcore's network backend, connecting only to addresses the guard has checked."""

    def __init__(self, guard: AddressGuard) -> None:
        self.guard = guard
        self.inner = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 - httpcore's interface
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        addresses = await self.guard.addresses(host, port)
        error: Exception | None = None
        for address in addresses:
            try:
                return await self.inner.connect_tcp(
                    address, port, timeout=timeout, local_address=local_address, socket_options=socket_options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                error = exc
        assert error is not None
        raise error

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,  # noqa: ASYNC109 - httpcore's interface
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise AddressNotAllowed(path, "unix sockets are never fetched")

    async def sleep(self, seconds: float) -> None:
        await self.inner.sleep(seconds)


# httpcore's errors as httpx's (the names are public in both): what the callers catch.
_ERRORS: tuple[tuple[type[Exception], type[Exception]], ...] = (
    (httpcore.ConnectTimeout, httpx.ConnectTimeout),
    (httpcore.ReadTimeout, httpx.ReadTimeout),
    (httpcore.WriteTimeout, httpx.WriteTimeout),
    (httpcore.PoolTimeout, httpx.PoolTimeout),
    (httpcore.TimeoutException, httpx.TimeoutException),
    (httpcore.ConnectError, httpx.ConnectError),
    (httpcore.ReadError, httpx.ReadError),
    (httpcore.WriteError, httpx.WriteError),
    (httpcore.NetworkError, httpx.NetworkError),
    (httpcore.ProxyError, httpx.ProxyError),
    (httpcore.UnsupportedProtocol, httpx.UnsupportedProtocol),
    (httpcore.RemoteProtocolError, httpx.RemoteProtocolError),
    (httpcore.LocalProtocolError, httpx.LocalProtocolError),
    (httpcore.ProtocolError, httpx.ProtocolError),
)


@contextmanager
def _httpx_errors() -> Iterator[None]:
    """httpcore's errors raised as httpx's (the most specific first); any other error as it is."""
    try:
        yield
    except Exception as exc:
        for inner, outer in _ERRORS:
            if isinstance(exc, inner):
                raise outer(str(exc)) from exc
        raise


class _Body(httpx.AsyncByteStream):
    """A response body read from the pool, its errors as httpx's."""

    def __init__(self, stream: AsyncIterable[bytes]) -> None:
        self._stream = stream

    async def __aiter__(self) -> AsyncIterator[bytes]:
        with _httpx_errors():
            async for part in self._stream:
                yield part

    async def aclose(self) -> None:
        close = getattr(self._stream, "aclose", None)
        if close is not None:
            await close()


class GuardedTransport(httpx.AsyncBaseTransport):
    """An httpx transport over an httpcore pool whose every connection goes through
    ``GuardedBackend`` (public parts of both libraries only: no private attribute replaced)."""

    def __init__(self, guard: AddressGuard, *, max_connections: int = 20) -> None:
        self.pool = httpcore.AsyncConnectionPool(
            ssl_context=tls_context(),
            max_connections=max_connections,
            network_backend=GuardedBackend(guard),
        )

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        assert isinstance(request.stream, httpx.AsyncByteStream)
        outgoing = httpcore.Request(
            method=request.method,
            url=httpcore.URL(
                scheme=request.url.raw_scheme,
                host=request.url.raw_host,
                port=request.url.port,
                target=request.url.raw_path,
            ),
            headers=request.headers.raw,
            content=request.stream,
            extensions=request.extensions,
        )
        with _httpx_errors():
            answer = await self.pool.handle_async_request(outgoing)
        assert isinstance(answer.stream, AsyncIterable)
        return httpx.Response(
            status_code=answer.status,
            headers=answer.headers,
            stream=_Body(answer.stream),
            extensions=answer.extensions,
        )

    async def aclose(self) -> None:
        await self.pool.aclose()
