"""Hostile input for ``retrieve`` and ``sourcewise retrieve``: a result or a ``SourcewiseError``;
the CLI prints seed 004's output and the cycles; ``ask`` records the cycles it ran."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from retrieve_repo import REPO, TASK, FolderSource, write_repo
from sourcewise import Retrieval, SourcewiseError, ask, retrieve
from sourcewise.config import load_settings

from clirun import run_cli

HOSTILE = st.one_of(st.text(max_size=300), st.sampled_from(["", " ", "\x00\x1b[2J", "a" * 2001, "-path:*"]))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(task=HOSTILE, cycles=st.integers(-1, 7), glob=st.lists(st.text(max_size=20), max_size=3))
def test_retrieve_returns_a_result_or_a_typed_error(
    tmp_path: Path, task: str, cycles: int, glob: list[str]
) -> None:
    root = write_repo(tmp_path / "repo") if not (tmp_path / "repo").exists() else tmp_path / "repo"
    try:
        found = retrieve(
            task, sources=[FolderSource(root)], max_cycles=cycles, include=glob,
            settings=load_settings(state_dir=tmp_path / "s"),
        )  # fmt: skip
    except SourcewiseError as exc:
        message = str(exc)
        assert message, "a typed error says what is wrong"
        return
    assert isinstance(found, Retrieval)
    assert len(found.cycles) <= cycles


@pytest.mark.parametrize("bad", [{"max_cycles": 0}, {"max_cycles": True}, {"limit": 0}, {"include": [""]}])
def test_bad_options_are_typed_errors(tmp_path: Path, bad: dict[str, object]) -> None:
    with pytest.raises(SourcewiseError):
        retrieve(TASK, sources=["kb"], settings=load_settings(state_dir=tmp_path), **bad)  # type: ignore[arg-type]


def _cli(args: list[str]) -> tuple[int, str, str]:
    result = run_cli(args)
    return result.returncode, result.stdout, result.stderr


def test_cli_prints_candidates_and_each_cycle(tmp_path: Path) -> None:
    root = write_repo(tmp_path / "repo")
    code, out, _ = _cli(["retrieve", TASK, "--source", f"code:{root}"])
    assert code == 0
    assert "src/app/middleware/throttle.py" in out
    assert "Cycle 1:" in out
    assert "Cycle 2:" in out
    assert "learned 'throttle'" in out
    code, out, _ = _cli(["retrieve", TASK, "--source", f"code:{root}", "--json", "--max-cycles", "1"])
    assert code == 0
    data = json.loads(out)
    assert len(data["cycles"]) == 1


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(task=HOSTILE, cycles=st.sampled_from(["0", "1", "9", "x", "-3"]))
def test_cli_hostile_input_exits_cleanly(tmp_path: Path, task: str, cycles: str) -> None:
    root = tmp_path / "empty"
    root.mkdir(exist_ok=True)
    code, out, err = _cli(["retrieve", task, "--source", f"code:{root}", "--max-cycles", cycles])
    assert code in (0, 1, 2), err
    assert "Traceback" not in out + err


def test_ask_records_the_refinement_cycles(tmp_path: Path) -> None:
    code_only = {p: t for p, t in REPO.items() if not p.startswith("tests/")}  # ask keeps test files
    root = write_repo(tmp_path / "repo", code_only)
    answer = ask(TASK, sources=[FolderSource(root)], settings=load_settings(state_dir=tmp_path / "s"))
    assert answer.cycles, "the first pass left rate and limiting uncovered"
    assert any(item.term == "throttle" for c in answer.cycles for item in c.learned) or any(
        "throttle" in q for c in answer.cycles for q in c.queries
    )
    assert "src/app/middleware/throttle.py" in [h.hit.path for h in answer.hits]
