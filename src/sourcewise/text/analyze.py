"""The one text analyzer: every source indexes, every query is searched, and ask checks and picks
its sentences with it.

``analyze(text)`` turns text into index terms: NFKC-folded, lower-cased words; identifiers split
into their parts as well as kept whole (``tokenExpiry``, ``token_expiry`` and ``TokenExpiry`` all
give ``token`` and ``expiry``); Latin and Hangul glued together are two words ("API를" is "api");
with ``stem=True`` Latin words are stemmed (Snowball English, so "log" meets "logging").

Korean words go to ``text.korean`` (particles and endings off, by rules: nouns whole, verbs by their
stems); stems of two or more syllables add their **character bigrams** as terms of their own (marked
``BIGRAM``), so a compound ("배포절차") meets its parts ("배포", "절차").

``query_terms`` is ``analyze`` less question and filler words (English "how", "what", "the" ...;
Korean 어떻게, 무엇, 해야 돼, 잘, 않나요 ...), each word's terms in order; ``repeats=True`` keeps a word
said twice twice (the query term frequency BM25 weighs, as Lucene and bm25s do).

Measured (``benchmarks/run.py kb``, Korean set): particles only 0.892 nDCG@10, these rules 0.980.
``ANALYZER_ID`` names this analyzer; an index records it and re-analyzes when it changes.
One pass per word and no backtracking pattern, so the time is linear in the text.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from functools import lru_cache

import Stemmer

from sourcewise.text.korean import (
    AMBIGUOUS,
    PARTICLE_SET,
    PARTICLES,
    hangul_stem,
    is_hangul,
    korean_forms,
    noun,
    strip_particle,
)

__all__ = [
    "ANALYZER_ID",
    "BIGRAM",
    "PARTICLES",
    "STOPWORDS",
    "analyze",
    "bigrams",
    "fts_query",
    "hangul_stem",
    "identifier_parts",
    "is_hangul",
    "noun",
    "query_terms",
    "question_word",
    "readable",
    "stem",
    "strip_particle",
]

ANALYZER_ID = "sw8:snowball-en+ko-rules6-bigram3"
# Marks a Korean bigram term: a private-use character, never in a word (``\w`` does not match it) and
# a token character to SQLite FTS5's unicode61, so a bigram is no word's term in any index.
BIGRAM = "\ue000"
MAX_TERM = 64  # longer "words" (hashes, base64) are cut: they never match a query anyway

# English function and question words dropped from queries (never from the index).
STOPWORDS = frozenset(
    "a an and are as at be but by for from has have in into is it its of on or that the their "
    "then there these they this to was were will with what which who how why when where do does "
    "did not no can i my me you your should would could shall may might please we us our about any "
    "some if so than very just also whether".split()
)
# Korean question and filler words, as written and as analyzed; a word starting with a question
# word ("무엇인가요", "어디에서") is one too.
KO_QUESTION = (
    "어떻게",
    "어떤",
    "어느",
    "무엇",
    "무슨",
    "뭐",
    "뭔",
    "언제",
    "어디",
    "누구",
    "누가",
    "왜",
    "얼마",
    "몇",
)
KO_FILLER = frozenset(
    "해야 돼 되나요 돼요 하나요 있나요 있어요 있습니까 알려줘 알려주세요 해줘 주세요 할까요 인가요 입니까 "
    "가요 좀 수 있는 있을까요 하는지 되는지 하려면 싶어요 싶습니다 경우 때 하면 되면 있다 없다 있을 "
    "합니까 됩니까 나요 건가요 거야 하죠 하니 찾아줘 찾아 알려 보여줘 정리해줘 설명해줘 요약해줘 "
    "잘 못 더 매우 아주 너무 정말 꼭".split()
)
# The negating auxiliary ("쓰이지 않나요", "되지 않는"): a word starting with it says nothing the
# documents would hold ("not" is an English stop word too).
KO_AUXILIARY = ("않",)
# Requests ("찾아줘", "정리해 주세요"): a word ending in one of these asks, it says nothing.
KO_REQUEST_ENDINGS = ("줘", "주세요", "줄래", "주실래요", "주시겠어요")

_STEMMER = Stemmer.Stemmer("english")
# A run of Hangul syllables, or of other word characters: "API를" is two runs. One class per
# alternative, so linear in the text.
_RUN = re.compile("[\uac00-\ud7a3]+|[^\\W\uac00-\ud7a3]+")
_WORD_RUN = re.compile(r"\w+")
# Closing quotes and brackets (also ’ ” 》 」 』 〉 】): a particle right after one is the word's before.
_CLOSERS = frozenset("\"'`)]}>\u2019\u201d\u300b\u300d\u300f\u3009\u3011")


def identifier_parts(word: str) -> list[str]:
    """``"parseHTTPResponse2"`` -> ``["parse", "http", "response", "2"]``; ``snake_case`` too."""
    parts: list[str] = []
    for piece in word.split("_"):
        start = 0
        for i in range(1, len(piece)):
            prev, ch = piece[i - 1], piece[i]
            nxt = piece[i + 1] if i + 1 < len(piece) else ""
            boundary = (
                (prev.islower() and ch.isupper())
                or (prev.isalpha() != ch.isalpha() and (prev.isdigit() or ch.isdigit()))
                or (prev.isupper() and ch.isupper() and nxt.islower())
            )
            if boundary:
                parts.append(piece[start:i])
                start = i
        if piece[start:]:
            parts.append(piece[start:])
    return [p.lower() for p in parts if p]


def _hangul_terms(word: str) -> list[str]:
    # A word read two ways ("대통령이": the noun "대통령" + 이, or a noun of its own) is indexed under
    # the one ``noun`` chooses by the grammar of its last syllable ("오로라" stays whole, "대통령이"
    # is "대통령"), not under both: the form left over was a term no query meant (KorQuAD nDCG@10
    # 0.9338 -> 0.9398 on a quarter of its questions under FTS5; the Korean set unchanged, 0.9665).
    forms = korean_forms(word)
    base = noun(word) if len(forms) > 1 else forms[-1]
    # Bigrams let a compound ("배포절차") meet its parts ("배포", "절차") without a dictionary. A
    # bare two-syllable word read as a one-syllable noun and its particle ("집의" -> "집") keeps its
    # own bigram too: when the syllable is the noun's own ("종이", "임의"), the word still meets
    # itself with a particle ("종이를" -> "종이"). Only after a particle that can be a noun's last
    # syllable (``AMBIGUOUS``): after 을, 에, 은 ... ("년에", "곳은", "날은") the bigram was a term of
    # the particle, met any text with the same noun and particle, and a quoted phrase ending in one
    # ('"불법행위를 한 날"은') required it and found nothing (KorQuAD, kb lexical, nDCG@10: study half
    # 0.9538 -> 0.9546, held-out half 0.9534 -> 0.9539).
    whole = bigrams(word) if len(base) == 1 and len(word) == 2 and word[1] in AMBIGUOUS else []
    return [base, *dict.fromkeys([*bigrams(base), *whole])]


def readable(terms: Iterable[str]) -> list[str]:
    """``terms`` a person reads or a loop searches again as words: the index-only bigrams (marked
    ``BIGRAM``, pieces of the words beside them) left out. Printed, a bigram showed as its word a
    second time, with an invisible mark ("missing 회의, 회의")."""
    return [t for t in terms if not t.startswith(BIGRAM)]


def bigrams(stem: str) -> list[str]:
    """The character bigrams of a Korean stem of two or more syllables, each marked with ``BIGRAM``:
    "배포절차" -> ⟨배포⟩ ⟨포절⟩ ⟨절차⟩; "회의" -> ⟨회의⟩, its own bigram. A term of their own, never a
    word's: a compound's bigram met the word "배포" and outweighed it, and a two-syllable word, with
    no bigram, weighed a third of a three-syllable one (KorQuAD nDCG@10 0.935 -> 0.946 on 1,500 of its
    questions under FTS5)."""
    return [BIGRAM + stem[i : i + 2] for i in range(len(stem) - 1)]


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The Snowball English stem of a Latin word, lower-cased; other words as they are."""
    return str(_STEMMER.stemWord(word.lower())) if word.isascii() and word.isalpha() else word


@lru_cache(maxsize=65536)
def _word_terms(word: str, stemmed: bool) -> tuple[str, ...]:
    # ``word`` is one run (all Hangul or none) cut to MAX_TERM by the caller.
    lower = word.lower()
    if is_hangul(word):
        return tuple(_hangul_terms(lower))
    out = [stem(lower) if stemmed else lower]
    parts = identifier_parts(word)
    if len(parts) > 1:
        out.extend(stem(p) for p in parts) if stemmed else out.extend(parts)
    return tuple(out)


def _runs(text: str) -> list[list[str]]:
    """Each word of ``text`` as its script runs; a particle glued to a Latin word, or to a closing
    quote or bracket (``"후보자"라고``, ``'#'은``), is dropped: it belongs to the word before."""
    out: list[list[str]] = []
    ascii_text = text.isascii()
    folded = text if ascii_text else unicodedata.normalize("NFKC", text)
    for match in _WORD_RUN.finditer(folded):
        word = match.group()
        if ascii_text or word.isascii():  # one script: the word is its own run
            out.append([word[:MAX_TERM]])
            continue
        if word in PARTICLE_SET and folded[match.start() - 1 : match.start()] in _CLOSERS:
            continue
        runs = _RUN.findall(word[: MAX_TERM * 4])
        if len(runs) > 1:
            runs = [r for i, r in enumerate(runs) if not (i and r in PARTICLE_SET)]
        out.append([r[:MAX_TERM] for r in runs])
    return out


def analyze(text: str, *, stem: bool = False) -> list[str]:
    """Index terms for ``text``, in order (a word may give several terms); ``stem``: Latin words too."""
    out: list[str] = []
    for runs in _runs(text):
        for run in runs:
            out.extend(_word_terms(run, stem))  # run by run through a cache: words repeat
    return out


def question_word(word: str) -> bool:
    """A question or filler word (English "how", "the"; Korean 어떻게, 무엇인가요, 해야, 돼) that is no
    query term."""
    low = word.lower()
    if low in STOPWORDS:
        return True
    if not is_hangul(low):
        return False
    if low.startswith(KO_AUXILIARY) or low.endswith(KO_REQUEST_ENDINGS) or _asks(low):
        return True
    return low in KO_FILLER or hangul_stem(low) in KO_FILLER


# What follows 왜 when it asks ("왜요", "왜죠", "왜지", "왜냐하면", "왜야", "왜인지", "왜일까", "왜라고",
# "왜들"): any other syllable after it makes a noun ("왜곡", "왜구", "왜소", "왜가리").
_WHY_NEXT = frozenset("요죠지냐야인일라들니")


def _asks(word: str) -> bool:
    """Whether a Korean word starts with a question word ("무엇인가요", "어디에서", "몇년", "뭐죠",
    "뭔가요"). 왜 only alone, before a particle or before a question's ending (``_WHY_NEXT``)."""
    asked = next((q for q in KO_QUESTION if word.startswith(q)), "")
    rest = word[len(asked) :]
    if asked != "왜":
        return bool(asked)
    return not rest or rest in PARTICLE_SET or rest[0] in _WHY_NEXT


def query_terms(text: str, *, stem: bool = False, repeats: bool = False) -> list[str]:
    """The terms of a query, question and filler words left out unless nothing else is left.
    ``repeats``: a term said twice is returned twice (query term frequency); otherwise once."""
    kept: list[str] = []
    every: list[str] = []
    for runs in _runs(text):
        for run in runs:
            said = _word_terms(run, stem)
            every.extend(said)
            if not question_word(run):
                kept.extend(said)
    terms = kept or every
    return terms if repeats else list(dict.fromkeys(terms))


def _quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def fts_query(text: str) -> str:
    """An FTS5 MATCH expression (any term, quoted so nothing in it is FTS syntax), or ``""``."""
    return " OR ".join(_quote(t) for t in query_terms(text))
