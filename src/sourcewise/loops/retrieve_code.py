"""Retrieval's code sources: a code source ranks its whole repository for the task
(``sources/code/locate.py``) instead of a chunk search; each file is one candidate showing the definitions
the task is about (``path::Class.method``), scored by its share of the best file's score, and later
cycles rank again with the learned words. Pure steps over the loop's ``State`` (``take_located``,
``look_targets``, ``looked_again``, ``with_located``); the files they speak of are read by
``retrieve_loop``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from itertools import chain, islice

from sourcewise.loops.retrieve_state import TOP, Setup, State, order
from sourcewise.planning.refine import Scored, allowed, band
from sourcewise.sources import Source
from sourcewise.sources.code.facts import path_parts
from sourcewise.sources.code.locate import Located, kind_of
from sourcewise.text.analyze import analyze, question_word

__all__ = ["look_targets", "looked_again", "take_located", "with_located"]

LOCATED_MORE = 5  # files of a code source's ranking taken by the first cycle beyond ``limit``
LOCATED_LATER = 10  # new files a later cycle's ranking adds at most
W_PASSAGE = 0.5  # a later cycle's second look: the power of a file's best passage's share in its fused score
MAX_FALL = 3  # places the second look may sink a file below its first place (a weak passage is no proof)
MAX_SPELLED = 3  # files a title's gap word may name: more (a package's own name) point nowhere
RELATED = 0.69  # the most a file found by words alone scores while a key term is uncovered
HIGH = 0.9  # the relevance of a code source's best file; the others by their share of its score


_LABEL = {"high": "implements the target", "medium": "related", "low": "indirect", "none": "irrelevant"}


def with_located(setup: Setup, state: State, scored: list[Scored]) -> list[Scored]:
    """A code source's files take the relevance of its latest ranking (their share of the best
    file's score) and its reasons: "implements the target" only when the task names the file (a
    path, module, frame or error it defines) or the file covers every key term; a file found by
    words alone scores the mean of its share and the rules' score (the rules' when higher: a word
    learned by the loop standing for a key term)."""
    if not state.located:
        return scored
    out = []
    for s in scored:
        found = state.located.get(s.facts.location)
        if found is not None and s.facts.location not in state.model_used:  # a model's score stands
            value, why = found
            if not why.startswith(("named", "module named", "defines")):  # words alone: the rules weigh in
                value = round((value + s.relevance) / 2, 3)
                value = min(value, RELATED) if s.missing else value  # a key term uncovered: not the target
            kind = kind_of(s.facts.location)
            if value >= s.relevance or (kind != "source" and kind not in setup.about):  # a doc page: down
                s = Scored(s.facts, value, band(value), f"{_LABEL[band(value)]}: {why}", s.missing, s.covered)
            else:  # the rules see more (a learned word stands for a key term): theirs, with the why
                s = Scored(s.facts, s.relevance, s.band, f"{s.reason}; {why}", s.missing, s.covered)
        out.append(s)
    return sorted(out, key=lambda s: (-s.relevance, s.facts.location))


def take_located(
    setup: Setup, state: State, ranked: Sequence[Located], targeted: Mapping[str, str] | None = None
) -> tuple[State, list[Located]] | None:
    """The files of a code source's ranking this cycle adds (the best ``limit`` + 5 at first, at
    most 10 new later; none already kept or excluded), each valued by its share of the best file's
    score (``HIGH`` for the best); a file's value is its first ranking's: later cycles add, never
    reshuffle. A later cycle also targets gaps: the title's (``_spelled_gaps``) and the files the
    caller's searches for what the task points at found (``targeted``: path -> why). ``None`` when
    the ranking has no file the globs allow with a score."""
    kept = (r for r in ranked if allowed(r.path, setup.include, setup.exclude))  # lazily: the best few
    best = next(kept, None)
    if best is None or best.score <= 0:
        return None
    top = best.score
    room = setup.limit + LOCATED_MORE if not state.located else LOCATED_LATER
    new = (r for r in chain([best], kept) if r.path not in state.pool and r.path not in state.excluded)
    fresh = list(islice(new, room))
    located = dict(state.located)
    for r in fresh:
        why = "; ".join(r.reasons) or "words of the task"
        located.setdefault(r.path, (round(HIGH * r.score / top, 3), why))
    state = replace(state, located=located)
    if state.first_order:  # a later cycle: the title's gaps, by what the cycles before read
        named = _spelled_gaps(setup, state, ranked)
        for r in ranked:
            aimed = (targeted or {}).get(r.path)
            if aimed is not None and r.path not in state.excluded and r.path not in named:
                named[r.path] = (r, aimed)
        state, focused = _focused(state, named)
        fresh += [r for r in focused if r not in fresh]
    return state, fresh


def _focused(state: State, named: Mapping[str, tuple[Located, str]]) -> tuple[State, list[Located]]:
    """Files a later cycle's targeted search named (path -> the file, why) take the 5th place on
    (``order``), each at the 5th file's relevance; those in the top 5 already stay."""
    top = order(state)[:TOP]
    named = {p: rw for p, rw in named.items() if p not in top and p not in state.focus}
    if not named:
        return state, []
    fifth = state.located.get(top[-1], (0.0, ""))[0] if len(top) == TOP else 0.0
    located = dict(state.located)
    for p, (_, why) in named.items():
        located[p] = (fifth, why)
    focus = (*state.focus, *named)
    return replace(state, located=located, focus=focus), [r for r, _ in named.values()]


def _spelled_gaps(setup: Setup, state: State, ranked: Sequence[Located]) -> dict[str, tuple[Located, str]]:
    """Seed 004's gap-driven refinement: a word of the report's title (its first line: what it is
    about) that no file of the top 5 holds, read in full by the rules, in its text or its path, is
    a gap; a folder or module the word names (at most ``MAX_SPELLED`` source files: "GitHub Action:
    ..." -> ``action/main.py``) takes the 5th place (``_focused``). The
    title alone: the whole report's gap words named a few files on 12 of the 129 real tasks, 1 of
    them right; the title's, on 2 (benchmarks/RESULTS.md, retrieve)."""
    title = next((line for line in setup.reading.prose.splitlines() if line.strip()), "")
    words = {w for w in analyze(title) if len(w) > 2 and not question_word(w)}
    allowed_kinds = {"source", *setup.about}
    spelled = [
        (r, w)
        for r in ranked
        if r.path not in state.excluded
        and allowed(r.path, setup.include, setup.exclude)
        and kind_of(r.path) in allowed_kinds
        for w in words & {part.lower() for part in path_parts(r.path)}
    ]
    if not spelled:  # the files read are analyzed only when a title's word names a file (time)
        return {}
    top = order(state)[:TOP]
    read = {w for p in top for w in analyze(f"{p} {state.texts.get(p, '')}")}
    by_word: dict[str, list[Located]] = {}
    for r, w in spelled:
        if w not in read:
            by_word.setdefault(w, []).append(r)
    why = "named by the title: {!r}, which no file read holds"
    return {r.path: (r, why.format(w)) for w, rs in by_word.items() if len(rs) <= MAX_SPELLED for r in rs}


def look_targets(setup: Setup, state: State, source: Source) -> tuple[State, list[str]]:
    """The files a later cycle's second look re-ranks: the first cycle's files of this code source
    (another's passages are not its to score), its best ``limit`` + 5; once a retrieval for each
    source (``[]`` when it has looked, or has no passages)."""
    held = {p for p, hit in state.pool.items() if hit.source == source.name and p in state.located}
    first = [p for p in state.first_order if p in held][: setup.limit + LOCATED_MORE]
    if source.name in state.looked or getattr(source, "passages", None) is None or not first:
        return state, []
    return replace(state, looked=state.looked | {source.name}), first


def looked_again(
    state: State, first: Sequence[str], best: Mapping[str, float], about: frozenset[str] = frozenset()
) -> State:
    """A later cycle's re-ranking of the first cycle's files: each by its share of the first
    ranking times its best passage's share (``best``: the one chunk most about the task) to the
    power ``W_PASSAGE``. A hub module holds many of the task's words scattered over its length; the
    file to change holds them together, in the definition to change (measured: benchmarks/RESULTS.md,
    retrieve). A product, not a sum: the passage moves a file by a share of its own first score, so
    a file the first ranking put well below another needs a passage that much better to pass it;
    with a sum, a file lower in the ranking passed one above it on a passage 0.1 better whatever
    their first scores, and such edge swaps pushed the file to change out of the top 5 (tuning set:
    +3 -2 at 5 for the sum, +3 -1 for the product). The files move only among the places they
    held, none more than ``MAX_FALL`` down (``_reordered``). Tried and left out: lifting the
    import-graph neighbours of the best three files (the tuning set's larger trees, @5 27 -> 23:
    the neighbours are hubs); a margin before overtaking and reciprocal rank fusion (none better
    than the sum but at one task's gap)."""
    # A doc page, a changelog, config (a kind the task is not about) holds the task's words together
    # in prose: its passage says nothing about the code to change, and lifted ``docs/auth.md`` above
    # the seed's ``tokens.ts``. Such a file weighs as one with no passage.
    best = {p: v for p, v in best.items() if kind_of(p) in ("source", *about)}
    top = max(best.values(), default=0.0)
    if top <= 0:
        return state
    # A file with no passage (found by what the task names, a traceback frame or a path, and none of
    # the prose's words) weighs as the weakest passage found, not as none: a factor of 0 sank it
    # below every other file and its relevance to 0, out of the answer.
    weakest = min(best.values())
    fused = {p: state.located[p][0] / HIGH * (best.get(p, weakest) / top) ** W_PASSAGE for p in first}
    peak = max(fused.values())
    if peak <= 0:
        return state
    located = dict(state.located)
    for p in first:
        why = located[p][1] + ("; its best passage" if p in best else "")
        located[p] = (round(HIGH * fused[p] / peak, 3), why)
    again = iter(_reordered(first, fused))  # into the places this source's files held
    placed = tuple(next(again) if p in fused else p for p in state.first_order)
    return replace(state, located=located, first_order=placed)


def _reordered(first: Sequence[str], fused: Mapping[str, float]) -> list[str]:
    """``first`` best fused score first, but no file more than ``MAX_FALL`` places below its first
    place: a file whose best passage is weak may still be the one to change (a new function, a
    one-line change in a long module holds the task's words apart: sphinx #10214, pytest #12849 fell
    from 6-7 to 14 and 11). Replayed on the tuning tasks' first rankings, before and after the
    template rules: @1 and @5 as without the cap, @10 +1 and +2 (benchmarks/RESULTS.md, retrieve)."""
    where = {p: i for i, p in enumerate(first)}
    rest = sorted(first, key=lambda p: -fused[p])
    out: list[str] = []
    for place in range(len(first)):
        due = next((p for p in rest if where[p] + MAX_FALL <= place), rest[0])
        out.append(due)
        rest.remove(due)
    return out
