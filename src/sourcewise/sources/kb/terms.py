"""The knowledge base's one analyzer: which terms a text gives, for indexing and for querying alike.

Most words are plain words (letters only, without a change of case inside): their terms come from the
search engine's own analyzer (tantivy: split on non-alphanumeric characters, drop tokens over 64
bytes, lower-case, Snowball English stemmer), which runs inside the engine, in its threads, while
indexing. Python asks the same analyzer object for a query's terms (``tantivy.TextAnalyzer.analyze``),
so a query and the index can never split a word differently. Two kinds of word get more from the
project's analyzer (``text.analyze.analyze``), given to the engine as pre-tokenized terms of the same
field:

- words holding "_", a digit or a change of case (``token_expiry``, ``tokenExpiry``, ``python3``): the
  terms ``analyze`` gives that the engine does not (the whole ``token_expiry``; the parts ``token``,
  ``expiry``; ``python``);
- words holding Hangul: Korean morphology (particles and endings off, stems and their bigrams) is the
  project's analyzer alone; these words are taken out of what the engine reads.

``split`` is that definition; ``terms`` is Python's view of it (the engine's
analyzer called from Python plus the same extras), used for queries and snippets. The engine's
analyzer is not stored with an index: ``register`` adds it to every index this process opens.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from collections.abc import Set as AbstractSet
from functools import lru_cache
from itertools import chain, compress, repeat
from operator import is_
from typing import NamedTuple

import tantivy

from sourcewise.text.analyze import ANALYZER_ID as CORE_ANALYZER_ID
from sourcewise.text.analyze import BIGRAM, MAX_TERM, STOPWORDS, analyze, question_word
from sourcewise.text.words import is_hangul

__all__ = [
    "ANALYZER_ID", "TOKENIZER", "Wanted", "engine_terms", "has_any", "lines_holding", "odd_words",
    "query_terms", "register", "split", "terms", "wanted", "weighted_query_terms", "word_terms",
]  # fmt: skip

TOKENIZER = "sw_kb"
# The engine reads plain words; ours reads identifiers and Hangul: an index re-analyzes when either changes.
ANALYZER_ID = f"tantivy-simple-lower-snowball-en+identifiers+{CORE_ANALYZER_ID}"
_WORD = re.compile(r"\w+")  # one character class, no backtracking: linear in the text
_HANGUL_CHAR = re.compile(r"[\u1100-\u11ff\u3130-\u318f\uac00-\ud7a3]")


@lru_cache(maxsize=1)
def _engine() -> tantivy.TextAnalyzer:
    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        .filter(tantivy.Filter.remove_long(MAX_TERM + 1))
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.stemmer("english"))
        .build()
    )


def register(index: tantivy.Index) -> None:
    """The analyzer under ``TOKENIZER`` in ``index`` (never saved with it: every process registers it)."""
    index.register_tokenizer(TOKENIZER, _engine())


def engine_terms(text: str) -> list[str]:
    """What the engine's analyzer makes of ``text`` (Hangul already out)."""
    return list(_engine().analyze(text)) if text else []


def _plain(word: str) -> bool:
    if word.isascii():
        return word.isdigit() or (word.isalpha() and (word.islower() or word.isupper() or word[1:].islower()))
    return (
        word.isalpha()
        and not _HANGUL_CHAR.search(word)
        and (word.islower() or word.isupper() or word[1:].islower())
    )


def _extra(word: str) -> tuple[str, ...]:
    """The terms of one word that the engine does not give: none for a plain word, all of them for
    one holding Hangul, the identifier's whole and parts otherwise."""
    if _plain(word):
        return ()
    ours = analyze(word, stem=True)
    if is_hangul(word):
        return tuple(ours)
    given = set(engine_terms(word))
    return tuple(t for t in dict.fromkeys(ours) if t not in given)


_EXTRAS: dict[str, tuple[str, ...]] = {}  # a non-plain word (cut to MAX_TERM) -> its extra terms
_PLAIN: set[str] = set()  # words seen to be plain: set operations in C pass over them
_CACHE_MAX = 200_000
# An ASCII text as classes of characters, one for one: "a" lower case, "A" upper case, "0" digit,
# "_" itself, " " the rest. An ASCII word is not plain exactly when it holds "_", a digit beside a
# letter, a lower-case letter before an upper-case one, or two upper-case letters before a
# lower-case one: these marks are found by ``str.find`` in C, and only their words are read.
_CLASSES = bytes(
    ord(
        "a"
        if chr(c).islower()
        else "A"
        if chr(c).isupper()
        else "0"
        if chr(c).isdigit()
        else "_"
        if chr(c) == "_"
        else " "
    )
    for c in range(256)
)  # fmt: skip  (a table for ``bytes.translate``: one C loop over the text's bytes)
_MARKS = (b"_", b"aA", b"AAa", b"0a", b"a0", b"0A", b"A0")


def odd_words(text: str) -> list[str]:
    """The words of ``text`` (as ``_WORD`` finds them) that may not be plain, each time it occurs:
    in an ASCII text exactly those ``_plain`` refuses; in any other text every word."""
    if not text.isascii():
        return _WORD.findall(text)
    classes = text.encode().translate(_CLASSES)  # ASCII: a byte's offset is its character's
    spans: dict[int, int] = {}  # start -> end of each word holding a mark
    for mark in _MARKS:
        at = classes.find(mark)
        while at >= 0:
            start = classes.rfind(b" ", 0, at) + 1
            end = classes.find(b" ", at)
            end = len(text) if end < 0 else end
            spans[start] = end
            at = classes.find(mark, end)
    return [text[start : spans[start]] for start in sorted(spans)]


def split(text: str) -> tuple[str, list[str]]:
    """(the text the engine analyzes, the extra terms): the analyzer's definition, see the module.
    The text is ``text`` itself unless it holds Hangul."""
    words = odd_words(text)
    if not words:
        return text, []
    extras: list[str] = []
    odd = set(words).difference(_PLAIN)
    if odd:
        if len(_EXTRAS) >= _CACHE_MAX or len(_PLAIN) >= _CACHE_MAX:
            _EXTRAS.clear()
            _PLAIN.clear()
        for word in sorted(odd):
            got = _EXTRAS.get(word)
            if got is None:
                got = _extra(word[:MAX_TERM])
                if len(word) <= MAX_TERM:  # a longer word (a hash, a blob) is not kept
                    if not got:
                        _PLAIN.add(word)
                    else:
                        _EXTRAS[word] = got
            if got:
                extras.extend(got * words.count(word))
    if _HANGUL_CHAR.search(text):
        text = _WORD.sub(lambda m: " " if is_hangul(m.group()) else m.group(), text)
    return text, extras


def terms(text: str) -> list[str]:
    """Every term of ``text``, in order: the engine's, then the extras."""
    engine_text, extras = split(text)
    return [*engine_terms(engine_text), *extras]


# A piece of text without whitespace -> its distinct terms, as a tuple (a frozenset took four times
# the memory): at most ``_PIECES_MAX`` pieces (7.5 MB on real text; 14 MB with the analyzer's own
# caches they fill), each at most ``_PIECE_MAX`` long (a hash, a URL, a blob is analyzed each time).
_WORD_TERMS: dict[str, tuple[str, ...]] = {}
_PIECES_MAX = 50_000
_PIECE_MAX = 64
# What may stand around a word in a piece ("(word", "word,", "end."): ASCII punctuation but "_",
# which is a word character to ``_WORD``. The engine and ``_WORD`` both split there.
_EDGES = "".join(c for c in map(chr, range(33, 127)) if not c.isalnum() and c != "_")


def word_terms(piece: str) -> tuple[str, ...]:
    """The terms of ``piece``, a text holding no whitespace (one of ``str.split()``'s), cached. No
    term spans whitespace (the engine splits on every character that is not alphanumeric, odd words
    and Hangul words are runs of word characters), so a text's terms are the union of its pieces'
    (tested): pieces repeat from text to text, and a snippet looks each one up instead of calling
    the analyzer again on every line of every hit."""
    got = _WORD_TERMS.get(piece)
    return tuple(dict.fromkeys(chain.from_iterable(_learn([piece])))) if got is None else got


def _learn(missing: list[str]) -> Iterator[tuple[str, ...]]:
    """The terms of ``missing`` (distinct pieces not in the cache), kept in the cache, step by step
    (a caller that finds what it wants stops there): first those of the pieces that are one plain
    word of ASCII letters or digits between punctuation ("value", "(see", "end.", "2."), which give
    exactly one term each, their word's, made for all of them in one call of the engine's analyzer
    (a call per piece cost three times as much); then each other piece's (identifiers, other
    scripts), none for ASCII punctuation alone ("$", "|", "...]": a fifth of the pieces a new
    process's snippets analyzed one by one, about 12 us each). A line's new pieces are one or two:
    the steps are C loops (``zip``), what Python does per call is most of the cost."""
    if len(_WORD_TERMS) >= _PIECES_MAX:
        _WORD_TERMS.clear()
    # ``_plain``'s ASCII words; a piece longer than ``_PIECE_MAX`` (no longer than MAX_TERM less
    # its punctuation) is analyzed below, where it is not kept
    words = {p: w for p in missing if len(p) <= _PIECE_MAX and (w := p.strip(_EDGES)).isascii() and (
             w.isdigit() or (w.isalpha() and (w.islower() or w.isupper() or w[1:].islower())))}  # fmt: skip
    if words:
        batch = engine_terms(" ".join(words.values()))
        if len(batch) == len(words):  # always (one word, one term), else each is analyzed alone
            _WORD_TERMS.update(zip(words, zip(batch, strict=True), strict=True))
            yield tuple(batch)
        else:
            words = {}
    for piece in missing:
        if piece not in words:
            got = tuple(dict.fromkeys(terms(piece))) if piece.strip(_EDGES) else ()
            if len(piece) <= _PIECE_MAX:
                _WORD_TERMS[piece] = got
            yield got


def has_any(text: str, wanted: AbstractSet[str]) -> bool:
    """Whether one of ``wanted`` is among the terms of ``text``: its pieces looked up in the cache
    in one C loop, and only when none of those holds one, the pieces it misses analyzed (``_learn``),
    stopping at the first that does: a new process's snippets spent most of their time analyzing
    the pieces of lines that a few plain words had already decided."""
    pieces = text.split()
    found = list(map(_WORD_TERMS.get, pieces))
    if not wanted.isdisjoint(chain.from_iterable(filter(None, found))):
        return True
    if None not in found:
        return False
    missing = list(dict.fromkeys(compress(pieces, map(is_, found, repeat(None)))))  # C loops
    return any(not wanted.isdisjoint(got) for got in _learn(missing))


class Wanted(NamedTuple):
    """A query's terms as snippets look for them in lines (``wanted``, ``lines_holding``)."""

    terms: frozenset[str]
    # Lower-case words of ASCII letters, at most ``_SURE_MAX`` long, whose term is one of ``terms``.
    words: frozenset[str]
    # What a line of ASCII text holds, lower-cased, when one of ``terms`` is among its terms: one
    # of these beginnings of them (``_start``).
    starts: tuple[str, ...]


# A word of ASCII letters is found by ``_sure`` even with a KELVIN SIGN in it (it lower-cases to
# "k", in Python and in the engine alike; the only character that does): three bytes in UTF-8, and
# the engine drops a token of more than MAX_TERM bytes before it lower-cases. 21 x 3 < MAX_TERM.
_SURE_MAX = 21


def _start(term: str) -> str:
    """What every ASCII word (lower-cased) that gives ``term`` begins with: the term less its last
    letter, at least its first two. The stemmer changes a word's end (happy -> happi, ability ->
    abil), never more than the stem's last letter of what it keeps, save one: a consonant + "ying"
    gives that consonant + "ie" (dying -> die, vying -> vie: Snowball's rule for every such word;
    found by brute force over all four-letter strings), so a three-letter term in "ie" is known by
    its first letter alone. Tested over 240,000 words of real text; an identifier's parts and whole
    are lower-cased pieces of it, stemmed alike."""
    return term[:1] if len(term) == 3 and term.endswith("ie") else term[: max(2, len(term) - 1)]


def wanted(text: str) -> Wanted:
    """``query_terms(text)`` as ``lines_holding`` looks for them: cached, as queries repeat."""
    return _wanted(text) if len(text) <= 512 else _wanted.__wrapped__(text)


@lru_cache(maxsize=4096)
def _wanted(text: str) -> Wanted:
    found = query_terms(text)
    words = list(dict.fromkeys(w for w in map(str.lower, [*_WORD.findall(text), *found])
                               if len(w) <= _SURE_MAX and w.isascii() and w.isalpha()))  # fmt: skip
    given = engine_terms(" ".join(words))  # one term a word: ASCII letters, short
    sure = [w for w, t in zip(words, given, strict=True) if t in found] if len(given) == len(words) else []
    starts = tuple(dict.fromkeys(_start(t) for t in found if t.isascii()))
    return Wanted(frozenset(found), frozenset(sure), starts)


def lines_holding(lines: list[str], wanted: Wanted) -> Iterator[int]:
    """The indices of ``lines`` holding one of ``wanted.terms``, in order, found as they are asked
    for. A line where ``_sure`` finds one of ``wanted.words`` does; a line of ASCII text holding
    none of ``wanted.starts`` does not (its terms are ASCII, each begins as ``_start`` says); the
    other lines are ``has_any``'s to decide. Both checks are ``str.find``s in C that make no string,
    where ``has_any`` split the line into new strings (most of its time) and analyzed the pieces a
    new process had not seen: half the lines read were lines without a term (a hit found by its
    title, the lines before the first holding one), and hits spell the query's words with
    punctuation and capitals ("Options,")."""
    words, terms, starts = wanted.words, wanted.terms, wanted.starts
    for i, line in enumerate(lines):
        low = line.lower()
        ascii_ = low.isascii()
        # an ASCII line without a beginning holds no sure word either (each begins with one): skipped first
        if ascii_ and not any(map(low.__contains__, starts)):
            continue
        if (words and _sure(low, words, _AROUND_ASCII if ascii_ else _AROUND)) or has_any(line, terms):
            yield i


# Around a word the engine reads whole and ours too (``_sure``): whitespace, ASCII punctuation but
# "_" (a word character to ``_WORD``: "x_한국" is one word, Korean, taken out of the engine's text),
# and "_" too in ASCII text, where the engine splits at it and no word holds Hangul.
_AROUND = _EDGES
_AROUND_ASCII = _EDGES + "_"


def _sure(low: str, words: frozenset[str], around: str) -> bool:
    """Whether the lower-cased line ``low`` holds one of ``words`` with whitespace, one of
    ``around`` or the line's ends on both sides. The engine reads those letters as one token (it
    splits at every character that is not alphanumeric), lower-cases them and stems them as it did
    the query's word, and it reads them (tested over real text): the line holds its term."""
    for word in words:
        at = low.find(word)
        while at >= 0:
            end = at + len(word)
            if (at == 0 or low[at - 1] in around or low[at - 1].isspace()) and (
                end == len(low) or low[end] in around or low[end].isspace()
            ):
                return True
            at = low.find(word, at + 1)
    return False


_STOP_TERMS = frozenset(engine_terms(" ".join(STOPWORDS))) | STOPWORDS


def query_terms(text: str) -> list[str]:
    """The distinct terms of a query, English stopwords and Korean question and filler words
    (``analyze.question_word``: 어디인가, 무엇인가요, 몇) left out unless nothing else is left. A term
    ending in a Greek sigma is asked in both forms: the engine lower-cases "ΣΟΦΟΣ" to "σοφοσ" and
    keeps "σοφος" as written. Queries repeat (a search asks for them twice): short ones are cached."""
    return [t for t, _ in weighted_query_terms(text)]


def weighted_query_terms(text: str) -> list[tuple[str, float]]:
    """``query_terms`` with each term's weight in the query: 1, but a Korean word's character
    bigrams (``BIGRAM``) share ``BIGRAM_SHARE`` between them (the largest share a term gets from
    any word of the query). A bigram is a piece of its word: with a weight of 1 each, a
    three-syllable word brought three terms to the query (itself and two bigrams) and outweighed
    the shorter words beside it. Measured (kb lexical, nDCG@10, KorQuAD dev 5,774 questions /
    the Korean set): each bigram at 1 0.9493 / 0.9804; a share of 1 0.9506 / 0.9804, 0.7 0.9512 /
    0.9804, 0.5 0.9512 / 0.9665 (the set's compounds lost their parts' weight). English queries
    have no bigrams: their query is as it was."""
    return list(_query_terms(text)) if len(text) <= 512 else list(_query_terms.__wrapped__(text))


BIGRAM_SHARE = 0.7


@lru_cache(maxsize=4096)
def _query_terms(text: str) -> tuple[tuple[str, float], ...]:
    found = list(dict.fromkeys(terms(text)))
    # A Korean question word's terms (its stem and bigrams: 어디인가 gave ⟨인가⟩) matched passages
    # for what the question asks, not what it is about (KorQuAD, kb lexical: nDCG@10 0.9482 -> 0.9493).
    asked = _WORD.sub(lambda m: " " if is_hangul(m.group()) and question_word(m.group()) else m.group(), text)
    said = set(terms(asked)) if asked != text else set(found)
    kept = [t for t in found if t not in _STOP_TERMS and t in said] or found
    shares: dict[str, float] = {}
    for word in _WORD.findall(text) if _HANGUL_CHAR.search(text) else ():
        pieces = [t for t in _extra(word[:MAX_TERM]) if t.startswith(BIGRAM)] if is_hangul(word) else []
        for piece in pieces:
            shares[piece] = max(shares.get(piece, 0.0), BIGRAM_SHARE / len(pieces))
    return tuple(dict.fromkeys((v, shares.get(t, 1.0)) for t in kept for v in _sigmas(t)))


def _sigmas(term: str) -> tuple[str, ...]:
    if term[-1:] in ("σ", "ς") and len(term) > 1:
        return (term, term[:-1] + ("ς" if term[-1] == "σ" else "σ"))
    return (term,)
