"""Relevance from the configured model, in seed 004's bands, for the refinement loop.

The model (the same OpenAI-compatible endpoint ``ask`` writes with) sees the task and the numbered
candidates and answers a JSON list of ``{"n", "relevance", "reason"}``. Its answer is checked: a
number outside 0-1, an ``n`` that names no candidate or a missing reason is ignored, and a
candidate it did not rate keeps its rule-based score. A model that is down or answers something
else entirely is a ``ModelError``; the loop then keeps the rule-based scores and says so.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import httpx

from sourcewise.answer.extractive import strip_controls
from sourcewise.answer.model import complete_chat
from sourcewise.config import Settings
from sourcewise.errors import ModelError
from sourcewise.models import Hit

__all__ = ["MAX_SHOWN", "model_scores"]

MAX_SHOWN = 20  # candidates per request: more would not fit a small model's context
MAX_CHARS = 800
MAX_REASON = 300
PROMPT = (
    "Rate how relevant each numbered candidate is to the task, from 0 to 1: 0.8-1.0 directly "
    "implements the target; 0.5-0.7 contains related patterns or types; 0.2-0.4 is indirectly "
    "related; below 0.2 is irrelevant. Answer with JSON only: a list with one object per candidate, "
    '{"n": <number>, "relevance": <0-1>, "reason": "<one short sentence>"}.'
)


def _shown(hits: Sequence[Hit]) -> str:
    return "\n\n".join(
        f"[{i}] {h.path or h.title} ({h.location})\n{(h.text or h.snippet)[:MAX_CHARS]}"
        for i, h in enumerate(hits, 1)
    )


def _items(reply: str) -> list[Any]:
    start, end = reply.find("["), reply.rfind("]")
    if start < 0 or end <= start:
        raise ModelError("the model's rating is not a JSON list")
    try:
        items = json.loads(reply[start : end + 1])
    except ValueError as exc:
        raise ModelError("the model's rating is not valid JSON") from exc
    if not isinstance(items, list):
        raise ModelError("the model's rating is not a JSON list")
    return items


def parse_scores(reply: str, count: int) -> dict[int, tuple[float, str]]:
    """Candidate index (from 0) -> (relevance, reason), for the well-formed items of ``reply``."""
    out: dict[int, tuple[float, str]] = {}
    for item in _items(reply):
        if not isinstance(item, dict):
            continue
        n, value, reason = item.get("n"), item.get("relevance"), item.get("reason")
        if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= count:
            continue
        if not isinstance(value, int | float) or isinstance(value, bool) or not 0 <= value <= 1:
            continue
        if not isinstance(reason, str) or not reason.strip():
            continue
        out.setdefault(n - 1, (round(float(value), 3), strip_controls(reason)[:MAX_REASON]))
    if not out:
        raise ModelError("the model rated no candidate in the expected shape")
    return out


async def model_scores(
    task: str, hits: Sequence[Hit], settings: Settings, client: httpx.AsyncClient
) -> dict[int, tuple[float, str]]:
    """The model's (relevance, reason) for the first ``MAX_SHOWN`` of ``hits``, by index."""
    shown = list(hits[:MAX_SHOWN])
    if not shown:
        return {}
    reply = await complete_chat(PROMPT, f"Task: {task}\n\nCandidates:\n\n{_shown(shown)}", settings, client)
    return parse_scores(reply, len(shown))
