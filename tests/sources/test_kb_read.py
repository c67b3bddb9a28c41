"""What the knowledge base reads back, on each backend (a real PostgreSQL from tests/pgserver.py):
``ask``'s fetch depth (``KnowledgeBaseSource.read``: a hit reads on into the chunk after it in its
section) and a hybrid query's read shares (kept at indexing, not read back)."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import cast

import pytest

from realtext import real_paragraphs
from sourcewise import KnowledgeBase
from sourcewise.config import Settings
from sourcewise.models import SourceQuery
from sourcewise.sources import resolve_source
from sourcewise.sources.kb.embed import read_share
from sourcewise.sources.kb.query import LexQuery, Row, StoreFilter, Viewer, embedded
from sourcewise.sources.kb.search import read_shares

# A section the kb cuts in two at a blank line (the chunk size is reached), then another section.
PARAGRAPH = "Tests run in parallel threads by default, which is fast but shares state between them. " * 16
DOC = (
    "# Running tests\n\n## In parallel or one at a time\n\n"
    f"{PARAGRAPH}To run them one at a time, send the thread flag. Take a look at the following example:\n\n"
    "```console\n$ cargo test -- --test-threads=1\n```\n\n"
    "## Showing output\n\nOutput of passing tests is captured and not shown.\n"
)


@pytest.fixture(params=["embedded", "postgresql"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "postgresql":
        return str(request.getfixturevalue("pg_url"))
    return str(tmp_path / "kb.sqlite3")


async def test_a_hit_reads_on_into_the_next_chunk_of_its_section(location: str, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "tests.md").write_text(DOC, "utf-8")
    with KnowledgeBase(location, semantic=False) as kb:
        kb.index([docs])
        chunks = kb.search("thread", limit=10, mode="lexical")
    assert len(chunks) == 2, "the first section is cut into two chunks"
    where = "url" if "://" in location else "path"
    settings = Settings(state_dir=tmp_path, sources={"kb": {"type": "kb", where: location}})
    source = resolve_source("kb", settings)
    try:
        found = await source.search(
            SourceQuery(source="knowledge_base", query="tests thread output", mode="keyword")
        )
        hits = sorted(found.hits, key=lambda h: h.start_line or 0)
        first = next(h for h in hits if "following example" in h.text)
        assert "--test-threads=1" not in first.text, "the command is in the next chunk"
        read, count, notes = await source.read([first], "how do I run tests one at a time?", 1, 5.0)
        assert "--test-threads=1" in read[0].meta["after"]
        assert (count, notes) == (1, [])
        assert (read[0].text, read[0].location) == (first.text, first.location), "the hit itself is kept"
        last = next(h for h in hits if h.heading_path[-1:] == ("Showing output",))
        alone, count, _ = await source.read([last], "output", 1, 5.0)
        assert ("after" in alone[0].meta, count) == (False, 0), "the last chunk of a file has none after it"
        untouched, count, _ = await source.read([first], "q", 0, 5.0)
        assert ("after" in untouched[0].meta, count) == (False, 0), "depth 0 reads nothing"
    finally:
        await source.aclose()



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
