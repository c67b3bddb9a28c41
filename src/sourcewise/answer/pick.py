"""Which units of the best hits answer a question, and whether any does (no model).

**The question** is read by ``answer.asked.read``: its content groups, the specific ones, the
operators and options it names, its type.

**A unit's score** is ``answer.candidates``'.

**The gate** (honest refusal): an answer must contain at least one of the question's specific
terms (or its analyzer forms) and every operator the question names, and with its heading and
title cover all the specific terms of a short question (60% of a longer one's; in a question of
five or more, a specific term that no unit of three or more hits read holds counts twice). An answer naming
the option or operator the question names may leave its other terms to its chunk ("What does
bzip2 -s do?": "-s --small Reduce memory usage ..." in bzip2's manual). When no unit
passes, nothing answers and ``pick`` returns nothing: the caller says so and lists the closest
passages as ones that may not answer.

**The answer**: the best unit, with the sentence before it when that sentence holds what the
unit leaves out ("The default is 5 seconds." after the one naming the timeout), the next unit
when a "default" question's value or a "how" question's command follows or it goes on from this
one ("However, ..."), the list it announces ("... one of the following:"), the sentence after a
definition ("X is a simple program ..."), an example it announces ("For example:" and the
block), and the next best units when they score near the best (``NEAR``). Each with its window
whole: windows are added while the answer has fewer than ``limit`` units.
"Next" reads on past a hit's chunk: into another hit's chunk that continues it, and into the
chunk after it (``meta["after"]``, ``KnowledgeBaseSource.read``), whose units never answer alone.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import re2  # type: ignore[import-untyped]

from sourcewise.answer.asked import Asked, completes, read
from sourcewise.answer.candidates import Cand, candidates, names
from sourcewise.answer.extractive import Unit
from sourcewise.models import RankedHit

__all__ = ["pick"]

READ_ENOUGH = 3  # hits read before a term none of them holds counts twice in the gate
NEAR = 0.85  # a unit scoring this share of the best one's joins the answer
# A sentence starting with one of these leans on the one before it.
_BACK = ("These ", "This ", "They ", "Those ", "It ", "That ", "이는 ", "이것은 ", "그러므로 ", "따라서 ")
# One starting with these goes on where the one before stops ("It is not in the scope of HTTPX
# to ... However, it is suggested to use LifespanManager"): the answer is often there.
_ON = ("However", "Instead", "But ", "Rather", "하지만", "그러나", "대신")
ANNOUNCE_WORDS = 12  # "Take a look at the following example:" announces; a longer sentence says more
_FOLLOWING = re2.compile(r"\b(?:following|follows)\s*(?:\.\.\.|…|:|\.)$")


def _passes(asked: Asked, shown: set[int], context: set[int], text: str, unread: set[int]) -> bool:
    if not all(names(text, s) for s in asked.symbols):
        return False
    spec = set(asked.specific)
    # A specific term no unit read holds (in its text or around it) counts twice: what the
    # documents never say is what the question is most about ("a garbage collector *plugin*"
    # against a book that says only "without a garbage collector"). It is never covered, so it
    # only raises what the rest must cover.
    # A question of three or four terms may already leave only one out, which may be worded
    # otherwise in the answer ("쓰이지" for "사용되지"): the doubling is for the 60% of a question
    # of five or more, which could leave out two or more.
    extra = len(unread & spec) if len(spec) >= 5 else 0
    need = len(spec) if len(spec) <= 2 else math.ceil(0.6 * (len(spec) + extra))
    if asked.symbols:  # the operator or option it names is the most specific thing it asks,
        need = max(1, need - 1)  # and what it belongs to may be said around it ("bzip2 -s")
    return not spec or ((bool(shown & spec) or bool(asked.symbols)) and len((shown | context) & spec) >= need)


def pick(
    question: str, hits: Sequence[RankedHit], *, limit: int = 3, lead: Sequence[int] = ()
) -> list[tuple[str, int]]:
    """Up to ``limit`` (unit text, hit index) pairs that answer ``question``, best first; none when
    nothing passes the gate. ``lead``: hit indexes whose best passing unit comes first, in this
    order (the best hit of each reading of an ambiguous question)."""
    asked = read(question)
    if not asked.groups and not asked.symbols and not asked.urls:
        return []
    cands = candidates(asked, hits)
    if asked.urls and not asked.specific:  # about the pages it names: only they answer
        cands = [c for c in cands if hits[c.hit].hit.meta.get("asked") in asked.urls]
    seen: set[int] = set().union(*(c.own | c.context for c in cands)) if cands else set()
    # A name the question writes (capitalized or with digits, not its first word) that nothing read
    # contains: the documents do not talk about what it asks ("QUIC", "Gopher", "HTTP3").
    if any(i not in seen for i in asked.names):
        return []
    # What nothing read says is evidence only when several passages were read: a question's word
    # missing from one or two passages may just be worded otherwise there.
    unread = set(asked.specific) - seen if len({c.hit for c in cands}) >= READ_ENOUGH else set()
    by_place = {c.place: c for c in cands}
    passing: list[tuple[Cand, list[Cand], set[int]]] = []
    for cand in sorted(cands, key=lambda c: (-c.score, c.hit, c.pos)):
        if cand.aside:
            continue
        window = _window(asked, cand, by_place)
        shown = set().union(*(c.own for c in window))
        if _passes(asked, shown, cand.context, " ".join(c.unit.text for c in window), unread):
            passing.append((cand, window, shown))
    if not passing:
        return []
    top = passing[0][0].score
    leads = [next((p for p in passing if p[0].hit == h), None) for h in lead]
    chosen: list[tuple[str, int]] = []
    # The best unit opens; then each reading's best, when it is near the best (an ambiguous
    # question's other readings must not push the answer out); then any unit that scores near the
    # best: a close second is about as likely to hold the answer, and it costs a sentence.
    firsts = [p for p in leads if p is not None and p[0].score >= 0.7 * top]
    for cand, window, _ in [passing[0], *firsts, *passing[1:]]:
        if len(chosen) >= limit:
            break
        reading = any(cand is p[0] for p in firsts)
        if chosen and not reading and cand.score < NEAR * top:
            continue
        # Once per text: a paragraph in two files (a folder indexed twice) is said once.
        new = [(c.unit.text, c.hit) for c in window if all(c.unit.text != text for text, _ in chosen)]
        # A window is whole or absent ("Index it, then search it:" without its block says nothing):
        # one that starts before ``limit`` units may end past it.
        chosen.extend(new)
    return chosen


def _window(asked: Asked, cand: Cand, by_place: dict[tuple[int, int], Cand]) -> list[Cand]:
    """The unit with the neighbours it needs: the sentence before when it holds specific terms the
    unit lacks; the next one for a default's value or a how-to's command."""
    spec = set(asked.specific)
    window = [cand]
    before = by_place.get((cand.place[0], cand.place[1] - 1))
    if before is not None and (before.own - cand.own) & spec and not cand.own & spec:
        window.insert(0, before)
    elif before is not None and cand.unit.kind == "code" and before.unit.kind != "code" and before.own & spec:
        window.insert(0, before)  # a command with the sentence that says what it does
    elif before is not None and cand.unit.text.startswith(_BACK) and before.unit.kind != "code":
        window.insert(0, before)  # "These are ..." needs what "these" are
        first = by_place.get((cand.place[0], cand.place[1] - 2))
        if first is not None and before.unit.text.startswith(_BACK) and first.unit.kind != "code":
            window.insert(0, first)  # and so does a "This means ..." before it
    after = by_place.get((cand.place[0], cand.place[1] + 1))
    if after is None:
        return window
    more = by_place.get((cand.place[0], cand.place[1] + 2))
    if (
        completes(asked.kind, cand.unit, after.unit)
        or after.unit.text.startswith((*_BACK, *_ON))
        or _opens_list(cand.unit.text)
    ):
        window.append(after)
        opens = _opens_list(cand.unit.text) and after.unit.kind == "item"
        if opens and more is not None and more.unit.kind != "item":  # past the first item's next sentence
            more = by_place.get((cand.place[0], cand.place[1] + 3))
        if more is not None and more.unit.kind == "item" and (opens or _opens_list(after.unit.text)):
            window.append(more)  # the list a sentence announces
    elif _announces(after.unit) and more is not None and more.unit.kind in ("code", "item"):
        window.extend([after, more])  # "For example:" and the example
    elif _goes_on(asked, window, after):
        window.append(after)
    return window


def _goes_on(asked: Asked, window: Sequence[Cand], after: Cand) -> bool:
    """What a thing is or does takes more than one sentence: the sentence after a definition ("X is
    a simple program whose purpose is ..."), or after any unit when it names the subject again,
    comes with it."""
    return (
        asked.kind == "what"
        and len(window) == 1
        and after.unit.kind in ("prose", "item")
        and (window[0].fit >= 1.0 or bool(after.own & window[0].own & set(asked.specific)))
    )


def _opens_list(text: str) -> bool:
    """A sentence that announces what follows: "... the ability to:", "may be one of the following..."."""
    return text.endswith(":") or _FOLLOWING.search(text[-24:]) is not None


def _announces(unit: Unit) -> bool:
    """A unit that announces what follows ("For example:", "예:", "See the following example:")."""
    return unit.kind != "code" and unit.text.endswith(":") and len(unit.text.split()) <= ANNOUNCE_WORDS
