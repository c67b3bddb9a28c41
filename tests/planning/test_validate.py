from __future__ import annotations

import pytest

from sourcewise import InvalidOption, InvalidQuery
from sourcewise.planning.validate import (
    validate_max_results,
    validate_query,
    validate_strategy,
    validate_tier,
)


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


def test_private_sources_take_one_or_two_character_queries_and_the_web_keeps_three() -> None:
    from sourcewise.planning.validate import MIN_SOURCE_QUERY, validate_question

    assert validate_query(" 회의 ", minimum=MIN_SOURCE_QUERY) == "회의"
    assert validate_query("Go", minimum=MIN_SOURCE_QUERY) == "Go"
    assert validate_question("QA") == "QA"
    with pytest.raises(InvalidQuery, match="at least 3 characters"):
        validate_query("회의")
    with pytest.raises(InvalidQuery, match=r"at least 1 character$"):
        validate_query("   ", minimum=MIN_SOURCE_QUERY)
    with pytest.raises(InvalidQuery, match="a letter or digit"):
        validate_question("?")


async def test_a_two_character_korean_query_searches_the_knowledge_base(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from sourcewise.config import Settings
    from sourcewise.sources.api import asearch_sources
    from sourcewise.sources.kb.source import KnowledgeBase

    (tmp_path / "note.md").write_text("# 주간\n\n회의에서 나온 내용을 정리했다.\n", "utf-8")
    kb = KnowledgeBase(tmp_path / "kb.sqlite3", semantic=False)
    kb.index([tmp_path / "note.md"])
    kb.close()
    settings = Settings(state_dir=tmp_path, sources={"kb": {"type": "kb", "semantic": False}})
    results = await asearch_sources("회의", sources=["kb"], settings=settings)
    assert [h.path for r in results for h in r.hits] == [str(tmp_path / "note.md")]
