"""Issue 20 and 25: the retrieve loop is pure steps over an immutable state, its I/O behind the source.
Real parts: the specification's rate-limit repository on disk, its code source's own index, ranking
and files."""

from __future__ import annotations

import asyncio
import copy
import dataclasses
from pathlib import Path

import pytest

from retrieve_repo import REPO, TASK, write_repo
from sourcewise.config import Settings
from sourcewise.loops.gather import Gathered
from sourcewise.loops.retrieve_code import take_located, with_located
from sourcewise.loops.retrieve_loop import located_hit, read_file
from sourcewise.loops.retrieve_state import Setup, State, Step, admit, decide, order, rule_scores
from sourcewise.models import SourceReport
from sourcewise.planning.refine import vocabulary
from sourcewise.sources.code.source import CodeOptions, CodeSource
from sourcewise.sources.code.taskread import read_task


def _first_cycle(root: Path, tmp_path: Path) -> tuple[Setup, State, Gathered, list[list[str | None]]]:
    """What the loop's first cycle hands its pure steps: the source's ranking and files, read here."""
    source = CodeSource("code", CodeOptions(path=root), Settings(state_dir=tmp_path / "state"))
    reading = read_task(TASK)
    try:
        ranked = asyncio.run(source.locate(reading))
        setup = Setup(
            task=TASK, sources=(source,), settings=source.settings, include=(), exclude=(), reading=reading
        )
        start = State(vocab=vocabulary(["rate", "limiting", "api", "endpoints"], {}))
        taken = take_located(setup, start, ranked)
        assert taken is not None, "the repository holds files about the task"
        state, fresh = taken
        hits = [located_hit(source, r) for r in fresh]
        gathered = Gathered(reports=[SourceReport(source="code", kind="code", status="ok")], hits=[hits])
        return setup, state, gathered, [[read_file(source, h) for h in hits]]
    finally:
        asyncio.run(source.aclose())


def test_the_steps_leave_the_state_they_were_given_as_it_was(tmp_path: Path) -> None:
    setup, state, gathered, wholes = _first_cycle(write_repo(tmp_path / "repo", REPO), tmp_path)
    kept = copy.deepcopy(state)
    admitted, found, new = admit(setup, state, gathered, wholes, 1)
    assert state == kept, "admit changed the state it was given"
    assert found == new == len(admitted.pool) > 0
    again = copy.deepcopy(admitted)
    scored = with_located(setup, admitted, rule_scores(admitted))
    step = Step(1, gathered, found, new, (), ())
    after, terms = decide(setup, admitted, scored, step)
    assert admitted == again, "decide changed the state it was given"
    assert decide(setup, admitted, scored, step) == (after, terms), "the same state decides the same"
    assert len(after.cycles) == 1
    assert not admitted.cycles
    assert sorted(order(after)) == sorted(after.pool), "the ranking is the kept candidates"


def test_a_state_cannot_be_changed_in_place(tmp_path: Path) -> None:
    setup, state, _, _ = _first_cycle(write_repo(tmp_path / "repo", REPO), tmp_path)
    with pytest.raises(dataclasses.FrozenInstanceError):
        state.looked = frozenset({"code"})  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        setup.limit = 3  # type: ignore[misc]


def test_a_refine_reason_counts_against_the_retrievals_own_enough(tmp_path: Path) -> None:
    """``ask`` runs the loop with ``enough=1``; the reason said "0 of 3 candidates" (the default)."""
    setup, state, gathered, wholes = _first_cycle(write_repo(tmp_path / "repo", REPO), tmp_path)
    admitted, found, new = admit(setup, state, gathered, wholes, 1)
    step = Step(1, gathered, found, new, (), ())
    scored = with_located(setup, admitted, rule_scores(admitted))
    for enough in (40, 70):  # more than the repository's files: the loop refines, never "enough"
        wanting = dataclasses.replace(setup, enough=enough)
        after, _ = decide(wanting, admitted, scored, step)
        decision = after.cycles[-1].decision
        assert decision.startswith("refine:"), decision
        assert f" of {enough} candidates" in decision, decision
