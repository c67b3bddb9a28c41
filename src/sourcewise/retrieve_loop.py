"""Retrieval's loop: the state carried from one cycle to the next and one DISPATCH-EVALUATE-REFINE
cycle (see ``retrieve.py``): the query sent to every source, the candidates admitted and scored,
the order kept, the words learned for the next query, and when to stop."""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import dataclass, field

import httpx

from sourcewise.answer.judge import model_scores
from sourcewise.config import Settings
from sourcewise.errors import ModelError
from sourcewise.gather import Gathered, gather
from sourcewise.models import Cycle, Hit, Learned, Plan, SourceReport
from sourcewise.planning.feedback import FB_DOCS, FB_QUERY, bag, expand, key_stems
from sourcewise.planning.planner import replan
from sourcewise.planning.refine import (
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
)
from sourcewise.planning.widen import broaden
from sourcewise.retrieve_code import locate_files, read_file, with_located
from sourcewise.sources import Source
from sourcewise.sources.code.taskread import Reading

__all__ = ["Loop", "order", "run"]

RULES_TEXT = 8_000  # characters of a ranked file the rules read for its relevance and the words it teaches
PER_QUERY = 20  # hits asked of each source per cycle: room for what the globs and exclusions drop
TOP = 5  # a cycle that changes nothing in the top 5 is the last
MERGE_BELOW = 0.5  # a later cycle's find goes above a first-pass candidate scoring under this


@dataclass
class Loop:
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
    looked: set[str] = field(default_factory=set)  # code sources that took their second look
    limit: int = 10  # candidates wanted


def _admit(loop: Loop, gathered: Gathered, cycle: int) -> tuple[int, int]:
    """Add this cycle's hits to the pool: (hits returned, new candidates)."""
    found = new = 0
    for source, hits in zip(loop.sources, gathered.hits, strict=True):
        for hit in hits:
            found += 1
            whole = read_file(source, hit)
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
    return found, new


async def _score(loop: Loop) -> list[Scored]:
    """Rule-based scores; the model's instead where it answers well (and only while it does); a code
    source's files scored by its ranking."""
    scored = evaluate(loop.vocab, [loop.facts[loc] for loc in sorted(loop.pool)])
    if not loop.use_model or not scored:
        return with_located(loop, scored)
    hits = [loop.pool[s.facts.location] for s in scored]
    try:
        if loop.client is None:
            raise ModelError("no HTTP client for the model (retrieve runs in a Session)")
        rated = await model_scores(loop.task, hits, loop.settings, loop.client)
    except ModelError as exc:
        loop.use_model = False
        loop.warnings.append(f"model scoring unavailable, rule-based relevance instead: {exc}")
        return with_located(loop, scored)
    out = list(scored)
    for i, (value, reason) in rated.items():
        s = scored[i]
        out[i] = Scored(s.facts, value, band(value), reason, s.missing, s.covered)
        loop.model_used.add(s.facts.location)
    return with_located(loop, sorted(out, key=lambda s: (-s.relevance, s.facts.location)))


def _dispatch_plan(loop: Loop, plan: Plan, cycle: int, terms: list[str]) -> tuple[Plan, list[str]]:
    """The plan for ``cycle``: the task broadly first, then ``terms``; filters relaxed (seed 003)
    when the last cycle found nothing relevant."""
    if cycle == 1:
        variants = [v for vs in plan.variants.values() for v in vs[:2] if " " not in v]
        words = [*plan.phrases, *plan.entities, *plan.keywords, *variants]
        return replan(plan, [w for w in words if w.lower() not in TASK_STOP] or words), []
    current = replan(plan, terms)
    dropped: list[str] = []
    if loop.cycles and loop.cycles[-1].relevant == 0:
        wider = broaden(current)
        if wider is not None and wider.dropped[-1] in ("date filters", "source filters"):
            current, dropped = replan(wider, terms), wider.dropped[-1:]
    return current, dropped


async def _cycle(loop: Loop, plan: Plan, number: int, terms: list[str], first: Gathered | None) -> list[str]:
    """One DISPATCH-EVALUATE-REFINE cycle; the next query's terms, or ``[]`` to stop."""
    current, dropped = _dispatch_plan(loop, plan, number, terms)
    if first is not None:
        gathered = first
    else:
        gathered = await _dispatch(loop, current)
    loop.searched.extend(w.lower() for w in [*current.keywords, *current.entities])
    before = order(loop)[:TOP]  # before a later cycle's second look re-ranks the first cycle's files
    gathered = await locate_files(loop, gathered, terms if number > 1 else [])
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
    elif number > 1 and loop.located and order(loop)[:TOP] == before:
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


def _feedback(loop: Loop, vocab: Vocabulary) -> list[str]:
    """RM3 pseudo-relevance feedback: the task's query model grown with the words of the best
    candidates so far; its new words (as written in the code), the heaviest first, for the next
    query."""
    for loc in loop.pool:  # read for feedback only when a next cycle needs it (one cycle never does)
        if loc not in loop.bags:
            loop.bags[loc] = bag(loop.texts[loc], loop.pool[loc].path or "", loop.surface)
    score = {s.facts.location: s.relevance for s in loop.scored}
    best = [loc for loc in order(loop) if score[loc] >= EXCLUDE_BELOW][:FB_DOCS]  # never an irrelevant one
    top = [(loop.bags[loc], score[loc]) for loc in best]
    model = expand(vocab, top, [loop.bags[loc] for loc in loop.pool])
    known = key_stems(vocab)
    words = [loop.surface.get(w, w) for w in model if w not in known]
    return [w for w in words if w.lower() not in loop.searched][:FB_QUERY]


def order(loop: Loop) -> list[str]:
    """The ranking. The first pass's candidates keep the first pass's order (a code source's files
    in its ranking's order); what later cycles found is merged in by relevance: above the first of
    them it outscores that the first pass scored below 0.5 (a related file found first stays above:
    on real bug reports, files the loop found through learned words outscored the file to change),
    never reshuffling them. A code source's later find passes a first-pass file that is not
    irrelevant (0.2 or more) only at 0.7 or more: its score is a share of a later ranking's best,
    not comparable with the first's, and hub modules (``__init__``, ``compat``) found through
    learned words at 0.4 pushed the file to change out of the top 5 (measured,
    benchmarks/RESULTS.md)."""
    score = {s.facts.location: s.relevance for s in loop.scored}
    first = [loc for loc in loop.first_order if loc in loop.pool]
    seen = set(first)
    later = [s.facts.location for s in loop.scored if s.facts.location not in seen]
    out: list[str] = []
    i = 0
    for loc in first:
        while i < len(later) and score[loc] < MERGE_BELOW and score[later[i]] > score[loc]:
            if loop.located and score[loc] >= EXCLUDE_BELOW and score[later[i]] < RELEVANT:
                break  # a code source's later find passes a kept file only when 0.7+ (best first)
            out.append(later[i])
            i += 1
        out.append(loc)
    return out + later[i:]


async def _dispatch(loop: Loop, current: Plan) -> Gathered:
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


def _why(relevant: int, gaps: list[str], learned: list[Learned], feedback: list[str]) -> str:
    parts = [f"{relevant} of {ENOUGH} candidates at {RELEVANT}+"]
    parts += [f"uncovered: {', '.join(gaps)}"] if gaps else []
    parts += [f"learned: {', '.join(item.term for item in learned)}"] if learned else []
    parts += [f"feedback: {', '.join(feedback)}"] if feedback else []
    return "; ".join(parts)


async def run(loop: Loop, plan: Plan, first: Gathered | None = None) -> None:
    terms: list[str] = []
    for number in range(1, loop.max_cycles + 1):
        terms = await _cycle(loop, plan, number, terms, first if number == 1 else None)
        if not terms:
            return
