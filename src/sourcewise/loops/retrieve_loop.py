"""Retrieval's loop: one DISPATCH-EVALUATE-REFINE cycle after another (see ``retrieve.py``). The
cycle's I/O is here and only here, each behind a source (its search, a code source's ranking and
passages, its files, read in the source's own threads) or the model; what to do with the answers is
the pure steps' (``retrieve_state.py``, ``retrieve_code.py``), each taking the state and returning a
new one."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import replace

import re2  # type: ignore[import-untyped]

from sourcewise.answer.judge import model_scores
from sourcewise.errors import ModelError, SourcewiseError
from sourcewise.loops.gather import Gathered, gather
from sourcewise.loops.retrieve_code import MAX_SPELLED, look_targets, looked_again, take_located, with_located
from sourcewise.loops.retrieve_state import (
    TOP,
    Setup,
    State,
    Step,
    admit,
    decide,
    next_plan,
    order,
    rule_scores,
    searched,
    with_model,
)
from sourcewise.models import Hit, Plan, SourceQuery, SourceReport
from sourcewise.planning.refine import Scored
from sourcewise.sources import Source
from sourcewise.sources.code.locate import Located, kind_of, verbatim_strings
from sourcewise.sources.code.taskread import Reading
from sourcewise.text.sanitize import strip_controls

__all__ = ["run"]

MAX_LINKED = 20  # lines of a link's span read for its names
LINK_DRIFT = 3  # lines read on either side of a link's span
_WORD = re2.compile(r"[A-Za-z_][A-Za-z0-9_]{0,100}")
_QUOTED = re2.compile(r"""['"`]([A-Za-z_][A-Za-z0-9_]{2,80})['"`]""")  # a name an error message quotes
MAX_QUOTED = 3  # quoted names searched
SEARCHED = 50  # chunks a targeted search reads (tests and docs among them)
PER_QUERY = 20  # hits asked of each source per cycle: room for what the globs and exclusions drop
MAX_FILE = 512_000  # bytes of a code file read for its imports


def _ranks(setup: Setup, source: Source) -> bool:
    """Whether ``source`` ranks its repository itself (a code source, when retrieval locates)."""
    return setup.locate and getattr(source, "locate", None) is not None


async def _dispatch(setup: Setup, current: Plan) -> Gathered:
    """The cycle's query sent to every source that does not rank its repository itself (those are
    asked by ``_locate``)."""
    ranks = [_ranks(setup, s) for s in setup.sources]
    others = [s for s, r in zip(setup.sources, ranks, strict=True) if not r]
    deadline = setup.settings.source_timeout
    got = await gather(others, current, deadline=deadline, limit=PER_QUERY) if others else Gathered()
    reports, hits = iter(got.reports), iter(got.hits)
    out = Gathered()
    for source, ranked in zip(setup.sources, ranks, strict=True):
        out.reports.append(
            SourceReport(source=source.name, kind=source.kind, status="ok") if ranked else next(reports)
        )
        out.hits.append([] if ranked else next(hits))
    return out


def _ranking(setup: Setup, source: Source, report: SourceReport) -> bool:
    """Whether ``source`` ranks its repository this cycle (a code source that did not fail)."""
    return _ranks(setup, source) and report.status in ("ok", "empty")


async def _second_look(setup: Setup, state: State, gathered: Gathered) -> State:
    """A later cycle's re-ranking of each code source's first files by their best passages
    (``retrieve_code.looked_again``), before the cycle's own finds."""
    for source, report in zip(setup.sources, gathered.reports, strict=True):
        if state.located and _ranking(setup, source, report):
            state, first = look_targets(setup, state, source)
            if first:
                try:
                    best = await source.passages(setup.reading, first)  # type: ignore[attr-defined]
                except SourcewiseError:  # the second look is a refinement: the cycle goes on without it
                    continue
                state = looked_again(state, first, best, setup.about)
    return state


async def _locate(
    setup: Setup, state: State, gathered: Gathered, terms: Sequence[str]
) -> tuple[State, Gathered]:
    """A code source's hits replaced by its ranking of the whole repository for the task (with
    ``terms`` learned by earlier cycles)."""
    hits, reports = list(gathered.hits), list(gathered.reports)
    for i, source in enumerate(setup.sources):
        if not _ranking(setup, source, reports[i]):
            continue
        locate = source.locate  # type: ignore[attr-defined]
        started = time.perf_counter()
        try:
            ranked = await locate(setup.reading, list(terms), about=setup.about, fresh=not state.located)
        except SourcewiseError as exc:
            reports[i] = reports[i].model_copy(update={"status": "failed", "error": str(exc)})
            continue
        targeted: dict[str, str] = {}
        if state.located and source.name not in state.aimed:  # once: the next cycle would search the same
            targeted = await _targeted(setup, state, source)
            state = replace(state, aimed=state.aimed | {source.name})
        taken = take_located(setup, state, ranked, targeted)
        if taken is None:
            reports[i] = reports[i].model_copy(update={"status": "empty" if not state.located else "ok"})
            continue
        state, fresh = taken
        hits[i] = await source.run(_hits, source, fresh)
        named = ", ".join(setup.reading.exact[:6])
        query = f"locate: {named or 'the task words'}" + (f" + {', '.join(terms)}" if terms else "")
        elapsed = round((time.perf_counter() - started) * 1000, 1)
        status = "ok" if hits[i] or state.located else "empty"
        update = {"hits": len(hits[i]), "queries": (*reports[i].queries, query), "elapsed_ms": elapsed}
        reports[i] = reports[i].model_copy(update={**update, "status": status})
    return state, Gathered(reports=reports, hits=hits)


async def _targeted(setup: Setup, state: State, source: Source) -> dict[str, str]:
    """A later cycle's searches for what the task points at exactly that the files read so far do
    not hold (seed 004's "target specific gaps"): path -> why, for ``take_located``. Each name is
    searched in the source; one held by more than ``MAX_SPELLED`` source files points nowhere.

    - the lines the task links to in a file of the repository that is no source file (a template,
      a doc page: ``layout.html#L107``): the source files holding a distinctive name of them
      (``verbatim_strings``: ``html5_doctype``): the code that fills them;
    - a name an error message quotes (``local variable 'noqa' referenced before assignment``): the
      source files using it as code (outside a comment), when none of the top 5 does."""
    out: dict[str, str] = {}
    for path, first, last in setup.reading.linked:
        if kind_of(path) == "source" or not getattr(source, "holds", lambda _: False)(path):
            continue
        probe = Hit(title=path, location=path, source=source.name, kind="code", authority="code", score=0.0,
                    path=path)  # fmt: skip
        lines = ((await source.run(read_file, source, probe)) or "").splitlines()
        start = max(first - 1 - LINK_DRIFT, 0)  # a link is often to another commit: its lines drift
        said = " ".join(lines[start : min(last + LINK_DRIFT, start + MAX_LINKED)])
        for name in verbatim_strings(Reading(names=tuple(dict.fromkeys(_WORD.findall(said))))):
            for p in await _holding(source, name, as_code=False):
                out.setdefault(p, f"holds {name!r}, on the lines the task links to")
    top = set(order(state)[:TOP])
    quoted = [n for message in setup.reading.errors for n in _QUOTED.findall(message)]
    for name in list(dict.fromkeys(quoted))[:MAX_QUOTED]:
        if any(_in_code(state.texts.get(p, ""), name) for p in top):
            continue  # a file read uses it: no gap
        held = await _holding(source, name, as_code=True)
        for p in sorted(held) if not held & top else ():
            out.setdefault(p, f"uses {name!r}, a name an error the task quotes says")
    return out


def _holds_word(text: str, name: str) -> bool:
    """Whether ``text`` holds ``name`` as a whole word (no identifier character either side)."""
    at = text.find(name)
    while at >= 0:
        before, after = text[at - 1 : at], text[at + len(name) : at + len(name) + 1]
        if not (before.isalnum() or before == "_") and not (after.isalnum() or after == "_"):
            return True
        at = text.find(name, at + 1)
    return False


def _in_code(text: str, name: str) -> bool:
    """Whether ``text`` uses ``name`` as a word on a line outside a ``#`` or ``//`` comment."""
    if name not in text:
        return False
    code = (line.split("#", 1)[0].split("//", 1)[0] for line in text.splitlines() if name in line)
    return any(_holds_word(c, name) for c in code)


async def _holding(source: Source, name: str, *, as_code: bool) -> set[str]:
    """The source files holding ``name`` (``as_code``: on a line outside a ``#``/``//`` comment), if
    at most ``MAX_SPELLED``; else none."""
    query = SourceQuery(source=source.kind, mode="keyword", query=f'"{name}"')
    try:
        got = await source.search(query, limit=SEARCHED)
    except SourcewiseError:
        return set()
    held = set()
    for h in got.hits:
        if not h.path or kind_of(h.path) != "source":
            continue
        if not as_code or _in_code(h.text, name):
            held.add(h.path)
    return held if len(held) <= MAX_SPELLED else set()


def _hits(source: Source, ranked: Sequence[Located]) -> list[Hit]:
    """A code source's ranked files as hits, each showing its best definition's lines (read here)."""
    return [located_hit(source, r) for r in ranked]


def _wholes(source: Source, hits: Sequence[Hit]) -> list[str | None]:
    return [read_file(source, hit) for hit in hits]


async def _admit(setup: Setup, state: State, gathered: Gathered, number: int) -> tuple[State, int, int]:
    """Each hit's whole file read (a code hit's) in its source's own threads, then the hits
    admitted (a pure step, but CPU: off the event loop)."""
    wholes = await asyncio.gather(
        *(s.run(_wholes, s, hits) for s, hits in zip(setup.sources, gathered.hits, strict=True))
    )
    return await asyncio.to_thread(admit, setup, state, gathered, list(wholes), number)


def read_file(source: Source, hit: Hit) -> str | None:
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


def located_hit(source: Source, r: Located) -> Hit:
    """A ranked file as a hit: titled ``path::Class.method`` by its best definition, showing its lines."""
    best = r.definitions[0] if r.definitions else None
    start, end = (best.start, best.end) if best else (1, 40)
    probe = Hit(
        title=f"{r.path}::{best.name}" if best else r.path, location=f"{r.path}#L{start}-L{end}",
        source=source.name, kind="code", authority="code", score=r.score, path=r.path, start_line=start,
        end_line=end, meta={"found": "locate", "reasons": "; ".join(r.reasons),
                            "definitions": "; ".join(f"{d.name} L{d.start}-L{d.end}" for d in r.definitions)},
    )  # fmt: skip
    lines = (read_file(source, probe) or "").splitlines()[start - 1 : min(end, start + 59)]
    text = "\n".join(lines)
    return probe.model_copy(
        update={
            "text": strip_controls(text, keep="\n\t"),
            "snippet": strip_controls(" ".join(text.split())[:200]),
        }
    )


async def _score(setup: Setup, state: State) -> tuple[State, list[Scored]]:
    """Rule-based scores; the model's instead where it answers well (and only while it does); a code
    source's files scored by its ranking."""
    scored = rule_scores(state)
    if state.use_model and scored:
        hits = [state.pool[s.facts.location] for s in scored]
        try:
            if setup.client is None:
                raise ModelError("no HTTP client for the model (retrieve runs in a Session)")
            rated: dict[int, tuple[float, str]] | str = await model_scores(
                setup.task, hits, setup.settings, setup.client
            )
        except ModelError as exc:
            rated = str(exc)
        state, scored = with_model(state, scored, rated)
    return state, with_located(setup, state, scored)


async def _cycle(
    setup: Setup, state: State, plan: Plan, number: int, terms: list[str], first: Gathered | None
) -> tuple[State, list[str]]:
    """One DISPATCH-EVALUATE-REFINE cycle: the new state and the next query's terms (``[]`` to stop)."""
    current, dropped = next_plan(state, plan, number, terms)
    gathered = first if first is not None else await _dispatch(setup, current)
    state = searched(state, current)
    state = await _second_look(setup, state, gathered)
    before = tuple(order(state)[:TOP])  # what this cycle's finds must change, or it is the last
    state, gathered = await _locate(setup, state, gathered, terms if number > 1 else [])
    state, found, new = await _admit(setup, state, gathered, number)
    state, scored = await _score(setup, state)
    step = Step(number, gathered, found, new, tuple(dropped), before)
    return decide(setup, state, scored, step)


async def run(setup: Setup, state: State, plan: Plan, first: Gathered | None = None) -> State:
    """Cycles until one decides to stop (at most ``setup.max_cycles``); the last state."""
    terms: list[str] = []
    for number in range(1, setup.max_cycles + 1):
        state, terms = await _cycle(setup, state, plan, number, terms, first if number == 1 else None)
        if not terms:
            break
    return state
