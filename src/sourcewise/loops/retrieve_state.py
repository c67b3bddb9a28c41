"""Retrieval's loop as pure steps over an immutable state (see ``retrieve.py``): ``Setup`` is what a
retrieval fixes before its first cycle, ``State`` what one cycle hands the next. Each step takes a
state and returns a new one: ``next_plan`` (the cycle's query), ``admit`` (hits into the pool),
``rule_scores``/``with_model`` (evaluate), ``decide`` (exclude, keep the order, learn, stop or go on)
and ``order`` (the ranking). No step does I/O: reading files, searching sources, a code source's
ranking and the model's scores are ``retrieve_loop``'s, which hands their results in."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import httpx

from sourcewise.config import Settings
from sourcewise.loops.gather import Gathered
from sourcewise.models import Cycle, Hit, Learned, Plan
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
from sourcewise.sources import Source
from sourcewise.sources.code.taskread import Reading

__all__ = [
    "Choice",
    "Setup",
    "State",
    "Step",
    "admit",
    "decide",
    "next_plan",
    "order",
    "rule_scores",
    "searched",
    "with_model",
]

RULES_TEXT = 8_000  # characters of a ranked file the rules read for its relevance and the words it teaches
TOP = 5  # a cycle that changes nothing in the top 5 is the last
MERGE_BELOW = 0.5  # a later cycle's find goes above a first-pass candidate scoring under this


@dataclass(frozen=True)
class Setup:
    """What a retrieval fixes before its first cycle."""

    task: str
    sources: tuple[Source, ...]
    settings: Settings
    include: tuple[str, ...]
    exclude: tuple[str, ...]
    max_cycles: int = 3
    enough: int = ENOUGH
    use_feedback: bool = True  # RM3 words in the next query (``ask`` goes without: it needs speed)
    client: httpx.AsyncClient | None = None  # the session's, for the model's scores
    reading: Reading = field(default_factory=Reading)
    about: frozenset[str] = frozenset()  # kinds of files the task is about (tests, docs)
    locate: bool = True  # code sources rank their repository (``ask`` reads their chunks instead)
    limit: int = 10  # candidates wanted


@dataclass(frozen=True)
class State:
    """What one cycle hands the next; never changed in place (each step returns a new one)."""

    vocab: Vocabulary
    use_model: bool = False  # the model scores while it answers; off for good after it fails once
    pool: Mapping[str, Hit] = field(default_factory=dict)  # kept candidates, in the order admitted
    first_seen: Mapping[str, int] = field(default_factory=dict)
    facts: Mapping[str, Facts] = field(default_factory=dict)
    texts: Mapping[str, str] = field(default_factory=dict)
    excluded: frozenset[str] = frozenset()
    searched: tuple[str, ...] = ()
    model_used: frozenset[str] = frozenset()
    warnings: tuple[str, ...] = ()
    scored: tuple[Scored, ...] = ()
    cycles: tuple[Cycle, ...] = ()
    new_hits: Mapping[str, tuple[Hit, ...]] = field(default_factory=dict)  # per source, after cycle 1
    bags: Mapping[str, Counter[str]] = field(default_factory=dict)  # feedback's word counts per candidate
    surface: Mapping[str, str] = field(default_factory=dict)  # a stem as first written
    first_order: tuple[str, ...] = ()
    located: Mapping[str, tuple[float, str]] = field(default_factory=dict)  # path -> relevance, why
    looked: frozenset[str] = frozenset()  # code sources that took their second look
    aimed: frozenset[str] = frozenset()  # code sources whose targeted searches ran (once)
    focus: tuple[str, ...] = ()  # files a later cycle's targeted search named: the 5th place on


def next_plan(state: State, plan: Plan, cycle: int, terms: Sequence[str]) -> tuple[Plan, list[str]]:
    """The plan for ``cycle``: the task broadly first, then ``terms``; filters relaxed (seed 003)
    when the last cycle found nothing relevant."""
    if cycle == 1:
        variants = [v for vs in plan.variants.values() for v in vs[:2] if " " not in v]
        words = [*plan.phrases, *plan.entities, *plan.keywords, *variants]
        return replan(plan, [w for w in words if w.lower() not in TASK_STOP] or words), []
    current = replan(plan, list(terms))
    dropped: list[str] = []
    if state.cycles and state.cycles[-1].relevant == 0:
        wider = broaden(current)
        if wider is not None and wider.dropped[-1] in ("date filters", "source filters"):
            current, dropped = replan(wider, list(terms)), wider.dropped[-1:]
    return current, dropped


def searched(state: State, current: Plan) -> State:
    """The words this cycle's query sends, remembered so a later cycle does not send them again."""
    words = tuple(w.lower() for w in [*current.keywords, *current.entities])
    return replace(state, searched=(*state.searched, *words))


def admit(
    setup: Setup, state: State, gathered: Gathered, wholes: Sequence[Sequence[str | None]], cycle: int
) -> tuple[State, int, int]:
    """This cycle's hits added to the pool (``wholes``: each hit's whole file, read by the caller, or
    ``None``): the new state, hits returned and new candidates."""
    pool, first_seen = dict(state.pool), dict(state.first_seen)
    facts, texts = dict(state.facts), dict(state.texts)
    new_hits = {name: list(hits) for name, hits in state.new_hits.items()}
    found = new = 0
    for source, hits, files in zip(setup.sources, gathered.hits, wholes, strict=True):
        for hit, whole in zip(hits, files, strict=True):
            found += 1
            if whole is not None and hit.meta.get("found") == "locate":
                # ranked already: the rules read its head, not all of a huge file, and the passage
                # shown, so that what a candidate shows is never listed as missing from it
                whole = f"{whole[:RULES_TEXT]}\n{hit.text}"
            # a code candidate is its file (its best chunk shown); other hits are themselves
            key = hit.path if whole is not None and hit.path else hit.location
            if key in pool or key in state.excluded:
                continue
            if hit.path and not allowed(hit.path, setup.include, setup.exclude):
                continue
            new += 1
            pool[key] = hit
            first_seen[key] = cycle
            if cycle > 1:
                new_hits.setdefault(source.name, []).append(hit)
            facts[key] = facts_for(hit, whole)
            texts[key] = whole if whole is not None else (hit.text or hit.snippet)
    after = replace(
        state, pool=pool, first_seen=first_seen, facts=facts, texts=texts,
        new_hits={name: tuple(hits) for name, hits in new_hits.items()},
    )  # fmt: skip
    return after, found, new


def rule_scores(state: State) -> list[Scored]:
    """Every candidate in the pool scored by the rules (``planning/refine.py``)."""
    return evaluate(state.vocab, [state.facts[loc] for loc in sorted(state.pool)])


def with_model(
    state: State, scored: list[Scored], rated: Mapping[int, tuple[float, str]] | str
) -> tuple[State, list[Scored]]:
    """The model's scores in place of the rules' where it gave one; ``rated`` as text is why it
    could not, and the rules' scores stand from then on."""
    if isinstance(rated, str):
        warning = f"model scoring unavailable, rule-based relevance instead: {rated}"
        return replace(state, use_model=False, warnings=(*state.warnings, warning)), scored
    out = list(scored)
    used = set(state.model_used)
    for i, (value, reason) in rated.items():
        s = scored[i]
        out[i] = Scored(s.facts, value, band(value), reason, s.missing, s.covered)
        used.add(s.facts.location)
    ranked = sorted(out, key=lambda s: (-s.relevance, s.facts.location))
    return replace(state, model_used=frozenset(used)), ranked


def order(state: State) -> list[str]:
    """The ranking. The first pass's candidates keep the first pass's order (a code source's files
    in its ranking's order); what later cycles found is merged in by relevance: above the first of
    them it outscores that the first pass scored below 0.5 (a related file found first stays above:
    on real bug reports, files the loop found through learned words outscored the file to change),
    never reshuffling them. A code source's later find passes a first-pass file that is not
    irrelevant (0.2 or more) only at 0.7 or more: its score is a share of a later ranking's best,
    not comparable with the first's, and hub modules (``__init__``, ``compat``) found through
    learned words at 0.4 pushed the file to change out of the top 5 (measured,
    benchmarks/RESULTS.md). A later find at 0.7+ passes any first-pass candidate under 0.7 (seed
    004's "throttle"). The files a later cycle's targeted search named (``State.focus``: a title's
    gap, a linked line's names) take the 5th place on, in the order named."""
    score = {s.facts.location: s.relevance for s in state.scored}
    first = [loc for loc in state.first_order if loc in state.pool]
    seen = set(first)
    later = [s.facts.location for s in state.scored if s.facts.location not in seen]
    out: list[str] = []
    i = 0
    for loc in first:
        while i < len(later) and score[loc] < _passable(score[later[i]]) and score[later[i]] > score[loc]:
            if state.located and score[loc] >= EXCLUDE_BELOW and score[later[i]] < RELEVANT:
                break  # a code source's later find passes a kept file only when 0.7+ (best first)
            out.append(later[i])
            i += 1
        out.append(loc)
    out += later[i:]
    for loc in reversed(state.focus):  # files a targeted search named: the 5th place on, in turn
        if loc in out and out.index(loc) >= TOP:
            out.remove(loc)
            out.insert(TOP - 1, loc)
    return out


def _passable(later: float) -> float:
    """The score under which a first-pass candidate lets a later find with ``later`` pass: 0.5, or
    0.7 for a find at 0.7 or more (a find that implements the target passes one that does not)."""
    return RELEVANT if later >= RELEVANT else MERGE_BELOW


@dataclass(frozen=True)
class Step:
    """What a cycle did, for its record: the query's reports, hits returned and new, filters dropped."""

    number: int
    gathered: Gathered
    found: int
    new: int
    dropped: tuple[str, ...]
    before: tuple[str, ...]  # the top 5 before this cycle's finds (after its second look's re-rank)


def _kept(state: State, scored: list[Scored], number: int) -> tuple[State, list[str]]:
    """A candidate is excluded when first evaluated: one kept stays kept (later cycles never drop
    it); a ranked file stays (the list is at least ``limit`` long). In cycle 1 the order is fixed: a
    code source's files in its ranking's order, then the rest by relevance."""
    gone = [
        s.facts.location
        for s in scored
        if s.relevance < EXCLUDE_BELOW
        and state.first_seen[s.facts.location] == number
        and s.facts.location not in state.located
    ]
    dropped = set(gone)
    pool = {loc: hit for loc, hit in state.pool.items() if loc not in dropped}
    kept = tuple(s for s in scored if s.facts.location in pool)
    after = replace(state, pool=pool, excluded=state.excluded | set(gone), scored=kept)
    if number == 1:
        ranked = sorted(state.located, key=lambda k: (-state.located[k][0], k))
        rest = [s.facts.location for s in kept if s.facts.location not in state.located]
        after = replace(after, first_order=(*(k for k in ranked if k in pool), *rest))
    return after, gone


def _feedback(state: State, vocab: Vocabulary) -> tuple[State, list[str]]:
    """RM3 pseudo-relevance feedback: the task's query model grown with the words of the best
    candidates so far; its new words (as written in the code), the heaviest first, for the next
    query. Candidates' word counts are made once, when a next cycle first needs them."""
    bags, surface = dict(state.bags), dict(state.surface)
    for loc in state.pool:
        if loc not in bags:
            bags[loc] = bag(state.texts[loc], state.pool[loc].path or "", surface)
    score = {s.facts.location: s.relevance for s in state.scored}
    best = [loc for loc in order(state) if score[loc] >= EXCLUDE_BELOW][:FB_DOCS]  # never an irrelevant one
    model = expand(vocab, [(bags[loc], score[loc]) for loc in best], [bags[loc] for loc in state.pool])
    known = key_stems(vocab)
    words = [surface.get(w, w) for w in model if w not in known]
    fresh = [w for w in words if w.lower() not in state.searched][:FB_QUERY]
    return replace(state, bags=bags, surface=surface), fresh


def _why(relevant: int, enough: int, gaps: list[str], learned: list[Learned], feedback: list[str]) -> str:
    parts = [f"{relevant} of {enough} candidates at {RELEVANT}+"]
    parts += [f"uncovered: {', '.join(gaps)}"] if gaps else []
    parts += [f"learned: {', '.join(item.term for item in learned)}"] if learned else []
    parts += [f"feedback: {', '.join(feedback)}"] if feedback else []
    return "; ".join(parts)


@dataclass(frozen=True)
class Choice:
    """A cycle's decision: why, the words learned, the feedback words, the next query's terms."""

    decision: str
    learned: tuple[Learned, ...] = ()
    feedback: tuple[str, ...] = ()
    terms: tuple[str, ...] = ()  # empty: stop


def _choose(setup: Setup, state: State, step: Step, gaps: list[str], relevant: int) -> tuple[State, Choice]:
    """Stop (enough, the top 5 unchanged, the last cycle, nothing new) or refine."""
    if relevant >= setup.enough and not gaps:
        return state, Choice(
            f"enough: {relevant} candidates at {RELEVANT} or more and every key term covered"
        )
    if step.number > 1 and state.located and tuple(order(state)[:TOP]) == step.before:
        return state, Choice(f"stop: what cycle {step.number} found changed nothing in the top {TOP}")
    if step.number >= setup.max_cycles:
        return state, Choice(f"stop: {step.number} of {setup.max_cycles} cycles run")
    known = [*state.searched, *(item.term for item in state.vocab.learned)]
    learned = learn(state.vocab, list(state.scored), state.texts, gaps, known)
    grown = Vocabulary(state.vocab.key, state.vocab.variants, (*state.vocab.learned, *learned))
    feedback: list[str] = []
    if setup.use_feedback:
        state, feedback = _feedback(state, grown)
    nxt = tuple(dict.fromkeys([*gaps, *(item.term for item in learned), *feedback]))
    if not learned and all(t.lower() in state.searched for t in nxt):
        why = "stop: nothing new to search (no word learned, every gap already searched)"
        return state, Choice(why, tuple(learned), tuple(feedback))
    why = "refine: " + _why(relevant, setup.enough, gaps, learned, feedback)
    return state, Choice(why, tuple(learned), tuple(feedback), nxt)


def decide(setup: Setup, state: State, scored: list[Scored], step: Step) -> tuple[State, list[str]]:
    """The end of a cycle: exclude, fix the order, learn, and stop or go on; the new state (with
    the cycle's record) and the next query's terms (``[]`` to stop)."""
    state, gone = _kept(state, scored, step.number)
    gaps = uncovered(state.vocab, state.scored)
    relevant = sum(1 for s in state.scored if s.relevance >= RELEVANT)
    state, choice = _choose(setup, state, step, gaps, relevant)
    vocab = Vocabulary(state.vocab.key, state.vocab.variants, (*state.vocab.learned, *choice.learned))
    reports = step.gathered.reports
    record = Cycle(
        number=step.number, queries=tuple(f"{r.source}: {q}" for r in reports for q in r.queries),
        found=step.found, new=step.new, relevant=relevant, learned=choice.learned, feedback=choice.feedback,
        excluded=tuple(gone), uncovered=tuple(gaps), include=setup.include, exclude=setup.exclude,
        broadened=step.dropped, decision=choice.decision, reports=tuple(reports),
    )  # fmt: skip
    return replace(state, vocab=vocab, cycles=(*state.cycles, record)), list(choice.terms)
