"""Sources out of a prose answer: what an agent (Gemini over MCP, the gemini CLI) writes when it
answers in words instead of the JSON asked for (seed 000's first-priority call answers so).

Read, in this order: a ``Sources:`` block (also ``References:``, ``출처:``, ``참고 링크`` ...) whose
lines are ``[1] Title (url)``, ``1. [Title](url) - what``, ``- url`` or ``[1]: url "Title"``; then
numbered lists of links and ``[^1]: url`` footnotes elsewhere; then markdown links, ``<url>``
autolinks and bare URLs in the text (a URL keeps balanced parentheses, as Wikipedia's do). A
source's snippet is what its line says about it, or the first sentence of the answer citing it
(``[n]`` or its link). The answer is the text as written, sources block included, so that its
``[n]`` markers still point somewhere (as a grounded provider's cited answer does). Only http(s)
URLs count; a URL is at most 2,048 characters and an answer at most ``MAX_PROSE``; patterns are
bounded, so the work is linear in the text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sourcewise.models import RawResult
from sourcewise.web.urls import is_http_url

__all__ = ["MAX_PROSE", "Prose", "read_prose"]

MAX_PROSE = 200_000  # characters of answer read; the rest is cut
_URL_CHAR = r"[^\s<>()\[\]\"'`]"
# A URL may hold balanced parentheses (Wikipedia's "Rust_(programming_language)"); the two
# branches start with different characters, so matching stays linear.
_URL = r"https?://(?:" + _URL_CHAR + r"|\(" + _URL_CHAR + r"{0,200}\)){1,2048}"
_MD_LINK = re.compile(r"\[([^\[\]\n]{0,300})\]\((" + _URL + r")(?:\s+\"[^\"\n]{0,300}\")?\)")
_AUTOLINK = re.compile(r"<(" + _URL + r")>")
_ANY_URL = re.compile("(" + _URL + ")")
_HEADING = re.compile(
    r"^[#>*_\s]{0,8}(?:sources?|references?|citations?|links|출처|참고 ?링크|참고 ?자료|참고 ?문헌)"
    r"[*_\s]{0,4}:?[*_\s]{0,4}$",
    re.IGNORECASE,
)
_ITEM = re.compile(r"^\s{0,8}(?:[-*+•]\s{1,4}|\[?\^?(\d{1,3})[.)\]:]:?\s{0,4})")  # "[^1]:" footnotes too
_CITE = re.compile(r"\[\^?(\d{1,3})\]")
_SENTENCE = re.compile(r"(?<=[.!?。\]])\s+")  # "... server.[1] The RFC": a marker ends one too
_SPACE_BEFORE = re.compile(r"(?<=\S)[ \t]+(?=[.,;:!?。])")
_TRAIL = ".,;:!?)]}'\""


@dataclass(frozen=True)
class Prose:
    """The answer (as written, with its sources block) and the sources found, in order."""

    answer: str
    results: list[RawResult]


@dataclass
class _Found:
    url: str
    title: str = ""
    snippet: str = ""
    number: int | None = None


def _clean_url(url: str) -> str:
    """The URL without the sentence's punctuation after it; a closing parenthesis stays when it
    closes one the URL opened."""
    while url and url[-1] in _TRAIL and not (url[-1] == ")" and url.count("(") >= url.count(")")):
        url = url[:-1]
    return url


def _entry(line: str) -> _Found | None:
    """One line of a sources block or a numbered list, or None when it names no URL."""
    item = _ITEM.match(line)
    number = int(item.group(1)) if item and item.group(1) else None
    rest = line[item.end() :] if item else line
    link = _MD_LINK.search(rest)
    if link:
        url, title = link.group(2), link.group(1)
        said = rest[link.end() :]
    else:
        bare = _AUTOLINK.search(rest) or _ANY_URL.search(rest)
        if bare is None:
            return None
        url = _clean_url(bare.group(1))
        title = rest[: bare.start()].strip()
        said = rest[bare.end() :]
    title = title.strip(" -–—:|*_`(<\t").rstrip(" -–—:|(<")
    snippet = said.strip(' -–—:|)>*_\t".,;')
    if title.startswith(("http://", "https://")):
        title = ""
    return _Found(url, title, snippet, number)


def _block(lines: list[str]) -> tuple[int, int] | None:
    """(first, end) line indexes of the sources block: a heading and the entries under it."""
    for i, line in enumerate(lines):
        if not _HEADING.match(line):
            continue
        end = i + 1
        seen = False
        while end < len(lines):
            text = lines[end].strip()
            if not text:
                if seen and end + 1 < len(lines) and _entry(lines[end + 1]) is None:
                    break
                end += 1
                continue
            if _entry(lines[end]) is None:
                break
            seen = True
            end += 1
        if seen:
            return i, end
    return None


def _cited_sentence(answer: str, found: _Found) -> str:
    """The first sentence of the answer's prose (not its lists) that cites ``found``, by number
    or by its link, without its markers."""
    for line in answer.splitlines():
        if _ITEM.match(line):
            continue
        for sentence in _SENTENCE.split(line):
            numbers = {int(n) for n in _CITE.findall(sentence)}
            if (found.number is not None and found.number in numbers) or found.url in sentence:
                words = _CITE.sub("", _MD_LINK.sub(lambda m: m.group(1), sentence))
                return _SPACE_BEFORE.sub("", words).strip(" #*-")[:300]
    return ""


def read_prose(text: str, provider: str) -> Prose:
    """The answer and its sources; no sources is an empty list (the caller decides if that is
    an error). Links are kept once, by URL, first place first."""
    text = text[:MAX_PROSE]
    lines = text.splitlines()
    found: dict[str, _Found] = {}
    block = _block(lines)
    body_lines = lines
    if block is not None:
        first, end = block
        for line in lines[first + 1 : end]:
            if (entry := _entry(line)) is not None:
                found.setdefault(entry.url, entry)
        body_lines = lines[:first] + lines[end:]
    for line in body_lines:  # numbered or bulleted links in the text
        if _ITEM.match(line) and (entry := _entry(line)) is not None:
            found.setdefault(entry.url, entry)
    body = "\n".join(body_lines).strip()
    for match in _MD_LINK.finditer(body):
        found.setdefault(match.group(2), _Found(match.group(2), match.group(1)))
    for match in _AUTOLINK.finditer(body):
        found.setdefault(match.group(1), _Found(match.group(1)))
    for match in _ANY_URL.finditer(_MD_LINK.sub("", body)):  # bare URLs in the prose, last
        url = _clean_url(match.group(1))
        found.setdefault(url, _Found(url))
    results: list[RawResult] = []
    for entry in found.values():
        if not is_http_url(entry.url):
            continue
        snippet = entry.snippet or _cited_sentence(body, entry)
        results.append(
            RawResult(
                title=entry.title,
                url=entry.url,
                snippet=snippet,
                provider=provider,
                position=len(results) + 1,
            )
        )
    return Prose(text.strip(), results)
