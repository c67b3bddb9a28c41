"""The lexical accelerator (kblex) against the real FTS5 it stands in for, on a corpus the tests write."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sourcewise import KnowledgeBase
from sourcewise.core.filters import parse_query
from sourcewise.sources import kblex
from sourcewise.sources.kb import match_expression
from sourcewise.sources.kbstore import SQLiteStore, StoreFilter

pytest.importorskip("numpy")

EN = (
    "deploy rollback release server cache index query search vector token parser stream socket "
    "kernel thread memory buffer python rust config build test docs guide market report payment"
).split()
KO = "배포 절차 시장 분석 보고서 서비스 테스트 스테이징 결제 성장 데이터 검색 색인 문서 설정".split()
WORDS = EN + KO + [f"w{i}" for i in range(60)]


def _text(rng: random.Random, n: int) -> str:
    # Zipf-like: a few words everywhere (IDF at or below zero), most rare; repeats within a chunk.
    return " ".join(rng.choices(WORDS, weights=[1 / (i + 1) for i in range(len(WORDS))], k=n))


def _write_corpus(folder: Path, files: int = 150, seed: int = 3) -> None:
    rng = random.Random(seed)
    for f in range(files):
        sub = folder / ("alpha" if f % 3 else "beta")
        sub.mkdir(parents=True, exist_ok=True)
        parts = [f"# {_text(rng, 3)}\n"]
        for _s in range(rng.randint(8, 20)):
            parts.append(f"## {_text(rng, rng.randint(1, 4))}\n\n{_text(rng, rng.randint(5, 60))}\n")
        ext = "md" if f % 4 else "txt"
        (sub / f"f{f}.{ext}").write_text("\n".join(parts), "utf-8")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("lexcorpus")
    _write_corpus(folder / "docs")
    KnowledgeBase(folder / "kb.sqlite3", semantic=False).index([folder / "docs"])
    return folder


def _open(path: Path) -> SQLiteStore:
    """A store past its first query (which FTS5 answers without reading the accelerator)."""
    store = SQLiteStore(path)
    store.lexical('("w1")', StoreFilter(), 1)
    return store


def _fts_all(store: SQLiteStore, match: str, where: StoreFilter) -> list[tuple[int, float]]:
    """Every match FTS5 finds, as (rowid, -bm25), in the accelerator's order (score, then rowid)."""
    store.accelerate = False
    try:
        got = store.lexical(match, where, 1_000_000)
    finally:
        store.accelerate = True
    return sorted(got, key=lambda x: (-x[1], x[0]))


def _same_ranking(fast: list[tuple[int, float]], full: list[tuple[int, float]], limit: int) -> None:
    assert len(fast) == min(limit, len(full))
    for (_, a), (_, b) in zip(fast, full, strict=False):
        assert a == pytest.approx(b, rel=1e-9, abs=1e-12)
    if not fast:
        return
    last = fast[-1][1]

    def tie(s: float) -> bool:
        return abs(s - last) <= 1e-9 * max(1.0, abs(last))

    # Above the last score the ids agree exactly; at it, ours are among FTS5's equally scored ones.
    assert {r for r, s in fast if not tie(s)} == {r for r, s in full[: len(fast)] if not tie(s)}
    assert {r for r, s in fast if tie(s)} <= {r for r, s in full if tie(s)}


def _queries(rng: random.Random, n: int) -> list[str]:
    out = []
    for _ in range(n):
        k = rng.randint(1, 5)
        words = rng.choices(WORDS, k=k)
        if rng.random() < 0.3:
            words.append(rng.choice(words))  # a duplicate term
        if rng.random() < 0.3:
            words.append(rng.choice(["zzunknown", "미지의단어", "q42x"]))
        out.append(" ".join(words))
    return out


def test_accelerated_ranking_equals_fts5_on_random_queries(corpus: Path) -> None:
    store = _open(corpus / "kb.sqlite3")
    rng = random.Random(11)
    wheres = [
        StoreFilter(),
        StoreFilter(paths=["beta"]),
        StoreFilter(exts=["txt"]),
        StoreFilter(not_paths=["alpha"], exts=["md"]),
        StoreFilter(paths=["nowhere"]),
        StoreFilter(paths=["alpha/f7.md", "beta/f3.txt"]),  # a few dozen rows: many windows of candidates
    ]
    used = 0
    for i, q in enumerate(_queries(rng, 300)):
        match = match_expression(parse_query(q), [])
        assert kblex.plain_terms(match) is not None, match
        where = wheres[i % len(wheres)]
        limit = rng.choice([1, 3, 10, 50, 200])
        fast = store.lexical(match, where, limit)
        used += store._lex is not None
        _same_ranking(fast, _fts_all(store, match, where), limit)
    assert used == 300, "the accelerator was not used"
    # Hand-written: a term twice is two FTS5 phrases (its score counts twice), and unknown terms.
    for match in ['("deploy" OR "deploy")', '("w1")', '("zzz" OR "w3" OR "w3" OR "w3")', '("zzz")']:
        _same_ranking(store.lexical(match, StoreFilter(), 10), _fts_all(store, match, StoreFilter()), 10)
    store.close()


def test_a_rank_of_every_row_agrees_with_fts5(corpus: Path) -> None:
    # The most common words match nearly every row: their IDF is clamped to 1e-6 as in fts5_aux.c.
    store = _open(corpus / "kb.sqlite3")
    for match in ['("deploy")', '("deploy" OR "rollback" OR "배포")', '("s" OR "w0")']:
        full = _fts_all(store, match, StoreFilter())
        _same_ranking(store.lexical(match, StoreFilter(), 100_000), full, 100_000)
    store.close()


def test_queries_the_accelerator_cannot_reproduce_go_to_fts5(corpus: Path) -> None:
    store = _open(corpus / "kb.sqlite3")
    for match in ['"deploy rollback"', '("deploy") NOT ("rollback")', '"deploy" AND ("w1" OR "w2")']:
        assert kblex.plain_terms(match) is None
        fast = store.lexical(match, StoreFilter(), 1000)
        assert {r for r, _ in fast} == {r for r, _ in _fts_all(store, match, StoreFilter())}
    store.close()


def _names(hits: list[object]) -> list[str]:
    return [Path(str(getattr(h, "path", ""))).name for h in hits]


def test_a_reindexed_file_is_searched_as_it_is_now(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    _write_corpus(docs, files=20)
    kb = KnowledgeBase(tmp_path / "kb.sqlite3", semantic=False)
    kb.index([docs])
    assert kb.search("zebracorn", mode="lexical") == []
    assert (tmp_path / "kb.sqlite3.lex.npz").is_file()
    target = next(docs.rglob("f5.md"))
    target.write_text("# Zebracorn\n\nzebracorn sightings\n", "utf-8")
    kb.index([docs])
    assert _names(kb.search("zebracorn", mode="lexical")) == ["f5.md"]
    # A fresh process reads the saved accelerator of the new generation: same answer.
    assert _names(
        KnowledgeBase(tmp_path / "kb.sqlite3", semantic=False).search("zebracorn", mode="lexical")
    ) == ["f5.md"]
    kb.close()


def test_another_connection_writing_makes_the_accelerator_stale(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    _write_corpus(docs, files=20)
    path = tmp_path / "kb.sqlite3"
    reader = KnowledgeBase(path, semantic=False)
    reader.index([docs])
    assert reader.search("unicornfish", mode="lexical") == []
    old = reader.store._lex  # type: ignore[attr-defined]
    assert old is not None
    (docs / "late.md").write_text("# Late\n\nunicornfish swim here\n", "utf-8")
    writer = KnowledgeBase(path, semantic=False)  # a second connection, as another process would be
    writer.index([docs])
    writer.close()
    assert _names(reader.search("unicornfish", mode="lexical")) == ["late.md"]
    assert reader.store._lex is not old  # type: ignore[attr-defined]
    reader.close()


def test_a_store_first_query_does_not_load_the_accelerator(corpus: Path) -> None:
    # A one-shot `sourcewise search` asks one question: FTS5 answers it without loading anything.
    store = SQLiteStore(corpus / "kb.sqlite3")
    store.lexical('("deploy")', StoreFilter(), 10)
    assert store._lex is None
    store.lexical('("deploy")', StoreFilter(), 10)
    assert store._lex is not None
    store.close()


def test_a_writer_that_does_not_bump_the_generation_still_makes_it_stale(tmp_path: Path) -> None:
    # As an older sourcewise would write: straight into the tables, the generation untouched.
    docs = tmp_path / "docs"
    _write_corpus(docs, files=10)
    path = tmp_path / "kb.sqlite3"
    store = SQLiteStore(path)
    kb = KnowledgeBase(store=store, semantic=False)
    kb.index([docs])
    assert store.lexical('("quokka")', StoreFilter(), 10) == []
    with sqlite3.connect(path) as raw:
        file_id = raw.execute("SELECT id FROM files LIMIT 1").fetchone()[0]
        cur = raw.execute(
            "INSERT INTO chunks(file_id, ordinal, heading_path, text, start_line, end_line, embed_hash)"
            " VALUES(?, 99, '[]', 'quokka', 1, 1, 'x')",
            (file_id,),
        )
        raw.execute(
            "INSERT INTO chunks_fts(rowid, title, headings, body) VALUES(?, '', '', 'quokka')",
            (cur.lastrowid,),
        )
    assert [r for r, _ in store.lexical('("quokka")', StoreFilter(), 10)] == [cur.lastrowid]
    store.close()


def test_a_rewrite_that_keeps_every_total_still_makes_it_stale(tmp_path: Path) -> None:
    # A chunk's words replaced by as many others, the generation untouched: the row count and the
    # token totals (FTS5's averages record) stay the same, its structure record does not.
    docs = tmp_path / "docs"
    _write_corpus(docs, files=10)
    path = tmp_path / "kb.sqlite3"
    store = SQLiteStore(path)
    KnowledgeBase(store=store, semantic=False).index([docs])
    assert store.lexical('("quokka")', StoreFilter(), 10) == []
    with sqlite3.connect(path) as raw:
        rowid, title, headings, body = raw.execute(
            "SELECT rowid, title, headings, body FROM chunks_fts ORDER BY rowid DESC LIMIT 1"
        ).fetchone()
        words = body.split()
        swapped = " ".join(["quokka", *words[1:]])
        raw.execute("DELETE FROM chunks_fts WHERE rowid = ?", (rowid,))
        raw.execute(
            "INSERT INTO chunks_fts(rowid, title, headings, body) VALUES(?, ?, ?, ?)",
            (rowid, title, headings, swapped),
        )
    assert [r for r, _ in store.lexical('("quokka")', StoreFilter(), 10)] == [rowid]
    store.close()
    again = SQLiteStore(path)  # a new process reading the saved file
    for _ in range(2):
        assert [r for r, _ in again.lexical('("quokka")', StoreFilter(), 10)] == [rowid]
    again.close()


def test_an_accelerator_scored_with_other_constants_is_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sourcewise.sources import kbstore

    docs = tmp_path / "docs"
    _write_corpus(docs, files=5)
    path = tmp_path / "kb.sqlite3"
    KnowledgeBase(path, semantic=False).index([docs])
    store = SQLiteStore(path)
    lex = Path(str(path) + ".lex.npz")
    assert kblex.load(lex, store._generation()) is not None
    monkeypatch.setattr(
        kbstore, "_SCORING", repr((kblex.FORMAT, kblex.K1, kblex.B, (5.0, 2.0, 1.0))).encode()
    )
    assert kblex.load(lex, store._generation()) is None  # as a release with other weights sees it
    store.close()


def test_temporary_files_of_a_killed_save_are_swept(tmp_path: Path) -> None:
    import os
    import time

    docs = tmp_path / "docs"
    _write_corpus(docs, files=5)
    path = tmp_path / "kb.sqlite3"
    old = tmp_path / "kb.sqlite3.lex.npz.abc123.tmp"
    young = tmp_path / "kb.sqlite3.lex.npz.def456.tmp"  # perhaps another process saving right now
    other = tmp_path / "notes.tmp"
    for f in (old, young, other):
        f.write_bytes(b"partial")
    past = time.time() - kblex.STALE_TMP - 60
    os.utime(old, (past, past))
    os.utime(other, (past, past))
    KnowledgeBase(path, semantic=False).index([docs])
    assert Path(str(path) + ".lex.npz").exists()
    assert not old.exists()
    assert young.exists()
    assert other.exists()


@pytest.mark.parametrize("damage", ["garbage", "truncated", "foreign"])
def test_a_damaged_or_foreign_accelerator_file_is_rebuilt(tmp_path: Path, damage: str) -> None:
    docs = tmp_path / "docs"
    _write_corpus(docs, files=15)
    path = tmp_path / "kb.sqlite3"
    KnowledgeBase(path, semantic=False).index([docs])
    lex = Path(str(path) + ".lex.npz")
    if damage == "garbage":
        lex.write_bytes(b"not a zip file at all")
    elif damage == "truncated":
        lex.write_bytes(lex.read_bytes()[: lex.stat().st_size // 2])
    else:  # another knowledge base's accelerator copied over this one's
        other = tmp_path / "other"
        _write_corpus(other / "docs", files=5, seed=9)
        KnowledgeBase(other / "kb.sqlite3", semantic=False).index([other / "docs"])
        lex.write_bytes(Path(str(other / "kb.sqlite3") + ".lex.npz").read_bytes())
    store = SQLiteStore(path)
    match = '("deploy" OR "배포" OR "w7")'
    for _ in range(2):  # the first query of a store is FTS5's; the second reads (here: rebuilds) it
        _same_ranking(store.lexical(match, StoreFilter(), 10), _fts_all(store, match, StoreFilter()), 10)
    assert store._lex is not None
    assert kblex.load(lex, store._generation()) is not None, "the rebuilt accelerator was saved"
    store.close()


def test_an_in_memory_store_keeps_its_accelerator_in_memory(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    _write_corpus(docs, files=10)
    kb = KnowledgeBase(":memory:", semantic=False)
    kb.index([docs])
    store = kb.store
    assert isinstance(store, SQLiteStore)
    match = '("deploy" OR "w3")'
    _same_ranking(store.lexical(match, StoreFilter(), 10), _fts_all(store, match, StoreFilter()), 10)
    assert store._lex is not None
    assert not list(tmp_path.glob("*.npz"))
    assert not Path(":memory:.lex.npz").exists()


def test_text_fts5_splits_otherwise_leaves_ranking_to_fts5() -> None:
    store = SQLiteStore(":memory:")
    with store.batch():
        store.db.execute(
            "INSERT INTO chunks_fts(rowid, title, headings, body) VALUES(1, 'a', '', 'x-y z'), (2, 'b', '', 'z')"
        )
        store._bump()
    assert kblex.build(store.db, store._generation(), (4.0, 2.0, 1.0)) is None
    assert store.lexical('("z")', StoreFilter(), 10) == [
        (r, s) for r, s in _fts_all(store, '("z")', StoreFilter())
    ]
    assert store._lex is None


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(max_size=80))
def test_plain_terms_takes_only_an_or_of_quoted_single_terms(match: str) -> None:
    terms = kblex.plain_terms(match)
    if terms is not None:
        assert terms
        assert all(t and '"' not in t and not any(c.isspace() for c in t) for t in terms)
        assert match == "(" + " OR ".join(f'"{t}"' for t in terms) + ")"


_HOSTILE = st.lists(
    st.one_of(
        st.sampled_from(WORDS), st.text(min_size=1, max_size=6), st.sampled_from(['"', "OR", "NOT", "*", "-"])
    ),
    min_size=1,
    max_size=8,
)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_HOSTILE)
def test_hostile_queries_rank_as_fts5_does(corpus: Path, words: list[str]) -> None:
    store = _open(corpus / "kb.sqlite3")
    try:
        match = match_expression(parse_query(" ".join(words)), [])
        if not match:
            return
        try:
            full = _fts_all(store, match, StoreFilter())
        except sqlite3.Error:
            full = None
        if full is None:
            with pytest.raises(sqlite3.Error):
                store.lexical(match, StoreFilter(), 10)
            return
        _same_ranking(store.lexical(match, StoreFilter(), 10), full, 10)
    finally:
        store.close()


def test_threads_searching_at_once_get_the_answers_of_one_thread(corpus: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    store = _open(corpus / "kb.sqlite3")
    matches = [match_expression(parse_query(q), []) for q in _queries(random.Random(5), 200)]
    alone = [store.lexical(m, StoreFilter(), 10) for m in matches]
    with ThreadPoolExecutor(max_workers=6) as pool:
        together = list(pool.map(lambda m: store.lexical(m, StoreFilter(), 10), matches * 3))
    assert together == alone * 3
    store.close()
