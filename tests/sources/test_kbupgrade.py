"""An index of an earlier schema: rebuilt from the files it lists, by ``sourcewise index`` and the
Python API; a search says how instead of rebuilding under its deadline; a rebuild cut short goes
on at the next open."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
import tantivy
from test_kbscale import _names, _stdlib_docs

from sourcewise import IndexReport, KnowledgeBase
from sourcewise.config import Settings
from sourcewise.errors import SourceUnavailable
from sourcewise.models import SourceQuery
from sourcewise.sources import resolve_source
from sourcewise.sources.kb.store import KBStore

from clirun import run_cli


def test_an_index_of_schema_2_is_rebuilt_with_its_file_column(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The tantivy index before the ``file`` column (schema 2): rebuilt from its files on first use,
    said once; search spreads results over files by that column."""
    assert _stdlib_docs(tmp_path / "docs", 5) == 5
    path = tmp_path / "kb.sqlite3"
    base = KnowledgeBase(path, semantic=False)
    files, chunks = base.index([tmp_path / "docs"]).added, base.info()[1]
    base.close()
    with sqlite3.connect(path) as db:
        db.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")
    again = KnowledgeBase(path, semantic=False)
    assert "earlier sourcewise (index schema 2)" in caplog.text
    assert again.info()[:2] == (len(files), chunks)
    store = again.store
    assert isinstance(store, KBStore)
    hits = store.index.searcher().search(tantivy.Query.all_query(), 10).hits
    assert None not in store.view().files([(a.segment_ord, a.doc) for _, a in hits])
    assert again.search("the", mode="lexical")
    again.close()


def _legacy_index(path: Path, files: list[Path]) -> None:
    """An index as the SQLite FTS5 version (schema 1) wrote it."""
    with sqlite3.connect(path) as db:
        db.executescript(
            "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
            "CREATE TABLE files(id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, hash TEXT NOT NULL,"
            " mtime_ns INTEGER NOT NULL, size INTEGER NOT NULL, title TEXT NOT NULL, doc_date TEXT NOT NULL,"
            " ext TEXT NOT NULL, mtime_dated INTEGER NOT NULL, indexed_at REAL NOT NULL DEFAULT 0);"
            "CREATE TABLE chunks(id INTEGER PRIMARY KEY, file_id INTEGER, ordinal INTEGER, heading_path TEXT,"
            " text TEXT, start_line INTEGER, end_line INTEGER, embed_hash TEXT);"
            "CREATE VIRTUAL TABLE chunks_fts USING fts5(title, headings, body);"
            "CREATE TABLE vectors(hash TEXT PRIMARY KEY, vec BLOB NOT NULL);"
            "INSERT INTO meta VALUES('schema_version', '1');"
        )
        for f in files:
            db.execute("INSERT INTO files(path, hash, mtime_ns, size, title, doc_date, ext, mtime_dated)"
                       " VALUES(?, 'x', 0, 0, 't', '2025-01-01', 'md', 1)", (str(f),))  # fmt: skip
            db.execute("INSERT INTO chunks_fts VALUES('t', '', 'old body never read')")
    (path.parent / (path.name + ".lex.npz")).write_bytes(b"old accelerator")


def test_an_index_of_the_previous_version_is_rebuilt_with_a_clear_message(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.md").write_text("# Alpha\n\nThe rollback procedure.\n", "utf-8")
    (folder / "b.md").write_text("# Beta\n\nDeploy notes.\n", "utf-8")
    path = tmp_path / "kb.sqlite3"
    _legacy_index(path, [folder / "a.md", folder / "b.md", folder / "gone.md"])
    base = KnowledgeBase(path, semantic=False)
    assert "earlier sourcewise" in caplog.text
    assert "rebuilding" in caplog.text
    assert _names(base.search("rollback", mode="lexical")) == ["a.md"]
    assert base.search("old body", mode="lexical") == []  # the old rows are never read
    assert base.info()[:2] == (2, 2)
    assert not (tmp_path / "kb.sqlite3.lex.npz").exists()
    base.close()
    caplog.clear()
    again = KnowledgeBase(path, semantic=False)  # rebuilt once: the next open says nothing
    assert "earlier sourcewise" not in caplog.text
    assert again.info()[:2] == (2, 2)
    again.close()


def test_a_rebuild_cut_short_goes_on_at_the_next_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The upgrade's file list is on disk until the rebuild is done: a rebuild cut short (Ctrl-C, a
    deadline, a crash) goes on at the next open. Found by a user tour: a rebuild cut by ``ask``'s
    deadline had left an index of no files, which then answered "nothing found" for ever."""
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.md").write_text("# Alpha\n\nThe rollback procedure.\n", "utf-8")
    (folder / "b.md").write_text("# Beta\n\nDeploy notes.\n", "utf-8")
    path = tmp_path / "kb.sqlite3"
    _legacy_index(path, [folder / "a.md", folder / "b.md"])

    def cut_short(self: KnowledgeBase, *args: object, **kwargs: object) -> IndexReport:
        raise KeyboardInterrupt

    with monkeypatch.context() as m:
        m.setattr(KnowledgeBase, "index", cut_short)
        with pytest.raises(KeyboardInterrupt):
            KnowledgeBase(path, semantic=False)
    base = KnowledgeBase(path, semantic=False)
    assert base.info()[:2] == (2, 2)
    assert _names(base.search("rollback", mode="lexical")) == ["a.md"]
    base.close()
    with sqlite3.connect(path) as db:  # done: the list is gone, the next open rebuilds nothing
        assert db.execute("SELECT count(*) FROM rebuild").fetchone() == (0,)


async def test_a_search_does_not_rebuild_an_old_index_under_its_deadline(tmp_path: Path) -> None:
    """A source's search (``ask``, the doors) says how to rebuild an earlier schema's index instead
    of rebuilding it under its few seconds; the file list is kept for ``sourcewise index``."""
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.md").write_text("# Alpha\n\nThe rollback procedure.\n", "utf-8")
    path = tmp_path / "kb.sqlite3"
    _legacy_index(path, [folder / "a.md"])
    source = resolve_source(f"kb:{path}", Settings(state_dir=tmp_path / "state"))
    with pytest.raises(
        SourceUnavailable,
        match=r"earlier sourcewise wrote this index: `sourcewise index --status --kb .*` rebuilds it from its 1 files",
    ):
        await source.search(SourceQuery(source="knowledge_base", mode="keyword", query="rollback"))
    await source.aclose()
    out = run_cli(["index", "--status", "--json", "--kb", str(path)])
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["files"] == 1


def test_the_rebuild_command_is_quoted_to_paste() -> None:
    from sourcewise.sources.kb.store import rebuild_hint

    assert "--kb '/tmp/my notes/kb.sqlite3'` rebuilds it from its 3 files" in rebuild_hint(
        "/tmp/my notes/kb.sqlite3", 3
    )
