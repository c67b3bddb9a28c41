"""Issue 29, item 3: a damaged index is reported with its fix, a full disk leaves the previous index.

Real damage (a truncated SQLite file, a truncated engine segment) and a real write limit
(``RLIMIT_FSIZE`` in a child process: every write past it fails with ``EFBIG``, as on a full
disk). On the code before: the damage said "is not a sourcewise index" with no way out, and a
full disk during ``index`` ended in a traceback (``ValueError: An index writer was killed``).
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from sourcewise import IndexDamaged, IndexWriteError, KnowledgeBase, SourceUnavailable

from clirun import Ran, run_cli

pytestmark = pytest.mark.timeout(300)


def _docs(root: Path) -> Path:
    docs = root / "docs"
    docs.mkdir()
    for i in range(20):
        (docs / f"d{i}.md").write_text(
            f"# Note {i}\n\nThe rollback procedure {i} redeploys the previous tag.\n"
        )
    return docs


def _cli(args: list[str], state: Path) -> Ran:
    """The command in this process: what is checked is what it says and its exit code, not the
    process (the interrupt test below starts a real one)."""
    return run_cli(args, {"SOURCEWISE_STATE_DIR": str(state), "HF_HUB_OFFLINE": "1"})


def _truncate_sqlite(kb: Path) -> None:
    os.truncate(kb, kb.stat().st_size // 2)


def _truncate_segment(kb: Path) -> None:
    segments = sorted(Path(str(kb) + ".tantivy").glob("*.idx"))
    assert segments, "the engine wrote no segment"
    os.truncate(segments[0], segments[0].stat().st_size // 2)


@pytest.mark.parametrize("damage", [_truncate_sqlite, _truncate_segment])
def test_a_damaged_index_says_how_to_rebuild_and_rebuild_works(tmp_path: Path, damage) -> None:  # type: ignore[no-untyped-def]
    docs, state = _docs(tmp_path), tmp_path / "state"
    kb = state / "kb.sqlite3"
    with KnowledgeBase(kb, semantic=False) as base:
        base.index([docs])
    for wal in state.glob("kb.sqlite3-*"):
        wal.unlink()  # the checkpointed file alone, as a copy or a crash may leave it
    damage(kb)
    with pytest.raises(IndexDamaged, match=r"index --rebuild"):
        KnowledgeBase(kb, semantic=False)
    status = _cli(["index", "--status"], state)
    assert status.returncode != 0
    assert "sourcewise index --rebuild" in status.stderr
    assert "Traceback" not in status.stderr
    typo = _cli(["index", "--rebuild", str(tmp_path / "no-such-folder")], state)
    assert typo.returncode == 2
    assert kb.exists()  # a rebuild with a wrong path keeps the index
    rebuilt = _cli(["index", "--rebuild", "--no-semantic", str(docs)], state)
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert "20 added" in rebuilt.stdout
    with KnowledgeBase(kb, semantic=False) as base:
        assert base.search("rollback procedure redeploys")


CHILD = textwrap.dedent(
    """
    import resource, signal, sys
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # writes past the limit fail with EFBIG
    resource.setrlimit(resource.RLIMIT_FSIZE, (CAP, CAP))
    from sourcewise import IndexWriteError, KnowledgeBase
    try:
        with KnowledgeBase(sys.argv[1], semantic=False) as base:
            base.index(sys.argv[2:])
    except IndexWriteError as exc:
        print("IndexWriteError:", exc)
        sys.exit(7)
    """
)


def test_a_full_disk_is_an_index_write_error_and_the_previous_index_answers(tmp_path: Path) -> None:
    docs = _docs(tmp_path)
    kb = tmp_path / "state" / "kb.sqlite3"
    with KnowledgeBase(kb, semantic=False) as base:
        base.index([docs])
        before = [h.location for h in base.search("rollback procedure redeploys", limit=50)]
    big = tmp_path / "big"
    big.mkdir()
    rng = random.Random(29)
    words = ["".join(rng.choice("abcdefghij") for _ in range(7)) for _ in range(5000)]
    for i in range(20):  # about 5 MB of text: the engine's segments outgrow the limit
        (big / f"b{i}.md").write_text(f"# Big {i}\n\n" + " ".join(rng.choice(words) for _ in range(30_000)))
    limit = 400_000
    child = subprocess.run(
        [sys.executable, "-c", CHILD.replace("CAP", str(limit)), str(kb), str(docs), str(big)],
        capture_output=True, text=True, timeout=240, check=False,
    )  # fmt: skip
    assert child.returncode == 7, (child.stdout, child.stderr)
    assert "could not write the index in" in child.stdout
    assert "previous index still answers" in child.stdout
    assert "Traceback" not in child.stderr
    with KnowledgeBase(kb, semantic=False) as base:
        after = [h.location for h in base.search("rollback procedure redeploys", limit=50)]
    assert after == before
    assert len(before) == 20


def test_index_write_error_is_a_source_error_with_the_folder() -> None:
    exc = IndexWriteError("kb", "could not write the index in /x")
    assert exc.source == "kb"


@pytest.fixture
def read_only_mount(tmp_path: Path):  # type: ignore[no-untyped-def]
    """A small tmpfs that a test fills and then remounts read-only; skipped where mounting is not
    allowed (not root, no CAP_SYS_ADMIN)."""
    where = tmp_path / "ro"
    where.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=20m", "tmpfs", str(where)], check=False)
    if mounted.returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        yield where
    finally:
        # A file the test still holds open (an index kept alive by a traceback) makes umount fail
        # "busy": then detach it lazily, so that no mount outlives the test (one did).
        if subprocess.run(["umount", str(where)], check=False, capture_output=True).returncode != 0:
            subprocess.run(["umount", "--lazy", str(where)], check=False)


def test_an_index_on_a_read_only_folder_is_an_error_not_an_empty_index(
    tmp_path: Path, read_only_mount: Path
) -> None:
    docs, kb = _docs(tmp_path), read_only_mount / "kb.sqlite3"
    with KnowledgeBase(kb, semantic=False) as base:
        base.index([docs])
    subprocess.run(["mount", "-o", "remount,ro", str(read_only_mount)], check=True)
    with pytest.raises(SourceUnavailable, match=r"cannot be written.*--kb FILE"):
        KnowledgeBase(kb, semantic=False)  # was: an empty index in memory, 0 hits, exit 0
    state = _cli(["index", "--status", "--kb", str(kb)], tmp_path / "state")
    assert state.returncode != 0
    assert "cannot be written" in state.stderr
    assert "Traceback" not in state.stderr


def test_ctrl_c_during_index_leaves_no_half_index(tmp_path: Path) -> None:
    docs, state = _docs(tmp_path), tmp_path / "state"
    rng = random.Random(7)
    words = ["".join(rng.choice("klmnopqrst") for _ in range(6)) for _ in range(3000)]
    for i in range(60):
        (docs / f"long{i}.md").write_text(
            f"# Long {i}\n\n" + " ".join(rng.choice(words) for _ in range(8000))
        )
    env = {**os.environ, "SOURCEWISE_STATE_DIR": str(state), "HF_HUB_OFFLINE": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "sourcewise", "index", "--no-semantic", str(docs)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    engine = state / "kb.sqlite3.tantivy"
    while proc.poll() is None and not any(engine.glob("*.idx")) and not (state / "kb.sqlite3-wal").exists():
        time.sleep(0.05)  # until the run writes: then the interrupt lands mid-run
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=240)
    assert "Traceback" not in err
    if proc.returncode == 0:
        pytest.skip("the run finished before the interrupt arrived")
    assert proc.returncode == 130, err
    assert "interrupted" in err
    with KnowledgeBase(state / "kb.sqlite3", semantic=False) as base:
        kept = base.store.files()  # opens: not damaged
    again = _cli(["index", "--no-semantic", str(docs)], state)
    assert again.returncode == 0, again.stderr
    assert f"{len(kept)} unchanged" in again.stdout  # the files committed before the interrupt
    with KnowledgeBase(state / "kb.sqlite3", semantic=False) as base:
        files, chunks, _ = base.store.stats()
        engine_docs = base.store.index.searcher().num_docs  # type: ignore[attr-defined]
        assert base.search("rollback procedure redeploys")
    assert files == 80
    assert engine_docs == chunks  # no file twice, none half-written
