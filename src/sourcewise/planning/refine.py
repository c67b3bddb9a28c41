"""Seed 004's EVALUATE and REFINE steps, with no model.

**Evaluate.** Every candidate gets a relevance 0-1 in seed 004's bands (0.8-1.0 implements the
target, 0.5-0.7 related patterns or types, 0.2-0.4 indirect, below 0.2 irrelevant), a reason and
the task terms it leaves out. The score rests on:

- *term coverage*: which key task terms it contains, directly, through the planner's variants, or
  through a term learned in an earlier cycle (worth a little less: it is a guess at a synonym);
  terms that few candidates share weigh more (an inverse document frequency over the pool);
- *definitions vs uses*: a candidate whose own names (functions, classes, its file name; a
  document's title and headings) carry the terms implements the thing, one that only mentions them
  uses it;
- *imports*: a file imported by, or importing, a candidate that covers the other task terms inherits
  half of that coverage ("throttle.py is what routes.py's API endpoints use").

**Refine.** Terms are learned from the best candidates: the modules they import, the names they
define, and the words next to the task's words in them (seed 004: the task says "rate limit", the
code says "throttle"). Candidates below 0.2 are excluded for good. The next query targets the task
terms nothing relevant covers yet, with the learned terms; ``None`` when there is nothing new to ask.

Pure: no I/O, no clock, stable order (ties broken by location).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from functools import lru_cache
from typing import Literal, cast

from sourcewise.models import Band, Hit, Learned
from sourcewise.sources.code.facts import path_parts, resolves_to
from sourcewise.sources.code.outline import outline
from sourcewise.text.analyze import analyze, identifier_parts, readable, stem

__all__ = [
    "CODE_STOP",
    "ENOUGH",
    "EXCLUDE_BELOW",
    "LEARNED_WEIGHT",
    "RELEVANT",
    "TASK_STOP",
    "Facts",
    "Scored",
    "Vocabulary",
    "allowed",
    "band",
    "evaluate",
    "facts_for",
    "learn",
    "uncovered",
    "vocabulary",
]

Via = Literal["imports", "defines", "co-occurs", "variant"]
RELEVANT = 0.7
"""Seed 004: what is returned; three of these, with every key term covered, end the loop."""
ENOUGH = 3
EXCLUDE_BELOW = 0.2
MAX_LEARN = 3
MAX_STANDS = 3  # a word learned where more task terms are missing stands for none of them: it is context
MEMO_LINE = 400  # characters of a line whose stems are remembered
LEARNED_WEIGHT = 0.75  # a learned term is a guess at a synonym, not the word itself
VARIANT_WEIGHT = 0.9
LINKED_WEIGHT = 0.6
TASK_STOP = frozenset(
    """add adds added adding fix fixes fixed fixing implement implements implemented implementing
    support supports supported update updates updated make makes use uses used using change changes
    changed refactor refactors remove removes removed new bug bugs issue handle handles handling
    code file files function functions method class module feature work works working allow allows
    ensure instead when every each one two also into onto its it's per""".split()
)
CODE_STOP = frozenset(
    """self cls def class return returns import from none true false null nil this that str int float
    bool list dict tuple set any object async await elif else for while try except finally with
    pass raise yield lambda function const let var new public private protected static void string
    number type types interface export default require package func pub mut impl struct enum
    println print len range init main args kwargs value values key keys item items data result
    results name names path test tests assert the and not are was were has have had but you your
    our can will should may must than then there here what which who how why all some annotations
    future typing optional none_type get per self_ cast callable sequence mapping iterable
    iterator field fields model models config settings error errors exception todo note""".split()
)


def _stems(words: Sequence[str]) -> frozenset[str]:
    return frozenset(stem(w) for w in words)


@dataclass(frozen=True)
class Facts:
    """What evaluation needs to know about one candidate."""

    location: str
    path: str
    terms: frozenset[str]
    defines: frozenset[str]
    names: tuple[str, ...]
    imports: tuple[str, ...]


def facts_for(hit: Hit, file_text: str | None = None) -> Facts:
    """Stems of ``hit``'s words, of the names it defines and of its path, and the modules it imports.
    ``file_text``: the whole file, when the loop could read it: a code candidate is its file."""
    body = file_text if file_text is not None else (hit.text or hit.snippet)
    path = hit.path or ""
    code = outline(path or "x.txt", body) if hit.kind == "code" else None
    names = [n.rsplit(".", 1)[-1] for n in code.defines] if code else [hit.title, *hit.heading_path]
    names = list(dict.fromkeys(n for n in names if n))
    own = [p for n in names for p in analyze(n)]
    path_words = [w for p in path_parts(path) for w in analyze(p)] if path else []
    title = hit.title if hit.title != path else ""
    words = analyze(" ".join([title, body, *hit.heading_path]))
    return Facts(
        location=path if file_text is not None and path else hit.location,
        path=path,
        terms=_stems(words) | _stems(path_words),
        defines=_stems(own) | _stems(path_words[-2:]),
        names=tuple(names[:20]),
        imports=tuple(code.imports) if code else (),
    )


@dataclass(frozen=True)
class Vocabulary:
    """The task's key terms, their planner variants and what the loop has learned so far."""

    key: tuple[str, ...]
    variants: Mapping[str, frozenset[str]] = field(default_factory=dict)
    learned: tuple[Learned, ...] = ()

    def coverage(self, term: str, have: frozenset[str], where: str = "") -> tuple[float, str]:
        """How well ``have`` covers ``term`` (1, 0.9 variant, 0.75 learned, 0) and by which word.
        A word learned from ``where`` itself does not count there: it was learned *because* it is
        there, so it proves nothing about that candidate."""
        if stem(term) in have:
            return 1.0, term
        for v in sorted(self.variants.get(term, frozenset())):
            if v in have:
                return VARIANT_WEIGHT, v
        for learned in self.learned:
            if term in learned.stands_for and stem(learned.term) in have and learned.origin != where:
                return round(LEARNED_WEIGHT * learned.confidence, 3), learned.term
        return 0.0, ""


@dataclass(frozen=True)
class Scored:
    facts: Facts
    relevance: float
    band: Band
    reason: str
    missing: tuple[str, ...]
    covered: Mapping[str, float]


def band(relevance: float) -> Band:
    if relevance >= 0.8:
        return "high"
    if relevance >= 0.5:
        return "medium"
    return "low" if relevance >= EXCLUDE_BELOW else "none"


def _where(f: Facts) -> str:
    return f.path or f.location.split("#")[0]


def _weights(vocab: Vocabulary, own_cov: Mapping[str, Mapping[str, tuple[float, str]]]) -> dict[str, float]:
    """Each key term's weight: rarer in the pool (``own_cov``: each candidate's coverage) weighs more."""
    n = len(own_cov)
    raw = {}
    for term in vocab.key:
        df = sum(1 for cov in own_cov.values() if cov[term][0] > 0)
        raw[term] = math.log(1 + (n + 1) / (df + 1))
    total = sum(raw.values()) or 1.0
    # half uniform: a term most candidates share still counts for what the task asks
    return {t: 0.5 / len(raw) + 0.5 * w / total for t, w in raw.items()}


def _links(pool: Sequence[Facts]) -> dict[str, list[tuple[str, str]]]:
    """location -> [(other location, "imports"/"imported by")] among the pool's files."""
    by_path: dict[str, list[str]] = {}
    for f in pool:
        if f.path:
            by_path.setdefault(f.path, []).append(f.location)
    out: dict[str, list[tuple[str, str]]] = {f.location: [] for f in pool}
    resolved: dict[str, list[str]] = {}  # a module many files import (``typing``) is resolved once
    for f in pool:
        for module in f.imports:
            if module not in resolved:
                resolved[module] = resolves_to(module, by_path)
            for path in resolved[module]:
                if path == f.path:
                    continue
                for loc in by_path[path]:
                    out[f.location].append((loc, "imports"))
                    out[loc].append((f.location, "imported by"))
    return out


def _reason(
    vocab: Vocabulary, f: Facts, own: dict[str, tuple[float, str]], link_note: str, value: float
) -> str:
    defined = [t for t, (c, w) in own.items() if c and stem(w) in f.defines]
    mentioned = [t for t, (c, w) in own.items() if c and t not in defined]
    via = sorted({w for t, (c, w) in own.items() if c and w != t})
    parts = [f"defines {', '.join(defined)}"] if defined else []
    parts += [f"mentions {', '.join(mentioned)}"] if mentioned else []
    parts += [f"through {', '.join(repr(v) for v in via)}"] if via else []
    parts += [link_note] if link_note else []
    label = {"high": "implements the target", "medium": "related", "low": "indirect", "none": "irrelevant"}
    detail = "; ".join(parts) or "no task term"
    return f"{label[band(value)]}: {detail}"


def evaluate(vocab: Vocabulary, pool: Sequence[Facts]) -> list[Scored]:
    """Score every candidate of ``pool`` against the task; best first, ties by location."""
    own_cov = {f.location: {t: vocab.coverage(t, f.terms, _where(f)) for t in vocab.key} for f in pool}
    weights = _weights(vocab, own_cov)
    links = _links(pool)
    out: list[Scored] = []
    for f in pool:
        own = own_cov[f.location]
        linked: dict[str, float] = {}
        note = ""
        for other, how in links[f.location]:
            gained = [t for t in vocab.key if own_cov[other][t][0] > own[t][0]]
            for t in gained:
                linked[t] = max(linked.get(t, 0.0), own_cov[other][t][0] * LINKED_WEIGHT)
            if gained and not note:
                note = f"{how} {other.split('#')[0]} ({', '.join(gained)})"
        cov_own = sum(weights[t] * c for t, (c, _) in own.items())
        cov_all = sum(weights[t] * max(own[t][0], linked.get(t, 0.0)) for t in vocab.key)
        defs = sum(weights[t] * c for t, (c, w) in own.items() if c and stem(w) in f.defines)
        def_ratio = defs / cov_own if cov_own else 0.0
        value = 0.05 + 0.6 * cov_all + 0.35 * def_ratio * min(1.0, 2.5 * cov_own)
        value = round(min(1.0, value), 3)
        missing = tuple(t for t in vocab.key if own[t][0] == 0)
        covered = {t: c for t, (c, _) in own.items() if c}
        out.append(Scored(f, value, band(value), _reason(vocab, f, own, note, value), missing, covered))
    return sorted(out, key=lambda s: (-s.relevance, s.facts.location))


def uncovered(vocab: Vocabulary, scored: Sequence[Scored], at_least: float = 0.5) -> list[str]:
    """Key terms that no candidate scoring ``at_least`` covers (seed 004's "critical gaps")."""
    good = [s for s in scored if s.relevance >= at_least]
    return [t for t in vocab.key if not any(s.covered.get(t) for s in good)]


def _line_stems(line: str) -> frozenset[str]:
    """A line's stems; a line of code's length remembered, as a later cycle reads the same
    candidates' lines again (a long line, minified code, is not kept: the memory stays small; full,
    16,384 lines of real Python held 19 MB, measured with tracemalloc)."""
    return _short_line_stems(line) if len(line) <= MEMO_LINE else _stems(analyze(line))


@lru_cache(maxsize=16_384)
def _short_line_stems(line: str) -> frozenset[str]:
    return _stems(analyze(line))


def _candidates_from(s: Scored, hit_text: str, vocab: Vocabulary) -> list[tuple[str, str, float]]:
    """(word, via, weight) for the words ``s`` suggests, before filtering: the modules it imports
    (the last part most), the words beside the task's words (but not its own names: those are its
    domain, not a synonym), and its own names a little."""
    out: list[tuple[str, str, float]] = []
    own_path = {p.lower() for p in path_parts(s.facts.path)}
    own_names = {p for n in s.facts.names for p in [n.lower(), *identifier_parts(n)]}
    for module in s.facts.imports:
        parts = [p for p in module.replace("::", ".").replace("/", ".").split(".") if p]
        for i, part in enumerate(parts):
            if part.lower() in own_path:
                continue
            weight = 3.0 if i == len(parts) - 1 else 1.5
            out.extend((w, "imports", weight) for w in {part.lower(), *identifier_parts(part)})
    for name in s.facts.names:
        out.extend((w, "defines", 1.0) for w in {name.lower(), *identifier_parts(name)})
    key = {stem(t) for t in vocab.key} | {v for vs in vocab.variants.values() for v in vs}
    lines = hit_text.splitlines()[:2000]
    for i, line in enumerate(lines):
        if not key & _line_stems(line):
            continue
        window = " ".join(lines[max(0, i - 1) : i + 2])
        out.extend((w, "co-occurs", 2.0) for w in dict.fromkeys(analyze(window)) if w not in own_names)
    return out


def learn(
    vocab: Vocabulary,
    scored: Sequence[Scored],
    texts: Mapping[str, str],
    gaps: Sequence[str],
    known: Sequence[str] = (),
) -> list[Learned]:
    """Up to ``MAX_LEARN`` new words from the best candidates.

    A word stands for the gaps its best source does not cover itself ("routes.py covers api and
    endpoint and uses throttle: throttle may be the rate limit"), with a confidence relative to the
    best word; a word below half the best one's evidence is context to search, not a synonym.
    ``texts``: location -> text; ``known``: words already searched or learned, never learned twice.
    """
    top = [s for s in scored if s.relevance >= 0.4][:5] or [
        s for s in scored if s.relevance >= EXCLUDE_BELOW
    ][:3]
    if not top:
        return []
    skip = {stem(t) for t in [*vocab.key, *known]} | {v for vs in vocab.variants.values() for v in vs}
    common = max(3, len(scored) // 2)
    df = Counter(st for o in scored for st in o.facts.terms)  # candidates holding each stem
    score: dict[str, float] = {}
    first: dict[str, tuple[str, str, Scored]] = {}
    for s in top:
        for word, via, weight in _candidates_from(s, texts.get(s.facts.location, ""), vocab):
            st = stem(word)
            if len(word) < 3 or not word.isalpha() or st in skip or word in CODE_STOP or word in TASK_STOP:
                continue
            if df[st] > common:
                continue  # on every page: says nothing about this task
            score[st] = score.get(st, 0.0) + weight * s.relevance
            first.setdefault(st, (word, via, s))
    best = sorted(score, key=lambda st: (-score[st], st))[:MAX_LEARN]
    out: list[Learned] = []
    for st in best:
        word, via, origin = first[st]
        confidence = round(score[st] / score[best[0]], 3)
        stands = tuple(g for g in gaps if g in origin.missing) if confidence >= 0.5 else ()
        stands = stands if len(stands) <= MAX_STANDS else ()  # one word is not a synonym for ten
        out.append(
            Learned(
                term=word, stands_for=stands, via=cast(Via, via), confidence=confidence,
                origin=_where(origin.facts),
            )
        )  # fmt: skip
    return out


def vocabulary(keywords: Sequence[str], variants: Mapping[str, Sequence[str]]) -> Vocabulary:
    """Key terms of a task (analyzed, task verbs left out) and the stems of their one-word variants."""
    words = [
        w for w in dict.fromkeys(readable(analyze(" ".join(keywords)))) if w not in TASK_STOP and len(w) > 1
    ]
    parts = {p for w in words for p in identifier_parts(w) if p != w}
    key = tuple(w for w in words if not (len(identifier_parts(w)) > 1 and w not in parts and all(
        p in words for p in identifier_parts(w)
    )))  # fmt: skip
    by_word: dict[str, frozenset[str]] = {}
    for said, names in variants.items():
        stems = frozenset(stem(n) for n in names if " " not in n and n.isalnum())
        for word in analyze(said):
            if word in key and stems:
                by_word[word] = by_word.get(word, frozenset()) | stems
    return Vocabulary(key=key, variants=by_word)


def allowed(path: str, include: Sequence[str], exclude: Sequence[str]) -> bool:
    """``path`` matches an include glob (or there are none) and no exclude glob; globs are tried
    against the whole path and its file name (``*.test.*``, ``src/**``, ``tests/*``)."""
    name = path.rsplit("/", 1)[-1]
    if include and not any(fnmatchcase(path, g) or fnmatchcase(name, g) for g in include):
        return False
    return not any(fnmatchcase(path, g) or fnmatchcase(name, g) for g in exclude)
