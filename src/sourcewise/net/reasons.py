"""Why a network call failed, in a few whole words a user can act on.

Libraries say it at length and in their own terms ("DNSError('error sending request for url
(https://host/search;_ylt=...?p=the+query) > error resolving DNS > ...')", or only the class name,
"ConnectError"). A reason shown beside a provider's name is the cause (``cause``: cannot resolve
host, connection refused, timed out ...) and the host, or else the library's message made short
and whole (``brief``): every URL reduced to its host (a URL's path and query carry the search and
sometimes a key, its user info a password), cut at a word, its brackets closed.
"""

from __future__ import annotations

import socket
import ssl
from urllib.parse import urlsplit

import httpx
import re2  # type: ignore[import-untyped]

from sourcewise.text.sanitize import utf8
from sourcewise.text.words import cut_words

__all__ = ["REASON_MAX", "brief", "cause", "failure", "host_of"]

REASON_MAX = 120  # characters of a reason: four of them fit in one error message
RESOLVE, REFUSED, TIMEOUT = "cannot resolve host", "connection refused", "timed out"

# A URL: a scheme (or none), "://", then up to white space, a quote or a bracket (how messages
# enclose one).
# RE2: linear time over outside text.
_URL = re2.compile(r"(?i)(?:[a-z][a-z0-9+.-]{0,30})?://[^\s'\"()<>\[\]]*")
# The cause by the exception's class, anywhere in its chain (httpx wraps the OS error twice).
_BY_CLASS: tuple[tuple[type[BaseException] | tuple[type[BaseException], ...], str], ...] = (
    (socket.gaierror, RESOLVE),
    (ConnectionRefusedError, REFUSED),
    ((TimeoutError, httpx.TimeoutException), TIMEOUT),
    (ssl.SSLError, "TLS handshake failed"),
    ((ConnectionResetError, ConnectionAbortedError, BrokenPipeError), "connection reset"),
)
# ... or by what its message says, for libraries that raise their own classes (ddgs's Rust client).
_BY_WORDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (RESOLVE, ("name or service not known", "name resolution", "nodename nor servname", "dns error",
               "dnserror", "resolving dns", "failed to lookup address", "no address associated")),
    (REFUSED, ("connection refused", "actively refused", "connect call failed")),
    (TIMEOUT, ("timed out", "timeout", "deadline has elapsed")),
    ("TLS handshake failed", ("certificate verify failed", "ssl handshake", "tls handshake")),
    ("connection reset", ("connection reset", "reset by peer", "broken pipe")),
)  # fmt: skip
_CHAIN_MAX = 8  # exceptions read down a chain (a chain can loop through __context__)


def cause(exc: BaseException) -> str | None:
    """The cause of a failed connection in words (``cannot resolve host``, ``connection refused``,
    ``timed out``, ...), from the exception's chain: its classes first, then its messages; ``None``
    when neither says."""
    chain: list[BaseException] = []
    link: BaseException | None = exc
    while link is not None and len(chain) < _CHAIN_MAX and link not in chain:
        chain.append(link)
        link = link.__cause__ or link.__context__
    for kinds, said in _BY_CLASS:
        if any(isinstance(e, kinds) for e in chain):
            return said
    text = " ".join(str(e) for e in chain).lower()
    return next((said for said, marks in _BY_WORDS if any(m in text for m in marks)), None)


def host_of(url: str) -> str:
    """``host`` or ``host:port`` of ``url`` (never its user info, path or query); ``""`` if none."""
    try:
        parts = urlsplit(url)
        host, port = parts.hostname or "", parts.port
    except ValueError:  # a port that is not a number, a bad IPv6 literal
        return ""
    return f"{host}:{port}" if host and port else host


def _host_only(match: re2._Match) -> str:
    return host_of(match.group(0)) or "a URL"


def brief(text: str, limit: int = REASON_MAX) -> str:
    """A library's message short and whole, at most ``limit`` characters: each URL as its host,
    white space collapsed, cut at a word (``cut_words``), and the brackets left open by the cut
    closed (or, where closing them would pass ``limit``, dropped)."""
    text = cut_words(" ".join(_URL.sub(_host_only, utf8(text)).split()), limit)
    opened: list[int] = []  # where each bracket still open stands
    for i, ch in enumerate(text):
        if ch in "([{":
            opened.append(i)
        elif opened and ch == ")]}"["([{".index(text[opened[-1]])]:
            opened.pop()
    if len(text) + len(opened) <= limit:
        return text + "".join(")]}"["([{".index(text[i])] for i in reversed(opened))
    drop = set(opened)
    return "".join(ch for i, ch in enumerate(text) if i not in drop)


def failure(exc: BaseException, url: str | None = None, fallback: str = "connection failed") -> str:
    """``cause (host)``, e.g. ``cannot resolve host (search.yahoo.com)``, the host from ``url`` or
    else from the first URL in the message; with no known cause, ``fallback (host): Class: message``
    (the message ``brief``)."""
    message = utf8(str(exc))
    if url is None and (found := _URL.search(message)):
        url = found.group(0)
    host = host_of(url) if url else ""
    said = cause(exc)
    where = f" ({host})" if host else ""
    if said is not None:
        return f"{said}{where}"
    detail = brief(f"{type(exc).__name__}: {message}" if message else type(exc).__name__)
    return f"{fallback}{where}: {detail}"
