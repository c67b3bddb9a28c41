"""Cross-source merge and seed 003's authority hierarchies, as pure functions (answer/merge.py,
answer/relevance.py)."""

from __future__ import annotations

from datetime import date

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sourcewise.answer.merge import hit_key, merge_and_rank
from sourcewise.answer.relevance import AUTHORITY, TIER_AUTHORITY, authority_value, score_hit
from sourcewise.models import Authority, Hit, QueryKind, SourceKind

TODAY = date(2026, 11, 21)
TERMS = ["deploy", "rollback"]


def _hit(location: str, source: str, *, authority: Authority = "wiki", kind: SourceKind = "knowledge_base",
         tier: int | None = None, text: str = "How to deploy and rollback.") -> Hit:  # fmt: skip
    return Hit(
        title="Deploy",
        location=location,
        text=text,
        snippet=text,
        source=source,
        kind=kind,
        authority=authority,
        score=1.0,
        tier=tier,
    )


def test_the_same_url_from_a_wiki_and_the_web_merges_into_one_entry() -> None:
    wiki = _hit("https://docs.example.com/deploy/?utm_source=wiki", "wiki")
    web = _hit("https://docs.example.com/deploy", "web", kind="web", authority="web", tier=1)
    other = _hit("https://docs.example.com/rollback", "web", kind="web", authority="web", tier=1)
    assert hit_key(wiki) == hit_key(web)
    ranked = merge_and_rank([[wiki], [web, other]], terms=TERMS, kind="fact", today=TODAY)
    assert len(ranked) == 2
    merged = next(r for r in ranked if hit_key(r.hit) == hit_key(web))
    assert merged.sources == ("wiki", "web")
    single = next(r for r in ranked if r.hit.location.endswith("/rollback"))
    assert single.sources == ("web",)


def test_a_merged_item_says_which_sources_found_it_at_what_rank_and_weight() -> None:
    """As SearXNG shows its engines: each source that returned the item, the rank it gave it, and
    its weight there (the relevance its copy scored; the item keeps the best copy's); the web's
    providers named. The deep output and the JSON both carry it."""
    from sourcewise.doors.present import render_answer
    from sourcewise.models import Answer, ProviderHit, Route, SearchResult
    from sourcewise.planning.routing import plan
    from sourcewise.sources.web import hit_from_result

    result = SearchResult(
        title="Deploy", url="https://docs.example.com/deploy", canonical_url="https://docs.example.com/deploy",
        snippet="How to deploy and rollback.", tier=1, reliability_score=90, reason="official",
        providers=(ProviderHit(provider="brave", position=2), ProviderHit(provider="searxng", position=1)),
    )  # fmt: skip
    web_first = _hit("https://docs.example.com/other", "web", kind="web", authority="web", tier=1)
    web = hit_from_result(result, "web", 1)
    wiki = _hit("https://docs.example.com/deploy?utm_source=wiki", "wiki", text="deploy")
    ranked = merge_and_rank([[wiki], [web_first, web]], terms=TERMS, kind="fact", today=TODAY)
    merged = next(r for r in ranked if hit_key(r.hit) == hit_key(web))
    assert merged.sources == ("wiki", "web")
    by = {f.source: f for f in merged.found_by}
    assert (by["wiki"].position, by["web"].position) == (1, 2)
    assert by["web"].providers == ("brave", "searxng")
    assert by["wiki"].providers == ()
    for source, hit, rank in (("wiki", wiki, 0), ("web", web, 1)):
        expected, _ = score_hit(hit, terms=TERMS, kind="fact", today=TODAY, rank=rank)
        assert by[source].weight == pytest.approx(min(1.0, expected), abs=1e-4)
    assert merged.relevance == pytest.approx(max(f.weight for f in merged.found_by), abs=1e-4)
    answer = Answer(question="deploy", text="", hits=tuple(ranked), route=Route(action="skip", reason="test"),
                    plan=plan("deploy", ["knowledge_base"]))  # fmt: skip
    deep = render_answer(answer, "deep")
    assert (
        f"found by wiki #1 ({by['wiki'].weight:.2f}), web via brave, searxng #2 ({by['web'].weight:.2f})"
        in deep
    )
    assert '"found_by"' in answer.model_dump_json()


def test_the_same_location_from_two_private_sources_merges_and_keeps_the_better_hit() -> None:
    short = _hit("notes/deploy.md#L1-L9", "kb", text="deploy")
    full = _hit("notes/deploy.md#L1-L9", "kb2", text="How to deploy and rollback, step by step. " * 5)
    ranked = merge_and_rank([[short], [full]], terms=TERMS, kind="fact", today=TODAY)
    assert len(ranked) == 1
    assert ranked[0].sources == ("kb", "kb2")
    assert ranked[0].hit.source == "kb2", "the better-scoring copy is kept"


@pytest.mark.parametrize(
    ("kind", "order"),
    [
        ("fact", ["wiki", "shared_doc", "email", "chat"]),
        ("decision", ["meeting_notes", "thread_conclusion", "email", "chat"]),
        ("status", ["tracker_task", "chat", "status_doc", "email"]),
    ],
)
def test_authority_hierarchies_follow_seed_003(kind: QueryKind, order: list[Authority]) -> None:
    values = [authority_value(_hit("x", "s", authority=a), kind)[0] for a in order]
    assert values[0] == 1.0
    assert values == sorted(values, reverse=True)
    assert len(set(values)) == len(values), f"each class is its own level: {values}"
    notes = [authority_value(_hit("x", "s", authority=a), kind)[1] for a in order]
    assert [n.split(":")[1].strip().split(" ")[1] for n in notes] == ["1", "2", "3", "4"]
    hits = [_hit(f"loc{i}", "s", authority=a) for i, a in enumerate(reversed(order))]
    ranked = merge_and_rank([hits], terms=TERMS, kind=kind, today=TODAY)
    assert ranked[0].hit.authority == order[0], "the top class ranks first, all else equal"


@pytest.mark.parametrize("kind", ["fact", "decision", "status", "document"])
def test_web_tiers_feed_authority(kind: QueryKind) -> None:
    for tier, cls in TIER_AUTHORITY.items():
        web, note = authority_value(
            _hit("https://e.org", "web", kind="web", authority="web", tier=tier), kind
        )
        assert web == authority_value(_hit("x", "s", authority=cls), kind)[0]
        if web > 0.2:
            assert f"(web tier {tier})" in note
    tiers = [
        authority_value(_hit("u", "web", kind="web", authority="web", tier=t), "fact")[0]
        for t in (1, 2, 3, 4)
    ]
    assert tiers == [1.0, 0.733, 0.467, 0.2]
    untiered = authority_value(_hit("u", "web", kind="web", authority="web"), "fact")
    assert untiered == (0.2, "web: not in the fact hierarchy")


@given(
    st.sampled_from(sorted(AUTHORITY)),
    st.sampled_from(["wiki", "shared_doc", "email", "chat", "meeting_notes", "thread_conclusion",
                     "tracker_task", "status_doc", "official_doc", "web"]),
    st.sampled_from(["knowledge_base", "web", "chat", "code"]),
    st.one_of(st.none(), st.integers(1, 4)),
    st.text(max_size=300),
)  # fmt: skip
def test_relevance_stays_in_range_and_explains_itself(
    kind: QueryKind, authority: Authority, source_kind: SourceKind, tier: int | None, text: str
) -> None:
    hit = _hit("x", "s", authority=authority, kind=source_kind, tier=tier, text=text)
    value, factors = score_hit(hit, terms=TERMS, kind=kind, today=TODAY, rank=0)
    assert 0.0 <= value <= 1.0
    assert [f.name for f in factors] == ["keyword", "recency", "authority", "completeness"]
    assert abs(sum(f.weight for f in factors) - 1.0) < 1e-9
    assert all(0.0 <= f.value <= 1.0 and f.note for f in factors)
