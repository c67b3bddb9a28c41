"""The knowledge base on PostgreSQL, beyond the shared suite (tests/sources/test_kb.py runs on both backends):
migrations, passwords, locations that never show them, the source and the CLI on a URL, two indexers
at once, and a server killed mid-batch. A real PostgreSQL 15 (tests/pgserver.py), no mock."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_kb import _chunks, names, tree

from sourcewise import IndexReport, KnowledgeBase
from sourcewise.config import Settings
from sourcewise.errors import IndexVersionError, SourceUnavailable
from sourcewise.models import SourceQuery
from sourcewise.sources import resolve_source
from sourcewise.sources.kb.pgschema import MIGRATIONS

from clirun import run_cli
from pgserver import PgServer, postgres


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    return tree(tmp_path)


def _one(url: str, sql: str) -> int:
    import psycopg

    with psycopg.connect(url) as db:
        row = db.execute(sql).fetchone()
    assert row is not None
    return int(row[0])


def _assert_consistent(url: str) -> None:
    """Chunks, file rows and BM25's counts agree; no chunk is stored twice."""
    chunks = _one(url, "SELECT count(*) FROM kb_chunks")
    assert _one(url, "SELECT coalesce(sum(chunks), 0) FROM kb_files") == chunks
    assert _one(url, "SELECT value FROM kb_counts WHERE name = 'docs'") == chunks
    assert _one(url, "SELECT value FROM kb_counts WHERE name = 'tokens_2'") == _one(
        url, "SELECT coalesce(sum(len_body), 0) FROM kb_chunks"
    )
    distinct = (
        "SELECT count(*) FROM (SELECT DISTINCT path, start_line, end_line, embed_hash FROM kb_chunks) d"
    )
    assert _one(url, distinct) == chunks


def test_migrations_run_once_and_a_newer_schema_is_refused(pg_url: str) -> None:
    KnowledgeBase(pg_url, semantic=False).close()
    KnowledgeBase(pg_url, semantic=False).close()
    assert _one(pg_url, "SELECT count(*) FROM kb_migrations") == len(MIGRATIONS)
    import psycopg

    with psycopg.connect(pg_url) as db:
        db.execute("INSERT INTO kb_migrations(version) VALUES (%s)", (MIGRATIONS[-1][0] + 1,))
    with pytest.raises(IndexVersionError, match="newer sourcewise"):
        KnowledgeBase(pg_url, semantic=False)


def test_the_password_comes_from_the_url_pgpassword_or_pgpass_and_is_never_shown(
    pg_server: PgServer, pg_url: str, docs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    database = pg_url.rsplit("/", 1)[1]
    bare = pg_server.url(database, password=False)
    with KnowledgeBase(pg_url, semantic=False) as kb:
        report = kb.index([docs])
        assert report.index == bare
        assert kb.status().index == bare
    monkeypatch.setenv("PGPASSFILE", str(tmp_path / "none"))
    monkeypatch.setenv("PGPASSWORD", pg_server.password)
    with KnowledgeBase(bare, semantic=False) as kb:
        assert names(kb.search("mentor", mode="lexical")) == ["onboarding.rst"]
    monkeypatch.delenv("PGPASSWORD")
    pgpass = tmp_path / "pgpass"
    pgpass.write_text(f"127.0.0.1:{pg_server.port}:{database}:postgres:{pg_server.password}\n")
    pgpass.chmod(0o600)
    monkeypatch.setenv("PGPASSFILE", str(pgpass))
    with KnowledgeBase(bare, semantic=False) as kb:
        assert kb.info()[0] == 5
    wrong = pg_server.url(database).replace(pg_server.password, "not-the-password-x9")
    monkeypatch.setenv("PGPASSFILE", str(tmp_path / "none"))
    with pytest.raises(SourceUnavailable) as caught:
        KnowledgeBase(wrong, semantic=False)
    assert "not-the-password-x9" not in str(caught.value)
    assert bare in str(caught.value)


async def test_the_kb_source_reads_a_postgresql_url(pg_server: PgServer, pg_url: str, docs: Path) -> None:
    KnowledgeBase(pg_url, semantic=False).index([docs])
    settings = Settings(state_dir=docs.parent / "state", sources={"team": {"type": "kb", "path": pg_url}})
    for spec in ("team", "kb:" + pg_url):
        source = resolve_source(spec, settings)
        result = await source.search(SourceQuery(source="knowledge_base", mode="keyword", query="배포 절차"))
        assert names(list(result.hits))[:1] == ["deploy.md"]
        info = await source.info()
        assert info.ready
        assert info.items == 5
        assert pg_server.password not in (info.location or "")
        await source.aclose()


def test_the_cli_indexes_into_a_postgresql_url(
    pg_server: PgServer, pg_url: str, docs: Path, tmp_path: Path
) -> None:
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache"), "XDG_CONFIG_HOME": str(tmp_path / "cfg")}
    out = run_cli(["index", str(docs), "--no-semantic", "--json", "--kb", pg_url], env=env)
    assert out.returncode == 0, out.stderr
    assert len(IndexReport.model_validate_json(out.stdout).added) == 5
    status = run_cli(["index", "--status", "--kb", pg_url], env=env)
    assert status.returncode == 0, status.stderr
    assert "5 files, 7 chunks" in status.stdout
    assert pg_server.password not in out.stdout + out.stderr + status.stdout + status.stderr
    assert not (tmp_path / "cache" / "sourcewise" / "kb.sqlite3").exists()


INDEXER = """
import sys
from sourcewise.errors import SourcewiseError
from sourcewise.sources.kb import pg as kbpg
from sourcewise.sources.kb.source import KnowledgeBase
kbpg.COMMIT_SECONDS = 0.2
print("start", flush=True)
try:
    KnowledgeBase(sys.argv[1], semantic=False).index([sys.argv[2]])
except SourcewiseError as exc:
    sys.exit(f"error: {exc}")
print("done", flush=True)
"""


def _notes(folder: Path, count: int) -> Path:
    big = folder / "big"
    big.mkdir()
    for i in range(count):
        (big / f"n{i}.md").write_text(f"# Note {i}\n\n" + f"filler text number {i} about nothing\n\n" * 30)
    return big


def test_two_indexers_at_once_neither_corrupt_nor_duplicate(pg_url: str, docs: Path) -> None:
    _notes(docs, 400)
    procs = [subprocess.Popen([sys.executable, "-c", INDEXER, pg_url, str(docs)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]  # fmt: skip
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        assert out.split() == ["start", "done"]
    _assert_consistent(pg_url)
    with KnowledgeBase(pg_url, semantic=False) as kb:
        assert kb.info()[0] == 405
        hits = kb.search("filler", mode="lexical", limit=200)
        assert len({h.location for h in hits}) == len(hits) == 200


def test_postgresql_killed_mid_batch_leaves_the_previous_index_whole(docs: Path) -> None:
    with postgres() as server:
        url = server.url()
        with KnowledgeBase(url, semantic=False) as kb:
            kb.index([docs])
            before = [h.location for h in kb.search("배포 절차", mode="lexical")]
        _notes(docs, 1500)  # committed every 0.2 s: ~1 s of work is left when the kill lands
        proc = subprocess.Popen([sys.executable, "-c", INDEXER, url, str(docs)], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)  # fmt: skip
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and _chunks(url) < 200:
            time.sleep(0.05)
        os.kill(server.pid(), signal.SIGKILL)  # the server, not the indexer: its batch is cut mid-way
        _, err = proc.communicate(timeout=120)
        assert proc.returncode != 0
        assert "Traceback" not in err, err[-2000:]
        assert "error: kb: postgresql://postgres@" in err, err
        _restart(server)
        _assert_consistent(url)
        with KnowledgeBase(url, semantic=False) as kb:
            assert [h.location for h in kb.search("배포 절차", mode="lexical")] == before
            assert names(kb.search("mentor", mode="lexical")) == ["onboarding.rst"]
            assert kb.index([docs]).removed == []  # the next run completes
            assert kb.info()[0] == 1505
        _assert_consistent(url)


def _restart(server: PgServer) -> None:
    """Start the killed server again once its orphaned backends have gone (crash recovery runs)."""
    deadline = time.monotonic() + 60
    while True:
        try:
            server.start()
            return
        except AssertionError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def test_a_read_only_connection_opens_and_searches_a_current_database(pg_url: str, docs: Path) -> None:
    """What a read replica allows: no migration, no write on open; queries answer."""
    with KnowledgeBase(pg_url, semantic=False) as kb:
        kb.index([docs])
    read_only = pg_url + "?options=-c%20default_transaction_read_only%3Don"
    with KnowledgeBase(read_only, semantic=False) as kb:
        assert names(kb.search("mentor", mode="lexical")) == ["onboarding.rst"]
        (docs / "market.txt").write_text("changed\n", "utf-8")
        with pytest.raises(SourceUnavailable, match="read-only"):
            kb.index([docs / "market.txt"])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    key=st.sampled_from(["path", "-path", "title", "-title", "ext", "-type"]),
    value=st.text(alphabet=st.sampled_from("%_\\*?'\"ab.dmo/-x ops배포"), min_size=1, max_size=12),
)
def test_any_filter_value_keeps_the_same_chunks_on_both_backends(
    pair: tuple[KnowledgeBase, KnowledgeBase], key: str, value: str
) -> None:
    """LIKE's own characters (``%``, ``_``, ``\\``), quotes, globs and Hangul in a filter value:
    PostgreSQL keeps exactly the chunks the embedded engine keeps, ranked the same."""
    filters = {key: value.strip() or "x"}
    got = [[h.location for h in kb.search("deploy 배포 market mentor token", mode="lexical", filters=filters)]
           for kb in pair]  # fmt: skip
    assert got[0] == got[1]


@pytest.fixture
def pair(pg_url: str, tmp_path: Path) -> Iterator[tuple[KnowledgeBase, KnowledgeBase]]:
    """The same files in an embedded and a PostgreSQL knowledge base (one test's, every example's)."""
    docs = tree(tmp_path / "pair")
    built = (
        KnowledgeBase(str(tmp_path / "pair.sqlite3"), semantic=False),
        KnowledgeBase(pg_url, semantic=False),
    )
    for kb in built:
        kb.index([docs])
    yield built
    for kb in built:
        kb.close()
