"""Reading an absolute http(s) URL the way WHATWG does: scheme, host (IDN, IPv4 in every
spelling, IPv6), port, path (dot segments, escapes) and query, or ``InvalidURL``.

The dedup key (``web.urls.canonical_url``) and the fetcher's request are both built from
``parse_web_url``, so that the address that was checked and keyed is the address that is fetched.
"""

from __future__ import annotations

import ipaddress
import re
import unicodedata
from functools import lru_cache
from typing import NamedTuple
from urllib.parse import quote_from_bytes, unquote_to_bytes

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
# Text that escaping leaves as it is (no "%", nothing to escape): the step is skipped, same result.
_PLAIN_PATH = re.compile(r"[A-Za-z0-9/!$&'()*+,;=:@._~-]*")
_PLAIN_QUERY = re.compile(r"[A-Za-z0-9!$'()*,;:@/?._~&=+-]*")
# RFC 3986 appendix B: scheme, authority, path, query, fragment.
_PARTS = re.compile(r"(?:([A-Za-z][A-Za-z0-9+.\-]*):)?(?://([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?", re.S)
_IPV_FUTURE = re.compile(r"v[a-fA-F0-9]+\..+", re.S)
_HOSTS_KEPT = 4096  # normalised host names remembered: a page of results names few hosts


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
    if not url.isascii() and _SURROGATE.search(url):
        raise _bad(url, "it contains a lone surrogate (not valid Unicode text)")
    text = url.strip(_C0_SPACE)
    if "\t" in text or "\n" in text or "\r" in text:
        text = _TAB_NEWLINE.sub("", text)
    if "\\" in text:  # WHATWG: a backslash before the query is a slash in http(s)
        cut = min((i for i in (text.find("?"), text.find("#")) if i >= 0), default=len(text))
        text = text[:cut].replace("\\", "/") + text[cut:]
    if _NO_SLASHES.match(text):  # "http:example.com/x", read as WHATWG does
        text = re.sub(r"^([A-Za-z]+):/?", r"\1://", text)
    try:
        scheme, hostname, port, path, query, fragment = _split(text)
    except ValueError as exc:
        raise _bad(url, str(exc)) from exc
    if scheme not in DEFAULT_PORTS:
        hint = "add http:// or https://" if not scheme else f"scheme {scheme!r} is not supported"
        raise _bad(url, f"only absolute http(s) URLs are accepted ({hint})")
    if port is not None and port == DEFAULT_PORTS[scheme]:
        port = None
    if not _PLAIN_QUERY.fullmatch(query):
        query = normalise_escapes(query, QUERY_SAFE + "&=+%")
    return WebURL(scheme, normalise_host(hostname, url), port, _normalise_path(path), query, fragment)


def _split(text: str) -> tuple[str, str | None, int | None, str, str, str]:
    """``(scheme, hostname, port, path, query, fragment)`` as ``urllib.parse.urlsplit`` and its
    ``hostname``/``port`` read them (RFC 3986's split; the same ``ValueError`` messages), in one
    regular expression: a result page's worth of URLs is split in a third of the time."""
    match = _PARTS.fullmatch(text)
    assert match is not None  # every group is optional: any text matches
    scheme, netloc, path, query, fragment = match.groups()
    hostname, port = _host_and_port(netloc) if netloc else (None, None)
    return (scheme or "").lower(), hostname, port, path, query or "", fragment or ""


def _host_and_port(netloc: str) -> tuple[str | None, int | None]:
    if "[" in netloc or "]" in netloc:
        if "[" not in netloc or "]" not in netloc:
            raise ValueError("Invalid IPv6 URL")
        _check_bracketed(netloc.partition("[")[2].partition("]")[0])
    if not netloc.isascii():
        _check_nfkc(netloc)
    hostinfo = netloc.rpartition("@")[2]
    _, bracket, rest = hostinfo.partition("[")
    if bracket:
        hostname, _, after = rest.partition("]")
        port_text = after.partition(":")[2]
    else:
        hostname, _, port_text = hostinfo.partition(":")
    port = None
    if port_text:
        if not (port_text.isdigit() and port_text.isascii()):
            raise ValueError(f"Port could not be cast to integer value as {port_text!r}")
        port = int(port_text)
        if not 0 <= port <= 65535:
            raise ValueError("Port out of range 0-65535")
    if not hostname:
        return None, port
    name, percent, zone = hostname.partition("%")  # an IPv6 zone keeps its case
    return name.lower() + percent + zone, port


def _check_bracketed(host: str) -> None:
    if host.startswith("v"):
        if not _IPV_FUTURE.fullmatch(host):
            raise ValueError("IPvFuture address is invalid")
    elif isinstance(ipaddress.ip_address(host), ipaddress.IPv4Address):
        raise ValueError("An IPv4 address cannot be in brackets")


def _check_nfkc(netloc: str) -> None:
    """A host that NFKC (which IDNA applies) would turn into a delimiter (U+2100 is "a/c")."""
    text = netloc.replace("@", "").replace(":", "").replace("#", "").replace("?", "")
    normal = unicodedata.normalize("NFKC", text)
    if normal != text and any(c in normal for c in "/?#@:"):
        raise ValueError(f"netloc '{netloc}' contains invalid characters under NFKC normalization")


def normalise_host(hostname: str | None, original: str) -> str:
    """The host as the key and the request carry it, or ``InvalidURL`` naming ``original``."""
    if not hostname:
        raise _bad(original, "it has no host")
    host, why = _host(hostname)
    if why:
        raise _bad(original, why)
    return host


@lru_cache(maxsize=_HOSTS_KEPT)
def _host(hostname: str) -> tuple[str, str]:
    """``(host, "")``, or ``("", why)`` when ``hostname`` is no valid host (the one memo of host
    reading: IDNA and IPv4 parsing cost more than the rest of a URL)."""
    host = hostname
    if ":" in host:  # IPv6 literal; urlsplit has checked the brackets
        try:
            return str(ipaddress.IPv6Address(host)), ""
        except ValueError:
            return "", f"{hostname!r} is not a valid IPv6 address"
    if "%" in host:
        host = unquote_to_bytes(host).decode("utf-8", "replace")
    # WHATWG order: map the domain to ASCII first, then read a host ending in a number as IPv4.
    if not host.isascii():
        try:
            host = idna.encode(host, uts46=True).decode("ascii")
        except (idna.IDNAError, UnicodeError, ValueError) as exc:
            return "", f"bad international host ({exc})"
    host = host.lower().rstrip(".")
    try:
        ipv4 = parse_ipv4(host)
    except InvalidURL:
        return "", f"{host!r} is not a valid IPv4 address"
    if ipv4 is not None:
        return ipv4, ""
    if not _HOST_OK.match(host) or ".." in host:
        return "", f"{hostname!r} is not a valid host name"
    if len(host) > 253 or max(map(len, host.split("."))) > 63:  # what DNS (and getaddrinfo) can carry
        return "", "a host name is at most 253 characters and 63 per label"
    if "xn--" in host:
        try:
            idna.decode(host)
        except (idna.IDNAError, UnicodeError, ValueError) as exc:
            return "", f"{hostname!r} is not a valid international host ({exc})"
    return host, ""


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
    if not _PLAIN_PATH.fullmatch(path):
        path = normalise_escapes(path, _PATH_SAFE)
    if "/." in path or path.startswith("."):  # else no dot segment: the loop would change nothing
        segments: list[str] = []
        for segment in path.split("/"):  # RFC 3986 section 5.2.4, remove_dot_segments
            if segment == "..":
                if len(segments) > 1:
                    segments.pop()
            elif segment != ".":
                segments.append(segment)
        path = "/".join(segments)
    return path if path.startswith("/") else "/" + path
