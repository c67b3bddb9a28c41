"""Input validation for the public API (seed 000: validation first)."""

from __future__ import annotations

from typing import Any

from ..errors import InvalidOption, InvalidQuery
from ..models import Tier

__all__ = [
    "MAX_RESULTS",
    "MIN_QUERY",
    "STRATEGIES",
    "validate_max_results",
    "validate_query",
    "validate_tier",
]

MIN_QUERY = 3
MAX_RESULTS = 50
STRATEGIES = ("default", "official", "comprehensive", "progressive")


def validate_query(query: Any) -> str:
    """The stripped query; ``InvalidQuery`` if it is not text or shorter than 3 characters."""
    if not isinstance(query, str):
        raise InvalidQuery(f"Search query must be text, not {type(query).__name__}")
    text = query.strip()
    if len(text) < MIN_QUERY:
        raise InvalidQuery("Search query must be at least 3 characters")
    return text


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
