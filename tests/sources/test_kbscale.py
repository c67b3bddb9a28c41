"""The knowledge base on tantivy: one analyzer for index and query, status, migration from the
SQLite FTS5 version, odd tokens of real text."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import sysconfig
from collections.abc import Iterator
from pathlib import Path

import pytest
import tantivy
from hypothesis import given, settings
from hypothesis import strategies as st

from realtext import real_paragraphs as _real_paragraphs
from realtext import spread
from sourcewise import IndexReport, KnowledgeBase
from sourcewise.sources.kb import terms as kbterms
from sourcewise.sources.kb.query import HEADINGS_SEP, Row, pack, unpack
from sourcewise.sources.kb.store import KBStore

from clirun import run_cli


def _names(hits: list) -> list[str]:  # type: ignore[type-arg]
    return [Path(h.path).name for h in hits]


def _stdlib_docs(folder: Path, count: int) -> int:
    """Docstrings of the standard library (real text nobody here wrote) as Markdown files."""
    folder.mkdir()
    written = 0
    for path in sorted(Path(sysconfig.get_paths()["stdlib"]).glob("*.py")):
        try:
            tree = ast.parse(path.read_bytes())
        except (SyntaxError, ValueError):
            continue
        nodes = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.ClassDef | ast.Module)]
        docs = [d for n in nodes if (d := ast.get_docstring(n))]
        if docs:
            (folder / f"{path.stem}.md").write_text(f"# {path.stem}\n\n" + "\n\n".join(docs), "utf-8")
            written += 1
            if written >= count:
                break
    return written


@pytest.fixture(scope="module")
def stdlib_kb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[KnowledgeBase, IndexReport]]:
    """80 files of the standard library's docstrings indexed in one run, once for the module: the tests
    that use it only read the index (one run of a real corpus was each one's setup)."""
    folder = tmp_path_factory.mktemp("stdlib")
    assert _stdlib_docs(folder / "docs", 80) >= 40
    base = KnowledgeBase(folder / "kb.sqlite3", semantic=False)
    yield base, base.index([folder / "docs"])
    base.close()


def test_every_term_python_sees_is_in_the_index_over_real_text(
    stdlib_kb: tuple[KnowledgeBase, IndexReport],
) -> None:
    """Python's view of the analyzer (``kbterms.terms``) and what the engine indexed agree: each term
    of each chunk has a posting in the body field, on a real corpus."""
    base, report = stdlib_kb
    assert report.chunks > 150
    store = base.store
    assert isinstance(store, KBStore)
    view = store.view()
    searcher = view.searcher
    checked = 0
    for _, addr in searcher.search(tantivy.Query.all_query(), 300).hits:
        key = (addr.segment_ord, addr.doc)
        text = view.rows([key])[key].text
        for term in set(kbterms.terms(text)):
            assert searcher.doc_freq("body", term) > 0 or len(term.encode()) > 64, term
            checked += 1
    assert checked > 5000


_TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=40)  # what UTF-8 can hold


@settings(max_examples=300, deadline=None)
@given(_TEXT, _TEXT, st.lists(_TEXT.filter(lambda h: HEADINGS_SEP not in h), max_size=3), _TEXT,
       st.integers(0, 10**6), st.integers(0, 10**6), st.booleans(), st.booleans())  # fmt: skip
def test_a_stored_record_gives_back_its_chunk(
    path: str, title: str, headings: list[str], text: str, start: int, end: int, dated: bool, plain: bool
) -> None:
    """A chunk's one stored value (``pack``) gives back each of its values (``unpack``), whatever the
    texts hold: the record's own separator, the headings' separator, digits, newlines."""
    joined = HEADINGS_SEP.join(headings)
    row = unpack(pack(path, title, "2025-01-15", dated, joined, text, (start, end), "ab" * 16, plain), (1, 2))
    shown = tuple(joined.split(HEADINGS_SEP)) if joined else ()
    expected = Row(
        key=(1, 2), path=path, title=title, doc_date="2025-01-15", heading_path=shown, text=text,
        start_line=start, end_line=end, embed_hash="ab" * 16, dated=dated, plain=plain,
    )  # fmt: skip
    assert row == expected
    assert len(row) == len(Row._fields)  # built field by field, as Row(...) builds it
    assert row._asdict() == expected._asdict()


def test_odd_tokens_of_real_text_are_indexed_and_found(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "greek.txt").write_text("ΣΊΣΥΦΟΣ in a table: ςw and Σίσυφος again\n", "utf-8")
    (folder / "cyr.txt").write_text("Привет, мир: настройка сети\n", "utf-8")
    (folder / "cjk.txt").write_text("日本語のテキスト and 中文 text\n", "utf-8")
    (folder / "ids.md").write_text(
        "# API\n\nSet tokenExpiry or token_expiry in HTTPResponse2 objects.\n", "utf-8"
    )
    base = KnowledgeBase(tmp_path / "kb.sqlite3", semantic=False)
    report = base.index([folder])
    assert len(report.added) == 4
    assert not report.skipped
    assert _names(base.search("σίσυφος", mode="lexical")) == ["greek.txt"]
    assert _names(base.search("ΣΊΣΥΦΟΣ", mode="lexical")) == ["greek.txt"]
    assert _names(base.search("ςw", mode="lexical")) == ["greek.txt"]
    assert _names(base.search("настройка", mode="lexical")) == ["cyr.txt"]
    assert _names(base.search("中文", mode="lexical")) == ["cjk.txt"]
    for q in ("token expiry", "token_expiry", "tokenExpiry", "http response", "HTTPResponse2"):
        assert _names(base.search(q, mode="lexical")) == ["ids.md"], q
    base.close()


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=200))
def test_split_gives_the_same_terms_as_the_engine_reading_the_same_value(text: str) -> None:
    """Hostile text: the engine's analyzer over ``split``'s text plus the extras is ``terms``."""
    engine_text, extras = kbterms.split(text)
    assert kbterms.terms(text) == [*kbterms.engine_terms(engine_text), *extras]
    assert all(t and " " not in t for t in kbterms.query_terms(text))


def test_odd_words_are_the_words_the_plain_check_refuses_over_real_text() -> None:
    """``split`` reads only the words ``odd_words`` gives: over real text those hold every word
    ``_plain`` refuses, each time it occurs and in order, and in ASCII text nothing else; 800
    paragraphs spread over all of them, 200 of them not ASCII."""
    paragraphs = spread(_real_paragraphs(), 800)
    refused_total = 0
    for text in paragraphs:
        refused = [w for w in kbterms._WORD.findall(text) if not kbterms._plain(w)]
        got = kbterms.odd_words(text)
        assert [w for w in got if not kbterms._plain(w)] == refused, text[:200]
        if text.isascii():
            assert got == refused, text[:200]
        refused_total += len(refused)
    assert len(paragraphs) == 800
    assert refused_total > 1000


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.text(st.characters(max_codepoint=127), max_size=200), st.text(max_size=200)))
def test_odd_words_holds_every_word_the_plain_check_refuses(text: str) -> None:
    refused = [w for w in kbterms._WORD.findall(text) if not kbterms._plain(w)]
    got = kbterms.odd_words(text)
    assert [w for w in got if not kbterms._plain(w)] == refused
    if text.isascii():
        assert got == refused


def _pieces_terms(text: str) -> set[str]:
    return set().union(*(kbterms.word_terms(piece) for piece in text.split()))


def test_a_texts_terms_are_its_pieces_terms_over_real_text() -> None:
    """``word_terms`` (what snippets look up) over the pieces of real lines between whitespace gives
    the terms the analyzer gives the line whole, twice (the second time from the cache); 800 real
    lines, 200 of them not ASCII."""
    lines = spread([ln for p in _real_paragraphs() for ln in p.splitlines() if ln.strip()], 800)
    for _ in range(2):
        for line in lines:
            assert _pieces_terms(line) == set(kbterms.terms(line)), line[:200]
    assert len(lines) == 800
    assert sum(not ln.isascii() for ln in lines) == 200


def test_has_any_is_the_analyzers_answer_over_real_text() -> None:
    """``has_any`` over real lines, each asked for one of its own terms (the last: found after its
    plain words) and for a term it lacks (every piece analyzed), first with nothing cached (the
    plain words of a line analyzed in one call), then again from the cache: the analyzer's answer
    each time."""
    lines = spread([ln for p in _real_paragraphs() for ln in p.splitlines() if ln.strip()], 800)
    kbterms._WORD_TERMS.clear()
    asked = 0
    for _ in range(2):
        for line in lines:
            found = kbterms.terms(line)
            if found:
                assert kbterms.has_any(line, {found[-1], "qzxq"}), line[:200]
                asked += 1
            assert not kbterms.has_any(line, {"qzxq"}), line[:200]
    assert asked > 1000  # two rounds
    assert sum(1 for ln in lines if not ln.isascii()) == 200


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=200))
def test_a_texts_terms_are_its_pieces_terms(text: str) -> None:
    assert _pieces_terms(text) == set(kbterms.terms(text))


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=200), st.integers(0, 4))
def test_has_any_tells_whether_a_text_holds_one_of_the_terms(text: str, k: int) -> None:
    """Cold (pieces not seen) and again after (pieces learned), ``has_any`` is the analyzer's answer."""
    found = kbterms.terms(text)
    wanted = {*found[:k], "qzxq"}
    for _ in range(3):
        assert kbterms.has_any(text, wanted) == (not wanted.isdisjoint(found))


def test_status_tells_size_chunks_files_last_run_and_coverage(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.md").write_text("# A\n\nAlpha text.\n", "utf-8")
    (folder / "bin.md").write_bytes(b"\x00\x01binary")
    (folder / "bad.pdf").write_bytes(b"%PDF-1.4 not a pdf")
    base = KnowledgeBase(tmp_path / "kb.sqlite3", semantic=False)
    assert base.status().last_run is None
    base.index([folder])
    st_ = base.status()
    assert (st_.files, st_.chunks) == (1, 1)
    assert st_.bytes_on_disk > 0
    assert st_.last_run is not None
    assert st_.last_run.added == 1
    states = {Path(c.path).name: (c.state, c.reason) for c in st_.coverage}
    assert states["a.md"] == ("indexed", "")
    assert states["bin.md"][0] == "skipped"
    assert "binary" in states["bin.md"][1]
    assert states["bad.pdf"][0] == "failed"
    assert states["bad.pdf"][1]
    (folder / "bin.md").unlink()
    base.index([folder])
    assert "bin.md" not in {Path(c.path).name for c in base.status().coverage}
    base.close()
    out = run_cli(["index", "--status", "--json", "--kb", str(tmp_path / "kb.sqlite3")])
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["files"] == 1
    assert {c["state"] for c in data["coverage"]} == {"indexed", "failed"}


def test_a_reindex_with_nothing_changed_reads_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _stdlib_docs(tmp_path / "docs", 10) == 10
    base = KnowledgeBase(tmp_path / "kb.sqlite3", semantic=False)
    base.index([tmp_path / "docs"])
    read: list[Path] = []
    real = Path.read_bytes

    def counting(self: Path) -> bytes:
        read.append(self)
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", counting)
    report = base.index([tmp_path / "docs"])
    assert report.unchanged == 10
    assert report.chunks == 0
    assert read == []
    base.close()


def test_a_run_writes_one_segment_per_commit(stdlib_kb: tuple[KnowledgeBase, IndexReport]) -> None:
    """Every segment costs every query a lookup of its own: a run that commits once (a small corpus,
    well under ``COMMIT_SECONDS``) leaves one segment, not one per indexing thread."""
    base, report = stdlib_kb
    assert report.chunks > 150
    meta = json.loads((Path(base.location + ".tantivy") / "meta.json").read_text())
    assert len(meta["segments"]) == 1


def test_the_vectors_of_a_removed_file_go_with_it(tmp_path: Path) -> None:
    """A run drops the embeddings no chunk uses any more (and reads every file's hashes only when
    there are embeddings at all)."""
    docs = tmp_path / "docs"
    assert _stdlib_docs(docs, 4) == 4
    base = KnowledgeBase(tmp_path / "kb.sqlite3", semantic=False)
    base.index([docs])
    missing = base.store.missing_vectors(10_000)
    base.store.put_vectors([(h, bytes(4 * 384)) for h, _ in missing])
    assert base.store.vector_count() == len(missing) > 0
    gone = sorted(docs.iterdir())[0]
    gone_chunks = dict(base.store.indexed())[str(gone)]
    gone.unlink()
    assert base.index([docs]).removed == [str(gone)]
    assert len(base.store.missing_vectors(10_000)) == 0
    assert base.store.vector_count() <= len(missing) - 1
    assert base.store.vector_count() >= len(missing) - gone_chunks
    base.close()


def test_an_open_knowledge_base_sees_a_run_made_by_another_process(tmp_path: Path) -> None:
    """A door keeps its index open: a commit made by another process reaches its searches."""
    import time

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "first.md").write_text("# First\n\nThe aurora borealis is seen in the north.\n")
    index = tmp_path / "kb.sqlite3"
    base = KnowledgeBase(index, semantic=False)
    base.index([docs])
    assert _names(base.search("borealis", mode="lexical")) == ["first.md"]
    (docs / "second.md").write_text("# Second\n\nA quasar is a luminous nucleus.\n")
    code = "import sys; from sourcewise import KnowledgeBase; KnowledgeBase(sys.argv[1], semantic=False).index([sys.argv[2]])"
    subprocess.run([sys.executable, "-c", code, str(index), str(docs)], check=True, timeout=120)
    found: list[str] = []
    for _ in range(100):  # the engine's reader notices the new commit within moments
        found = _names(base.search("quasar", mode="lexical"))
        if found:
            break
        time.sleep(0.1)
    assert found == ["second.md"]
    base.close()
