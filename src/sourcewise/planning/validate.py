"""Input validation for the public API (seed 000: validation first)."""

from __future__ import annotations

import re
from datetime import date, datetime
from typing import Any

from sourcewise.errors import InvalidOption, InvalidQuery
from sourcewise.models import Tier

__all__ = [
    "MAX_QUERY",
    "MAX_QUESTION",
    "MAX_RESULTS",
    "MIN_QUERY",
    "MIN_SOURCE_QUERY",
    "STRATEGIES",
    "validate_max_results",
    "validate_query",
    "validate_question",
    "validate_tier",
    "validate_today",
]

MIN_QUERY = 3
"""Shortest web search query: engines answer one or two characters with noise."""
MIN_SOURCE_QUERY = 1
"""Shortest query for private sources and questions: "회의", "QA" or "Go" is a real query there."""
#: Longest search query, in characters: search engines stop reading near 2,000 (Google's limit
#: is 2,048 characters of URL), so a longer one is a mistake, not a query.
MAX_QUERY = 2000
#: Longest question that ``route``, ``plan`` and ``conditional_web_search`` read.
MAX_QUESTION = 10_000
MAX_RESULTS = 50
_SURROGATE = re.compile("[\ud800-\udfff]")
STRATEGIES = ("default", "official", "comprehensive", "progressive")


def validate_query(
    query: Any, limit: int = MAX_QUERY, what: str = "Search query", minimum: int = MIN_QUERY
) -> str:
    """The stripped query; ``InvalidQuery`` if it is not text, shorter than ``minimum`` characters
    (3 for the web, ``MIN_SOURCE_QUERY`` for private sources), longer than ``limit`` or not valid
    Unicode (a lone surrogate, from invalid UTF-8)."""
    if not isinstance(query, str):
        raise InvalidQuery(f"{what} must be text, not {type(query).__name__}")
    text = query.strip()
    if len(text) < minimum:
        raise InvalidQuery(f"{what} must be at least {minimum} character{'s' if minimum > 1 else ''}")
    if len(text) < MIN_QUERY and not any(ch.isalnum() for ch in text):
        raise InvalidQuery(f"{what} must have a letter or digit, got {text!r}")  # "?" asks nothing
    if len(text) > limit:
        raise InvalidQuery(f"{what} is {len(text)} characters long; the limit is {limit}")
    if not text.isascii() and _SURROGATE.search(text):
        raise InvalidQuery(f"{what} is not valid text (invalid UTF-8 or a lone surrogate)")
    return text


def validate_question(question: Any) -> str:
    """``validate_query`` for a question to route or plan (``MAX_QUESTION`` characters; one
    character is enough: private sources answer short questions, and a web query is checked
    against the web's minimum where it is sent)."""
    return validate_query(question, MAX_QUESTION, "Question", MIN_SOURCE_QUERY)


def validate_today(today: Any) -> date | None:
    """``today`` as a date between the years 1000 and 9000; ``InvalidOption`` otherwise."""
    if today is None:
        return None
    if isinstance(today, datetime):
        today = today.date()
    if not isinstance(today, date):
        raise InvalidOption(f"today must be a datetime.date, got {type(today).__name__} {today!r}")
    if not 1000 <= today.year <= 9000:
        raise InvalidOption(f"today must be a date between the years 1000 and 9000, got {today}")
    return today


def validate_tier(tier: Any) -> Tier | None:
    if tier is None:
        return None
    if isinstance(tier, bool) or not isinstance(tier, int) or tier not in (1, 2, 3, 4):
        raise InvalidOption(f"tier must be 1, 2, 3 or 4 (or omitted for all tiers), got {tier!r}")
    return tier  # type: ignore[return-value]


def validate_max_results(max_results: Any) -> tuple[int, str | None]:
    """``(n, warning)``: 0 or less is an error; more than 50 is cut to 50 with a warning."""
    if isinstance(max_results, bool) or not isinstance(max_results, int):
        raise InvalidOption(f"max_results must be a whole number from 1 to 50, got {max_results!r}")
    if max_results < 1:
        raise InvalidOption(f"max_results must be at least 1, got {max_results}")
    if max_results > MAX_RESULTS:
        return MAX_RESULTS, f"max_results {max_results} is more than {MAX_RESULTS}; cut to {MAX_RESULTS}"
    return max_results, None


def validate_strategy(strategy: Any) -> str:
    if strategy not in STRATEGIES:
        raise InvalidOption(f"strategy must be one of {', '.join(STRATEGIES)}; got {strategy!r}")
    return str(strategy)
