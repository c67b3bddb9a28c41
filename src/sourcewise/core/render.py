"""Output formats of seed 000: quick answer, deep dive, progressive discovery, and JSON."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from ..errors import InvalidOption
from ..models import SearchResponse, SearchResult
from .text import json_safe, printable

__all__ = ["FORMATS", "render"]

FORMATS = ("quick", "deep", "progressive", "json")
TIER_NAMES = {1: "Official docs", 2: "Semi-official", 3: "Community", 4: "Blogs and media"}
TIER_LABELS = {1: "official docs", 2: "semi-official", 3: "community", 4: "blog/media"}
_SENTENCE = re.compile(r"(?<=[.!?。])\s+")


def _text(title: str) -> str:
    return re.sub(r"([\[\]\\])", r"\\\1", title)


def _link(result: SearchResult) -> str:
    url = result.url
    target = f"<{url}>" if any(c in url for c in " ()<>") else url
    return f"[{_text(result.title)}]({target})"


def _sources(results: Sequence[SearchResult]) -> list[str]:
    return ["Sources:", *(f"- {_link(r)}" for r in results)]


def _first_sentence(snippet: str) -> str:
    return _SENTENCE.split(snippet.strip(), maxsplit=1)[0] if snippet else ""


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # all but tab and newline


def grounded(response: SearchResponse) -> str:
    """A grounded provider's own answer (its [n] point at its Sources list), then the rated sources."""
    lines = ["## Answer", "", _CONTROL.sub("", response.answer or "").strip(), "", "## Rated sources", ""]
    lines += [
        f"- [{TIER_LABELS[r.tier]}] {_link(r)} (tier {r.tier}, {r.reliability_score}/100)"
        for r in response.results
    ]
    return "\n".join(lines)


def quick(response: SearchResponse) -> str:
    """A short extractive answer from the best 2-3 sources, cited [n], then the links."""
    if response.answer:
        return grounded(response)
    results = response.results
    if not results:
        return f"No results for {response.query!r}."
    lines = ["## Answer", ""]
    sentences = [
        f"{_first_sentence(r.snippet)} [{i}]" for i, r in enumerate(results[:3], start=1) if r.snippet
    ]
    lines.append(
        " ".join(sentences)
        if sentences
        else "The sources below match the query; their pages hold the answer."
    )
    lines += ["", "## References", ""]
    # As the seed's layout: the references name each source and its rating; the links follow
    # once, under Sources, in the same order.
    lines += [
        f"- [{i}] [{TIER_LABELS[r.tier]}] {_text(r.title)} (tier {r.tier}, {r.reliability_score}/100)"
        for i, r in enumerate(results, start=1)
    ]
    return "\n".join([*lines, "", *_sources(results)])


def deep(response: SearchResponse) -> str:
    """Every source, grouped by tier, with its score, summary and why it was rated so."""
    if not response.results:
        return f"No results for {response.query!r}."
    lines: list[str] = []
    for tier in (1, 2, 3, 4):
        group = [r for r in response.results if r.tier == tier]
        if not group:
            continue
        lines += [f"## {TIER_NAMES[tier]} (Tier {tier})", ""]
        for r in group:
            lines += [f"### {_link(r)} - reliability: {r.reliability_score}/100", ""]
            if r.snippet:
                lines += [r.snippet, ""]
            lines += [f"Why this tier: {r.reason}"]
            if tier >= 3:
                lines += ["Caution: community or personal source; check it against official docs."]
            lines.append("")
    return "\n".join([*lines, *_sources(response.results)])


def progressive(response: SearchResponse) -> str:
    """The top five, then where to dig next (as commands that do it)."""
    results = response.results
    if not results:
        return f"No results for {response.query!r}."
    q = response.query.replace('"', '\\"')
    lines = [f"## Initial results (Top {min(5, len(results))})", ""]
    lines += [
        f"{i}. {_link(r)} - tier {r.tier}, score: {r.reliability_score}"
        for i, r in enumerate(results[:5], start=1)
    ]
    lines += [
        "",
        "Explore further:",
        f'- [ ] Official docs in depth: `sourcewise search "{q}" --strategy official --format deep`',
        f'- [ ] Practical examples: `sourcewise search "{q} example" --strategy progressive`',
        f'- [ ] Community opinion: `sourcewise search "{q}" --tier 3`',
        "",
    ]
    return "\n".join([*lines, *_sources(results)])


def as_json(response: SearchResponse) -> str:
    """The results as a JSON array (the seed's output contract), one object per result."""
    return json.dumps([r.model_dump(mode="json") for r in response.results], ensure_ascii=False, indent=2)


def render(response: SearchResponse, fmt: str = "quick") -> str:
    """``response`` as text in ``fmt``. Titles and snippets come from outside: the text formats
    lose control characters and bidi overrides, JSON escapes them (same values), so either can
    go to a terminal."""
    renderers = {"quick": quick, "deep": deep, "progressive": progressive}
    if fmt == "json":
        return json_safe(as_json(response))
    if fmt not in renderers:
        raise InvalidOption(f"format must be one of {', '.join(FORMATS)}; got {fmt!r}")
    return printable(renderers[fmt](response))
