"""Seed 003's wider and alternative plans: broadening when a source finds nothing, and the
variant queries every source gets ("k8s" for "Kubernetes").

Pure, like the planner: every plan here is the given one with some components changed. It
carries no per-source queries: each source renders it in its own syntax (``Source.render``).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import zip_longest

from sourcewise.models import Plan
from sourcewise.planning.planner import _assemble, _terms
from sourcewise.planning.variants import category_of, variants_for
from sourcewise.text.words import is_hangul

__all__ = ["ASPECTS", "MAX_ALTERNATIVES", "alternatives", "broaden"]

# Words that say which aspect of a topic is asked about ("timeline", "steps", "일정"): the first to
# go when a plan is broadened; the topic is the first keyword that is none of these.
ASPECTS = frozenset(
    "timeline timelines schedule date dates deadline plan plans steps step details status progress "
    "owner owners update updates notes summary overview result results cost costs budget guide list "
    "decision decisions options 일정 계획 단계 내용 결과 요약 현황 담당 담당자 비용 예산 가이드 목록 방법 "
    "대응 처리 방안 절차".split()
)


def _topic(current: Plan) -> tuple[str | None, str | None]:
    """The topic word (the last keyword of the question's first run that names no aspect: the
    head of "API migration timeline" is "migration") and the word that qualifies it there, if a
    keyword ("API"); with no such keyword, the first keyword or entity."""
    words = [w for w in current.keywords if w.lower() not in ASPECTS]
    if not words:
        first = current.keywords or current.entities
        return (first[0] if first else None), None
    ordered = _terms([], words, current.question)
    topic = ordered[-1] if len(ordered) <= 2 else ordered[1]
    at = ordered.index(topic)
    return topic, ordered[at - 1] if at else None


def _kept_variants(draft: Plan) -> dict[str, list[str]]:
    """A broadened plan's variants: those of the terms it still searches for, and its own terms'."""
    terms = _terms(draft.entities, draft.keywords, draft.question)
    own = variants_for([*terms, *draft.phrases])
    kept = {name: names for name, names in draft.variants.items() if _covers(name, terms, draft.phrases)}
    return {**kept, **own}


def _covers(name: str, terms: Sequence[str], phrases: Sequence[str]) -> list[str]:
    """The terms (or the phrase) that ``name`` stands for in a plan searching ``terms``."""
    if name in phrases:
        return [name]
    parts = name.lower().split()
    lows = [t.lower() for t in terms]
    if len(parts) == 1:
        return [t for t, low in zip(terms, lows, strict=True) if low == parts[0]]
    if all(p in lows for p in parts):
        return [t for t, low in zip(terms, lows, strict=True) if low in parts]
    return []


MAX_ALTERNATIVES = 3


def alternatives(current: Plan, limit: int = MAX_ALTERNATIVES) -> list[Plan]:
    """Seed 003's query variants as plans: ``current`` with one term replaced by another name for
    it ("Kubernetes setup" -> "k8s setup", "container orchestration setup"), names in the
    question's script first; names of one or two letters ("go", "es") are left out: as words they
    match too much. At most ``limit``, filters and negations kept."""
    terms = _terms(current.entities, current.keywords, current.question)
    korean = is_hangul(current.question)
    out: list[Plan] = []
    choices: list[list[tuple[list[str], str]]] = []
    for name, others in current.variants.items():
        covered = _covers(name, terms, current.phrases)
        if covered:
            picks = sorted((o for o in others if len(o) > 2), key=lambda o: is_hangul(o) != korean)
            choices.append([(covered, other) for other in picks])
    # round robin: each term's first other name, then each term's second ...
    order = [pair for rank in zip_longest(*choices) for pair in rank if pair is not None][:limit]
    for covered, other in order:
        draft = current.model_copy(
            update={
                "keywords": [other, *(k for k in current.keywords if k not in covered)],
                "entities": [e for e in current.entities if e not in covered],
                "phrases": [p for p in current.phrases if p not in covered],
                "level": max(1, current.level),  # the semantic text is the terms, not the question
            }
        )
        out.append(_assemble(draft, {}).model_copy(update={"variants": {}, "level": current.level}))
    return out


def broaden(current: Plan) -> Plan | None:
    """The next wider plan, in seed 003's order: dates, then source filters, then less important
    keywords, then the topic generalised (``PostgreSQL migration`` -> ``database migration``),
    then the topic word alone (``migration``). ``None`` when nothing is left to drop."""
    c = current.constraints
    terms = _terms(current.entities, current.keywords, current.question)
    topic, qualifier = _topic(current)
    korean = is_hangul(current.question)
    general = next((g for e in current.entities if (g := category_of(e, korean=korean))), None)
    update: dict[str, object]
    if c.after or c.before:
        step = "date filters"
        update = {"constraints": c.model_copy(update={"after": None, "before": None, "dates_from": []})}
    elif c.authors or c.channels or c.types or c.mine:
        step = "source filters"
        update = {
            "constraints": c.model_copy(update={"authors": [], "channels": [], "types": [], "mine": False})
        }
    elif (len(terms) + len(current.phrases) > 2 or current.negations) and (
        "less important keywords" not in current.dropped  # once: it may keep three terms
    ):
        step = "less important keywords"
        keep = {topic, *([] if current.entities else [qualifier])}
        update = {
            "keywords": [k for k in current.keywords if k in keep],
            "entities": current.entities[:2],
            "phrases": [],
            "negations": [],
        }
    elif general and topic and topic not in current.entities and "topic generalised" not in current.dropped:
        step = "topic generalised"
        update = {"entities": [], "keywords": [general, topic] if general != topic else [topic]}
    elif len(terms) > 1 and topic is not None:
        step = "only the topic"
        in_entities = topic in current.entities
        update = {"entities": [topic] if in_entities else [], "keywords": [] if in_entities else [topic]}
    else:
        return None
    update |= {"level": current.level + 1, "dropped": [*current.dropped, step]}
    draft = current.model_copy(update=update)
    return _assemble(draft, {}, variants=_kept_variants(draft))
