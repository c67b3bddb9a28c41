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
7. Query: tracking parameters (``TRACKING_PARAMS`` and any ``utm_*``) are dropped (``ref`` and
   ``source`` only off code hosts' APIs, where they pick a branch), blank pairs such as ``&&``
   are dropped, the rest are sorted by name then value; ``+`` and ``%20`` are one.
8. The fragment is dropped, unless it is a client-side route (``#!...`` or ``#/...``), which
   names a different page in single-page applications.
"""

from __future__ import annotations

import re
from functools import lru_cache
from urllib.parse import quote_from_bytes, unquote_to_bytes, urlsplit

from sourcewise.errors import InvalidURL
from sourcewise.web.urlparse import (
    DEFAULT_PORTS,
    QUERY_SAFE,
    normalise_escapes,
    parse_web_url,
)

__all__ = ["TRACKING_PARAMS", "canonical_url", "host_of", "is_http_url"]

#: Query parameters that only track the visitor and never change the page (``ref`` and ``source``
#: except on a code host's API). Any parameter whose name starts with ``utm_`` is dropped as
#: well. Names are compared case-insensitively.
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
        # where a link was clicked (a nav label, a partner): on the real pages measured, 6 of 6
        # keys these merged were one page (benchmarks/bench_tracking.py); not on APIs, below
        "ref",
        "source",
    }
)
#: On a code host's API these select what is read (GitHub's ``/repos/o/r/contents/f?ref=dev``,
#: GitLab's and Gitea's ``/api/``): a page of its own there, and the fetch cache is keyed by
#: ``canonical_url``, so dropping them would answer for one branch with another's file.
_SELECTORS_ON_APIS = frozenset({"ref", "source"})

_SLASHES = re.compile(r"/{2,}")
_KEYS_KEPT = 8192  # URLs whose keys are remembered
_KEPT_URL_MAX = 2048  # characters: a longer URL is keyed each time, so the memo stays small
_PLAIN_COMPONENT = re.compile(r"[A-Za-z0-9!$'()*,;:@/?._~-]*")


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
    """Return the dedup key of ``url``; raise ``InvalidURL`` if it is not an http(s) URL.

    Keys are remembered per URL as written (bounded, least recently used goes; errors and URLs
    longer than ``_KEPT_URL_MAX`` are not): a result page names the same pages again and again,
    across providers and rounds."""
    if type(url) is str and len(url) <= _KEPT_URL_MAX:
        return _key(url)
    return _key.__wrapped__(url)  # parse_web_url says what is wrong with a non-string


@lru_cache(maxsize=_KEYS_KEPT)
def _key(url: str) -> str:
    parts = parse_web_url(url)
    host = parts.host
    if host.startswith("www.") and "." in host[4:]:
        host = host[4:]
    netloc = f"[{host}]" if ":" in host else host
    # The key says https whatever the scheme, so both default ports are the default port.
    if parts.port is not None and parts.port not in DEFAULT_PORTS.values():
        netloc += f":{parts.port}"
    path = parts.path
    if "//" in path:
        path = _SLASHES.sub("/", path)
    path = path.rstrip("/") or "/"
    key = f"https://{netloc}{path}"
    query = _normalise_query(parts.query, host, path) if parts.query else ""
    if query:
        key += f"?{query}"
    fragment = parts.fragment
    if fragment.startswith(("!", "/")):
        key += "#" + normalise_escapes(fragment, QUERY_SAFE + "/#%")
    return key


def _tracking(name: str, host: str, path: str) -> bool:
    """Whether the query parameter ``name`` (lower case) only tracks, on this host and path."""
    if name in _SELECTORS_ON_APIS and (host.startswith("api.") or "/api/" in path):
        return False
    return name in TRACKING_PARAMS or name.startswith("utm_")


def _normalise_query(query: str, host: str, path: str) -> str:
    pairs: list[tuple[str, str]] = []
    for chunk in query.split("&"):
        if not chunk:
            continue
        name, _, value = chunk.partition("=")
        if _PLAIN_COMPONENT.fullmatch(name):  # nothing to decode or escape
            if name and not _tracking(name.lower(), host, path):
                pairs.append((name, _encode_component(value)))
            continue
        name_text = _decode_component(name)
        if name_text and not _tracking(name_text.lower(), host, path):
            pairs.append((_encode_component(name), _encode_component(value)))
    pairs.sort()
    return "&".join(f"{k}={v}" for k, v in pairs)


def _decode_component(text: str) -> str:
    if "%" not in text and "+" not in text:
        return text
    return unquote_to_bytes(text.replace("+", " ")).decode("utf-8", "replace")


def _encode_component(text: str) -> str:
    if _PLAIN_COMPONENT.fullmatch(text):  # nothing to decode or escape: the same text
        return text
    raw = unquote_to_bytes(text.replace("+", " "))
    return quote_from_bytes(raw, safe=QUERY_SAFE).replace("%20", "+")
