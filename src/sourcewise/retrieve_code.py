"""Retrieval's code sources: a code source ranks its whole repository for the task
(``sources/code/locate.py``) instead of a chunk search; each file is one candidate showing the definitions
the task is about (``path::Class.method``), scored by its share of the best file's score, and later
cycles rank again with the learned words."""

from __future__ import annotations

import time
from itertools import chain, islice
from typing import TYPE_CHECKING

from sourcewise.errors import SourcewiseError
from sourcewise.gather import Gathered
from sourcewise.models import Hit
from sourcewise.planning.refine import Scored, allowed, band
from sourcewise.sources import Source
from sourcewise.sources.code.locate import Located, kind_of
from sourcewise.text.sanitize import strip_controls

if TYPE_CHECKING:
    from sourcewise.retrieve_loop import Loop

__all__ = ["locate_files", "located_hit", "read_file", "second_look", "with_located"]

MAX_FILE = 512_000  # bytes of a code file read for its imports
LOCATED_MORE = 5  # files of a code source's ranking taken by the first cycle beyond ``limit``
LOCATED_LATER = 10  # new files a later cycle's ranking adds at most
W_PASSAGE = 0.3  # a later cycle's second look: a file's best passage beside its first ranking's share
RELATED = 0.69  # the most a file found by words alone scores while a key term is uncovered
HIGH = 0.9  # the relevance of a code source's best file; the others by their share of its score


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


_LABEL = {"high": "implements the target", "medium": "related", "low": "indirect", "none": "irrelevant"}


def with_located(loop: Loop, scored: list[Scored]) -> list[Scored]:
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


async def locate_files(loop: Loop, gathered: Gathered, terms: list[str]) -> Gathered:
    """A code source's hits replaced by its ranking of the whole repository for the task (with
    ``terms`` learned by earlier cycles): one hit per file, its relevance the file's share of the
    best file's score (``HIGH`` for the best)."""
    hits, reports = list(gathered.hits), list(gathered.reports)
    for i, source in enumerate(loop.sources):
        locate = getattr(source, "locate", None)
        if not loop.locate or locate is None or reports[i].status not in ("ok", "empty"):
            continue
        started = time.perf_counter()
        if loop.located:
            await second_look(loop, source)
        try:
            ranked: list[Located] = await locate(
                loop.reading, terms, about=loop.about, fresh=not loop.located
            )
        except SourcewiseError as exc:
            reports[i] = reports[i].model_copy(update={"status": "failed", "error": str(exc)})
            continue
        kept = (r for r in ranked if allowed(r.path, loop.include, loop.exclude))  # lazily: the best few
        best = next(kept, None)
        if best is None or best.score <= 0:
            reports[i] = reports[i].model_copy(update={"status": "empty" if not loop.located else "ok"})
            continue
        top = best.score
        room = loop.limit + LOCATED_MORE if not loop.located else LOCATED_LATER
        new = (r for r in chain([best], kept) if r.path not in loop.pool and r.path not in loop.excluded)
        fresh = list(islice(new, room))
        for r in fresh:  # a file's value is its first ranking's: later cycles add, never reshuffle
            why = "; ".join(r.reasons) or "words of the task"
            loop.located.setdefault(r.path, (round(HIGH * r.score / top, 3), why))
        hits[i] = [located_hit(source, r) for r in fresh]
        named = ", ".join(loop.reading.exact[:6])
        query = f"locate: {named or 'the task words'}" + (f" + {', '.join(terms)}" if terms else "")
        elapsed = round((time.perf_counter() - started) * 1000, 1)
        status = "ok" if hits[i] or loop.located else "empty"
        update = {"hits": len(hits[i]), "queries": (*reports[i].queries, query), "elapsed_ms": elapsed}
        reports[i] = reports[i].model_copy(update={**update, "status": status})
    return Gathered(reports=reports, hits=hits)


async def second_look(loop: Loop, source: Source) -> bool:
    """A later cycle's re-ranking of the first cycle's files: each by its share of the first
    ranking plus ``W_PASSAGE`` times its best passage's share (the one chunk most about the task).
    A hub module holds many of the task's words scattered over its length; the file to change holds
    them together, in the definition to change (measured: benchmarks/RESULTS.md, retrieve). Once a
    retrieval for each code source; whether the order changed. Tried and left out: lifting the
    import-graph neighbours of the best three files (the tuning set's larger trees, @5 27 -> 23:
    the neighbours are hubs)."""
    passages = getattr(source, "passages", None)
    held = {p for p, hit in loop.pool.items() if hit.source == source.name and p in loop.located}
    mine = [p for p in loop.first_order if p in held]
    first = mine[: loop.limit + LOCATED_MORE]  # this source's files: another's passages are not its to score
    if source.name in loop.looked or passages is None or not first:
        return False
    loop.looked.add(source.name)
    best: dict[str, float] = await passages(loop.reading, first)
    top = max(best.values(), default=0.0)
    if top <= 0:
        return False
    fused = {p: loop.located[p][0] / HIGH + W_PASSAGE * best.get(p, 0.0) / top for p in first}
    peak = max(fused.values())
    for p in first:
        why = loop.located[p][1] + ("; its best passage" if p in best else "")
        loop.located[p] = (round(HIGH * fused[p] / peak, 3), why)
    again = iter(sorted(first, key=lambda p: -fused[p]))  # into the places this source's files held
    placed = [next(again) if p in fused else p for p in loop.first_order]
    changed = placed != loop.first_order
    loop.first_order = placed
    return changed


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
