"""Fusion of the lexical and semantic legs, and which queries the English model can read."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from sourcewise.answer.fusion import convex, rrf, semantic_reads

scored = st.lists(
    st.tuples(st.integers(0, 50), st.floats(-1e6, 1e6, allow_nan=False)),
    max_size=30,
    unique_by=lambda p: p[0],
)


def test_semantic_reads_latin_queries_and_not_korean_or_cyrillic() -> None:
    assert semantic_reads("token expiry after login")
    assert semantic_reads("Übergröße café naïve")
    assert semantic_reads("2025 404 -- ?")  # no letters: nothing tells against the model
    assert semantic_reads("HTTPClient 배포")  # ten Latin letters, four jamo
    assert not semantic_reads("배포 절차")
    assert not semantic_reads("배포 절차는 in k8s")  # 12 jamo + 4 Latin letters
    assert not semantic_reads("Привет мир")
    assert not semantic_reads("東京の天気")


def test_semantic_reads_counts_a_hangul_syllable_by_its_jamo() -> None:
    # A syllable block is two or three letters, as written: "File 클래스" is 4 Latin letters and
    # 7 jamo (클 ㅋㅡㄹ, 래 ㄹㅐ, 스 ㅅㅡ), mostly Korean; counted by blocks it was 4 of 7 Latin.
    assert not semantic_reads("File 클래스")
    assert not semantic_reads("API 배포")  # 3 Latin letters, 4 jamo
    assert not semantic_reads("Files 클래스")  # 5 Latin letters of 12
    assert semantic_reads("request files 클래스")  # 12 of 19


@given(st.text(max_size=200))
def test_semantic_reads_any_text_without_error(text: str) -> None:
    assert isinstance(semantic_reads(text), bool)


@given(st.text(alphabet=st.characters(min_codepoint=0xAC00, max_codepoint=0xD7A3), min_size=1, max_size=40))
def test_hangul_only_is_never_read_by_the_model(text: str) -> None:
    assert not semantic_reads(text)


@given(scored, scored, st.floats(0, 1))
def test_convex_keeps_every_candidate_once_best_first(lex: list, sem: list, alpha: float) -> None:  # type: ignore[type-arg]
    fused = convex(lex, sem, alpha)
    keys = [k for k, _ in fused]
    assert sorted(keys) == sorted({k for k, _ in lex} | {k for k, _ in sem})
    scores = [s for _, s in fused]
    assert scores == sorted(scores, reverse=True)
    assert all(-1e-9 <= s <= 1 + 1e-9 for s in scores)


@given(scored, scored)
def test_rrf_keeps_every_candidate_once_best_first(lex: list, sem: list) -> None:  # type: ignore[type-arg]
    fused = rrf(lex, sem)
    assert sorted(k for k, _ in fused) == sorted({k for k, _ in lex} | {k for k, _ in sem})
    scores = [s for _, s in fused]
    assert scores == sorted(scores, reverse=True)


def test_convex_weighs_scores_where_rrf_only_sees_ranks() -> None:
    # Lexical is sure of 1 and unsure of the rest; semantic slightly prefers 2 over 1.
    lex = [(1, 30.0), (2, 3.0), (3, 2.9)]
    sem = [(2, 0.80), (1, 0.79), (3, 0.10)]
    assert next(k for k, _ in convex(lex, sem)) == 1
    assert [k for k, _ in rrf(lex, sem)][:2] in ([1, 2], [2, 1])
    assert next(k for k, _ in convex(lex, sem, alpha=0.0)) == 2  # semantic alone


def test_convex_lets_the_lexical_leg_speak_for_what_the_model_did_not_read() -> None:
    # Chunk 1 holds the question's words (lexically first), past the part the model read (a
    # third of it): its vector is of a table before them. Chunk 2, short and read whole, is what
    # the model liked. Without the shares the model's view of chunk 1's beginning wins.
    lex = [(1, 10.0), (2, 6.0), (3, 1.0)]
    sem = [(2, 0.60), (3, 0.40), (1, 0.20)]
    assert [k for k, _ in convex(lex, sem)][:2] == [2, 1]
    read = {1: 0.3, 2: 1.0, 3: 1.0}
    assert [k for k, _ in convex(lex, sem, read=read)][:2] == [1, 2]


@given(scored, scored, st.floats(0, 1))
def test_convex_with_every_chunk_read_whole_is_convex(lex: list, sem: list, alpha: float) -> None:  # type: ignore[type-arg]
    whole = {k: 1.0 for k, _ in [*lex, *sem]}
    assert convex(lex, sem, alpha, read=whole) == convex(lex, sem, alpha)


@given(scored, scored, st.floats(0, 1), st.floats(0, 1))
def test_convex_with_shares_keeps_scores_in_range(lex: list, sem: list, alpha: float, share: float) -> None:  # type: ignore[type-arg]
    fused = convex(lex, sem, alpha, read={k: share for k, _ in [*lex, *sem]})
    assert all(-1e-9 <= s <= 1 + 1e-9 for _, s in fused)
    assert [s for _, s in fused] == sorted((s for _, s in fused), reverse=True)


def test_convex_reads_a_share_outside_zero_to_one_as_its_bound() -> None:
    """``convex`` is public: a share past 1 or below 0 (found in review) must not push a score out
    of 0..1; it counts as all read, or none."""
    fused = dict(convex([(1, 3.0), (2, 1.0)], [(1, 1.0), (2, 2.0)], read={1: 2.0, 2: -1.0}))
    assert all(0.0 <= score <= 1.0 for score in fused.values()), fused
    assert fused == dict(convex([(1, 3.0), (2, 1.0)], [(1, 1.0), (2, 2.0)], read={1: 1.0, 2: 0.0}))
