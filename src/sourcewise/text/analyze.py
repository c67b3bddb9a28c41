"""The one text analyzer: every source indexes, every query is searched, and ask checks and picks
its sentences with it.

``analyze(text)`` turns text into index terms: NFKC-folded, lower-cased words; identifiers split
into their parts as well as kept whole (``tokenExpiry``, ``token_expiry`` and ``TokenExpiry`` all
give ``token`` and ``expiry``); Latin and Hangul glued together are two words ("API를" is "api");
with ``stem=True`` Latin words are stemmed (Snowball English, so "log" meets "logging").

Korean, by rules (no dictionary):

- **nouns whole**, with or without particles: a particle is taken off only when the noun left is
  at least two syllables, or one syllable before a particle no noun ends in (을/를/은/는 ..., so
  "책을" gives "책"). A particle that is also a common last syllable of a noun (이 가 의 과 나 라 도
  ...) is read by the grammar of the syllable before it (``noun``): "오로라" stays "오로라",
  "고양이가" gives "고양이", "대통령이" gives "대통령". Stacked particles come off one after another
  ("순서만으로도" -> "순서", "집에서" -> "집").
- **verbs and adjectives by their stems**: a 하다/되다 verb is cut before its 하/했/된... syllable
  ("결혼했는가" and "결혼하였으나" both give "결혼"), other verbs lose a common ending.
- stems of two or more syllables add their **character bigrams** as terms of their own (marked
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

ANALYZER_ID = "sw5:snowball-en+ko-rules4-bigram2"
# Marks a Korean bigram term: a private-use character, never in a word (``\w`` does not match it) and
# a token character to SQLite FTS5's unicode61, so a bigram is no word's term in any index.
BIGRAM = "\ue000"
MAX_TERM = 64  # longer "words" (hashes, base64) are cut: they never match a query anyway

# Korean particles and copulas that attach to the end of a noun ("시장을", "트렌드가", "규정에서").
PARTICLES: tuple[str, ...] = tuple(
    sorted(
        {
            "은", "는", "이", "가", "을", "를", "의", "에", "에서", "에게", "께", "께서", "한테", "으로",
            "로", "와", "과", "도", "만", "까지", "부터", "보다", "처럼", "이나", "나", "랑", "이랑",
            "으로서", "로서", "으로써", "로써", "에서의", "에의", "이란", "란", "이라", "라", "이다",
            "입니다", "이에요", "예요", "들", "에는", "에서는", "으로는", "로는", "과의", "와의", "하고",
            "이며", "며", "요", "조차", "마저", "밖에", "이라도", "라도", "이라는", "라는", "이든", "든",
            "에도", "에서도", "으로도", "로도", "인", "이고", "고",
        },
        key=len,
        reverse=True,
    )
)  # fmt: skip
# One-syllable particles that are also common last syllables of nouns ("휴가", "회의", "오로라",
# "고양이"): taken off only when two syllables remain, and the word is kept whole as well.
AMBIGUOUS = frozenset("이 가 의 과 와 나 라 도 만 로 요 며 란 들 랑 께 인 고 든".split())
# Particles that another particle can follow ("순서만으로도", "사람들이", "집에서는").
_INNER = frozenset("만 들 에 에서 으로 로 까지 부터 보다 처럼 와 과 께서 에게 한테 조차 마저 밖에".split())
_PARTICLE_SET = frozenset(PARTICLES)
_LONGEST_PARTICLE = max(map(len, PARTICLES))

# The syllables that start a 하다 / 되다 / 시키다 verb's ending: cut there when two syllables precede
# and at most six follow ("결혼했는가", "결혼하였으나", "배포됩니다", "안전하게").
_VERB_SYLLABLES = frozenset("하했해한할함합되됐돼된될됨됩시")
# Of those, the ones that end a verb form on their own ("결혼한", "배포됨"); 하, 합, 되, 됩 and 시 need
# an ending after them, and a word ending in one is a noun ("크래시", "노동조합", "리프레시"). 합, 됩
# and 시 begin a verb only before the syllables listed ("합니다", "확인시켜"), so "크래시가" is a noun.
_VERB_FINAL = frozenset("해했한할함됐돼된될됨")
_VERB_NEXT = {"합": "니시", "됩": "니시", "시": "키켜킨킬킴켰킵"}
_VERB_TAIL = 6
# Endings of other verbs and adjectives, stripped when two syllables remain. Longest first.
KO_ENDINGS: tuple[str, ...] = tuple(
    sorted(
        {
            "습니다", "었습니다", "았습니다", "었다", "았다", "는다", "었고", "았고", "어서", "아서",
            "으면", "으며", "는지", "었는지", "았는지", "는가", "었는가", "겠다", "겠습니다", "으려면",
            "려면", "으세요", "세요", "어요", "아요", "어야", "아야", "는데", "지만", "면서", "적인",
            "적으로", "스러운", "스럽게", "이었다", "였다", "입니다", "이다", "니다",
        },
        key=len,
        reverse=True,
    )
)  # fmt: skip

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
_HANGUL = re.compile("[\uac00-\ud7a3]")
# A run of Hangul syllables, or of other word characters: "API를" is two runs. One class per
# alternative, so linear in the text.
_RUN = re.compile("[\uac00-\ud7a3]+|[^\\W\uac00-\ud7a3]+")
_WORD_RUN = re.compile(r"\w+")


def is_hangul(text: str) -> bool:
    return not text.isascii() and _HANGUL.search(text) is not None


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


def _strip_once(word: str, allowed: frozenset[str] | None) -> tuple[str, bool] | None:
    """(word less its longest particle, whether that particle is ambiguous), or None."""
    for size in range(min(_LONGEST_PARTICLE, len(word) - 1), 0, -1):
        suffix = word[-size:]
        if suffix not in _PARTICLE_SET or (allowed is not None and suffix not in allowed):
            continue
        ambiguous = suffix in AMBIGUOUS
        if len(word) - size >= (2 if ambiguous else 1):
            return word[:-size], ambiguous
    return None


@lru_cache(maxsize=65536)
def _noun_forms(word: str) -> tuple[str, ...]:
    """The noun ``word`` names: its stem, particles off one after another; the whole word as well
    when the first particle may be the noun's own last syllable (or leaves one syllable)."""
    first = _strip_once(word, None)
    if first is None:
        return (word,)
    stem, ambiguous = first
    while (more := _strip_once(stem, _INNER)) is not None:
        stem = more[0]
    return (word, stem) if ambiguous or len(stem) == 1 else (stem,)


def _verb_at(word: str, i: int) -> bool:
    """Whether the verb syllable at ``word[i]`` starts a verb's ending (see ``_VERB_NEXT``)."""
    if i == len(word) - 1:
        return word[i] in _VERB_FINAL
    after = _VERB_NEXT.get(word[i])
    return after is None or word[i + 1] in after


@lru_cache(maxsize=65536)
def _korean_forms(word: str) -> tuple[str, ...]:
    """The forms a Korean word is indexed under, its stem last: a verb's stem, or a noun's forms."""
    for i in range(2, len(word)):
        if word[i] in _VERB_SYLLABLES and len(word) - i <= _VERB_TAIL and _verb_at(word, i):
            return (_noun_forms(word[:i])[-1],)
    for ending in KO_ENDINGS:
        if word.endswith(ending) and len(word) - len(ending) >= 2:
            return (word[: -len(ending)],)
    return _noun_forms(word)


def hangul_stem(word: str) -> str:
    """``"시장을"`` -> ``"시장"``, ``"진행하는"`` -> ``"진행"``, ``"휴가"`` -> ``"휴가"``: the stem a Korean
    word is indexed under (a verb's stem, or a noun less its particles)."""
    return _korean_forms(word)[-1]


# Case particles that follow a syllable by its last sound: 이/과 after a consonant, 가/와/로 after a
# vowel (로 after ㄹ too), 의 after any. After such a syllable the particle is the likelier reading
# of the word (the cost: "민주주의" reads as "민주주"; a noun ending so is rarer than the particle).
_AFTER_CONSONANT = frozenset("이 과".split())
_AFTER_VOWEL = frozenset("가 와 로".split())
_RIEUL = 8  # the index of a final ㄹ among a syllable's 28 endings


def _takes(syllable: str, particle: str) -> bool:
    """Whether ``particle`` is a case particle grammatically written after ``syllable``."""
    final = (ord(syllable) - 0xAC00) % 28 if "\uac00" <= syllable <= "\ud7a3" else -1
    if particle == "의":
        return True
    if particle in _AFTER_CONSONANT:
        return final > 0
    return particle in _AFTER_VOWEL and (final == 0 or (particle == "로" and final == _RIEUL))


# Evidence that a bare word's last 이 is the noun's own and no subject particle (which the syllable
# before would take): common nouns so written, and the two-syllable -이 nouns that end compounds
# ("물놀이", "문제풀이", "목걸이"). Without it a bare "일정이" reads as "일정" + 이, as it usually is.
_NOUNS_IN_I = frozenset(
    "고양이 원숭이 호랑이 지렁이 올챙이 부엉이 구렁이 굼벵이 돌멩이 꼬맹이 어린이 젊은이 늙은이 "
    "멍멍이 야옹이 똑똑이 홀쭉이 뚱뚱이 절름발이".split()
)
_I_NOUN_TAILS = frozenset(
    "길이 높이 깊이 넓이 놀이 풀이 걸이 잡이 맞이 살이 벌이 먹이 닦이 받이 갈이 돋이 꽂이 붙이 "
    "떨이 막이 묶이 덮이".split()
)


def _own_i(word: str) -> bool:
    """Whether ``word``'s last 이 is its own (see ``_NOUNS_IN_I``)."""
    return word in _NOUNS_IN_I or word[-2:] in _I_NOUN_TAILS


def noun(word: str) -> str:
    """The word to show for a Korean word (a plan's keyword, a reading's label): a verb's stem, a
    noun less its particles, but the noun whole when its last syllable may be its own and not a
    particle ("코로나", "오로라", "과일도") unless it is a case particle the syllable before takes
    ("고양이가" -> "고양이", "오로라의" -> "오로라") and nothing says the syllable is the noun's own
    ("고양이", "물놀이": ``_own_i``). Words that are not Hangul come back as they are."""
    if not is_hangul(word):
        return word
    forms = _korean_forms(word)
    first = _strip_once(word, None) if len(forms) > 1 else None
    if first is not None and first[1] and len(first[0]) >= 2:
        rest, particle = first[0], word[len(first[0]) :]
        if not _takes(rest[-1], particle) or (particle == "이" and _own_i(word)):
            return word
    return forms[-1]


def strip_particle(word: str) -> str:
    """``"시장을"`` -> ``"시장"``, ``"휴가"`` -> ``"휴가"``: a noun less its particles (the analyzer's
    rules); words that are not Hangul come back as they are."""
    return _noun_forms(word)[-1] if is_hangul(word) else word


def _hangul_terms(word: str) -> list[str]:
    # A word read two ways ("대통령이": the noun "대통령" + 이, or a noun of its own) is indexed under
    # the one ``noun`` chooses by the grammar of its last syllable ("오로라" stays whole, "대통령이"
    # is "대통령"), not under both: the form left over was a term no query meant (KorQuAD nDCG@10
    # 0.9338 -> 0.9398 on a quarter of its questions under FTS5; the Korean set unchanged, 0.9665).
    forms = _korean_forms(word)
    base = noun(word) if len(forms) > 1 else forms[-1]
    # Bigrams let a compound ("배포절차") meet its parts ("배포", "절차") without a dictionary.
    return [base, *dict.fromkeys(bigrams(base))]


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
    """Each word of ``text`` as its script runs; a particle glued to a Latin word is dropped."""
    out: list[list[str]] = []
    ascii_text = text.isascii()
    for word in _WORD_RUN.findall(text if ascii_text else unicodedata.normalize("NFKC", text)):
        if ascii_text or word.isascii():  # one script: the word is its own run
            out.append([word[:MAX_TERM]])
            continue
        runs = _RUN.findall(word[: MAX_TERM * 4])
        if len(runs) > 1:
            runs = [r for i, r in enumerate(runs) if not (i and r in _PARTICLE_SET)]
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
    if low.startswith((*KO_QUESTION, *KO_AUXILIARY)) or low.endswith(KO_REQUEST_ENDINGS):
        return True
    return low in KO_FILLER or hangul_stem(low) in KO_FILLER


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
