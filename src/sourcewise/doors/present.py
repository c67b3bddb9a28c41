"""Text for people: answers and private-source hits in quick, deep and progressive forms.

Everything that came from outside (titles, text, locations) loses its control characters here,
before a terminal sees it; ``json`` output is the model itself, faithful to what was found.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Sequence

from sourcewise.answer.extractive import strip_controls
from sourcewise.models import Answer, Hit, Page, RankedHit, Route, SourceReport, SourceResult

__all__ = ["describe", "render_answer", "render_page", "render_results", "render_route"]



def _clean(text: str, limit: int = 300, *, indent: bool = False) -> str:
    """One line, safe for a terminal, at most ``limit`` characters; ``indent``: its leading
    spaces kept (a line of the answer's code)."""
    text = strip_controls(text)
    text = text.rstrip() if indent else text.strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def describe(hit: Hit) -> str:
    """``kind, tier 1 / authority, date`` for a sources line."""
    parts = [hit.kind.replace("_", " ")]
    parts.append(
        f"tier {hit.tier} ({hit.reliability_score})" if hit.tier else hit.authority.replace("_", " ")
    )
    if hit.author:
        parts.append(_clean(hit.author, 40))
    if hit.timestamp:
        parts.append(hit.timestamp.date().isoformat())
    return ", ".join(parts)


def _source_line(n: int, ranked: RankedHit) -> str:
    hit = ranked.hit
    also = [s for s in ranked.sources if s != hit.source]
    seen = f"; also in {', '.join(also)}" if also else ""
    return f"[{n}] {_clean(hit.title, 120)} - {_clean(hit.location, 200)} ({describe(hit)}{seen})"


def _report_lines(reports: Sequence[SourceReport]) -> list[str]:
    lines = []
    for r in reports:
        if r.status == "ok":
            continue
        why = {
            "empty": "found nothing"
            + (f" (also broadened: {', '.join(r.broadened)})" if r.broadened else ""),
            "timeout": f"no answer within the deadline ({r.elapsed_ms / 1000:.1f} s)",
            "rate_limited": "rate-limited"
            + (f"; retry in {r.retry_after:.0f} s" if r.retry_after else "; retry later"),
        }.get(r.status, _clean((r.error or r.status).removeprefix(f"{r.source}: "), 600))
        if r.status == "unavailable":
            why = f"unavailable, skipped ({why})"
        lines.append(f"! {r.source}: {why}")
    return lines


def _found_by(ranked: RankedHit) -> str:
    """Which sources returned a merged item, the rank each gave it and its weight there (its
    copy's relevance), the web's providers named: ``found by kb #1 (0.62), web via brave #3 (0.41)``."""
    said = [
        f"{_clean(f.source, 60)}"
        + (f" via {_clean(', '.join(f.providers), 80)}" if f.providers else "")
        + f" #{f.position} ({f.weight:.2f})"
        for f in ranked.found_by
    ]
    return f"    found by {', '.join(said)}"


def _explain(ranked: RankedHit) -> str:
    factors = "; ".join(f"{f.name} {f.value:.2f}x{f.weight} ({_clean(f.note, 80)})" for f in ranked.factors)
    return f"    relevance {ranked.relevance:.2f} = {factors}"


def render_answer(
    answer: Answer, fmt: str = "quick", *, explain: bool = False, specs: Sequence[str] = ()
) -> str:
    """The answer in ``quick``, ``deep``, ``progressive`` or ``json`` form.

    The ``Sources`` list is numbered as the answer's ``[n]`` markers in every form. ``specs``: the
    sources the question was asked of (``-S`` values), kept in progressive's "Dig further" command."""
    if fmt == "json":
        return answer.model_dump_json(indent=2)
    lines = [_clean(line, 10_000, indent=True) for line in answer.text.split("\n")]
    if not answer.answered and answer.hits:  # no [n]: these are not sources of an answer
        lines += ["", "Closest results (may not answer):"]
        for ranked in answer.hits[:3]:
            hit = ranked.hit
            lines.append(f"- {_clean(hit.title, 120)} - {_clean(hit.location, 200)} ({describe(hit)})")
    if answer.suggestions:
        lines += ["", "Try rewording: " + " | ".join(_clean(s, 80) for s in answer.suggestions)]
    if answer.sources:
        lines += ["", "Sources:"]
        for i, ranked in enumerate(answer.sources, 1):
            lines.append(_source_line(i, ranked))
            if explain:
                lines.append(_explain(ranked))
    if fmt == "progressive":
        cited = {r.hit.location for r in answer.sources}
        more = [r for r in answer.hits if r.hit.location not in cited][: max(0, 5 - len(answer.sources))]
        if more and answer.answered:
            lines += ["", "More results:"]
            for ranked in more:
                hit = ranked.hit
                lines.append(f"- {_clean(hit.title, 120)} - {_clean(hit.location, 200)} ({describe(hit)})")
                if explain:
                    lines.append(_explain(ranked))
        lines += ["", "Dig further:"]
        q = shlex.quote(answer.question)
        flags = "".join(f" -S {shlex.quote(strip_controls(spec))}" for spec in specs)
        lines.append(f"  sourcewise ask {q}{flags} --format deep --explain")
        for ranked in answer.hits[:3]:
            if ranked.hit.location.startswith(("http://", "https://")):
                lines.append(
                    f"  sourcewise fetch {shlex.quote(_clean(ranked.hit.location, 500))} --prompt {q}"
                )
    if fmt == "deep" and answer.hits:
        lines += ["", f"All results ({len(answer.hits)}), by relevance:"]
        for ranked in answer.hits:
            hit = ranked.hit
            lines.append(f"- {ranked.relevance:.2f} {_clean(hit.title, 100)} - {_clean(hit.location, 200)}")
            lines.append(f"    {describe(ranked.hit)}: {_clean(ranked.hit.snippet or ranked.hit.text, 200)}")
            if ranked.found_by:
                lines.append(_found_by(ranked))
            if explain:
                lines.append(_explain(ranked))
    lines += [f"! {_clean(d, 200)}" for d in answer.dropped]
    notes = _report_lines(answer.reports) + [f"! {_clean(w, 200)}" for w in answer.warnings]
    if notes:
        lines += ["", *notes]
    return "\n".join(lines)


def render_results(results: Sequence[SourceResult], fmt: str = "quick") -> str:
    """Hits of ``search --source``: one block per source."""
    if fmt == "json":
        return "[" + ",\n".join(r.model_dump_json(indent=2) for r in results) + "]"
    lines: list[str] = []
    for result in results:
        lines.append(f"{result.source} ({result.kind.replace('_', ' ')}): {len(result.hits)} results")
        for i, hit in enumerate(result.hits, 1):
            lines.append(f"[{i}] {_clean(hit.title, 120)} - {_clean(hit.location, 200)} ({describe(hit)})")
            if fmt != "progressive":
                body = hit.snippet or hit.text
                lines.append(f"    {_clean(body, 600 if fmt == 'deep' else 200)}")
        lines += [f"! {_clean(w, 200)}" for w in result.warnings]
        lines.append("")
    return "\n".join(lines).rstrip()


def render_page(page: Page, next_slice: Callable[[int], str]) -> str:
    """A fetched page as every door prints it: a header, the passages for the prompt, the slice,
    and how to ask for the next slice (``next_slice(start)``: the door's own words for it)."""
    end = page.start + len(page.content)
    cached = ", from cache" if page.from_cache else ""
    lines = [
        f"# {page.title or page.url}",
        f"{page.url} (tier {page.tier}, {page.reliability_score}/100{cached})",
        f"characters {page.start}-{end} of {page.total_chars}",
    ]
    if page.passages:
        lines.append("\n## Passages that answer the prompt")
        lines += [f"[{p.start}-{p.end}, score {p.score}] {p.text}" for p in page.passages]
        lines.append("\n## Content")
    lines.append(page.content)
    if page.next_start is not None:
        left = page.total_chars - page.next_start
        lines.append(f"\n[{left} more characters: {next_slice(page.next_start)}]")
    if page.truncated:
        lines.append("[the page was larger than the size limit and was cut]")
    return "\n".join(lines)


def render_route(decision: Route) -> str:
    """The route decision as every door prints it: the action and why, the query, the URLs."""
    lines = [f"{decision.action}: {decision.reason}"]
    lines += [f"query: {decision.query}"] if decision.query else []
    lines += [f"url: {u}" for u in decision.urls]
    return "\n".join(lines)
