"""``retrieve``: seed 004's iterative retrieval: DISPATCH, EVALUATE, REFINE, LOOP (at most 3 cycles).

- **Dispatch**: a broad first query from the task's intent: its keywords and entities plus the
  planner's variants, sent to every source at once (``gather``: per-source deadlines and seed 003's
  fallbacks), keeping paths that match the include globs and none of the exclude globs (default:
  test files, unless the task is about tests).
- **Evaluate**: every candidate scored 0-1 in seed 004's bands with a reason and what it misses
  (``core/refine.py``; the configured model may score instead, with the rules as the fallback).
- **Refine**: learn the codebase's words from the best candidates, exclude what scored below 0.2
  when first seen, and search next for the task terms still uncovered with the learned words and
  RM3 feedback words (the heaviest words of the top candidates' text); filters are relaxed in seed
  003's order (dates, then source filters) when a cycle found nothing relevant.
- **Co-change**: for a code source whose folder is a git repository, the files that changed
  together with the best candidates in its past commits (``sources/cochange.py``), among those the
  source itself indexes (never a ``.gitignore``d, excluded, binary or oversized file), join the next
  cycle's candidates with the reason ("changed together with X in 4 of its 5 commits"), scored at
  most "related"; ``Cycle.cochanged`` and ``Cycle.history`` say what was added and read.
- **Order**: the first pass's candidates keep its order; later cycles add below, never reshuffle
  or drop what was kept.
- **Loop**: stop when 3 candidates score 0.7 or more and every key term is covered, when nothing new
  is left to search, or after ``max_cycles``. The answer is the 0.7+ set, or the best found with
  what is missing said plainly.

The same loop serves ``ask`` (``refine_gathered``) when its first pass is not good enough.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date

import httpx

from . import routing
from .config import Settings
from .core.plan import replan
from .core.refine import (
    ENOUGH,
    EXCLUDE_BELOW,
    FB_DOCS,
    FB_QUERY,
    RELEVANT,
    TASK_STOP,
    Facts,
    Scored,
    Vocabulary,
    allowed,
    bag,
    band,
    evaluate,
    expand,
    facts_for,
    key_stems,
    learn,
    uncovered,
    vocabulary,
)
from .errors import InvalidOption, InvalidQuery, ModelError
from .gather import Gathered, gather
from .judge import model_scores
from .models import Candidate, Cycle, Hit, Learned, Plan, Retrieval, SourceKind
from .session import Session
from .sources import Source
from .sources.cochange import History, Neighbour, neighbours, read_history

__all__ = ["DEFAULT_EXCLUDE", "MAX_CYCLES", "MAX_TASK", "aretrieve", "refine_gathered"]

MAX_TASK = 2_000
MAX_CYCLES = 5
MAX_PATTERNS = 32
PER_QUERY = 20  # hits asked of each source per cycle: room for what the globs and exclusions drop
MAX_FILE = 512_000  # bytes of a code file read for its imports
COCHANGE_SEEDS = 3  # the best candidates whose past co-changes are followed
COCHANGE_ADD = 5  # files brought in by co-change per cycle at most
COCHANGE_CAP = 0.69  # co-change alone makes a file "related" (seed 004's 0.5-0.7), never "implements"
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
    use_cochange: bool = True  # follow the repository's past co-changes (``ask`` goes without)
    histories: dict[str, History] = field(default_factory=dict)  # source name -> its git history
    pending: list[tuple[Source, Neighbour, float]] = field(default_factory=list)  # for the next cycle
    cochanged: dict[str, tuple[Neighbour, float]] = field(default_factory=dict)  # location -> why, seed score


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
    """Rule-based scores; the model's instead where it answers well (and only while it does); then
    what co-change says, once."""
    scored = evaluate(loop.vocab, [loop.facts[loc] for loc in sorted(loop.pool)])
    if not loop.use_model or not scored:
        return _with_cochange(loop, scored)
    hits = [loop.pool[s.facts.location] for s in scored]
    try:
        if loop.client is None:
            raise ModelError("no HTTP client for the model (retrieve runs in a Session)")
        rated = await model_scores(loop.task, hits, loop.settings, loop.client)
    except ModelError as exc:
        loop.use_model = False
        loop.warnings.append(f"model scoring unavailable, rule-based relevance instead: {exc}")
        return _with_cochange(loop, scored)
    out = list(scored)
    for i, (value, reason) in rated.items():
        s = scored[i]
        out[i] = Scored(s.facts, value, band(value), reason, s.missing, s.covered)
        loop.model_used.add(s.facts.location)
    return _with_cochange(loop, sorted(out, key=lambda s: (-s.relevance, s.facts.location)))


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
        deadline = loop.settings.source_timeout
        gathered = await gather(loop.sources, current, deadline=deadline, limit=PER_QUERY)
    loop.searched.extend(w.lower() for w in [*current.keywords, *current.entities])
    found, new = await asyncio.to_thread(_admit, loop, gathered, number)
    cochanged = await asyncio.to_thread(_admit_cochanged, loop, number)
    new += len(cochanged)
    scored = await _score(loop)
    # a candidate is excluded when first evaluated: one kept stays kept (later cycles never drop it)
    gone = [
        s.facts.location
        for s in scored
        if s.relevance < EXCLUDE_BELOW and loop.first_seen[s.facts.location] == number
    ]
    loop.excluded.update(gone)
    for loc in gone:
        loop.pool.pop(loc)
    loop.scored = [s for s in scored if s.facts.location in loop.pool]
    if number == 1:
        loop.first_order = [s.facts.location for s in loop.scored]
    gaps = uncovered(loop.vocab, loop.scored)
    relevant = sum(1 for s in loop.scored if s.relevance >= RELEVANT)
    learned: list[Learned] = []
    feedback: list[str] = []
    nxt: list[str] = []
    history = ""
    if relevant >= loop.enough and not gaps:
        decision = f"enough: {relevant} candidates at {RELEVANT} or more and every key term covered"
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
            if loop.use_cochange:
                history = await asyncio.to_thread(_follow_cochange, loop)
    loop.vocab = Vocabulary(loop.vocab.key, loop.vocab.variants, (*loop.vocab.learned, *learned))
    queries = tuple(f"{r.source}: {q}" for r in gathered.reports for q in r.queries)
    loop.cycles.append(
        Cycle(
            number=number, queries=queries, found=found, new=new, relevant=relevant,
            learned=tuple(learned), feedback=tuple(feedback), excluded=tuple(gone), uncovered=tuple(gaps),
            include=loop.include, exclude=loop.exclude, broadened=tuple(dropped), decision=decision,
            reports=tuple(gathered.reports), cochanged=tuple(cochanged), history=history,
        )
    )  # fmt: skip
    return nxt


def _history(loop: _Loop, source: Source) -> History | None:
    """The git history of a code source's folder, read once per retrieval; ``None`` for other sources
    (a source with no index of its own to check co-changed files against)."""
    root = source.options.path
    if not source.capabilities.history or root is None:
        return None
    if source.name not in loop.histories:
        try:
            base = root.expanduser().resolve()
        except (OSError, RuntimeError):
            loop.histories[source.name] = History(note="co-change unavailable: the folder cannot be resolved")
        else:
            loop.histories[source.name] = (
                read_history(base) if base.is_dir() else History(note="co-change unavailable: not a folder")
            )
    return loop.histories[source.name]


def _follow_cochange(loop: _Loop) -> str:
    """Queue for the next cycle the files that changed together with the best candidates (those at
    0.5 or more, best first) in the repository's past commits; what the history step did."""
    score = {s.facts.location: s.relevance for s in loop.scored}
    order = _order(loop)
    notes = []
    for source in loop.sources:
        fresh = source.name not in loop.histories
        history = _history(loop, source)
        if history is None:
            continue
        if fresh:  # said once, in the cycle that read it
            notes.append(f"{source.name}: {history.note}" if len(loop.sources) > 1 else history.note)
        mine = [loc for loc in order if loop.pool[loc].source == source.name and loop.pool[loc].path == loc]
        seeds = [loc for loc in mine if score[loc] >= 0.5][:COCHANGE_SEEDS]
        if not history.commits or not seeds:
            continue
        queued = 0
        for n in neighbours(history, seeds, limit=4 * COCHANGE_ADD):
            known = n.path in loop.pool or n.path in loop.excluded
            if known or not allowed(n.path, loop.include, loop.exclude) or not _indexed(source, n.path):
                continue
            loop.pending.append((source, n, score[n.seed]))
            queued += 1
            if queued >= COCHANGE_ADD:
                break
    return "; ".join(notes)


def _indexed(source: Source, path: str) -> bool:
    """Whether the code source's own index holds ``path``: history names every file ever committed,
    including those the source leaves out (``.gitignore``d secrets, its include/exclude globs,
    binary, minified or oversized files); co-change brings in only what a search could find."""
    return source.holds(path)


def _admit_cochanged(loop: _Loop, cycle: int) -> list[str]:
    """Add the files queued by co-change to the pool (those still in the folder); what was added."""
    added = []
    pending, loop.pending = loop.pending, []
    for source, n, seed_score in pending:
        if n.path in loop.excluded or (n.path in loop.pool and loop.first_seen[n.path] != cycle):
            continue
        if n.path not in loop.pool:
            if not _indexed(source, n.path):  # the index may have changed since it was queued
                continue
            probe = Hit(title=n.path, location=n.path, source=source.name, kind="code", authority="code",
                        score=0.0, path=n.path)  # fmt: skip
            whole = _read_file(source, probe)
            if whole is None:
                continue
            lines = whole.splitlines()[:40]
            hit = probe.model_copy(update={
                "location": f"{n.path}#L1-L{max(1, len(lines))}", "text": "\n".join(lines),
                "snippet": " ".join(" ".join(lines[:3]).split())[:200], "start_line": 1,
                "end_line": max(1, len(lines)), "meta": {"found": "co-change"},
            })  # fmt: skip
            loop.pool[n.path] = hit
            loop.first_seen[n.path] = cycle
            loop.new_hits.setdefault(source.name, []).append(hit)
            loop.facts[n.path] = facts_for(hit, whole)
            loop.texts[n.path] = whole
            if loop.use_feedback:
                loop.bags[n.path] = bag(whole, n.path, loop.surface)
        loop.cochanged[n.path] = (n, seed_score)
        added.append(f"{n.path} ({n.reason})")
    return added


_LABEL = {"high": "implements the target", "medium": "related", "low": "indirect", "none": "irrelevant"}


def _with_cochange(loop: _Loop, scored: list[Scored]) -> list[Scored]:
    """A file brought in by co-change scores at least its confidence times its seed's score (at
    most "related": history says it changes with the target, not that it is the target)."""
    if not loop.cochanged:
        return scored
    out = []
    for s in scored:
        why = loop.cochanged.get(s.facts.location)
        if why is not None:
            n, seed_score = why
            value = round(min(COCHANGE_CAP, n.confidence * seed_score), 3)
            if value > s.relevance:
                reason = f"{_LABEL[band(value)]}: {n.reason} (rules: {s.reason})"
                s = Scored(s.facts, value, band(value), reason, s.missing, s.covered)
            else:
                s = Scored(s.facts, s.relevance, s.band, f"{s.reason}; {n.reason}", s.missing, s.covered)
        out.append(s)
    return sorted(out, key=lambda s: (-s.relevance, s.facts.location))


def _feedback(loop: _Loop, vocab: Vocabulary) -> list[str]:
    """RM3 pseudo-relevance feedback: the task's query model grown with the words of the best
    candidates so far; its new words (as written in the code), the heaviest first, for the next
    query."""
    score = {s.facts.location: s.relevance for s in loop.scored}
    top = [(loop.bags[loc], score[loc]) for loc in _order(loop)[:FB_DOCS]]
    model = expand(vocab, top, [loop.bags[loc] for loc in loop.pool])
    known = key_stems(vocab)
    words = [loop.surface.get(w, w) for w in model if w not in known]
    return [w for w in words if w.lower() not in loop.searched][:FB_QUERY]


def _order(loop: _Loop) -> list[str]:
    """The ranking: the first pass's candidates in the first pass's order, then what later cycles
    found, by relevance. Later cycles add below and never reshuffle: re-scored with learned words,
    candidates found through those words outrank direct matches more often than they deserve
    (measured on this repository's history, benchmarks/RESULTS.md). Files brought in by co-change
    are later finds too: merged into the first pass's order by score they displaced gold files and
    added none (recall@5 -1.1% on the same history)."""
    kept = [loc for loc in loop.first_order if loc in loop.pool]
    seen = set(kept)
    return kept + [s.facts.location for s in loop.scored if s.facts.location not in seen]


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
    )


def _result(loop: _Loop, limit: int) -> Retrieval:
    by_loc = {s.facts.location: s for s in loop.scored}
    considered = [_candidate(loop, by_loc[loc]) for loc in _order(loop)]
    best = [c for c in considered if c.relevance >= RELEVANT]
    gaps = tuple(uncovered(loop.vocab, loop.scored))
    sufficient = len(best) >= ENOUGH and not gaps
    if best:
        summary = f"{len(best)} candidate(s) at {RELEVANT} or more"
    else:
        best = considered[:limit]
        summary = (
            f"no candidate reached {RELEVANT}; the best found is shown" if best else "nothing relevant found"
        )
    if gaps:
        summary += f"; still missing: {', '.join(gaps)}"
    elif not sufficient and best:
        summary += f"; fewer than {ENOUGH} at {RELEVANT} or more"
    return Retrieval(
        task=loop.task,
        candidates=tuple(best[:limit]),
        considered=tuple(considered),
        cycles=tuple(loop.cycles),
        key_terms=loop.vocab.key,
        sufficient=sufficient,
        missing=gaps,
        summary=summary,
        warnings=tuple(loop.warnings),
    )


def _excludes(task: str, exclude: Sequence[str] | None) -> tuple[str, ...]:
    if exclude is not None:
        return tuple(exclude)
    words = {w.lower() for w in task.split()}
    return () if words & {"test", "tests", "testing", "spec", "specs", "테스트"} else DEFAULT_EXCLUDE


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
        plan = routing.plan(task, kinds, today=today, session=session)
        loop = _Loop(
            task=task, sources=chosen, settings=settings, include=tuple(include),
            exclude=_excludes(task, exclude), use_model=bool(settings.model_url) and use_model is not False,
            vocab=vocabulary([*plan.phrases, *plan.entities, *plan.keywords], plan.variants),
            max_cycles=max_cycles, client=session.client,
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
        exclude=(), use_model=False, max_cycles=max_cycles, enough=1, use_feedback=False, use_cochange=False,
        vocab=vocabulary([*plan.phrases, *plan.entities, *plan.keywords], plan.variants),
    )  # fmt: skip
    mine = Gathered(reports=[first.reports[i] for i in private], hits=[first.hits[i] for i in private])
    await _run(loop, plan, mine)
    extra = [loop.new_hits.get(s.name, []) if i in private else [] for i, s in enumerate(sources)]
    return extra, loop.cycles[1:]
