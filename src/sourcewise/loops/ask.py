"""``ask``: route -> plan -> gather -> merge and rank -> (clarify) -> answer, with cited sentences.

- **Route** (seed 001): internal questions never reach the web, recency and external ones do, and
  URLs in the question are read.
- **Plan** (seed 003): query type, keywords, filters and a sub-query per source kind.
- **Gather**: every source at once under ``source_timeout`` each; fallbacks in ``gather.py``.
- **Merge and rank**: cross-source dedup, seed 003's weighted relevance per query type.
- **Clarify**: when the hits split into clearly different readings, one question back.
- **Answer**: extractive by default; a configured model is checked sentence by sentence.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from datetime import date

from sourcewise.answer.ambiguity import Verdict, readings
from sourcewise.answer.extractive import assemble
from sourcewise.answer.merge import merge_and_rank
from sourcewise.answer.model import write_with_model
from sourcewise.answer.pick import pick
from sourcewise.config import Settings
from sourcewise.effort import EFFORTS, Effort, EffortLevel
from sourcewise.errors import InvalidOption, InvalidQuery, ModelError, SourceUnavailable
from sourcewise.loops.gather import Gathered, Progress, gather
from sourcewise.loops.retrieve import refine_gathered
from sourcewise.models import Answer, Hit, Plan, RankedHit, Reading, Route, SourceReport
from sourcewise.planning import routing
from sourcewise.planning.route import choose
from sourcewise.planning.widen import broaden
from sourcewise.session import Session
from sourcewise.sources import Source
from sourcewise.sources.web import PagesSource
from sourcewise.text.analyze import analyze
from sourcewise.text.words import is_hangul

__all__ = ["KB_LATER", "MAX_QUESTION", "aask", "default_sources"]

MAX_QUESTION = 2_000
"""Characters; a longer question is an ``InvalidQuery`` (it is a document, not a question)."""
WEB_WHY = "when the question needs the web (recent or outside facts)"
KB_LATER = "once it is indexed (run `sourcewise index PATH`)"
NOT_INDEXED = "the knowledge base is not indexed yet: run `sourcewise index PATH` to ask your own notes"
MAX_SOURCES = 32
CLARIFY_EN = "I found several readings. Which one do you mean?"
CLARIFY_KO = "몇 가지 뜻으로 읽힙니다. 어느 쪽인가요?"


def default_sources(settings: Settings) -> dict[str, str]:
    """The sources ``ask`` reads when none is named, each with why: ``ask_sources`` from the
    config when set; else every configured source plus the knowledge base once it is indexed
    (a configured source adds to it, it does not replace it); the web is added per question.
    A knowledge base never indexed is left out: searching it could only fail (``_choose`` says so)."""
    if settings.ask_sources is not None:
        return {name: "listed in ask_sources" for name in settings.ask_sources}
    chosen = {name: "configured" for name in settings.sources}
    if "kb" not in chosen and (settings.state_dir / "kb.sqlite3").is_file():
        chosen["kb"] = "the knowledge base is indexed" if chosen else "the default"
    return chosen


def _choose(
    session: Session, specs: Sequence[str | Source] | None, route: Route
) -> tuple[list[Source], list[str], PagesSource | None]:
    """The sources to search, warnings, and the pages the question names (its own source)."""
    warnings: list[str] = []
    if specs is None:
        chosen = session.sources(list(default_sources(session.settings)))
        if not chosen:  # nothing configured and nothing indexed: say so, not "nothing found"
            warnings.append(NOT_INDEXED)
        if route.action == "search":
            chosen.append(session.source("web"))
    else:
        if isinstance(specs, str | Source):
            specs = [specs]
        if len(specs) > MAX_SOURCES:
            raise InvalidOption(f"at most {MAX_SOURCES} sources in one ask, got {len(specs)}")
        chosen = session.sources(specs)
    if route.action == "skip" and route.signals.get("internal") and any(s.capabilities.web for s in chosen):
        if specs is None:  # the configured sources: an internal question stays off the web
            warnings.append("web left out: an internal question is answered from private sources only")
            chosen = [s for s in chosen if not s.capabilities.web]
        else:  # named in this ask: the asker's choice wins over the route
            warnings.append("web searched as asked, although the question reads as internal")
    pages = PagesSource(route.urls, session) if route.action == "fetch" else None
    if NOT_INDEXED in warnings and not chosen and pages is None:
        raise SourceUnavailable("kb", f"{NOT_INDEXED}, or name a source to ask, e.g. -S web")
    return [*chosen, *([pages] if pages else [])], warnings, pages


def _terms(plan: Plan) -> list[str]:
    words = [*plan.phrases, *plan.entities, *plan.keywords] or [plan.question]
    return list(dict.fromkeys(analyze(" ".join(words))))


def _cited(
    answer: Answer,
    parts: Sequence[tuple[str, Sequence[int]]],
    ranked: list[RankedHit],
    writer: str,
    **more: object,
) -> Answer:
    """``answer`` written from ``parts`` (each sentence with the hits it cites), numbered as its
    sources (``assemble``), by ``writer`` (the model or the extractive picker)."""
    text, citations, cited = assemble(parts, ranked)
    update = {"text": text, "citations": tuple(citations), "sources": tuple(cited), "writer": writer}
    return answer.model_copy(update={**update, **more})


def _no_answer(answer: Answer, text: str, **more: object) -> Answer:
    """``answer`` saying that nothing was found, or that nothing found answers (``text``), with
    rewordings to try."""
    update = {"text": text, "writer": "none", "answered": False, "suggestions": _suggest(answer.plan)}
    return answer.model_copy(update={**update, **more})


def _suggest(plan: Plan) -> tuple[str, ...]:
    out: list[str] = []
    wider = broaden(plan)
    while wider is not None and len(out) < 3:
        text = " ".join([*wider.phrases, *wider.keywords])
        if text and text not in out:
            out.append(text)
        wider = broaden(wider)
    for group in plan.variants.values():
        out.extend(v for v in group[1:3] if v not in out)
    return tuple(out[:5])


def _clarification(found: list[Reading], language_ko: bool, *, counts: bool = True) -> str:
    lines = [f"  {i}. {r.label}" + (f" ({r.hits} results)" if counts else "") for i, r in enumerate(found, 1)]
    head = CLARIFY_KO if language_ko else CLARIFY_EN
    return "\n".join([head, *lines])


def _tag(ranked: list[RankedHit], found: list[Reading]) -> tuple[list[RankedHit], list[int]]:
    """Minor ambiguity: each hit tagged with the reading it fits (order kept), and the index of the
    best hit of each reading, best first, so the answer leads with one sentence of each reading and
    still opens with the most relevant hit."""
    tagged: list[RankedHit] = []
    for hit in ranked:
        text = " ".join(analyze(f"{hit.hit.title} {hit.hit.text or hit.hit.snippet}"))
        label = next((r.label for r in found if " ".join(analyze(r.label)) in text), None)
        tagged.append(hit.model_copy(update={"reading": label}))
    lead = [next((i for i, h in enumerate(tagged) if h.reading == r.label), -1) for r in found]
    return tagged, sorted(i for i in lead if i >= 0)


async def aask(
    question: str,
    *,
    sources: Sequence[str | Source] | None = None,
    reading: str | None = None,
    use_model: bool | None = None,
    limit: int | None = None,
    effort: EffortLevel = "balanced",
    today: date | None = None,
    session: Session | None = None,
    settings: Settings | None = None,
    progress: Progress | None = None,
) -> Answer:
    """Answer ``question`` from every source at once, with ``[n]`` citations.

    ``sources``: configured names, specs (``kb``, ``code:PATH``, ``slack:PATH`` ...) or ``Source``
    objects; default: the configured sources and the embedded knowledge base once indexed, plus the
    web when the question needs it (``SourceUnavailable`` when that leaves nothing to search).
    ``reading``: the chosen reading of an ambiguous question.
    ``use_model``: ``False`` forces the extractive answer even when a model is configured.
    ``effort``: quick, balanced or thorough (``EFFORTS``): hits per source (unless ``limit`` says),
    refinement cycles and each source's time budget, together.
    ``session``: a long-lived one to reuse; otherwise one is opened on ``settings`` and closed.
    """
    if isinstance(question, str) and len(question) > MAX_QUESTION:
        raise InvalidQuery(f"a question is at most {MAX_QUESTION} characters, got {len(question)}")
    if effort not in EFFORTS:
        raise InvalidOption(f"effort must be one of {', '.join(EFFORTS)}, got {effort!r}")
    level = EFFORTS[effort]
    limit = level.limit if limit is None else limit
    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= 50:
        raise InvalidOption(f"limit must be 1-50, got {limit!r}")
    own = session is None
    session = session or Session(settings)
    try:
        return await _ask(session, question, sources, reading, use_model, limit, level, today, progress)
    finally:
        if own:
            await session.aclose()


async def _ask(
    session: Session,
    question: str,
    specs: Sequence[str | Source] | None,
    reading: str | None,
    use_model: bool | None,
    limit: int,
    level: Effort,
    today: date | None,
    progress: Progress | None,
) -> Answer:
    clock = time.perf_counter
    t0 = clock()
    settings = session.settings
    route = routing.route(question, today=today, settings=settings)
    if route.readings and reading in route.readings:  # the reading decides the sources
        route, reading = choose(route, reading, question, today=today or date.today()), None
    chosen, warnings, pages = _choose(session, specs, route)
    kinds = list(dict.fromkeys(s.kind for s in chosen)) or ["knowledge_base"]
    plan = routing.plan(question, kinds, today=today, session=session)
    if route.readings:  # seed 003: ask before searching when the reading changes the sources
        return _ask_first(question, route, plan, warnings)
    t1 = clock()
    deadline = level.deadline(settings.source_timeout)
    gathered = await gather(chosen, plan, deadline=deadline, limit=limit, progress=progress)
    await _read(chosen, gathered, question, level.pages, deadline)
    # Seed 004: a first pass that is not good enough gets refinement cycles (retrieve.py).
    extra, cycles = await refine_gathered(question, plan, chosen, gathered, settings, level.cycles)
    hits = [[*first, *more] for first, more in zip(gathered.hits, extra, strict=True)]
    t2 = clock()
    ranked, verdict, found = _rank(hits, plan, chosen, question, reading)
    warnings += _fallback_notes(gathered.reports, pages, question)
    answer = Answer(
        question=question,
        text="",
        hits=tuple(ranked),
        route=route,
        plan=plan,
        reports=tuple(gathered.reports),
        readings=tuple(found),
        warnings=tuple(warnings),
        cycles=tuple(cycles),
    )
    answer = await _answer(answer, verdict, found, session, use_model)
    t3 = clock()
    timings = {"plan": (t1 - t0) * 1000, "gather": (t2 - t1) * 1000, "answer": (t3 - t2) * 1000}
    return answer.model_copy(update={"timings": {k: round(v, 1) for k, v in timings.items()}})


def _rank(
    hits: list[list[Hit]], plan: Plan, chosen: Sequence[Source], question: str, reading: str | None
) -> tuple[list[RankedHit], Verdict, list[Reading]]:
    """Every source's hits merged and ranked (seed 003's weights per query type), the ambiguity
    verdict and its readings; with a chosen ``reading``, the hits that fit it (all when none does)."""
    terms = _terms(plan)
    levels = {s.authority: s.authority_levels for s in chosen if s.authority_levels}
    ranked = merge_and_rank(
        hits, terms=terms, kind=plan.query_type.kind, today=plan.today, authorities=levels
    )
    if reading is None:
        verdict, found = readings(ranked, terms, question=question)
        return ranked, verdict, found
    wanted = " ".join(analyze(reading))
    picked = [h for h in ranked if wanted in " ".join(analyze(f"{h.hit.title} {h.hit.text}"))]
    return picked or ranked, "none", []


async def _answer(
    answer: Answer, verdict: Verdict, found: list[Reading], session: Session, use_model: bool | None
) -> Answer:
    """The answer's text: a clarifying question when the hits split into readings, "nothing found"
    (which sources, which failed) when there are no hits, else the written answer."""
    ranked = list(answer.hits)
    if verdict == "ambiguous":
        text = _clarification(found, is_hangul(answer.question))
        return answer.model_copy(update={"clarification": text, "text": text, "writer": "none"})
    if not ranked:
        return _no_answer(answer, _nothing(answer.reports))
    lead: list[int] = []
    if verdict == "minor":
        ranked, lead = _tag(ranked, found)
        answer = answer.model_copy(update={"hits": tuple(ranked)})
    return await _write(answer, answer.question, ranked, use_model, session, lead)


async def _read(
    sources: Sequence[Source], gathered: Gathered, question: str, depth: int, deadline: float
) -> None:
    """The effort's fetch depth: each source that answered reads its first ``depth`` hits in full
    (``Source.read``: the web its result pages) in what is left of its deadline; its report says
    how many pages it read and why any was not."""
    if depth <= 0:
        return
    jobs = [
        (i, source.read(gathered.hits[i], question, depth, deadline - report.elapsed_ms / 1000))
        for i, (source, report) in enumerate(zip(sources, gathered.reports, strict=True))
        if report.status == "ok"
    ]
    done = await asyncio.gather(*(job for _, job in jobs))
    for (i, _), (hits, read, notes) in zip(jobs, done, strict=True):
        report = gathered.reports[i]
        gathered.hits[i] = hits
        gathered.reports[i] = report.model_copy(
            update={"pages_read": read, "warnings": (*report.warnings, *notes)}
        )


def _wait(seconds: float | None) -> str:
    """When to try again: "in 45 s", "in 3 min", or "later" when the source did not say."""
    if seconds is None:
        return "later"
    return f"in {seconds:.0f} s" if seconds < 120 else f"in {seconds / 60:.0f} min"


def _fallback_notes(reports: Sequence[SourceReport], pages: PagesSource | None, question: str) -> list[str]:
    """What the fallbacks did, said in the answer (seed 003's fallback strategy, seed 001's
    ``[웹 조회 실패]``): a rate-limited source and when to try it again; each URL of the question
    that could not be read."""
    notes = [
        f"{r.source} is rate-limited: its results are missing; try again {_wait(r.retry_after)}"
        for r in reports
        if r.status == "rate_limited"
    ]
    for url, why in pages.unread if pages else ():
        notes.append(
            f"[웹 조회 실패] {url}: {why}" if is_hangul(question) else f"could not read {url}: {why}"
        )
    return notes


def _ask_first(question: str, route: Route, plan: Plan, warnings: list[str]) -> Answer:
    """The clarifying question, before any source is searched: the readings send the question to
    different sources (``Route.readings``)."""
    found = [Reading(label=label, hits=0, share=0.0) for label in route.readings]
    text = _clarification(found, is_hangul(question), counts=False)
    return Answer(
        question=question, text=text, route=route, plan=plan, clarification=text,
        readings=tuple(found), writer="none", warnings=tuple(warnings),
    )  # fmt: skip


def _nothing(reports: Sequence[SourceReport]) -> str:
    """No hits: which sources were searched and came back empty, and which failed and why, so a
    failure never reads as "no results"."""
    empty = [r.source for r in reports if r.status in ("ok", "empty")]
    failed = [
        f"{r.source} {r.status.replace('_', ' ')} ({r.error})"
        + (f"; try again {_wait(r.retry_after)}" if r.status == "rate_limited" else "")
        for r in reports
        if r.status not in ("ok", "empty")
    ]
    if not failed:
        return f"Nothing found in {', '.join(empty) or 'no source'}."
    text = f"No answer: {'; '.join(failed)}."
    return f"{text} Nothing found in {', '.join(empty)}." if empty else text


def _unanswered(reports: Sequence[SourceReport]) -> str:
    searched = [r.source for r in reports if r.status in ("ok", "empty")]
    where = ", ".join(searched) or "the sources"
    return (
        f"Nothing in {where} answers this question: no passage found holds what it asks. "
        "The closest results are listed; they may not answer it."
    )


async def _write(
    answer: Answer,
    question: str,
    ranked: list[RankedHit],
    use_model: bool | None,
    session: Session,
    lead: Sequence[int] = (),
) -> Answer:
    settings = session.settings
    warnings = list(answer.warnings)
    if settings.model_url and use_model is not False:
        try:
            parts, dropped = await write_with_model(question, ranked, settings, session.client)
            return _cited(answer, parts, ranked, "model", dropped=tuple(dropped))
        except ModelError as exc:
            warnings.append(f"model answer unavailable, extractive answer instead: {exc}")
    picked = pick(question, ranked, lead=lead)
    if not picked:  # no unit holds what the question asks: say so, never cite filler
        return _no_answer(answer, _unanswered(answer.reports), warnings=tuple(warnings))
    return _cited(answer, [(s, [i]) for s, i in picked], ranked, "extractive", warnings=tuple(warnings))
