"""Issue 29, item 1: ``index DIR`` reads only regular files inside DIR, each once, and never hangs.

Real symlinks, FIFOs and devices. On the code before: a link out of the folder was indexed (the
file it points to became searchable), a link to ``/dev/zero`` named ``zero.txt`` was read until
memory ran out, a FIFO named ``notes.md`` hung the run (the timeout marker turns that into a
failure), a name holding terminal escapes was printed raw, and a name that is not UTF-8 stopped
the run with ``UnicodeEncodeError``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sourcewise import KnowledgeBase
from sourcewise.sources.kb.index import FORMATS
from sourcewise.sources.kb.walk import walk

pytestmark = pytest.mark.timeout(60)  # a blocked read would otherwise hang the suite: fail instead

SECRET = "The launch code of the outside file is aubergine seventeen."
INSIDE = "The deployment checklist lives inside the indexed folder."


def _base(tmp_path: Path) -> KnowledgeBase:
    return KnowledgeBase(tmp_path / "kb.sqlite3", semantic=False)


def _folder(tmp_path: Path) -> tuple[Path, Path]:
    docs, outside = tmp_path / "docs", tmp_path / "outside"
    docs.mkdir()
    outside.mkdir()
    (docs / "inside.md").write_text(INSIDE, "utf-8")
    (outside / "secret.md").write_text(SECRET, "utf-8")
    return docs, outside


def test_a_link_out_of_the_folder_is_reported_not_indexed(tmp_path: Path) -> None:
    docs, outside = _folder(tmp_path)
    (docs / "secret.md").symlink_to(outside / "secret.md")
    (docs / "elsewhere").symlink_to(outside, target_is_directory=True)
    (docs / "zero.txt").symlink_to("/dev/zero")
    with _base(tmp_path) as base:
        report = base.index(docs)
        assert [Path(p).name for p in report.added] == ["inside.md"]
        skipped = {Path(s.path).name: s.reason for s in report.skipped}
        assert set(skipped) == {"secret.md", "elsewhere", "zero.txt"}
        assert all("out of the indexed folder" in why for why in skipped.values())
        assert base.search("aubergine launch code") == []
        assert base.search("deployment checklist")


def test_links_inside_the_folder_are_followed_once_and_loops_end(tmp_path: Path) -> None:
    docs, _ = _folder(tmp_path)
    (docs / "sub").mkdir()
    (docs / "sub" / "up").symlink_to("..", target_is_directory=True)  # a loop through the root
    (docs / "sub" / "again").symlink_to("../sub", target_is_directory=True)
    (docs / "same.md").symlink_to("inside.md")
    (docs / "self.md").symlink_to("self.md")  # a link to itself
    (docs / "gone.md").symlink_to("nothing-here.md")
    with _base(tmp_path) as base:
        report = base.index(docs)
        assert report.added == [str(docs / "inside.md")]  # once, under its own path
        skipped = {Path(s.path).name: s.reason for s in report.skipped}
        assert "loops" in skipped["self.md"]
        assert "points to nothing" in skipped["gone.md"]
        assert len(base.search("deployment checklist")) == 1


@pytest.mark.parametrize("name", ["notes.md", "readme.txt"])
def test_a_fifo_with_a_documents_name_is_skipped_not_waited_on(tmp_path: Path, name: str) -> None:
    docs, _ = _folder(tmp_path)
    os.mkfifo(docs / name)
    with _base(tmp_path) as base:
        report = base.index(docs)  # hung forever before: open() of a FIFO waits for a writer
        assert report.added == [str(docs / "inside.md")]
        assert [(Path(s.path).name, s.state) for s in report.skipped] == [(name, "skipped")]
        assert "a FIFO, not a regular file" in report.skipped[0].reason
        again = base.index(docs / name)  # named explicitly: the same
        assert "a FIFO" in again.skipped[0].reason


def test_a_device_named_explicitly_is_not_read(tmp_path: Path) -> None:
    link = tmp_path / "zero.md"
    link.symlink_to("/dev/zero")  # the user names the link: resolved to the device, never read
    with _base(tmp_path) as base:
        report = base.index(link)
    assert report.added == []
    assert len(report.skipped) == 1


def test_names_with_escapes_and_bad_bytes_are_indexed_and_shown_clean(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "\x1b]0;PWNED\x07evil.md").write_text(INSIDE, "utf-8")
    fd = os.open(os.fsencode(docs) + b"/caf\xe9.md", os.O_WRONLY | os.O_CREAT, 0o644)
    os.write(fd, b"The cafe menu lists espresso and tea.")
    os.close(fd)
    os.mkfifo(docs / "\x1bc\x9b2J\rred.md")  # escapes click does not strip by itself
    env = {**os.environ, "SOURCEWISE_STATE_DIR": str(tmp_path / "state")}
    # --no-semantic: what is checked is the names shown; loading the embedding model cost 10 s of it.
    for args in (["index", "--no-semantic", str(docs)], ["index", "--status"]):
        done = subprocess.run(
            [sys.executable, "-m", "sourcewise", *args],
            capture_output=True, env=env, timeout=120, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        out = done.stdout + done.stderr
        for control in (b"\x1b", b"\x07", b"\xc2\x9b", b"\r"):
            assert control not in out
        if args[1] != "--status":
            assert b"2 added" in done.stdout
            assert b"caf\\xe9.md" in done.stderr or b"red.md" in done.stderr  # shown, escaped
    with KnowledgeBase(tmp_path / "state" / "kb.sqlite3", semantic=False) as base:
        hit = base.search("espresso menu")[0]
    assert "/caf\\xe9.md#" in hit.location


# -- the walk itself, over trees hypothesis builds ---------------------------------------------

NAMES = st.sampled_from(["a", "b", "c.md", "d.txt", "e.md"])
ENTRY = st.tuples(st.sampled_from(["file", "dir", "link-in", "link-out", "link-self", "fifo"]), NAMES, NAMES)


def _make(root: Path, outside: Path, folder: Path, entry: tuple[str, str, str]) -> None:
    kind, name, target = entry
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    if os.path.lexists(path):
        return
    if kind == "file":
        path.write_text("x")
    elif kind == "dir":
        path.mkdir()
    elif kind == "link-in":
        path.symlink_to(root / target)
    elif kind == "link-out":
        path.symlink_to(outside / ("x.md" if target.endswith(".md") else ""))
    elif kind == "link-self":
        path.symlink_to(path)
    else:
        os.mkfifo(path)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(entries=st.lists(st.tuples(st.lists(NAMES, max_size=2), ENTRY), max_size=12))
def test_the_walk_stays_inside_visits_each_file_once_and_ends(
    tmp_path_factory: pytest.TempPathFactory, entries: list[tuple[list[str], tuple[str, str, str]]]
) -> None:
    base = tmp_path_factory.mktemp("walk")
    root, outside = base / "root", base / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "x.md").write_text("outside")
    for parents, entry in entries:
        folder = root.joinpath(*parents)
        if any(p.is_symlink() for p in (folder, *folder.parents)):
            continue
        try:
            _make(root, outside, folder, entry)
        except OSError:  # a parent that is a file or a FIFO already: that entry is left out
            continue
    found = list(walk([root.resolve()], frozenset(FORMATS)))
    read = [str(p) for p, _, why in found if why is None]
    assert len(read) == len(set(read))  # each file once
    real = str(root.resolve())
    for path in read:
        assert os.path.realpath(path).startswith(real + os.sep), path
        assert not os.path.islink(path)
    expected = {
        os.path.realpath(os.path.join(d, f))
        for d, _, files in os.walk(root)
        for f in files
        if Path(f).suffix in FORMATS and not os.path.islink(os.path.join(d, f))
    }
    assert expected <= set(read)  # every plain document under the root is found


NOTES = "# Notes\n\nThe wombat password rotation happens monthly.\n"


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"])
def test_utf16_and_utf32_text_with_a_byte_order_mark_is_indexed_not_called_binary(
    tmp_path: Path, codec: str
) -> None:
    # What `iconv -t UTF-16` and Windows editors write: a byte-order mark, then half NUL bytes.
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "notes.txt").write_bytes(("\ufeff" + NOTES).encode(codec))
    (docs / "bom_then_binary.txt").write_bytes(b"\xff\xfe" + b"\x01\x00\x00\x00" * 50)
    with _base(tmp_path) as base:
        report = base.index(docs)
        assert [Path(p).name for p in report.added] == ["notes.txt"]
        assert [(Path(s.path).name, s.reason) for s in report.skipped] == [
            ("bom_then_binary.txt", "looks binary (NUL bytes)")
        ]
        hits = base.search("wombat password rotation")
        assert [Path(h.location.partition("#")[0]).name for h in hits] == ["notes.txt"]
        assert "monthly" in hits[0].snippet
        assert "\x00" not in hits[0].snippet
