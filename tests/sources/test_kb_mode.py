"""How a knowledge base searches when no one says (``kb_mode``): the semantic model is loaded only
where it pays off. A one-shot command searches lexically (loading torch and the model cost it
5-14 s a run for one query); a door's lasting session searches hybrid and starts loading the model
at its start; the setting, or a source's own ``mode``, says otherwise."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sourcewise import KnowledgeBase
from sourcewise._sync import run_sync
from sourcewise.config import load_settings
from sourcewise.models import SourceQuery
from sourcewise.session import Session
from sourcewise.sources.kb import source as kbmod

DOC = "# Deploys\n\nThe deploy window opens at noon on weekdays and closes at four.\n"
DESCRIBED = SourceQuery(source="knowledge_base", mode="semantic", query="when does the deploy window open")


def _index(tmp_path: Path) -> Path:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "deploy.md").write_text(DOC, "utf-8")
    path = tmp_path / "kb.sqlite3"
    with KnowledgeBase(path, semantic=False) as base:
        base.index([tmp_path / "docs"])
        # Vectors as the extra would store them (any 384 floats): semantic search could run here.
        missing = base.store.missing_vectors(100)
        base.store.put_vectors([(h, bytes(4 * 384)) for h, _ in missing])
        assert missing
    return path


@pytest.fixture
def model_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every time the model is asked for (none is loaded: the search then stays lexical)."""
    calls: list[str] = []
    monkeypatch.setattr(kbmod, "semantic_available", lambda: True)
    monkeypatch.setattr(kbmod, "embedder", lambda: calls.append("blocking"))
    monkeypatch.setattr(kbmod, "embedder_within", lambda wait: calls.append(f"within {wait:g}"))
    return calls


@pytest.mark.parametrize(
    ("lasting", "kb_mode", "own", "expected"),
    [
        (False, "auto", None, "lexical"),  # a CLI command: no model for one query
        (True, "auto", None, "hybrid"),  # a door: loaded once, used by every call
        (False, "hybrid", None, "hybrid"),  # the user asked for it
        (False, "auto", {"semantic": True}, "hybrid"),  # this knowledge base asks for semantic search
        (True, "lexical", None, "lexical"),
        (True, "auto", {"mode": "lexical"}, "lexical"),  # the source's own mode wins
        (False, "lexical", {"mode": "semantic"}, "semantic"),
    ],
)
async def test_kb_mode_decides_where_the_model_is_loaded(
    tmp_path: Path, model_calls: list[str], lasting: bool, kb_mode: str, own: dict[str, object] | None,
    expected: str,
) -> None:  # fmt: skip
    options = {"type": "kb", "path": str(_index(tmp_path)), **(own or {})}
    settings = load_settings(state_dir=tmp_path / "state", kb_mode=kb_mode, sources={"notes": options})
    async with Session(settings, lasting=lasting) as session:
        source = session.source("notes")
        assert isinstance(source, kbmod.KnowledgeBaseSource)
        assert source.mode() == expected
        result = await source.search(DESCRIBED)
    assert result.hits  # lexical whenever the model is not there: never "nothing"
    if expected == "lexical":
        assert model_calls == [], "a lexical search never asks for the model"
    else:
        assert model_calls, "a hybrid or semantic search asks for the model"


def test_a_door_starts_loading_the_model_when_it_starts(tmp_path: Path, model_calls: list[str]) -> None:
    from sourcewise.doors.service import Service

    path = _index(tmp_path)
    settings = load_settings(
        state_dir=tmp_path / "state", sources={"notes": {"type": "kb", "path": str(path)}}
    )
    for lasting, loads in ((True, ["within 0"]), (False, [])):
        session = Session(settings, lasting=lasting)
        try:
            Service(session).warm()
        finally:
            run_sync(session.aclose())
        # a door's session starts loading in the background (nobody waits for it); a one-shot
        # session loads nothing for lexical search
        assert model_calls == loads, lasting
        model_calls.clear()


def test_a_one_shot_ask_does_not_load_the_semantic_model(tmp_path: Path) -> None:
    """A real process over an index with embeddings, the extra installed: torch is never imported."""
    # Looked up, not imported: importing it loads torch into this worker (seconds), and only the
    # child's imports are under test.
    if importlib.util.find_spec("transformers") is None:
        pytest.skip("the semantic extra is not installed")
    path = _index(tmp_path)
    config = tmp_path / "c.toml"
    argv = ["sourcewise", "ask", "When does the deploy window open?", "-S", "notes", "--config", str(config)]
    script = (
        "import sys\n"
        "from sourcewise.doors.cli.main import main\n"
        f"sys.argv = {argv!r}\n"
        "try:\n"
        "    main()\n"
        "except SystemExit as stop:\n"
        "    assert not stop.code, stop.code\n"
        "print('torch loaded' if 'torch' in sys.modules else 'torch not loaded', file=sys.stderr)\n"
    )
    config.write_text(f'[sources.notes]\ntype = "kb"\npath = "{path}"\n', "utf-8")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "HF_HUB_OFFLINE": "1"}
    env.pop("SOURCEWISE_KB_MODE", None)
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120, check=False
    )
    assert out.returncode == 0, out.stderr
    assert "noon" in out.stdout
    assert "torch not loaded" in out.stderr, out.stderr
