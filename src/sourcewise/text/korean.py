"""Korean words by rules (no dictionary): the stem a Korean word is indexed and searched under.
The one analyzer (``text.analyze``) asks this module for each Hangul word; nothing else splits Korean.

- **nouns whole**, with or without particles: a particle is taken off only when the noun left is
  at least two syllables, or one syllable before a particle no noun ends in (을/를/은/는 ..., so
  "책을" gives "책"), or before 의 / 이 where the word is no noun in 의 / 이 ("집의", "책이" give "집",
  "책"; "회의", "길이" stay). A particle that is also a common last syllable of a noun (이 가 의 과 나
  라 도 ...) is read by the grammar of the syllable before it (``noun``): "오로라" stays "오로라",
  "고양이가" gives "고양이", "대통령이" gives "대통령". Stacked particles come off one after another
  ("순서만으로도" -> "순서", "집에서" -> "집") where the grammar stacks them ("조사결과에" keeps its 과).
- **the copula after a noun** comes off as a particle does ("대사인가", "목표였던", "상대였다고"), and so do
  nouns of time glued to the word before ("월드컵때", "결혼당시") and 씨 after a name ("박왕자씨").
- **verbs and adjectives by their stems**: a 하다/되다 verb is cut before its 하/했/된... syllable
  ("결혼했는가" and "결혼하였으나" both give "결혼"); a past tense before its ending, the past marker
  undone ("맡았다" -> "맡", "태어났는가" and "태어났다" -> "태어나", "열렸던" -> "열리"); other verbs
  lose a common ending.

Measured (``benchmarks/run.py korquad``, nDCG@10, 5,774 questions, in turn): kb lexical 0.9512 before
the one-syllable 의/이, copula, past-tense, glued-noun and stacking rules, 0.9540 with them. Kiwi's
morphemes (kiwipiepy) with the same bigrams under FTS5 0.9468 against these rules' 0.9517, and in
this module's place in the kb 0.9513: no gain, so no dictionary is used.
One pass per word and no backtracking pattern, so the time is linear in the text.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = [
    "AMBIGUOUS",
    "KO_ENDINGS",
    "PARTICLES",
    "PARTICLE_SET",
    "hangul_stem",
    "is_hangul",
    "korean_forms",
    "noun",
    "strip_particle",
]

_HANGUL = re.compile("[\uac00-\ud7a3]")

# The copula 이다 after a noun ("대사인가", "목표였던", "상대였다고"): the noun is what the word names.
# Its past (이었 / 였) takes these endings; the present forms are listed whole.
_PAST_COPULA = ("", *"다 던 고 는가 는데 는지 나 나요 다고 으며 으나 을 지만 습니다".split())
# Not 이자: it ends too many nouns ("대출이자").
_COPULA = tuple("인가 인가요 인지 인데 이라고 라고 일까 입니까 이지만 이었다가".split())
# Nouns of time written onto the word before ("월드컵때", "결혼당시"), and 씨 after a name
# ("박왕자씨"): off after two syllables (three before 씨: "아저씨", "날씨" stay). Not 후 and 중,
# which end many nouns ("명성황후", "기후", "일반대중", "오리무중").
_GLUED = ("때", "동안", "당시", "씨")
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
            *(c + e for c in ("이었", "였") for e in _PAST_COPULA), *_COPULA, *_GLUED,
        },
        key=len,
        reverse=True,
    )
)  # fmt: skip
# One-syllable particles that are also common last syllables of nouns ("휴가", "회의", "오로라",
# "고양이"): taken off only when two syllables remain, and the word is kept whole as well.
AMBIGUOUS = frozenset("이 가 의 과 와 나 라 도 만 로 요 며 란 들 랑 께 인 고 든".split())
# Particles that another particle can follow ("순서만으로도", "사람들이", "집에서는").
_INNER = frozenset(
    (*"만 들 에 에서 으로 로 까지 부터 보다 처럼 와 과 께서 에게 한테 조차 마저 밖에".split(), *_GLUED)
)
PARTICLE_SET = frozenset(PARTICLES)
# 와 / 과 and 로 take only these particles after them ("회의와는", "서울로도"): before any other
# ("조사결과에") the syllable is the noun's own.
_TAKES_AFTER = {"와": ("의", "는", "은", "도", "만"), "과": ("의", "는", "은", "도", "만"),
                "로": ("는", "도", "서", "써", "부터", "의", "만")}  # fmt: skip


def _inner(outer: str) -> frozenset[str]:
    """The particles that may stand before ``outer`` (see ``_INNER`` and ``_TAKES_AFTER``)."""
    return frozenset(p for p in _INNER if outer in _TAKES_AFTER.get(p, (outer,)))


# The copula's past forms also end verbs ("보였던" is 보이다's): taken as the copula after two
# syllables at least.
_NEEDS_TWO = frozenset((*(c + e for c in ("이었", "였") for e in _PAST_COPULA), *_GLUED))
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


def is_hangul(text: str) -> bool:
    return not text.isascii() and _HANGUL.search(text) is not None


def _strip_once(word: str, allowed: frozenset[str] | None) -> tuple[str, bool] | None:
    """(word less its longest particle, whether that particle is ambiguous), or None."""
    for size in range(min(_LONGEST_PARTICLE, len(word) - 1), 0, -1):
        suffix = word[-size:]
        if suffix not in PARTICLE_SET or (allowed is not None and suffix not in allowed):
            continue
        ambiguous = suffix in AMBIGUOUS
        least = 3 if suffix == "씨" else 2 if ambiguous or suffix in _NEEDS_TWO else 1
        if len(word) - size >= least or _one_syllable_noun(word):
            return word[:-size], ambiguous
    return None


def _one_syllable_noun(word: str) -> bool:
    """Whether a two-syllable ``word`` is a one-syllable noun and a particle that can only be one
    here: 의 unless the word is a noun in 의 (``_NOUNS_IN_UI``: "집의" is 집, "회의" stays), 이 after
    a final consonant unless its 이 is the word's own ("책이" is 책, "길이" stays; ``_own_i``)."""
    if len(word) != 2:
        return False
    if word[1] == "의":
        return word not in _NOUNS_IN_UI
    return word[1] == "이" and _takes(word[0], "이") and not _own_i(word)


@lru_cache(maxsize=65536)
def _noun_forms(word: str) -> tuple[str, ...]:
    """The noun ``word`` names: its stem, particles off one after another; the whole word as well
    when the first particle may be the noun's own last syllable (or leaves one syllable)."""
    first = _strip_once(word, None)
    if first is None:
        return (word,)
    stem, ambiguous = first
    outer = word[len(stem) :]
    while (more := _strip_once(stem, _inner(outer))) is not None:
        stem, outer = more[0], stem[len(more[0]) :]
    return (word, stem) if ambiguous or len(stem) == 1 else (stem,)


def _verb_at(word: str, i: int) -> bool:
    """Whether the verb syllable at ``word[i]`` starts a verb's ending (see ``_VERB_NEXT``)."""
    if i == len(word) - 1:
        return word[i] in _VERB_FINAL
    after = _VERB_NEXT.get(word[i])
    return after is None or word[i + 1] in after


@lru_cache(maxsize=65536)
def korean_forms(word: str) -> tuple[str, ...]:
    """The forms a Korean word is indexed under, its stem last: a verb's stem, or a noun's forms."""
    for i in range(2, len(word)):
        if word[i] in _VERB_SYLLABLES and len(word) - i <= _VERB_TAIL and _verb_at(word, i):
            return (_noun_forms(word[:i])[-1],)
    if (past := _past_stem(word)) is not None:
        return (past,)
    for ending in KO_ENDINGS:
        if word.endswith(ending) and len(word) - len(ending) >= 2:
            return (word[: -len(ending)],)
    return _noun_forms(word)


# Endings after a past tense ("맡았다", "태어났는가", "열렸던"): the syllable before them ends in ㅆ,
# which no noun's last syllable does (but the verbs 있 and the future 겠). Longest first.
_AFTER_PAST = tuple(
    sorted(
        set(
            "다 고 던 는가 는데 는지 으나 으며 지만 을 나 나요 다고 다는 다며 다가 습니다 어요 "
            "음 기 으니 으므로 으면 던가 으니까 는데도 다면 을까".split()
        ),
        key=len,
        reverse=True,
    )
)
_SSANG_SIOT = 20  # the index of a final ㅆ among a syllable's 28 endings
# A past marker fused with the stem's last vowel, undone: 려 -> 리 ("열렸다" is 열리다's), 와 -> 오,
# 워 -> 우, 왜 -> 외, 해 -> 하; other vowels stay ("났" is 나 + 았).
_UNFUSE = {6: 20, 9: 8, 14: 13, 10: 11}


def _past_stem(word: str) -> str | None:
    """The stem of a verb in the past tense ("맡았다" -> "맡", "태어났다" -> "태어나"), or None."""
    for ending in _AFTER_PAST:
        if not word.endswith(ending) or len(word) <= len(ending):
            continue
        head = word[: -len(ending)]
        code = ord(head[-1]) - 0xAC00
        if not 0 <= code < 11172 or code % 28 != _SSANG_SIOT or head[-1] in "있겠":
            continue
        if head[-1] in "었았였":  # after a noun ending in a consonant, 이었 is the copula's past
            copula = head[-2:-1] == "이" and len(head) > 2 and _takes(head[-3], "이")
            return head[: -2 if copula else -1] or None
        lead, vowel = divmod(code // 28, 21)
        vowel = 0 if (lead, vowel) == (18, 1) else _UNFUSE.get(vowel, vowel)
        return head[:-1] + chr(0xAC00 + (lead * 21 + vowel) * 28)
    return None


def hangul_stem(word: str) -> str:
    """``"시장을"`` -> ``"시장"``, ``"진행하는"`` -> ``"진행"``, ``"휴가"`` -> ``"휴가"``: the stem a Korean
    word is indexed under (a verb's stem, or a noun less its particles)."""
    return korean_forms(word)[-1]


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
    "떨이 막이 묶이 덮이 같이 많이 없이 굳이 곧이".split()  # the last five: adverbs, no noun + 이
)
# Two-syllable nouns whose 의 is their own (Sino-Korean 議 義 意 衣 ...), not the particle after a
# one-syllable noun ("집의"). Words read both ways as often ("내의": 내 + 의 "within"; "수의", "도의")
# are left out: the particle reading wins.
_NOUNS_IN_UI = frozenset(
    "회의 논의 합의 동의 정의 주의 강의 건의 결의 협의 모의 문의 예의 항의 하의 편의 심의 제의 열의 "
    "호의 적의 질의 신의 의의 고의 탈의 창의 사의 경의 민의 선의 악의 용의 혐의 유의 부의".split()
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
    forms = korean_forms(word)
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
