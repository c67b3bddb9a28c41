"""A knowledge-base hit's snippet: up to 200 characters from the first line holding a query term,
as a reader should see them (admonition and directive lines out, markup cleaned: ``core.markup``)."""

from __future__ import annotations

import re

from ..core.markup import clean, directive
from . import kbterms

__all__ = ["SNIPPET", "has_term", "snippet"]

_WORD = re.compile(r"\w+")  # one character class, no backtracking: linear in the text
SNIPPET = 200


def has_term(line: str, terms: set[str]) -> bool:
    return bool(kbterms.hot_words(set(_WORD.findall(line)), terms))


def snippet(text: str, terms: set[str], size: int = SNIPPET) -> str:
    lines = [s for ln in text.splitlines() if (s := ln.strip()) and directive(s) is None]
    # The snippet starts at the first line holding a query term (the first line when none does,
    # as when only the title or a heading matched): with one line there is nothing to look for.
    start = next((i for i, ln in enumerate(lines) if has_term(ln, terms)), 0) if len(lines) > 1 else 0
    return _cut(lines[start:], size)


def _cut(lines: list[str], size: int) -> str:
    joined = clean(" ".join(lines)[: 4 * size])  # markup takes room: clean more than is shown
    return joined if len(joined) <= size else joined[: size - 1].rsplit(" ", 1)[0] + "…"
