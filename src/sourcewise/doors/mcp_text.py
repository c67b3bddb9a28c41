"""What the MCP tools say: the text an agent reads and the structured result, kept to a budget.

Split from ``doors.mcp`` (the tools and the server): the renderers are pure functions of the
models, tested without a server.
"""

from __future__ import annotations

import json
from typing import Any

from sourcewise.doors.present import render_answer
from sourcewise.models import Answer, SearchResponse
from sourcewise.text.words import printable

__all__ = [
    "HIT_TEXT_CUT",
    "SEARCH_BUDGET",
    "STRUCTURED_BUDGET",
    "answer_text",
    "cut_to",
    "fit",
    "render_search",
]

SEARCH_BUDGET = 6_000  # characters of text for one search's results
STRUCTURED_BUDGET = 12_000  # characters of JSON beyond which hit texts are cut (see fit)
HIT_TEXT_CUT = 300  # characters of a hit's text kept (when it has no snippet) over that budget


def fit(data: dict[str, Any], budget: int, keep: str | None) -> dict[str, Any]:
    """``data`` without the whole texts of its hits when its JSON is longer than ``budget``:
    whole chunks of every hit found would fill an agent's context. A cut hit keeps its snippet
    (or the first ``HIT_TEXT_CUT`` characters when it has none) and its ``location``, the handle
    to read the rest (web_fetch for a URL, the file's lines for a path). The hits under the
    top-level key ``keep`` (an answer's cited sources, retrieve's candidates) stay whole. A
    warning says what was cut. Plans, factors and reports are not cut (about 1 KB per hit), so
    the result can stay over ``budget``: an ask over ten long hits goes from ~30 KB to ~17 KB."""
    if len(json.dumps(data, ensure_ascii=False)) <= budget:
        return data
    cut = 0

    def walk(node: Any) -> None:
        nonlocal cut
        if isinstance(node, dict):
            text = node.get("text")
            if "location" in node and "kind" in node and isinstance(text, str) and len(text) > HIT_TEXT_CUT:
                node["text"] = "" if node.get("snippet") else text[:HIT_TEXT_CUT].rstrip() + "…"
                cut += 1
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    for key, value in data.items():
        if key != keep:
            walk(value)
    if cut:
        kept = f"; the {keep} are whole" if keep else ""
        note = (
            f"{cut} hit texts cut to fit the result budget (the snippet, or {HIT_TEXT_CUT} characters, "
            f"is kept){kept}; each hit's location says where to read the rest"
        )
        # An answer or a retrieval has warnings; search's results have one list per source.
        holders = [data] if "warnings" in data else [r for r in data.get("results", []) if "warnings" in r]
        for holder in holders:
            holder["warnings"].append(note)
    return data


def render_search(response: SearchResponse, budget: int = SEARCH_BUDGET, *, compact: bool = False) -> str:
    """The grounded answer, if any, then numbered results (one line each when ``compact``, else a
    short block), stopping before ``budget`` characters."""
    head = f"{len(response.results)} results for {response.query!r} (via {response.provider})"
    lines = [head, *(f"note: {w}" for w in response.warnings)]
    if response.answer:  # a grounded provider's cited answer: what an agent on the text channel reads
        answer = printable(response.answer).strip()
        room = budget // 2
        if len(answer) > room:
            answer = answer[: room - 1].rstrip() + "…"
        lines += ["", f"Answer from {response.provider} (its [n] point at its own Sources list):", answer, ""]
        lines.append("Rated results:")
    used = sum(len(line) + 1 for line in lines)
    for i, r in enumerate(response.results, start=1):
        if compact:
            block = f"[{i}] tier {r.tier} {r.title} - {r.url}"
        else:
            block = (
                f"\n[{i}] {r.title}\n    {r.url}\n    tier {r.tier}, {r.reliability_score}/100: {r.reason}"
            )
            block += f"\n    {r.snippet}" if r.snippet else ""
        if used + len(block) > budget:
            lines.append(f"\n... {len(response.results) - i + 1} more in the structured result")
            break
        lines.append(block)
        used += len(block)
    return "\n".join(lines)


def answer_text(answer: Answer, fmt: str) -> str:
    """The text for ``fmt``; json is the answer's JSON when it fits the budget, else the quick text."""
    if fmt == "json":
        whole = answer.model_dump_json()
        if len(whole) <= SEARCH_BUDGET:
            return whole
        return render_answer(answer, "quick") + "\n[the whole answer as JSON is the structured result]"
    return render_answer(answer, fmt)


def cut_to(text: str, budget: int) -> str:
    cut = "\n[cut: see the structured result]"
    return text if len(text) <= budget else text[: budget - 40].rstrip() + cut
