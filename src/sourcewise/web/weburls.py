"""Find the URLs in a question (seed 001: a URL in the question is fetched directly).

Found: ``http(s)://`` URLs, and scheme-less ones that are clearly web addresses (``www.x.com``,
``docs.python.org/3/``, ``example.com``). Not found: file names (``main.py``, ``README.md``),
library names (``Node.js``, ``ASP.NET``) and e-mail addresses. Trailing punctuation and Korean
particles glued to the end (``https://x.com/page를``) are stripped; brackets are kept when they
are balanced inside the URL (Wikipedia's ``Foo_(bar)``).
"""

from __future__ import annotations

import re

from sourcewise.errors import redact
from sourcewise.text.words import is_hangul, strip_particle
from sourcewise.web.suffixes import psl
from sourcewise.web.urls import is_http_url

__all__ = ["extract_urls", "find_urls"]

_SCHEME = re.compile(r"https?://[^\s<>\"'`]+", re.IGNORECASE)
_BARE = re.compile(
    r"(?<![\w@.\-/])((?:www\.)?(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,24})(/[^\s<>\"'`]*)?(?![a-z0-9@-])"
)
# Top-level domains that are common for web sites; others need "www." or a path to count.
_WEB_TLDS = frozenset(
    "com org net io dev app ai co kr jp cn uk de fr ca au in me info edu gov xyz tech site blog page".split()
)
_FILE_TLDS = frozenset("py rs sh md pl ts js go cc cs rb php sql txt yml yaml json toml lock zip".split())
# Anchored at the start of the Hangul run, so a failed match is not retried from every syllable.
_HANGUL_TAIL = re.compile(r"(?<![\uac00-\ud7a3])[\uac00-\ud7a3]+$")
_TRAILING = ".,;:!?'\"»」』、。，"
_PAIRS = {")": "(", "]": "[", "}": "{", ">": "<"}


def _trim(url: str) -> str:
    while url:
        last = url[-1]
        if last in _TRAILING or (last in _PAIRS and url.count(_PAIRS[last]) < url.count(last)):
            url = url[:-1]
        else:
            break
    # A Korean particle glued to the end of the URL ("https://x.com/page를") is not part of it.
    match = _HANGUL_TAIL.search(url)
    if match:
        before = url[match.start() - 1] if match.start() else ""
        if before not in "/=-_":  # ".html에서": Korean glued to an ASCII word is not the URL's
            url = url[: match.start()]
        else:  # ".../wiki/리액트를": a Korean segment, less its particle
            url = url[: match.start()] + strip_particle(match.group(0))
    host_end = url.find("/", url.find("//") + 2) if "//" in url else url.find("/")
    host = url if host_end < 0 else url[:host_end]
    if is_hangul(host):  # Korean text glued to the host ("https://x.com참고"): cut it off
        cut = re.search(r"[\uac00-\ud7a3]", host)
        url = url[: cut.start()] if cut else url
    return url.rstrip(_TRAILING)


def _looks_like_site(host: str, path: str | None) -> bool:
    suffix = psl().publicsuffix(host)
    if not suffix or psl().privatesuffix(host) is None:
        return False
    tld = host.rsplit(".", 1)[-1]
    if host.startswith("www.") or (path and len(path) > 1):
        return tld not in _FILE_TLDS or host.startswith("www.")
    return tld in _WEB_TLDS


def extract_urls(text: str) -> list[str]:
    """The URLs in ``text``, in order, without duplicates; scheme-less ones get ``https://``.
    Only URLs that ``canonical_url`` accepts are returned."""
    return [url for url, _ in find_urls(text)]


def find_urls(text: str) -> list[tuple[str, bool]]:
    """``extract_urls`` with, for each URL, whether it is a bare site: a host written without
    a scheme or a path ("docs.python.org에서 찾아줘"), which names a place to look, not a page."""
    found: list[tuple[int, str]] = []
    bare: set[str] = set()
    spans: list[tuple[int, int]] = []
    for match in _SCHEME.finditer(text):
        url = _trim(match.group(0))
        if len(url) > len("https://"):
            found.append((match.start(), url))
            spans.append((match.start(), match.end()))
    for match in _BARE.finditer(text):
        if any(a <= match.start() < b for a, b in spans):
            continue
        host, path = match.group(1), match.group(2)
        if not _looks_like_site(host, path):
            continue
        url = "https://" + _trim(match.group(0))
        found.append((match.start(), url))
        if not path or path == "/":
            bare.add(redact(url))
    urls = dict.fromkeys(redact(url) for _, url in sorted(found) if is_http_url(url))
    return [(url, url in bare) for url in urls]
