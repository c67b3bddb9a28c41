"""Canonical URLs: the key that decides when two search results are the same page.

The seed's key (host + path, every query parameter dropped) merges pages that differ only in
their query string, such as ``/item?id=1`` and ``/item?id=2``. Ours keeps meaningful parameters
and drops only tracking ones. The rules, in order:

1. Surrounding control characters and spaces are stripped, tabs and newlines inside are
   removed, a backslash before the query is a slash (as browsers read it); only absolute
   ``http``/``https`` URLs of at most ``MAX_URL`` characters are accepted: a scheme-relative
   ``//host/path`` is refused, not guessed (its scheme depends on a page we do not have).
   Anything else raises ``InvalidURL``.
2. The scheme does not matter: the key always says ``https``.
3. The host is lower-cased, IDN labels become punycode (UTS #46), a trailing dot and a leading
   ``www.`` are dropped; ports 80 and 443 are dropped (the key's scheme is always https, so
   both are its default port, and a key is its own key: ``canonical_url`` is idempotent).
   A host is read as WHATWG reads it: mapped to ASCII first, then a host ending in a number
   is an IPv4 address (``0x7f.1`` is 127.0.0.1) or invalid (``a.2``).
4. User name and password are dropped (they never identify a different page); they are never
   sent, printed or stored either (``redact`` removes them from messages).
5. Dot segments (``.``, ``..``) are resolved; percent-escapes of unreserved characters are
   decoded (``%7E`` -> ``~``), other escapes are upper-cased, and characters that need
   escaping (spaces, non-ASCII) are escaped as UTF-8. Bytes are never re-decoded, so ``%2F``
   stays ``%2F`` and invalid UTF-8 survives unchanged.
6. A trailing slash is dropped (``/docs/`` and ``/docs`` are one page); the root path is ``/``.
7. Query: tracking parameters (``TRACKING_PARAMS`` and any ``utm_*``) are dropped, blank pairs
   such as ``&&`` are dropped, the rest are sorted by name then value; ``+`` and ``%20`` are one.
8. The fragment is dropped, unless it is a client-side route (``#!...`` or ``#/...``), which
   names a different page in single-page applications.
"""

from __future__ import annotations

import ipaddress
import re
from functools import lru_cache
from typing import NamedTuple
from urllib.parse import quote_from_bytes, unquote_to_bytes, urlsplit

import idna

from ..errors import InvalidURL

__all__ = [
    "MAX_URL",
    "TRACKING_PARAMS",
    "WebURL",
    "canonical_url",
    "host_of",
    "is_http_url",
    "parse_ipv4",
    "parse_web_url",
    "redact",
]

#: Query parameters that only track the visitor and never change the page. Any parameter whose
#: name starts with ``utm_`` is dropped as well. Names are compared case-insensitively.
TRACKING_PARAMS: frozenset[str] = frozenset(
    {
        "fbclid",
        "gclid",
        "gclsrc",
        "dclid",
        "gbraid",
        "wbraid",
        "msclkid",
        "yclid",
        "ttclid",
        "twclid",
        "li_fat_id",
        "igshid",
        "srsltid",
        "mc_cid",
        "mc_eid",
        "mkt_tok",
        "_ga",
        "_gl",
        "_hsenc",
        "_hsmi",
        "__hssc",
        "__hstc",
        "__hsfp",
        "hsctatracking",
        "vero_id",
        "vero_conv",
        "oly_anon_id",
        "oly_enc_id",
        "rb_clickid",
        "s_cid",
        "ref_src",
        "ref_url",
        "wt.mc_id",
        "cmpid",
        "spm",
        "scid",
        "sc_cid",
        "ncid",
        "_openstat",
        "trk",
        "trkcampaign",
        "fb_ref",
        "fb_source",
        "fb_action_ids",
        "fb_action_types",
        "clickid",
    }
)

_UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
# Characters left as they are in a path; everything else is percent-escaped.
_PATH_SAFE = "/!$&'()*+,;=:@-._~%"
_QUERY_SAFE = "!$'()*,;:@/?-._~"
_PCT = re.compile(r"%([0-9A-Fa-f]{2})")
_HOST_OK = re.compile(r"^[a-z0-9_]([a-z0-9_.-]*[a-z0-9_])?$")
_DEFAULT_PORTS = {"http": 80, "https": 443}
_NO_SLASHES = re.compile(r"^https?:/?(?!/)", re.IGNORECASE)
_SLASHES = re.compile(r"/{2,}")
_C0_SPACE = "".join(chr(i) for i in range(0x21))
_TAB_NEWLINE = re.compile(r"[\t\n\r]")
_SURROGATE = re.compile(r"[\ud800-\udfff]")
# Scheme, then the authority up to its last "@" (WHATWG: the authority ends at / \ ? or #).
_USERINFO = re.compile(r"^([\x00-\x20]*[A-Za-z][A-Za-z0-9+.-]*:[/\\]*)[^/\\?#]*@")
_USERINFO_IN_TEXT = re.compile(r"(?<=://)[^\s/\\?#@]*@")
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


def redact(url: str) -> str:
    """``url`` without its user info (``user:password@``), for messages and logs."""
    if not isinstance(url, str):
        return repr(url)
    if "@" not in url:  # both patterns need an "@": nothing to remove
        return url[:MAX_URL]
    return _USERINFO_IN_TEXT.sub("", _USERINFO.sub(r"\1", url[:MAX_URL]))


def is_http_url(url: str) -> bool:
    """True when ``url`` is an absolute http(s) URL that ``canonical_url`` accepts."""
    try:
        canonical_url(url)
    except InvalidURL:
        return False
    return True


def host_of(url: str) -> str:
    """The normalised host of ``url`` (lower-case, punycode, no ``www.``), or ``InvalidURL``."""
    key = canonical_url(url)
    return urlsplit(key).hostname or ""


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
    if scheme not in _DEFAULT_PORTS:
        hint = "add http:// or https://" if not scheme else f"scheme {scheme!r} is not supported"
        raise _bad(url, f"only absolute http(s) URLs are accepted ({hint})")
    if port is not None and port == _DEFAULT_PORTS[scheme]:
        port = None
    return WebURL(
        scheme,
        _normalise_host(parts.hostname, url),
        port,
        _normalise_path(parts.path),
        _normalise_escapes(parts.query, _QUERY_SAFE + "&=+%"),
        parts.fragment,
    )


# A plain URL: lower-case scheme, a host of letters, digits, dots, hyphens and underscores, no
# port or user info, a path and query of characters that every rule leaves as they are (no "%",
# no fragment). Such a URL takes the fast path; every other one the general one, same key.
_PLAIN = re.compile(
    r"https?://([A-Za-z0-9._-]+)(/[A-Za-z0-9/._~!$'()*+,;=:@-]*)?(?:\?([A-Za-z0-9._~!$'()*+,;:@/?&=-]*))?"
)
_HOST_CACHE_MAX = 4096


@lru_cache(maxsize=_HOST_CACHE_MAX)
def _plain_host(host: str) -> str | None:
    """The key's host for a plain host as written, or None when only the general path can say
    (an invalid host, whose error message names the whole URL)."""
    try:
        host = _normalise_host(host.lower(), host)
    except InvalidURL:
        return None
    if host.startswith("www.") and "." in host[4:]:
        host = host[4:]
    return None if ":" in host else host


def canonical_url(url: str) -> str:
    """Return the dedup key of ``url``; raise ``InvalidURL`` if it is not an http(s) URL."""
    if type(url) is str and len(url) <= MAX_URL:
        match = _PLAIN.fullmatch(url)
        if match is not None:
            key = _plain_key(match)
            if key is not None:
                return key
    return _general_key(url)


def _plain_key(match: re.Match[str]) -> str | None:
    """``canonical_url`` for a URL that ``_PLAIN`` matched; None when a rule needs the general path."""
    host_text, path, query = match.groups()
    host = _plain_host(host_text)
    if host is None:
        return None
    if path:
        if "/." in path:  # dot segments (and names starting with a dot): the general path decides
            return None
        if "//" in path:
            path = _SLASHES.sub("/", path)
        path = path.rstrip("/") or "/"
    else:
        path = "/"
    if not query:
        return f"https://{host}{path}"
    pairs: list[tuple[str, str]] = []
    for chunk in query.split("&"):
        if not chunk:
            continue
        name, _, value = chunk.partition("=")
        if not name:
            continue
        if "=" in value or "?" in chunk or "/" in chunk:  # escaped by the general path
            return None
        low = name.replace("+", " ").lower()
        if low in TRACKING_PARAMS or low.startswith("utm_"):
            continue
        pairs.append((name, value))
    if not pairs:
        return f"https://{host}{path}"
    pairs.sort()
    return f"https://{host}{path}?" + "&".join(f"{k}={v}" for k, v in pairs)


def _general_key(url: str) -> str:
    """``canonical_url`` by the general rules (``parse_web_url`` and the normalisations)."""
    parts = parse_web_url(url)
    host = parts.host
    if host.startswith("www.") and "." in host[4:]:
        host = host[4:]
    netloc = f"[{host}]" if ":" in host else host
    # The key says https whatever the scheme, so both default ports are the default port.
    if parts.port is not None and parts.port not in _DEFAULT_PORTS.values():
        netloc += f":{parts.port}"
    path = _SLASHES.sub("/", parts.path).rstrip("/") or "/"
    key = f"https://{netloc}{path}"
    query = _normalise_query(parts.query)
    if query:
        key += f"?{query}"
    fragment = parts.fragment
    if fragment.startswith(("!", "/")):
        key += "#" + _normalise_escapes(fragment, _QUERY_SAFE + "/#%")
    return key


def _normalise_host(hostname: str | None, original: str) -> str:
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


def _normalise_escapes(text: str, safe: str) -> str:
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
    path = _normalise_escapes(path, _PATH_SAFE)
    segments: list[str] = []
    for segment in path.split("/"):  # RFC 3986 section 5.2.4, remove_dot_segments
        if segment == "..":
            if len(segments) > 1:
                segments.pop()
        elif segment != ".":
            segments.append(segment)
    resolved = "/".join(segments)
    return resolved if resolved.startswith("/") else "/" + resolved


def _normalise_query(query: str) -> str:
    pairs: list[tuple[str, str]] = []
    for chunk in query.split("&"):
        if not chunk:
            continue
        name, _, value = chunk.partition("=")
        name_text = _decode_component(name)
        if not name_text:
            continue
        if name_text.lower() in TRACKING_PARAMS or name_text.lower().startswith("utm_"):
            continue
        pairs.append((_encode_component(name), _encode_component(value)))
    pairs.sort()
    return "&".join(f"{k}={v}" for k, v in pairs)


def _decode_component(text: str) -> str:
    return unquote_to_bytes(text.replace("+", " ")).decode("utf-8", "replace")


def _encode_component(text: str) -> str:
    raw = unquote_to_bytes(text.replace("+", " "))
    return quote_from_bytes(raw, safe=_QUERY_SAFE).replace("%20", "+")
