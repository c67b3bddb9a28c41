"""``retrieve``: seed 004's iterative retrieval: DISPATCH, EVALUATE, REFINE, LOOP (at most 3 cycles).

- **Dispatch**: a broad first query from the task's intent: its keywords and entities plus the
  planner's variants, sent to every source at once (``gather``: per-source deadlines and seed 003's
  fallbacks), keeping paths that match the include globs and none of the exclude globs (default:
  test files, unless the task is about tests).
- **Evaluate**: every candidate scored 0-1 in seed 004's bands with a reason and what it misses
  (``core/refine.py``; the configured model may score instead, with the rules as the fallback).
- **Refine**: learn the codebase's words from the best candidates, exclude what scored below 0.2
  when first seen, and search next for the task terms still uncovered with the learned words and
  RM3 feedback words (``core/feedback.py``: the heaviest words of the top candidates' text);
  filters are relaxed in seed 003's order (dates, then source filters) when a cycle found nothing
  relevant.
- **Code sources**: a code source ranks its whole repository for the task (``core/locate.py``:
  what the task names exactly, whole-file BM25, kinds of files) instead of a chunk search; each
  file is one candidate showing the definitions the task is about (``path::Class.method``), scored
  by its share of the best file's score, and later cycles rank again with the learned words.
- **Order**: the first pass's candidates keep its order; later cycles add below, never reshuffle
  or drop what was kept; a code source's files follow its latest ranking.
- **Loop**: stop when 3 candidates score 0.7 or more and every key term is covered, when nothing new
  is left to search, when a cycle changed nothing in the top 5, or after ``max_cycles``. The answer
  is the best ``limit`` candidates (0.7 or more is each one's ``band``: "high"), with what is
  missing said plainly.

The same loop serves ``ask`` (``refine_gathered``) when its first pass is not good enough.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date

import httpx

from . import routing
from .config import Settings
from .core.feedback import FB_DOCS, FB_QUERY, bag, expand, key_stems
from .core.locate import Located, kind_of
from .core.plan import replan
from .core.refine import (
    ENOUGH,
    EXCLUDE_BELOW,
    RELEVANT,
    TASK_STOP,
    Facts,
    Scored,
    Vocabulary,
    allowed,
    band,
    evaluate,
    facts_for,
    learn,
    uncovered,
    vocabulary,
)
from .core.sanitize import strip_controls
from .core.taskread import Reading, read_task
from .errors import InvalidOption, InvalidQuery, ModelError, SourcewiseError
from .gather import Gathered, gather
from .judge import model_scores
from .models import Candidate, Cycle, Hit, Learned, Plan, Retrieval, SourceKind, SourceReport
from .session import Session
from .sources import Source

__all__ = ["DEFAULT_EXCLUDE", "MAX_CYCLES", "MAX_TASK", "aretrieve", "refine_gathered"]

MAX_TASK = 2_000
MAX_CYCLES = 5
MAX_PATTERNS = 32
PER_QUERY = 20  # hits asked of each source per cycle: room for what the globs and exclusions drop
MAX_FILE = 512_000  # bytes of a code file read for its imports
TOP = 5  # a cycle that changes nothing in the top 5 is the last
LOCATED_MORE = 5  # files of a code source's ranking taken by the first cycle beyond ``limit``
MERGE_BELOW = 0.5  # a later cycle's find goes above a first-pass candidate scoring under this
RULES_TEXT = 8_000  # characters of a ranked file the rules read for its relevance and the words it teaches
LOCATED_LATER = 10  # new files a later cycle's ranking adds at most
RELATED = 0.69  # the most a file found by words alone scores while a key term is uncovered
HIGH = 0.9  # the relevance of a code source's best file; the others by their share of its score
DEFAULT_EXCLUDE = (
    "*.test.*", "*.spec.*", "test_*", "*_test.*", "tests/*", "test/*", "*/tests/*", "*/test/*",
    "*/__tests__/*", "conftest.py",
)  # fmt: skip


@dataclass
class _Loop:
    """Everything the loop carries from one cycle to the next."""

    task: str
    sources: list[Source]
    settings: Settings
    include: tuple[str, ...]
    exclude: tuple[str, ...]
    use_model: bool
    vocab: Vocabulary
    max_cycles: int = 3
    enough: int = ENOUGH
    use_feedback: bool = True  # RM3 words in the next query (``ask`` goes without: it needs speed)
    client: httpx.AsyncClient | None = None  # the session's, for the model's scores (use_model)
    pool: dict[str, Hit] = field(default_factory=dict)
    first_seen: dict[str, int] = field(default_factory=dict)
    facts: dict[str, Facts] = field(default_factory=dict)
    texts: dict[str, str] = field(default_factory=dict)
    excluded: set[str] = field(default_factory=set)
    searched: list[str] = field(default_factory=list)
    model_used: set[str] = field(default_factory=set)
    warnings: list[str] = field(default_factory=list)
    scored: list[Scored] = field(default_factory=list)
    cycles: list[Cycle] = field(default_factory=list)
    new_hits: dict[str, list[Hit]] = field(default_factory=dict)
    bags: dict[str, Counter[str]] = field(default_factory=dict)
    first_order: list[str] = field(default_factory=list)
    surface: dict[str, str] = field(default_factory=dict)
    reading: Reading = field(default_factory=Reading)
    about: frozenset[str] = frozenset()  # kinds of files the task is about (tests, docs)
    located: dict[str, tuple[float, str]] = field(default_factory=dict)  # path -> relevance, why
    locate: bool = True  # code sources rank their repository (``ask`` reads their chunks instead)
    limit: int = 10  # candidates wanted


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


def _read_file(source: Source, hit: Hit) -> str | None:
    """The whole file behind a code hit, if it lies inside the source's folder and is small."""
    root = source.options.path
    if hit.kind != "code" or not hit.path or root is None:
        return None
    try:
        base = root.expanduser().resolve()
        target = (base / hit.path).resolve() if base.is_dir() else base
        if not target.is_relative_to(base) or not target.is_file() or target.stat().st_size > MAX_FILE:
            return None
        return target.read_text("utf-8", errors="replace")
    except (OSError, ValueError):
        return None


def _admit(loop: _Loop, gathered: Gathered, cycle: int) -> tuple[int, int]:
    """Add this cycle's hits to the pool: (hits returned, new candidates)."""
    found = new = 0
    for source, hits in zip(loop.sources, gathered.hits, strict=True):
        for hit in hits:
            found += 1
            whole = _read_file(source, hit)
            if whole is not None and hit.meta.get("found") == "locate":
                whole = whole[:RULES_TEXT]  # ranked already: the rules read its head, not all of a huge file
            # a code candidate is its file (its best chunk shown); other hits are themselves
            key = hit.path if whole is not None and hit.path else hit.location
            if key in loop.pool or key in loop.excluded:
                continue
            if hit.path and not allowed(hit.path, loop.include, loop.exclude):
                continue
            new += 1
            loop.pool[key] = hit
            loop.first_seen[key] = cycle
            if cycle > 1:
                loop.new_hits.setdefault(source.name, []).append(hit)
            loop.facts[key] = facts_for(hit, whole)
            loop.texts[key] = whole if whole is not None else (hit.text or hit.snippet)
            if loop.use_feedback:
                loop.bags[key] = bag(loop.texts[key], hit.path or "", loop.surface)
    return found, new


async def _score(loop: _Loop) -> list[Scored]:
    """Rule-based scores; the model's instead where it answers well (and only while it does); a code
    source's files scored by its ranking."""
    scored = evaluate(loop.vocab, [loop.facts[loc] for loc in sorted(loop.pool)])
    if not loop.use_model or not scored:
        return _with_located(loop, scored)
    hits = [loop.pool[s.facts.location] for s in scored]
    try:
        if loop.client is None:
            raise ModelError("no HTTP client for the model (retrieve runs in a Session)")
        rated = await model_scores(loop.task, hits, loop.settings, loop.client)
    except ModelError as exc:
        loop.use_model = False
        loop.warnings.append(f"model scoring unavailable, rule-based relevance instead: {exc}")
        return _with_located(loop, scored)
    out = list(scored)
    for i, (value, reason) in rated.items():
        s = scored[i]
        out[i] = Scored(s.facts, value, band(value), reason, s.missing, s.covered)
        loop.model_used.add(s.facts.location)
    return _with_located(loop, sorted(out, key=lambda s: (-s.relevance, s.facts.location)))


def _dispatch_plan(loop: _Loop, plan: Plan, cycle: int, terms: list[str]) -> tuple[Plan, list[str]]:
    """The plan for ``cycle``: the task broadly first, then ``terms``; filters relaxed (seed 003)
    when the last cycle found nothing relevant."""
    if cycle == 1:
        variants = [v for vs in plan.variants.values() for v in vs[:2] if " " not in v]
        words = [*plan.phrases, *plan.entities, *plan.keywords, *variants]
        return replan(plan, [w for w in words if w.lower() not in TASK_STOP] or words), []
    current = replan(plan, terms)
    dropped: list[str] = []
    if loop.cycles and loop.cycles[-1].relevant == 0:
        wider = current.broaden()
        if wider is not None and wider.dropped[-1] in ("date filters", "source filters"):
            current, dropped = replan(wider, terms), wider.dropped[-1:]
    return current, dropped


async def _cycle(loop: _Loop, plan: Plan, number: int, terms: list[str], first: Gathered | None) -> list[str]:
    """One DISPATCH-EVALUATE-REFINE cycle; the next query's terms, or ``[]`` to stop."""
    current, dropped = _dispatch_plan(loop, plan, number, terms)
    if first is not None:
        gathered = first
    else:
        gathered = await _dispatch(loop, current)
    loop.searched.extend(w.lower() for w in [*current.keywords, *current.entities])
    gathered = await _locate(loop, gathered, terms if number > 1 else [])
    before = _order(loop)[:TOP]
    found, new = await asyncio.to_thread(_admit, loop, gathered, number)
    scored = await _score(loop)
    # a candidate is excluded when first evaluated: one kept stays kept (later cycles never drop it)
    gone = [
        s.facts.location
        for s in scored
        if s.relevance < EXCLUDE_BELOW
        and loop.first_seen[s.facts.location] == number
        and s.facts.location not in loop.located  # a ranked file stays: the list is at least ``limit`` long
    ]
    loop.excluded.update(gone)
    for loc in gone:
        loop.pool.pop(loc)
    loop.scored = [s for s in scored if s.facts.location in loop.pool]
    if number == 1:  # a code source's files in its ranking's order, then the rest by relevance
        ranked = sorted(loop.located, key=lambda k: (-loop.located[k][0], k))
        loop.first_order = [k for k in ranked if k in loop.pool]
        loop.first_order += [s.facts.location for s in loop.scored if s.facts.location not in loop.located]
    gaps = uncovered(loop.vocab, loop.scored)
    relevant = sum(1 for s in loop.scored if s.relevance >= RELEVANT)
    learned: list[Learned] = []
    feedback: list[str] = []
    nxt: list[str] = []
    if relevant >= loop.enough and not gaps:
        decision = f"enough: {relevant} candidates at {RELEVANT} or more and every key term covered"
    elif number > 1 and loop.located and _order(loop)[:TOP] == before:
        decision = f"stop: cycle {number} changed nothing in the top {TOP}"
    elif number >= loop.max_cycles:
        decision = f"stop: {number} of {loop.max_cycles} cycles run"
    else:
        known = [*loop.searched, *(item.term for item in loop.vocab.learned)]
        learned = learn(loop.vocab, loop.scored, loop.texts, gaps, known)
        grown = Vocabulary(loop.vocab.key, loop.vocab.variants, (*loop.vocab.learned, *learned))
        feedback = _feedback(loop, grown) if loop.use_feedback else []
        nxt = list(dict.fromkeys([*gaps, *(item.term for item in learned), *feedback]))
        if not learned and all(t.lower() in loop.searched for t in nxt):
            decision, nxt = "stop: nothing new to search (no word learned, every gap already searched)", []
        else:
            decision = "refine: " + _why(relevant, gaps, learned, feedback)
    loop.vocab = Vocabulary(loop.vocab.key, loop.vocab.variants, (*loop.vocab.learned, *learned))
    queries = tuple(f"{r.source}: {q}" for r in gathered.reports for q in r.queries)
    loop.cycles.append(
        Cycle(
            number=number, queries=queries, found=found, new=new, relevant=relevant,
            learned=tuple(learned), feedback=tuple(feedback), excluded=tuple(gone), uncovered=tuple(gaps),
            include=loop.include, exclude=loop.exclude, broadened=tuple(dropped), decision=decision,
            reports=tuple(gathered.reports),
        )
    )  # fmt: skip
    return nxt


_LABEL = {"high": "implements the target", "medium": "related", "low": "indirect", "none": "irrelevant"}


def _with_located(loop: _Loop, scored: list[Scored]) -> list[Scored]:
    """A code source's files take the relevance of its latest ranking (their share of the best
    file's score) and its reasons: "implements the target" only when the task names the file (a
    path, module, frame or error it defines) or the file covers every key term; a file found by
    words alone scores the mean of its share and the rules' score (the rules' when higher: a word
    learned by the loop standing for a key term)."""
    if not loop.located:
        return scored
    out = []
    for s in scored:
        found = loop.located.get(s.facts.location)
        if found is not None and s.facts.location not in loop.model_used:  # a model's score stands
            value, why = found
            if not why.startswith(("named", "module named", "defines")):  # words alone: the rules weigh in
                value = round((value + s.relevance) / 2, 3)
                value = min(value, RELATED) if s.missing else value  # a key term uncovered: not the target
            kind = kind_of(s.facts.location)
            if value >= s.relevance or (kind != "source" and kind not in loop.about):  # a doc page stays down
                s = Scored(s.facts, value, band(value), f"{_LABEL[band(value)]}: {why}", s.missing, s.covered)
            else:  # the rules see more (a learned word stands for a key term): theirs, with the why
                s = Scored(s.facts, s.relevance, s.band, f"{s.reason}; {why}", s.missing, s.covered)
        out.append(s)
    return sorted(out, key=lambda s: (-s.relevance, s.facts.location))


def _feedback(loop: _Loop, vocab: Vocabulary) -> list[str]:
    """RM3 pseudo-relevance feedback: the task's query model grown with the words of the best
    candidates so far; its new words (as written in the code), the heaviest first, for the next
    query."""
    score = {s.facts.location: s.relevance for s in loop.scored}
    best = [loc for loc in _order(loop) if score[loc] >= EXCLUDE_BELOW][:FB_DOCS]  # never an irrelevant one
    top = [(loop.bags[loc], score[loc]) for loc in best]
    model = expand(vocab, top, [loop.bags[loc] for loc in loop.pool])
    known = key_stems(vocab)
    words = [loop.surface.get(w, w) for w in model if w not in known]
    return [w for w in words if w.lower() not in loop.searched][:FB_QUERY]


def _order(loop: _Loop) -> list[str]:
    """The ranking. The first pass's candidates keep the first pass's order (a code source's files
    in its ranking's order); what later cycles found is merged in by relevance: above the first of
    them it outscores that the first pass scored below 0.5 (a related file found first stays above:
    on real bug reports, files the loop found through learned words outscored the file to change),
    never reshuffling them. Re-ranked with learned words, a code source put files
    found through those words above the files the task names more often than they deserved, and
    re-scored, plug-in hits the same (measured, benchmarks/RESULTS.md)."""
    score = {s.facts.location: s.relevance for s in loop.scored}
    first = [loc for loc in loop.first_order if loc in loop.pool]
    seen = set(first)
    later = [s.facts.location for s in loop.scored if s.facts.location not in seen]
    out: list[str] = []
    i = 0
    for loc in first:
        while i < len(later) and score[later[i]] > score[loc] and score[loc] < MERGE_BELOW:
            out.append(later[i])
            i += 1
        out.append(loc)
    return out + later[i:]


async def _dispatch(loop: _Loop, current: Plan) -> Gathered:
    """The cycle's query sent to every source that does not rank its repository itself (those are
    asked by ``_locate``)."""
    ranks = [loop.locate and getattr(s, "locate", None) is not None for s in loop.sources]
    others = [s for s, r in zip(loop.sources, ranks, strict=True) if not r]
    deadline = loop.settings.source_timeout
    got = await gather(others, current, deadline=deadline, limit=PER_QUERY) if others else Gathered()
    reports, hits = iter(got.reports), iter(got.hits)
    out = Gathered()
    for source, ranked in zip(loop.sources, ranks, strict=True):
        out.reports.append(
            SourceReport(source=source.name, kind=source.kind, status="ok") if ranked else next(reports)
        )
        out.hits.append([] if ranked else next(hits))
    return out


async def _locate(loop: _Loop, gathered: Gathered, terms: list[str]) -> Gathered:
    """A code source's hits replaced by its ranking of the whole repository for the task (with
    ``terms`` learned by earlier cycles): one hit per file, its relevance the file's share of the
    best file's score (``HIGH`` for the best)."""
    hits, reports = list(gathered.hits), list(gathered.reports)
    for i, source in enumerate(loop.sources):
        locate = getattr(source, "locate", None)
        if not loop.locate or locate is None or reports[i].status not in ("ok", "empty"):
            continue
        started = time.perf_counter()
        try:
            ranked: list[Located] = await locate(
                loop.reading, terms, about=loop.about, fresh=not loop.located
            )
        except SourcewiseError as exc:
            reports[i] = reports[i].model_copy(update={"status": "failed", "error": str(exc)})
            continue
        ranked = [r for r in ranked if allowed(r.path, loop.include, loop.exclude)]
        if not ranked or ranked[0].score <= 0:
            reports[i] = reports[i].model_copy(update={"status": "empty" if not loop.located else "ok"})
            continue
        top = ranked[0].score
        room = loop.limit + LOCATED_MORE if not loop.located else LOCATED_LATER
        fresh = [r for r in ranked if r.path not in loop.pool and r.path not in loop.excluded][:room]
        for r in fresh:  # a file's value is its first ranking's: later cycles add, never reshuffle
            why = "; ".join(r.reasons) or "words of the task"
            loop.located.setdefault(r.path, (round(HIGH * r.score / top, 3), why))
        hits[i] = [_located_hit(source, r) for r in fresh]
        named = ", ".join(loop.reading.exact[:6])
        query = f"locate: {named or 'the task words'}" + (f" + {', '.join(terms)}" if terms else "")
        elapsed = round((time.perf_counter() - started) * 1000, 1)
        status = "ok" if hits[i] or loop.located else "empty"
        update = {"hits": len(hits[i]), "queries": (*reports[i].queries, query), "elapsed_ms": elapsed}
        reports[i] = reports[i].model_copy(update={**update, "status": status})
    return Gathered(reports=reports, hits=hits)


def _located_hit(source: Source, r: Located) -> Hit:
    """A ranked file as a hit: titled ``path::Class.method`` by its best definition, showing its lines."""
    best = r.definitions[0] if r.definitions else None
    start, end = (best.start, best.end) if best else (1, 40)
    probe = Hit(
        title=f"{r.path}::{best.name}" if best else r.path, location=f"{r.path}#L{start}-L{end}",
        source=source.name, kind="code", authority="code", score=r.score, path=r.path, start_line=start,
        end_line=end, meta={"found": "locate", "reasons": "; ".join(r.reasons),
                            "definitions": "; ".join(f"{d.name} L{d.start}-L{d.end}" for d in r.definitions)},
    )  # fmt: skip
    lines = (_read_file(source, probe) or "").splitlines()[start - 1 : min(end, start + 59)]
    text = "\n".join(lines)
    return probe.model_copy(
        update={
            "text": strip_controls(text, keep="\n\t"),
            "snippet": strip_controls(" ".join(text.split())[:200]),
        }
    )


def _why(relevant: int, gaps: list[str], learned: list[Learned], feedback: list[str]) -> str:
    parts = [f"{relevant} of {ENOUGH} candidates at {RELEVANT}+"]
    parts += [f"uncovered: {', '.join(gaps)}"] if gaps else []
    parts += [f"learned: {', '.join(item.term for item in learned)}"] if learned else []
    parts += [f"feedback: {', '.join(feedback)}"] if feedback else []
    return "; ".join(parts)


def _candidate(loop: _Loop, s: Scored) -> Candidate:
    return Candidate(
        hit=loop.pool[s.facts.location],
        relevance=s.relevance,
        band=s.band,
        reason=s.reason,
        missing=s.missing,
        cycle=loop.first_seen[s.facts.location],
        scorer="model" if s.facts.location in loop.model_used else "rules",
        relevant=s.relevance >= RELEVANT,
    )


def _result(loop: _Loop, limit: int) -> Retrieval:
    by_loc = {s.facts.location: s for s in loop.scored}
    considered = [_candidate(loop, by_loc[loc]) for loc in _order(loop)]
    high = [c for c in considered if c.relevance >= RELEVANT]
    gaps = tuple(uncovered(loop.vocab, loop.scored))
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
        task=loop.task,
        candidates=tuple(best),
        considered=tuple(considered),
        cycles=tuple(loop.cycles),
        key_terms=loop.vocab.key,
        sufficient=sufficient,
        missing=gaps,
        summary=summary,
        warnings=tuple(loop.warnings),
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


async def _run(loop: _Loop, plan: Plan, first: Gathered | None = None) -> None:
    terms: list[str] = []
    for number in range(1, loop.max_cycles + 1):
        terms = await _cycle(loop, plan, number, terms, first if number == 1 else None)
        if not terms:
            return


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
        loop = _Loop(
            task=task, sources=chosen, settings=settings, include=tuple(include),
            exclude=_excludes(reading, exclude),
            use_model=bool(settings.model_url) and use_model is not False,
            vocab=vocabulary([*plan.phrases, *plan.entities, *plan.keywords], plan.variants),
            max_cycles=max_cycles, client=session.client, reading=reading, about=_about(reading), limit=limit,
        )  # fmt: skip
        await _run(loop, plan)
        return _result(loop, limit)
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
    loop = _Loop(
        task=task, sources=[sources[i] for i in private], settings=settings, include=(),
        exclude=(), use_model=False, max_cycles=max_cycles, enough=1, use_feedback=False, locate=False,
        vocab=vocabulary([*plan.phrases, *plan.entities, *plan.keywords], plan.variants),
    )  # fmt: skip
    mine = Gathered(reports=[first.reports[i] for i in private], hits=[first.hits[i] for i in private])
    await _run(loop, plan, mine)
    extra = [loop.new_hits.get(s.name, []) if i in private else [] for i, s in enumerate(sources)]
    return extra, loop.cycles[1:]
