"""The code source over a real git repository written by the test."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sourcewise.config import Settings
from sourcewise.errors import ConfigError, SourceUnavailable, SourcewiseError
from sourcewise.models import SourceQuery
from sourcewise.sources import resolve_source
from sourcewise.sources.code.index import PROGRESS_EVERY, CodeIndex
from sourcewise.sources.code.outline import chunk_spans, outline
from sourcewise.sources.code.source import CodeOptions, CodeSource
from sourcewise.sources.code.walk import compile_globs, walk

AUTH = '''"""Auth helpers."""
import time
from .store import TokenStore


class AuthService:
    def refresh(self, token):
        if token.tokenExpiry < time.time():
            return None
        return token


def check_expiry(token_expiry):
    return token_expiry > 0
'''
STORE = """export class TokenStore {
  constructor() { this.items = new Map(); }
  get(id) { return this.items.get(id); }
}
export function TokenExpiry(t) { return t.exp; }
"""


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    root = tmp_path_factory.mktemp("repo")
    _git(root, "init", "-q")
    (root / ".gitignore").write_text("secrets.txt\nbuild/\n*.log\n!keep.log\n")
    (root / "secrets.txt").write_text("zebracorn lives here\n")
    (root / "build").mkdir()
    (root / "build" / "out.py").write_text("zebracorn = 1\n")
    (root / "debug.log").write_text("zebracorn in a log\n")
    (root / "keep.log").write_text("a kept log says quokka\n")
    src = root / "src" / "auth" / "deep"
    src.mkdir(parents=True)
    (root / "src" / "auth" / "service.py").write_text(AUTH)
    (root / "src" / "auth" / "store.js").write_text(STORE)
    (src / ".gitignore").write_text("local_*.py\n")
    (src / "local_notes.py").write_text("zebracorn = 'nested ignore'\n")
    (src / "util.go").write_text('package deep\n\nimport "fmt"\n\nfunc Quokka() { fmt.Println("quokka") }\n')
    (root / "src" / "auth" / "service.test.js").write_text("test('quokka tokenExpiry', () => {});\n")
    (root / "docs").mkdir()
    (root / "docs" / "notes.md").write_text("# Notes\n\nThe token expiry policy is one hour.\n")
    (root / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00token expiry\x00")
    (root / "huge.py").write_text("token_expiry = 1\n" * 70_000)  # over the 1 MB default
    long_fn = "def long_one():\n" + "".join(f"    x{i} = {i}\n" for i in range(100)) + "    return 'quokka'\n"
    (root / "src" / "long.py").write_text(long_fn)
    _git(root, "add", "-A")
    return root


def _source(repo: Path, tmp_path: Path, **options: object) -> CodeSource:
    settings = Settings(state_dir=tmp_path / "state")
    return CodeSource("code", CodeOptions(path=repo, **options), settings)  # type: ignore[arg-type]


async def _search(source: CodeSource, query: str, limit: int = 20) -> tuple[list[str], tuple[str, ...]]:
    result = await source.search(SourceQuery(source="code", mode="keyword", query=query), limit=limit)
    return [h.path or "" for h in result.hits], result.warnings


async def test_identifier_forms_all_match_and_hits_are_line_ranges(repo: Path, tmp_path: Path) -> None:
    source = _source(repo, tmp_path)
    result = await source.search(SourceQuery(source="code", mode="keyword", query="token expiry"))
    paths = {h.path for h in result.hits}
    assert {"src/auth/service.py", "src/auth/store.js", "docs/notes.md"} <= paths
    hit = next(h for h in result.hits if h.path == "src/auth/service.py")
    assert hit.location == f"src/auth/service.py#L{hit.start_line}-L{hit.end_line}"
    lines = AUTH.splitlines()[hit.start_line - 1 : hit.end_line]  # type: ignore[operator]
    assert hit.text == "\n".join(lines)
    assert "tokenExpiry" in hit.text or "token_expiry" in hit.text
    assert hit.title in ("AuthService.refresh", "check_expiry")
    assert hit.kind == "code"
    assert hit.authority == "code"
    assert hit.score > 0
    js = next(h for h in result.hits if h.path == "src/auth/store.js")
    assert "TokenExpiry" in js.text
    await source.aclose()


async def test_gitignore_binary_and_huge_files(repo: Path, tmp_path: Path) -> None:
    source = _source(repo, tmp_path)
    paths, _ = await _search(source, "zebracorn")
    assert paths == []  # only in ignored files: root .gitignore, ignored dir, *.log, nested .gitignore
    assert (await _search(source, "quokka"))[0]  # keep.log is re-included by !keep.log
    assert "keep.log" in (await _search(source, "quokka"))[0]
    report = await source.refresh()
    skipped = dict(report.skipped)
    assert skipped["logo.png"] == "binary"
    assert skipped["huge.py"].startswith("too large")
    info = await source.info()
    assert info.ready
    assert info.items == report.files
    assert info.updated is not None
    assert "binary" in info.detail
    assert "too large" in info.detail
    unfiltered = _source(repo, tmp_path / "b", gitignore=False)
    assert "secrets.txt" in (await _search(unfiltered, "zebracorn"))[0]
    await source.aclose()
    await unfiltered.aclose()


async def test_include_and_exclude_globs(repo: Path, tmp_path: Path) -> None:
    source = _source(repo, tmp_path, include=("src/**",), exclude=("*.test.*",))
    paths, _ = await _search(source, "quokka tokenExpiry")
    assert paths
    assert all(p.startswith("src/") for p in paths)
    assert "src/auth/service.test.js" not in paths
    everything = _source(repo, tmp_path / "b")
    assert "src/auth/service.test.js" in (await _search(everything, "quokka tokenExpiry"))[0]
    await source.aclose()
    await everything.aclose()


@pytest.mark.parametrize(
    ("query", "kept", "excluded"),
    [
        ("token expiry path:src/auth", "src/auth/service.py", "docs/notes.md"),
        ("token expiry -path:docs", "src/auth/service.py", "docs/notes.md"),
        ("token expiry path:src/**/*.js", "src/auth/store.js", "src/auth/service.py"),
        ("token expiry -path:*.md", "src/auth/store.js", "docs/notes.md"),
        ("token expiry ext:py", "src/auth/service.py", "src/auth/store.js"),
        ("token expiry -ext:py", "src/auth/store.js", "src/auth/service.py"),
        ("token expiry lang:javascript", "src/auth/store.js", "src/auth/service.py"),
        ("token expiry -lang:js", "docs/notes.md", "src/auth/store.js"),
        ("token expiry lang:markdown", "docs/notes.md", "src/auth/store.js"),
        ("token expiry -refresh", "docs/notes.md", "src/auth/service.py"),
        ('"token expiry policy"', "docs/notes.md", "src/auth/service.py"),
    ],
)
async def test_filters_keep_and_exclude(
    repo: Path, tmp_path: Path, query: str, kept: str, excluded: str
) -> None:
    source = _source(repo, tmp_path)
    paths, warnings = await _search(source, query)
    assert kept in paths
    assert excluded not in paths
    assert warnings == ()
    await source.aclose()


async def test_filter_only_query_lists_files_and_unknown_filters_are_warned(
    repo: Path, tmp_path: Path
) -> None:
    source = _source(repo, tmp_path)
    paths, _ = await _search(source, "path:src/auth ext:py")
    assert paths == ["src/auth/service.py"]
    paths, warnings = await _search(source, "quokka from:sarah lang:klingon")
    assert paths == []
    assert any("from:sarah" in w for w in warnings)
    assert any("unknown language 'klingon'" in w for w in warnings)
    await source.aclose()


async def test_long_functions_are_split_and_titled(repo: Path, tmp_path: Path) -> None:
    source = _source(repo, tmp_path)
    result = await source.search(SourceQuery(source="code", mode="keyword", query="quokka ext:py"))
    hit = next(h for h in result.hits if h.path == "src/long.py")
    assert hit.title == "long_one"
    assert hit.start_line == hit.end_line == 102
    await source.aclose()


async def test_index_is_kept_and_refreshed_incrementally(repo: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    shutil.copytree(repo, work)
    source = _source(work, tmp_path)
    first = await source.refresh()
    assert first.added == first.files + len([s for s in first.skipped if s[1] == "binary"])
    again = await source.refresh()
    assert (again.added, again.updated, again.removed) == (0, 0, 0)
    target = work / "docs" / "notes.md"
    target.write_text("# Notes\n\nNow about the wombat rota.\n")
    os.utime(target, ns=(time.time_ns(), time.time_ns() + 10**9))
    (work / "src" / "long.py").unlink()
    (work / "src" / "new.py").write_text("def wombat_feeder():\n    pass\n")
    changed = await source.refresh()
    assert (changed.added, changed.updated, changed.removed) == (1, 1, 1)
    assert set((await _search(source, "wombat"))[0]) == {"docs/notes.md", "src/new.py"}
    await source.aclose()
    reopened = _source(work, tmp_path)  # a new process: the cached index answers, nothing re-read
    assert (await reopened.refresh()).added == 0
    assert "src/new.py" in (await _search(reopened, "wombat feeder"))[0]
    await reopened.aclose()


def _corrupt(db: Path) -> None:
    db.write_bytes(b"not a database" * 100)
    for extra in ("-wal", "-shm"):
        Path(f"{db}{extra}").unlink(missing_ok=True)


async def test_a_corrupt_or_newer_cache(repo: Path, tmp_path: Path) -> None:
    source = _source(repo, tmp_path)
    await source.refresh()
    db = source._index.db  # type: ignore[union-attr]
    await source.aclose()
    assert db is not None
    _corrupt(db)
    rebuilt = _source(repo, tmp_path)
    assert (await _search(rebuilt, "token expiry"))[0]  # a corrupt cache is rebuilt, not an error
    await rebuilt.aclose()
    index = CodeIndex(db, 40)
    with index.conn:
        index.conn.execute("UPDATE meta SET value = '99' WHERE key = 'schema'")
    index.close()
    newer = _source(repo, tmp_path)
    with pytest.raises(SourcewiseError, match="newer"):
        await newer.refresh()


async def test_missing_path_and_bad_options(tmp_path: Path) -> None:
    with pytest.raises(SourceUnavailable, match="does not exist"):
        await _source(tmp_path / "nope", tmp_path).refresh()
    (tmp_path / "f.txt").write_text("x")
    with pytest.raises(SourceUnavailable, match="not a directory"):
        await _source(tmp_path / "f.txt", tmp_path).refresh()
    with pytest.raises(SourceUnavailable, match="no path"):
        await resolve_source("code", Settings()).search(SourceQuery(source="code", mode="keyword", query="x"))
    info = await _source(tmp_path / "nope", tmp_path).info()
    assert not info.ready
    with pytest.raises(ConfigError, match="max_file_bytes"):
        resolve_source("c", Settings(sources={"c": {"type": "code", "max_file_bytes": 0}}))


async def test_outline_of_an_indexed_file(repo: Path, tmp_path: Path) -> None:
    source = _source(repo, tmp_path)
    py = await source.outline("src/auth/service.py")
    assert py.defines == ["AuthService", "AuthService.refresh", "check_expiry"]
    assert py.imports == ["time", ".store"]
    go = await source.outline("./src/auth/deep/util.go")
    assert (go.defines, go.imports) == (["Quokka"], ["fmt"])
    with pytest.raises(SourceUnavailable):
        await source.outline("secrets.txt")
    await source.aclose()


def test_outline_of_other_languages_and_chunk_spans() -> None:
    ts = outline(
        "a.ts",
        "import { a } from './auth';\nconst fs = require('fs');\nexport class TokenStore {\n  x = 1;\n}\n",
    )
    assert ts.imports == ["./auth", "fs"]
    assert ts.defines == ["TokenStore"]
    rs = outline(
        "a.rs", "use std::io::Read;\npub(crate) fn token_expiry() {}\nimpl Token {\n    fn refresh() {}\n}\n"
    )
    assert rs.imports == ["std::io::Read"]
    assert "token_expiry" in rs.defines
    assert "Token.refresh" in rs.defines
    assert outline("a.c", "#include <stdio.h>\nstruct tok {\n};\n").imports == ["stdio.h"]
    assert outline("broken.py", "def (:\n").defines == []
    assert outline("x.bin", "anything").defines == []
    spans = chunk_spans(120, outline("a.py", "def a():\n    pass\n" + "x = 1\n" * 118).symbols, 40)
    assert spans[0][0] == 1
    assert spans[-1][1] == 120
    assert all(b - a < 40 for a, b in spans)


def test_hostile_gitignore_patterns_are_matched_in_linear_time(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("*a" * 40 + "*b\n[z\nbad\\\n*.tmp\n")
    (tmp_path / "x.tmp").write_text("x")
    (tmp_path / ("a" * 200)).write_text("x")
    started = time.process_time()  # this process's CPU time: a loaded machine does not count
    found = walk(tmp_path, include=None, exclude=None, gitignore=True, max_bytes=10**6, max_files=10)
    assert time.process_time() - started < 2  # Python's re takes minutes of CPU on this pattern
    assert [c.rel for c in found.files] == [".gitignore", "a" * 200]  # x.tmp: the good lines still apply
    assert found.skipped == [(".gitignore", "1 pattern(s) not understood; the rest applied")]
    assert compile_globs(["*a" * 40 + "*b"]).match_file("a" * 200) is False


def test_bad_globs_in_options_are_config_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="glob"):
        CodeSource("c", CodeOptions(path=tmp_path, include=("a\\",)), Settings())


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(query=st.text(max_size=300))
async def test_any_query_gives_hits_or_a_sourcewise_error(repo: Path, tmp_path: Path, query: str) -> None:
    source = _source(repo, tmp_path, cache=False)
    try:
        result = await source.search(SourceQuery(source="code", mode="keyword", query=query), limit=5)
    except SourcewiseError:
        return
    finally:
        await source.aclose()
    assert all(h.location.startswith(h.path or "?") for h in result.hits)


class _Terminal(io.StringIO):
    """A stderr that says it is a terminal, as an interactive one does."""

    def isatty(self) -> bool:
        return True


async def test_a_first_index_of_a_large_tree_reports_its_progress(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A first index of more than ``PROGRESS_EVERY`` files says how far it has got on a terminal's
    stderr, ending with the whole count; a second refresh (nothing to read) and a pipe say nothing."""
    root = tmp_path / "big"
    total = PROGRESS_EVERY * 2 + 37
    for i in range(total):
        folder = root / f"pkg{i // 100}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"mod{i}.py").write_text(f"def handler_{i}(request):\n    return {i}\n")
    source = _source(root, tmp_path)
    err = _Terminal()
    monkeypatch.setattr(sys, "stderr", err)
    try:
        report = await source.refresh()
        assert report.files == total
        shown = [line.strip() for line in err.getvalue().split("\r") if line.strip()]
        counts = [int(s.split(": ")[-1].split(" of ")[0].replace(",", "")) for s in shown]
        assert counts == [0, PROGRESS_EVERY, PROGRESS_EVERY * 2, total], shown  # from the listing on
        assert all(s.endswith(f"of {total:,} files") for s in shown)
        assert err.getvalue().endswith("\n")
        err.seek(0)
        err.truncate()
        await source.refresh()  # nothing new to read: nothing to report
        assert err.getvalue() == ""
    finally:
        await source.aclose()
    piped = io.StringIO()  # not a terminal: a pipe or a log file gets no progress lines
    monkeypatch.setattr(sys, "stderr", piped)
    other = _source(root, tmp_path / "second")
    try:
        assert (await other.refresh()).files == total
    finally:
        await other.aclose()
    assert piped.getvalue() == ""


def _index_of(tmp_path: Path, files: dict[str, str]) -> CodeIndex:
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, "utf-8")
    index = CodeIndex(None, 40)
    found = walk(tmp_path, include=None, exclude=None, gitignore=False, max_bytes=1_000_000, max_files=100)
    index.refresh(found.files)
    return index


def test_a_word_the_task_repeats_weighs_more(tmp_path: Path) -> None:
    """bm25s sums over the query's words as said: a word a report repeats is its subject."""
    index = _index_of(tmp_path, {"a.py": "alpha = 1\n", "b.py": "beta = 1\n"})
    once = index.file_bm25(["alpha", "beta"])
    assert once["a.py"] == pytest.approx(once["b.py"])
    twice = index.file_bm25(["alpha", "alpha", "beta"])
    assert twice["a.py"] > twice["b.py"]
    index.close()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(strings=st.lists(st.text(max_size=40), max_size=30))
def test_the_files_said_to_hold_a_string_hold_it_word_for_word(tmp_path: Path, strings: list[str]) -> None:
    """Any strings (quotes, ``%``, ``_``, control characters): each file said to hold one holds it,
    and a string that four files hold points nowhere."""
    files = {
        "src/config.py": "app.add_config_value('autodoc_preserve_defaults', False)\nMSG = '100% done: {x}'\n",
        "src/other.py": "def run():\n    return 'autodoc'\n",
        **{f"src/common{i}.py": "SHARED_NAME = 1\n" for i in range(4)},
    }
    index = _index_of(tmp_path, files)
    try:
        held = index.containing(["autodoc_preserve_defaults", "100% done", "SHARED_NAME", *strings], most=3)
    finally:
        index.close()
    assert held["autodoc_preserve_defaults"] == {"src/config.py"}
    assert held["100% done"] == {"src/config.py"}
    assert "SHARED_NAME" not in held
    for text, paths in held.items():
        assert paths
        assert all(text in files[p] for p in paths)


async def test_a_damaged_index_is_a_typed_error_in_a_second_look(repo: Path, tmp_path: Path) -> None:
    """``passages`` (retrieve's second look) read the index with no guard: an index whose tables
    were damaged under it raised ``sqlite3.OperationalError`` to the caller."""
    from sourcewise.sources.code.taskread import read_task

    source = _source(repo, tmp_path)
    await _search(source, "token expiry")
    assert source._index is not None
    with source._index.lock:
        source._index.conn.execute("DROP TABLE chunks_fts")  # what a damaged file reads as
    with pytest.raises(SourceUnavailable, match="index could not be read"):
        await source.passages(read_task("the token expiry check is wrong"), ["src/auth/service.py"])
    await source.aclose()
