from __future__ import annotations

import pytest

from sourcewise import InvalidOption, InvalidQuery
from sourcewise.core.validate import validate_max_results, validate_query, validate_strategy, validate_tier


@pytest.mark.parametrize("query", ["", "  ", "ab", " a ", "\n\t"])
def test_short_query(query: str) -> None:
    with pytest.raises(InvalidQuery, match="Search query must be at least 3 characters"):
        validate_query(query)


def test_query_stripped() -> None:
    assert validate_query("  rust  ") == "rust"


@pytest.mark.parametrize("query", [None, 123, b"bytes"])
def test_query_not_text(query: object) -> None:
    with pytest.raises(InvalidQuery):
        validate_query(query)


@pytest.mark.parametrize("tier", [0, 5, -1, "1", 1.0, True])
def test_bad_tier(tier: object) -> None:
    with pytest.raises(InvalidOption, match="tier"):
        validate_tier(tier)


def test_good_tier() -> None:
    assert [validate_tier(t) for t in (None, 1, 2, 3, 4)] == [None, 1, 2, 3, 4]


@pytest.mark.parametrize("n", [0, -5])
def test_max_results_too_small(n: int) -> None:
    with pytest.raises(InvalidOption, match="at least 1"):
        validate_max_results(n)


def test_max_results_cut_to_50_with_warning() -> None:
    assert validate_max_results(10) == (10, None)
    n, warning = validate_max_results(120)
    assert n == 50
    assert warning is not None
    assert "cut to 50" in warning


def test_strategy() -> None:
    with pytest.raises(InvalidOption):
        validate_strategy("fastest")
    assert validate_strategy("official") == "official"
