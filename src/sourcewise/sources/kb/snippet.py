"""A knowledge-base hit's snippet: up to 200 characters from the first line holding a query term,
as a reader should see them (admonition and directive lines out, markup cleaned: ``text.markup``)."""

from __future__ import annotations

from sourcewise.sources.kb import terms as kbterms
from sourcewise.text.markup import clean, directive

__all__ = ["SNIPPET", "snippet"]

SNIPPET = 200


def snippet(text: str, terms: set[str], size: int = SNIPPET) -> str:
    lines = [s for ln in text.splitlines() if (s := ln.strip()) and directive(s) is None]
    # The snippet starts at the first line holding a query term (the first line when none does,
    # as when only the title or a heading matched): with one line there is nothing to look for.
    start = next((i for i, ln in enumerate(lines) if kbterms.has_any(ln, terms)), 0) if len(lines) > 1 else 0
    return _cut(lines[start:], size)


def _cut(lines: list[str], size: int) -> str:
    joined = clean(" ".join(lines)[: 4 * size])  # markup takes room: clean more than is shown
    return joined if len(joined) <= size else joined[: size - 1].rsplit(" ", 1)[0] + "…"
