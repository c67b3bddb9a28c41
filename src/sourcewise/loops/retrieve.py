"""``retrieve``: seed 004's iterative retrieval: DISPATCH, EVALUATE, REFINE, LOOP (at most 3 cycles).

- **Dispatch**: a broad first query from the task's intent: its keywords and entities plus the
  planner's variants, sent to every source at once (``gather``: per-source deadlines and seed 003's
  fallbacks), keeping paths that match the include globs and none of the exclude globs (default:
  test files, unless the task is about tests).
- **Evaluate**: every candidate scored 0-1 in seed 004's bands with a reason and what it misses
  (``planning/refine.py``; the configured model may score instead, with the rules as the fallback).
- **Refine**: learn the codebase's words from the best candidates, exclude what scored below 0.2
  when first seen, and search next for the task terms still uncovered with the learned words and
  RM3 feedback words (the heaviest words of the top candidates' text); filters are relaxed in seed
  003's order (dates, then source filters) when a cycle found nothing relevant.
- **Code sources**: a code source ranks its whole repository for the task (``sources/code/locate.py``:
  what the task names exactly, whole-file BM25, kinds of files) instead of a chunk search; each
  file is one candidate showing the definitions the task is about (``path::Class.method``), scored
  by its share of the best file's score, and later cycles rank again with the learned words.
- **Gaps**: a later cycle targets what the task points at that no file of the top 5 holds (a
  title's word naming a folder or module, the names on the lines of a template it links to, a name
  an error message quotes): the few files found take the 5th place on.
- **Order**: the first pass's candidates keep its order; later cycles add below, never reshuffle
  or drop what was kept; a code source's files follow its latest ranking. The relevance shown
  agrees with the order: never above the one of the candidate ranked above.
- **Loop**: stop when 3 candidates score 0.7 or more and every key term is covered, when nothing new
  is left to search, when what a cycle found changed nothing in the top 5 (a later cycle first
  re-ranks the first cycle's files by their best passage; on 60 real tasks a third cycle changed the
  top 5 once, at a third of the loop's time), or after ``max_cycles``. The answer
  is the best ``limit`` candidates (0.7 or more is each one's ``band``: "high"), with what is
  missing said plainly.

The same loop serves ``ask`` (``refine_gathered``) when its first pass is not good enough.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

from sourcewise.config import Settings
from sourcewise.errors import InvalidOption, InvalidQuery
from sourcewise.loops.gather import Gathered
from sourcewise.loops.retrieve_loop import run
from sourcewise.loops.retrieve_state import Setup, State, order
from sourcewise.models import Candidate, Cycle, Hit, Plan, Retrieval, SourceKind
from sourcewise.planning import routing
from sourcewise.planning.refine import ENOUGH, RELEVANT, Scored, band, uncovered, vocabulary
from sourcewise.session import Session
from sourcewise.sources import Source
from sourcewise.sources.code.locate import kind_of
from sourcewise.sources.code.taskread import Reading, read_task

__all__ = ["DEFAULT_EXCLUDE", "MAX_CYCLES", "MAX_TASK", "aretrieve", "refine_gathered"]

MAX_TASK = 2_000
MAX_CYCLES = 5
MAX_PATTERNS = 32
DEFAULT_EXCLUDE = (
    "*.test.*", "*.spec.*", "test_*", "*_test.*", "tests/*", "test/*", "*/tests/*", "*/test/*",
    "*/__tests__/*", "conftest.py",
)  # fmt: skip


def _check(task: object, max_cycles: object, limit: object, patterns: Sequence[object]) -> str:
    if not isinstance(task, str) or not task.strip():
        raise InvalidQuery("a task is non-empty text, e.g. 'Add rate limiting to API endpoints'")
    if len(task) > MAX_TASK:
        raise InvalidQuery(f"a task is at most {MAX_TASK} characters, got {len(task)}")
    if not isinstance(max_cycles, int) or isinstance(max_cycles, bool) or not 1 <= max_cycles <= MAX_CYCLES:
        raise InvalidOption(f"max_cycles must be 1-{MAX_CYCLES}, got {max_cycles!r}")
    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= 50:
        raise InvalidOption(f"limit must be 1-50, got {limit!r}")
    if len(patterns) > MAX_PATTERNS or not all(isinstance(p, str) and 0 < len(p) <= 200 for p in patterns):
        raise InvalidOption(f"include/exclude: at most {MAX_PATTERNS} globs of 1-200 characters each")
    return task.strip()


def _candidate(state: State, s: Scored, ceiling: float) -> Candidate:
    """A candidate as shown: its relevance at most ``ceiling``, the relevance shown above it. The
    order can hold a file above one scoring more (the second look's fall cap keeps a file's place,
    a first-pass file stays above a later find under 0.7, a title's gap takes the 5th place): the
    score shown then says so, and never runs against the order."""
    value, reason = s.relevance, s.reason
    if value > ceiling:
        value, reason = ceiling, f"{s.reason}; shown at most {ceiling}: ranked below a file scored so"
    return Candidate(
        hit=state.pool[s.facts.location],
        relevance=value,
        band=band(value),
        reason=reason,
        missing=s.missing,
        cycle=state.first_seen[s.facts.location],
        scorer="model" if s.facts.location in state.model_used else "rules",
        relevant=value >= RELEVANT,
    )


def _result(task: str, state: State, limit: int) -> Retrieval:
    by_loc = {s.facts.location: s for s in state.scored}
    considered: list[Candidate] = []
    for loc in order(state):
        considered.append(_candidate(state, by_loc[loc], considered[-1].relevance if considered else 1.0))
    high = [c for c in considered if c.relevance >= RELEVANT]
    gaps = tuple(uncovered(state.vocab, state.scored))
    sufficient = len(high) >= ENOUGH and not gaps
    best = considered[:limit]  # the 0.7+ set is each candidate's band ("high"), not a shorter list
    if high:
        summary = f"{len(high)} candidate(s) at {RELEVANT} or more"
    else:
        summary = (
            f"no candidate reached {RELEVANT}; the best found is shown" if best else "nothing relevant found"
        )
    if gaps:
        summary += f"; still missing: {', '.join(gaps)}"
    elif not sufficient and high:
        summary += f"; fewer than {ENOUGH} at {RELEVANT} or more"
    return Retrieval(
        task=task,
        candidates=tuple(best),
        considered=tuple(considered),
        cycles=state.cycles,
        key_terms=state.vocab.key,
        sufficient=sufficient,
        missing=gaps,
        summary=summary,
        warnings=state.warnings,
    )


def _excludes(reading: Reading, exclude: Sequence[str] | None) -> tuple[str, ...]:
    """The caller's exclusions, else test files unless the task names a test file or test function
    (saying "test" is not enough: "fix the bug, with a test" asks for a code change)."""
    if exclude is not None:
        return tuple(exclude)
    return () if reading.about_tests else DEFAULT_EXCLUDE


def _about(reading: Reading) -> frozenset[str]:
    """Kinds of files the task is about, so not weighted down: those of the paths it names, tests
    when it names a test. A report that says "from the docs" asks for a code change: docs count
    only when the task names a doc file."""
    kinds = {kind_of(p) for p in reading.paths}
    if reading.about_tests:
        kinds.add("test")
    return frozenset(kinds)


async def aretrieve(
    task: str,
    *,
    sources: Sequence[str | Source] | str | Source,
    max_cycles: int = 3,
    include: Sequence[str] = (),
    exclude: Sequence[str] | None = None,
    limit: int = 10,
    use_model: bool | None = None,
    today: date | None = None,
    session: Session | None = None,
    settings: Settings | None = None,
) -> Retrieval:
    """Find what a task needs from ``sources`` in at most ``max_cycles`` cycles (seed 004).

    ``sources``: the same specs as ``ask`` (``code:PATH``, configured names, ``Source`` objects).
    ``include``/``exclude``: path globs (``src/**``, ``*.test.*``); ``exclude`` defaults to test
    files unless the task is about tests. ``max_cycles=1`` is the one-pass baseline. ``use_model``:
    ``False`` keeps the rule-based scores even when a model is configured.
    """
    globs = [*include, *(exclude or ())] if isinstance(include, list | tuple) else [include]
    task = _check(task, max_cycles, limit, globs)
    if not isinstance(exclude, list | tuple | type(None)):
        raise InvalidOption("exclude must be a list of globs")
    own = session is None
    session = session or Session(settings)
    try:
        settings = session.settings
        chosen = session.sources(sources)
        kinds: list[SourceKind] = list(dict.fromkeys(s.kind for s in chosen))
        reading = read_task(task)  # the plan's key terms come from the prose: a pasted dump is context
        plan = routing.plan(reading.prose.strip() or task, kinds, today=today, session=session)
        setup = Setup(
            task=task, sources=tuple(chosen), settings=settings, include=tuple(include),
            exclude=_excludes(reading, exclude), max_cycles=max_cycles, client=session.client,
            reading=reading, about=_about(reading), limit=limit,
        )  # fmt: skip
        start = State(
            vocab=vocabulary([*plan.phrases, *plan.entities, *plan.keywords], plan.variants),
            use_model=bool(settings.model_url) and use_model is not False,
        )
        return _result(task, await run(setup, start, plan), limit)
    finally:
        if own:
            await session.aclose()


async def refine_gathered(
    task: str, plan: Plan, sources: Sequence[Source], first: Gathered, settings: Settings, max_cycles: int = 3
) -> tuple[list[list[Hit]], list[Cycle]]:
    """For ``ask``: evaluate its first pass with the rules and, when it is not good enough (no hit at
    0.7, or a key term nothing relevant covers), run refinement cycles through the same private
    sources (the web is left out: it costs queries). An answer needs one good hit, not three, and
    goes without feedback words (they cost a cycle's time and were not measured to help answers).
    Returns the new hits per source (aligned with ``sources``) and the cycles run after the first."""
    private = [
        i
        for i, s in enumerate(sources)
        if not s.capabilities.web and first.reports[i].status in ("ok", "empty")
    ]  # the web costs queries; a source that failed or timed out would only fail again
    if not private or not any(first.hits[i] for i in private):
        return [[] for _ in sources], []
    setup = Setup(
        task=task, sources=tuple(sources[i] for i in private), settings=settings, include=(), exclude=(),
        max_cycles=max_cycles, enough=1, use_feedback=False, locate=False,
    )  # fmt: skip
    start = State(vocab=vocabulary([*plan.phrases, *plan.entities, *plan.keywords], plan.variants))
    mine = Gathered(reports=[first.reports[i] for i in private], hits=[first.hits[i] for i in private])
    state = await run(setup, start, plan, mine)
    extra = [list(state.new_hits.get(s.name, ())) if i in private else [] for i, s in enumerate(sources)]
    return extra, list(state.cycles[1:])
