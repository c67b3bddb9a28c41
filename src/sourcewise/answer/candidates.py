"""How well each unit of the best hits answers a question: ``candidates`` reads the first ``HITS``
hits into units and scores each; ``answer.pick`` keeps the best that pass its gate.

**A unit's score**: the question's groups it covers (specific ones weigh more, a name the question
writes twice as much; an identifier's group needs its parts, so "proxy" alone is not "NO_PROXY";
those its heading or the sentence before it covers count half, but the first two units under a
heading of at most four words that is a name the question writes, and no other, are about it:
"### `SSL_CERT_FILE`"; a name met only inside a longer identifier, "Mutex" in ``MutexGuard``, counts
half, here and in the share of the question its type's fit is weighed by), how well it fits the
question's type (``answer.asked.fit``), how much of a reference entry's option name the question
says (``--numeric-sort`` for "sort numerically"), how close together the question's terms sit in
it, and its hit's rank and relevance. A fragment or a field's label ("Valid
values: a filename") counts less. Not word coverage alone.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from sourcewise.answer.asked import Asked, completes, covered, needed
from sourcewise.answer.asked import fit as type_fit
from sourcewise.answer.extractive import Unit, units
from sourcewise.models import Hit, RankedHit
from sourcewise.text.analyze import STOPWORDS, analyze

__all__ = ["HITS", "Cand", "candidates", "in_name", "names"]

HITS = 8  # the best hits whose units are read
SUBJECT_WORDS = 4  # a heading this short names its section's subject ("### `NO_PROXY`", "## Timeouts")
ENTRY_NAME = 0.6  # an option entry whose name the question says wholly, over one it says nothing of
CHUNK_GAP = 3  # lines between two chunks of one section (the blank lines the kb cut at)
SUBJECT_UNITS = 2  # the units under such a heading that are about it, whether they name it or not
_WORD = re.compile(r"\w+")


@dataclass
class Cand:
    hit: int
    pos: int
    place: tuple[int, int]  # (passage, position): a hit's chunk and the chunks next to it read as one
    unit: Unit
    own: set[int]
    context: set[int]  # covered by the headings above it and the hit's title
    score: float = 0.0
    fit: float = 0.0
    aside: bool = False  # from the chunk after the hit: it completes a window, never answers alone


def _whole_terms(text: str) -> set[str]:
    """The terms of ``text``'s words as wholes: ``unwrap_or_else`` gives itself, not ``unwrap``."""
    out: set[str] = set()
    for word in _WORD.findall(text):
        said = analyze(word, stem=True)
        out.update(said[:1] if word.isascii() and len(said) > 1 else said)
    return out


def _partial(groups: Sequence[frozenset[str]], own: set[int], text: str) -> set[int]:
    """The groups ``own`` covers only through parts of longer identifiers: "Mutex" in
    ``MutexGuard``, "unwrap" in ``unwrap_or_else``, "fail" in ``CERTIFICATE_VERIFY_FAILED``: a
    different name, which counts half."""
    if not own:
        return set()
    whole = _whole_terms(text)
    return {i for i in own if not groups[i] & whole}


_OPTION = re.compile(r"--?[A-Za-z0-9]")  # "-n", "--numeric-sort"; not "-#", "--" alone or a dash


def _option_words(text: str) -> list[str]:
    """The words of the option names a reference entry's line opens with ("-n, --numeric-sort
    compare ..." gives "n", "numeric", "sort"); none for a line that is not an entry."""
    words: list[str] = []
    if text[:1] != "-":
        return words
    for token in text.split()[:6]:
        bare = token.rstrip(",")
        if _OPTION.match(bare):
            words += [w.lower() for w in bare.lstrip("-").split("=", 1)[0].split("-") if w]
        elif not (bare.isupper() or bare[:1] in "[<"):  # an argument ("NUM", "[=WHEN]") goes on
            break
    return words


def _says(group: frozenset[str], word: str) -> bool:
    """The option word says the group: as its analyzed form, or inside a name run together
    ("depth" in ``-maxdepth``, "case" in ``--nocase``; terms of four letters or more)."""
    said = len(group & set(analyze(word, stem=True))) >= needed(group)  # as ``covered`` counts
    return said or any(len(t) >= 4 and t in word for t in group)


def in_name(asked: Asked, text: str) -> set[int]:
    """The question's groups an entry's option names say (``-maxdepth`` says "depth")."""
    words = _option_words(text)
    return {i for i, g in enumerate(asked.groups) if any(_says(g, w) for w in words)}


def _entry_name(asked: Asked, text: str) -> float:
    """For a reference entry's line ("-n, --numeric-sort compare according to ..."), the share of
    its option names' words the question says: ``--numeric-sort`` is all "sort numerically",
    ``--general-numeric-sort`` two thirds of it, ``--one-file-system`` none of "create an archive"."""
    words = _option_words(text)
    if not words:
        return 0.0
    return sum(1 for w in words if any(_says(g, w) for g in asked.groups)) / len(words)


def _closeness(tokens: list[str], groups: Sequence[frozenset[str]], have: set[int]) -> float:
    if len(have) < 2:
        return 1.0 if have else 0.0
    firsts = [next((p for p, t in enumerate(tokens) if t in groups[g]), 0) for g in have]
    return len(have) / (max(firsts) - min(firsts) + 1)


def candidates(asked: Asked, hits: Sequence[RankedHit]) -> list[Cand]:
    read_hits = []
    for ranked in hits[:HITS]:
        hit = ranked.hit
        title = set(analyze(" ".join([hit.title, *hit.heading_path]), stem=True))
        wrapped = hit.kind != "chat"
        found = [(u, analyze(u.text, stem=True)) for u in units(hit.text or hit.snippet, wrapped=wrapped)]
        aside = [(u, analyze(u.text, stem=True)) for u in units(hit.meta.get("after", ""), wrapped=wrapped)]
        read_hits.append((ranked, title, found, len(found)))
        found.extend(aside)
    weights = _weights(asked, [set(tokens) for _, _, found, own in read_hits for _, tokens in found[:own]])
    starts = _passages([r.hit for r, _, _, _ in read_hits], [len(found) for _, _, found, _ in read_hits])
    unit_at = {
        (starts[h][0], starts[h][1] + pos): unit
        for h, (_, _, found, _) in enumerate(read_hits)
        for pos, (unit, _) in enumerate(found)
    }
    out: list[Cand] = []
    for h, (ranked, title, found, mine) in enumerate(read_hits):
        passage, offset = starts[h]
        heading: set[str] = set()
        previous: set[int] = set()
        path = ranked.hit.heading_path
        subject, under = _subject(asked, path[-1] if path else ""), 0
        chunk = covered(set().union(*(tokens for _, tokens in found[:mine])), asked.groups)
        for pos, (unit, tokens) in enumerate(found):
            terms = set(tokens)
            if unit.kind == "heading":
                heading, under = terms, 0
                subject = _subject(asked, unit.text)
                continue
            under += 1
            about = subject if under <= SUBJECT_UNITS else set()
            own = covered(terms, asked.groups) | about | in_name(asked, unit.text)
            context = covered(title | heading, asked.groups) - own
            named = bool(asked.symbols) and all(names(unit.text, sym) for sym in asked.symbols)
            if named:  # an option's entry ("-s --small Reduce memory usage") is about its chunk's program
                context |= chunk - own
            fit = type_fit(asked, unit, tokens, about)
            after = unit_at.get((passage, offset + pos + 1))
            if after is not None and completes(asked.kind, unit, after):
                fit = max(fit, 0.8)  # the value or the command is the next unit
            partial = _partial(asked.groups, own - about, unit.text)
            score = _score(asked, weights, own, (context | previous) - own, fit, tokens, partial)
            score += ENTRY_NAME * _entry_name(asked, unit.text)
            score += 0.4 / (1 + h) + 0.3 * ranked.relevance - 0.02 * min(pos, 10)
            if named:
                score += 1.0  # the operator the question names, which no word search sees
            if unit.kind != "code" and (len(unit.text.split()) < 4 or _label(unit.text)):
                score -= 0.3  # a fragment, or a field's label and value ("Valid values: a filename")
            out.append(Cand(h, pos, (passage, offset + pos), unit, own, context, score, fit, pos >= mine))
            previous = own
    return out


def _passages(hits: Sequence[Hit], sizes: Sequence[int]) -> list[tuple[int, int]]:
    """Per hit, its passage and the position of its first unit in it: a chunk that goes on, in
    the same file and section, where another hit's chunk stops (the kb cuts a section into chunks
    at blank lines) continues that hit's passage, so a sentence and the command or value in the
    next chunk ("... send the `--test-threads` flag" and the block after it) are read together."""
    out = [(h, 0) for h in range(len(hits))]
    order = sorted(
        (h for h in range(len(hits)) if hits[h].path and hits[h].start_line is not None),
        key=lambda h: (hits[h].path or "", hits[h].start_line or 0),
    )
    for before, h in itertools.pairwise(order):
        a, b = hits[before], hits[h]
        if (
            a.path == b.path
            and a.heading_path == b.heading_path
            and a.end_line is not None
            and 0 < (b.start_line or 0) - a.end_line <= CHUNK_GAP
        ):
            passage, offset = out[before]
            out[h] = (passage, offset + sizes[before])
    return out


def _label(text: str) -> bool:  # ``Label: value`` with no sentence's end: a reference's field
    head, colon, rest = text.partition(":")
    return bool(colon and rest.strip()) and len(head.split()) <= 2 and text[-1:] not in ".!?"


def _subject(asked: Asked, heading: str) -> set[int]:
    """The names the question writes that a heading of at most ``SUBJECT_WORDS`` words covers: the
    entry of a reference ("### `SSL_CERT_FILE`"), whose text need not repeat its name. A heading
    of plain words ("## Timeouts") names a topic its whole section shares, and one naming other
    things beside it ("### Comparing `RefCell<T>`/`Rc<T>` and `Mutex<T>`/`Arc<T>`") is about
    them all: no subject."""
    if not heading or not asked.names or len(heading.split()) > SUBJECT_WORDS:
        return set()
    said = set().union(*asked.groups)
    other = [
        w for w in _WORD.findall(heading)
        if len(w) > 1 and w.lower() not in STOPWORDS and not said & set(analyze(w, stem=True))
    ]  # fmt: skip
    if len(other) > 1:
        return set()
    return covered(set(analyze(heading, stem=True)), asked.groups) & set(asked.names)


def _weights(asked: Asked, unit_terms: list[set[str]]) -> list[float]:
    """A weight per group: specific ones by how rare they are among the units read (an inverse
    document frequency: "NO_PROXY" outweighs "environment"), twice that for a name the question
    writes ("NO_PROXY", "Rc"), generic ones 0.3."""
    n = len(unit_terms)
    out = []
    for i, group in enumerate(asked.groups):
        if i not in asked.specific:
            out.append(0.3)
            continue
        df = sum(1 for terms in unit_terms if len(group & terms) >= needed(group))
        out.append((1.0 + math.log((n + 1) / (df + 1)) / 2) * (2 if i in asked.names else 1))
    return out


def _score(
    asked: Asked,
    weights: list[float],
    own: set[int],
    near: set[int],
    fit: float,
    tokens: list[str],
    partial: set[int] = frozenset(),  # type: ignore[assignment]
) -> float:
    """What the unit covers (rare specific groups weigh most; the ones around it, and those it
    meets only inside a longer identifier, half), its fit to the question's type as far as it is on
    topic, and how close its terms sit."""
    spec = set(asked.specific)
    mine = sum(weights[i] * (0.5 if i in partial else 1.0) for i in own)
    cover = (mine + 0.5 * sum(weights[i] for i in near)) / (sum(weights) or 1.0)
    share = (len(((own - partial) | near) & spec) + 0.5 * len(partial & spec - near)) / max(1, len(spec))
    return 2.0 * cover + 0.9 * fit * share + 0.3 * _closeness(tokens, asked.groups, own)


def names(text: str, symbol: str) -> bool:
    """The unit names the operator or option: as a word of its own, or in backticks."""
    padded = f" {text} ".replace(",", " ").replace("`", " ")
    return f" {symbol} " in padded or f" {symbol}=" in padded or f" {symbol}[" in padded
