"""Do ``ref`` and ``source`` merge distinct pages when dropped as tracking parameters? (issue 24)

Two sets of URLs nobody on the project wrote: every URL string in the URL suites
(../shared/data/urls: WHATWG, w3lib, url-normalize, courlan), and every absolute link of the 181
real pages of the article-extraction-benchmark (../shared/data/extraction/aeb). For each set: how
many URLs carry either parameter, and which canonical keys the current rules merge that keeping
them (the reference: the same rules with ``ref`` and ``source`` kept) leaves apart, with the
values that were dropped, so that a reader can judge whether those are one page.
"""

from __future__ import annotations

import gzip
import html
import re
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

from sourcewise import canonical_url
from sourcewise.errors import InvalidURL

# ../shared/data beside the checkout (a worktree sits one folder deeper than the main one)
DATA = next(
    (p / "shared" / "data" for p in Path(__file__).resolve().parents if (p / "shared" / "data").is_dir()),
    Path(__file__).resolve().parents[2] / "shared" / "data",
)
NAMES = ("ref", "source")
_HREF = re.compile(r"""href\s*=\s*["']([^"']{1,2048})["']""", re.IGNORECASE)
_STRING_URL = re.compile(r"https?://[^\s\"'<>]{1,2048}")


def suite_urls() -> Iterator[str]:
    for path in sorted((DATA / "urls").rglob("*.json*")):
        yield from _STRING_URL.findall(path.read_text("utf-8", "replace"))


def page_links() -> Iterator[str]:
    for path in sorted((DATA / "extraction" / "aeb" / "html").glob("*.html.gz")):
        text = gzip.decompress(path.read_bytes()).decode("utf-8", "replace")
        for href in _HREF.findall(text):
            link = html.unescape(href).strip()
            if link.startswith(("http://", "https://")):
                yield link


def _carries(url: str) -> bool:
    try:
        return any(k.lower() in NAMES for k, _ in parse_qsl(urlsplit(url).query, keep_blank_values=True))
    except ValueError:
        return False


_NAMED = re.compile(r"(?i)([?&])(ref|source)=")


def _keys(found: list[str]) -> dict[str, set[str]]:
    """Our key -> the reference keys of the same URLs: the same rules with ``ref`` and ``source``
    kept (renamed ``kept-ref``/``kept-source`` first, names no rule drops)."""
    merged: dict[str, set[str]] = defaultdict(set)
    for url in set(found):
        try:
            merged[canonical_url(url)].add(canonical_url(_NAMED.sub(r"\1kept-\2=", url)))
        except InvalidURL:
            continue
    return {key: kept for key, kept in merged.items() if len(kept) > 1}


def run() -> str:
    if not DATA.exists():
        return f"skipped: {DATA} is absent"
    rows = ["| URLs | count | with ref/source | keys merged by dropping them |", "|---|---|---|---|"]
    notes = []
    for name, found in (("URL suites", list(suite_urls())), ("AEB page links", list(page_links()))):
        assert found, f"no URLs found in {name}"
        carrying = [u for u in found if _carries(u)]
        merged = _keys(found)
        rows.append(f"| {name} | {len(found)} | {len(carrying)} | {len(merged)} |")
        for key, kept in sorted(merged.items()):
            notes.append(f"- {key} <- {', '.join(sorted(kept))}")
    return "\n".join([*rows, "", "Keys merged (each: one page?):", *notes])
