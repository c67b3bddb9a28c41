"""Canonical URLs: the key that decides when two search results are the same page.

The seed's key (host + path, every query parameter dropped) merges pages that differ only in
their query string, such as ``/item?id=1`` and ``/item?id=2``. Ours keeps meaningful parameters
and drops only tracking ones. The rules, in order:

1. Surrounding white space is stripped; only absolute ``http``/``https`` URLs are accepted
   (protocol-relative ``//host/path`` is read as https). Anything else raises ``InvalidURL``.
2. The scheme does not matter: the key always says ``https``.
3. The host is lower-cased, IDN labels become punycode (UTS #46), a trailing dot and a leading
   ``www.`` are dropped; the default port (80 for http, 443 for https) is dropped.
4. User name and password are dropped (they never identify a different page).
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

import re
from urllib.parse import quote_from_bytes, unquote_to_bytes, urlsplit

import idna

from ..errors import InvalidURL

__all__ = ["TRACKING_PARAMS", "canonical_url", "host_of", "is_http_url", "parse_ipv4"]

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


def canonical_url(url: str) -> str:
    """Return the dedup key of ``url``; raise ``InvalidURL`` if it is not an http(s) URL."""
    if not isinstance(url, str):
        raise InvalidURL(f"URL must be a string, not {type(url).__name__}")
    text = url.strip()
    if text.startswith("//"):
        text = "https:" + text
    cut = min((i for i in (text.find("?"), text.find("#")) if i >= 0), default=len(text))
    text = text[:cut].replace("\\", "/") + text[cut:]  # WHATWG: a backslash is a slash in http(s)
    if _NO_SLASHES.match(text):  # "http:example.com/x", read as WHATWG does
        text = re.sub(r"^([A-Za-z]+):/?", r"\1://", text)
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as exc:
        raise InvalidURL(f"Invalid URL {url!r}: {exc}") from exc
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS:
        hint = "add http:// or https://" if not scheme else f"scheme {scheme!r} is not supported"
        raise InvalidURL(f"Invalid URL {url!r}: only absolute http(s) URLs are accepted ({hint})")
    host = _normalise_host(parts.hostname, url)
    netloc = f"[{host}]" if ":" in host else host
    if port is not None and port != _DEFAULT_PORTS[scheme]:
        netloc += f":{port}"
    path = _normalise_path(parts.path)
    query = _normalise_query(parts.query)
    key = f"https://{netloc}{path}"
    if query:
        key += f"?{query}"
    fragment = parts.fragment
    if fragment.startswith(("!", "/")):
        key += "#" + _normalise_escapes(fragment, _QUERY_SAFE + "/#%")
    return key


def _normalise_host(hostname: str | None, original: str) -> str:
    if not hostname:
        raise InvalidURL(f"Invalid URL {original!r}: it has no host")
    host = hostname.rstrip(".")
    if ":" in host:  # IPv6 literal; urlsplit has validated the brackets
        return host.lower()
    if "%" in host:
        host = unquote_to_bytes(host).decode("utf-8", "replace")
    ipv4 = parse_ipv4(host, original)
    if ipv4 is not None:
        return ipv4
    if not host.isascii():
        try:
            host = idna.encode(host, uts46=True).decode("ascii")
        except idna.IDNAError as exc:
            raise InvalidURL(f"Invalid URL {original!r}: bad international host ({exc})") from exc
    host = host.lower()
    if not _HOST_OK.match(host) or ".." in host:
        raise InvalidURL(f"Invalid URL {original!r}: {hostname!r} is not a valid host name")
    if host.startswith("www.") and "." in host[4:]:
        host = host[4:]
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
    bad = InvalidURL(f"Invalid URL {original or host!r}: {host!r} is not a valid IPv4 address")
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
    # Repeated slashes are collapsed: servers almost always map "//a" and "/a" to one page.
    resolved = _SLASHES.sub("/", "/".join(segments)).rstrip("/")
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
