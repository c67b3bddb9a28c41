"""Reading an absolute http(s) URL the way WHATWG does: scheme, host (IDN, IPv4 in every
spelling, IPv6), port, path (dot segments, escapes) and query, or ``InvalidURL``.

The dedup key (``web.urls.canonical_url``) and the fetcher's request are both built from
``parse_web_url``, so that the address that was checked and keyed is the address that is fetched.
"""

from __future__ import annotations

import ipaddress
import re
from typing import NamedTuple
from urllib.parse import quote_from_bytes, unquote_to_bytes, urlsplit

import idna

from sourcewise.errors import InvalidURL, redact

__all__ = [
    "DEFAULT_PORTS",
    "MAX_URL",
    "QUERY_SAFE",
    "WebURL",
    "normalise_escapes",
    "normalise_host",
    "parse_ipv4",
    "parse_web_url",
]

_UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
# Characters left as they are in a path; everything else is percent-escaped.
_PATH_SAFE = "/!$&'()*+,;=:@-._~%"
QUERY_SAFE = "!$'()*,;:@/?-._~"
_PCT = re.compile(r"%([0-9A-Fa-f]{2})")
_HOST_OK = re.compile(r"^[a-z0-9_]([a-z0-9_.-]*[a-z0-9_])?$")
DEFAULT_PORTS = {"http": 80, "https": 443}
_NO_SLASHES = re.compile(r"^https?:/?(?!/)", re.IGNORECASE)
_C0_SPACE = "".join(chr(i) for i in range(0x21))
_TAB_NEWLINE = re.compile(r"[\t\n\r]")
_SURROGATE = re.compile(r"[\ud800-\udfff]")
MAX_URL = 8192  # characters; longer is refused (browsers and servers stop near here too)


class WebURL(NamedTuple):
    """One parser's view of an http(s) URL: what the key is made from and what is fetched."""

    scheme: str  # "http" or "https"
    host: str  # lower case, punycode, dotted IPv4, bare IPv6; no trailing dot
    port: int | None  # as written, None when absent
    path: str  # escaped, dot segments resolved, starts with "/"
    query: str  # escaped, in the order given; "" when absent
    fragment: str

    @property
    def netloc(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if self.port is None else f"{host}:{self.port}"

    def request_url(self) -> str:
        """The URL to send: no user info, no fragment, every part as this parser read it."""
        query = f"?{self.query}" if self.query else ""
        return f"{self.scheme}://{self.netloc}{self.path}{query}"


def _bad(url: str, why: str) -> InvalidURL:
    return InvalidURL(f"Invalid URL {redact(url)!r}: {why}")


def parse_web_url(url: str) -> WebURL:
    """Parse an absolute http(s) URL the way WHATWG does; ``InvalidURL`` for anything else.

    Both the dedup key (``canonical_url``) and the fetcher's request are built from this, so
    that the address that was checked and keyed is the address that is fetched.
    """
    if not isinstance(url, str):
        raise InvalidURL(f"URL must be a string, not {type(url).__name__}")
    if len(url) > MAX_URL:
        raise InvalidURL(f"URL is longer than {MAX_URL} characters")
    if _SURROGATE.search(url):
        raise _bad(url, "it contains a lone surrogate (not valid Unicode text)")
    text = _TAB_NEWLINE.sub("", url.strip(_C0_SPACE))
    cut = min((i for i in (text.find("?"), text.find("#")) if i >= 0), default=len(text))
    text = text[:cut].replace("\\", "/") + text[cut:]  # WHATWG: a backslash is a slash in http(s)
    if _NO_SLASHES.match(text):  # "http:example.com/x", read as WHATWG does
        text = re.sub(r"^([A-Za-z]+):/?", r"\1://", text)
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as exc:
        raise _bad(url, str(exc)) from exc
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS:
        hint = "add http:// or https://" if not scheme else f"scheme {scheme!r} is not supported"
        raise _bad(url, f"only absolute http(s) URLs are accepted ({hint})")
    if port is not None and port == DEFAULT_PORTS[scheme]:
        port = None
    return WebURL(
        scheme,
        normalise_host(parts.hostname, url),
        port,
        _normalise_path(parts.path),
        normalise_escapes(parts.query, QUERY_SAFE + "&=+%"),
        parts.fragment,
    )


def normalise_host(hostname: str | None, original: str) -> str:
    if not hostname:
        raise _bad(original, "it has no host")
    host = hostname
    if ":" in host:  # IPv6 literal; urlsplit has checked the brackets
        try:
            return str(ipaddress.IPv6Address(host))
        except ValueError as exc:
            raise _bad(original, f"{hostname!r} is not a valid IPv6 address") from exc
    if "%" in host:
        host = unquote_to_bytes(host).decode("utf-8", "replace")
    # WHATWG order: map the domain to ASCII first, then read a host ending in a number as IPv4.
    if not host.isascii():
        try:
            host = idna.encode(host, uts46=True).decode("ascii")
        except (idna.IDNAError, UnicodeError, ValueError) as exc:
            raise _bad(original, f"bad international host ({exc})") from exc
    host = host.lower().rstrip(".")
    ipv4 = parse_ipv4(host, original)
    if ipv4 is not None:
        return ipv4
    if not _HOST_OK.match(host) or ".." in host:
        raise _bad(original, f"{hostname!r} is not a valid host name")
    if len(host) > 253 or max(map(len, host.split("."))) > 63:  # what DNS (and getaddrinfo) can carry
        raise _bad(original, "a host name is at most 253 characters and 63 per label")
    if "xn--" in host:
        try:
            idna.decode(host)
        except (idna.IDNAError, UnicodeError, ValueError) as exc:
            raise _bad(original, f"{hostname!r} is not a valid international host ({exc})") from exc
    return host


def parse_ipv4(host: str, original: str = "") -> str | None:
    """WHATWG IPv4 parsing: ``0x7f.1``, ``2130706433`` and ``0177.0.0.1`` are all 127.0.0.1.

    Returns the dotted-decimal address, ``None`` when the host is a name, and raises
    ``InvalidURL`` for a host that ends in a number but is no valid address (``foo.09``).
    """
    labels = host.split(".")
    if labels and labels[-1] == "" and len(labels) > 1:
        labels.pop()
    if not labels or not re.fullmatch(r"\d+|0[xX][0-9A-Fa-f]*", labels[-1]):
        return None
    bad = InvalidURL(f"Invalid URL {redact(original or host)!r}: {host!r} is not a valid IPv4 address")
    if len(labels) > 4:
        raise bad
    numbers = []
    for label in labels:
        if re.fullmatch(r"0[xX][0-9A-Fa-f]*", label):
            numbers.append(int(label[2:] or "0", 16))
        elif re.fullmatch(r"0[0-7]+", label):
            numbers.append(int(label, 8))
        elif re.fullmatch(r"\d+", label) and not (len(label) > 1 and label[0] == "0"):
            numbers.append(int(label))
        else:
            raise bad
    if any(n > 255 for n in numbers[:-1]) or numbers[-1] >= 256 ** (5 - len(numbers)):
        raise bad
    value = numbers[-1] + sum(n * 256 ** (3 - i) for i, n in enumerate(numbers[:-1]))
    return ".".join(str((value >> shift) & 255) for shift in (24, 16, 8, 0))


def normalise_escapes(text: str, safe: str) -> str:
    """Decode escapes of unreserved bytes, upper-case the rest, escape what must be escaped."""

    def fix(match: re.Match[str]) -> str:
        byte = int(match.group(1), 16)
        return chr(byte) if byte in _UNRESERVED else f"%{match.group(1).upper()}"

    return _escape(_PCT.sub(fix, text), safe)


def _escape(text: str, safe: str) -> str:
    # '%' is safe here, so existing escapes survive; a lone '%' not followed by hex gets escaped.
    out = quote_from_bytes(text.encode("utf-8", "surrogatepass"), safe=safe)
    return re.sub(r"%(?![0-9A-Fa-f]{2})", "%25", out)


def _normalise_path(path: str) -> str:
    if not path:
        return "/"
    path = normalise_escapes(path, _PATH_SAFE)
    segments: list[str] = []
    for segment in path.split("/"):  # RFC 3986 section 5.2.4, remove_dot_segments
        if segment == "..":
            if len(segments) > 1:
                segments.pop()
        elif segment != ".":
            segments.append(segment)
    resolved = "/".join(segments)
    return resolved if resolved.startswith("/") else "/" + resolved
