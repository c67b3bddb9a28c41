"""The content words of a question (seed 003 step 2): what it is about, without question, request,
signal, filler or organisation words, Korean nouns as the one analyzer reads them (``noun``).

``content_words(text)`` reads the words in order, once each. Filler nouns that say what kind of
answer is wanted (작업, 분위기, 배경, 논의) or that it is new (신규) are stop words, as "discussed"
and "latest" are in English.
"""

from __future__ import annotations

import re
from functools import lru_cache

from sourcewise.planning.classify import SIGNALS
from sourcewise.planning.keywords import INTERNAL_THINGS, RECENCY
from sourcewise.text.analyze import noun
from sourcewise.text.words import is_hangul

__all__ = ["SKIP", "STOP", "WORD", "content_words", "without_signal_phrases"]

WORD = re.compile(r"[A-Za-z0-9][\w.+#'-]*[\w+#]|[A-Za-z0-9]|[\uac00-\ud7a3]+")
STOP = (
    frozenset(
        """a an the and or of to in on at for by with from about into over what which who whom whose when
    where why how did do does done is are was were be been being have has had we i you they he she it
    our my your their this that these those there here any some all can could should would will shall
    may might must please me know let us vs via as than then so just also still
    up out get got make made need needs want wants like latest recent current now ever yet only
    just newest recently currently nowadays today's give list explain summarize summarise describe
    looking anything something everything info information doesn't don't isn't aren't since until
    not no what's whats hot team team's teams internally handle think cover said says say mentioned
    discussed talked changed happen happened going""".split()
    )
    | frozenset(
        "무엇 무엇을 뭐 뭘 무슨 어떤 어떻게 왜 어디 어디에 언제 누가 누구 대해 대한 관련 관련된 "
        "그리고 및 좀 것 거 수 등 우리 우리가 저희 제가 내가 해줘 알려줘 찾아줘 채널 "
        "있나요 있나 했나요 했나 인가요 입니까 어때 뭐야 뭔가요 뭐예요 뭐지 어떤가요 알려 알려주세요 "
        "회사 당사 사내 우리회사 찾아주세요 보여줘 정리해줘 설명해줘 요약해줘 "
        "최신 요즘 현재 지금 최근 핫한 좀 혹시 관한 "
        "다음 정리 요약 설명 확인 어디 어디서 있는지 됐나요 되었나요 무엇인가요 뭔지 "
        "말한 나온 하고 있어 있는 알고 있 된 막혔 있나 건 중 와 과 부분 내용 상황 참고 분석 조사 "
        "최신본 최신판".split()
    )
    | frozenset(
        # Filler nouns: they say what kind of answer is wanted (the work on it, the mood around it, its
        # background, the discussion of it) or that it is new, never what it is about.
        "작업 분위기 배경 논의 신규 얘기 이야기".split()
    )
)
_VERB_ENDINGS = (
    "해줘",
    "해주세요",
    "나요",
    "했나",
    "는지",
    "니까",
    "어요",
    "아요",
    "습니다",
    "합니다",
    "인가",
    "할까",
    "했어",
    "하나",
    "하는",
)


# Signal words say what kind of question it is, not what it is about: not content words, except
# the nouns that name what is asked for and so must appear in what answers it ("expense policy",
# "Z spec", "휴가 규정").
_NAMED_THINGS = frozenset(
    "policy policies rule rules limit spec specs specification rfc prd handbook slides deck "
    "정책 규정 규칙 한도 기준 스펙 명세 명세서 기획서 설계서 사규 슬라이드".split()
) | {"design doc"}
# The signals of several words that are no content as a whole ("working on", "how many", "알고 있"):
# taken out of the text before its words are read.
_SIGNAL_PHRASES = tuple(
    sorted(
        {w for vocab in (*SIGNALS.values(), RECENCY) for w in vocab if " " in w} - _NAMED_THINGS,
        key=len,
        reverse=True,
    )
)
_YEAR = re.compile(r"((?:19|20)\d\d)년")
SKIP = frozenset({w for vocab in SIGNALS.values() for w in vocab} - _NAMED_THINGS | {"project", "프로젝트"})


@lru_cache(maxsize=8)
def _hangul_prefixes(skip: frozenset[str]) -> tuple[str, ...]:
    return tuple(s for s in skip if is_hangul(s))


def without_signal_phrases(text: str) -> str:
    """``text`` without the signals of several words it holds, as whole words."""
    low = f" {' '.join(text.lower().split())} "
    found = [p for p in _SIGNAL_PHRASES if f" {p} " in low]
    if not found:
        return text
    for phrase in found:
        low = low.replace(f" {phrase} ", " ")
    kept = set(low.split())
    return " ".join(w for w in text.split() if w.lower() in kept)


def content_words(text: str, skip: frozenset[str]) -> list[str]:
    out: list[str] = []
    seen: set[str] = set()
    known = _CONTENT if skip is SKIP else {}
    toks = WORD.findall(text)
    for i, raw in enumerate(toks):
        content = known.get(raw, _UNKNOWN)
        if content is _UNKNOWN:
            content = _content_word(raw, skip)
            if len(known) >= _CONTENT_MAX:
                known.clear()  # bounded: start again
            known[raw] = content
        if content is not None and content[1] not in seen:
            before = toks[i - 1].lower() if i else ""
            after = toks[i + 1].lower() if i + 1 < len(toks) else ""
            if _not_content(content[1], before, after, first=not out):
                continue
            seen.add(content[1])
            out.append(content[0])
    return out


def _not_content(word: str, before: str, after: str, *, first: bool) -> bool:
    """Words that say who asks or what is asked for by where they stand: "find X", "search for X"
    (but "search ranking"), "our company", "my tasks", "what's new", "internal wiki"."""
    if first and word in _REQUEST and (word != "search" or after in _AFTER_REQUEST):
        return True
    if word == "internal" and after in INTERNAL_THINGS:
        return True
    return (
        (before in _OWN and word in _ORG)
        or (before == "my" and word in _MINE_ITEMS)
        or (before in _WHATS and word == "new")
    )


_AFTER_REQUEST = frozenset("for the a an me us all any about our my through in".split())


# Words that ask for something when they open the question ("search for ...", "show me ..."),
# and name a subject anywhere else ("search ranking"); the asker's own organisation.
_REQUEST = frozenset(
    "search find show tell give list explain summarize summarise describe look check read compare".split()
)
_OWN = frozenset("our 우리 저희".split())
_MINE_ITEMS = frozenset("tasks task tickets issues items work".split())
_WHATS = frozenset({"what's", "whats", "what’s"})
_ORG = frozenset("company team org organization organisation 회사 팀 조직".split())


# _content_word's answers for the plan's own skip set, per raw token (a dict: no key to build).
_UNKNOWN: tuple[str, str] = ("", "")
_CONTENT: dict[str, tuple[str, str] | None] = {}
_CONTENT_MAX = 8192


def _content_word(raw: str, skip: frozenset[str]) -> tuple[str, str] | None:
    """The word a raw token says and its lower case, or None for a stop word, a signal word or
    a Korean verb form: per token, kept (questions repeat their words)."""
    if is_hangul(raw):
        year = _YEAR.fullmatch(raw)
        word = year.group(1) if year else noun(raw)  # the one analyzer's noun: particle, ending off
    else:
        word = raw.rstrip(".'-")
    low = word.lower()
    if not word or low in STOP or low in skip or raw.lower() in STOP:
        return None
    if is_hangul(word) and (
        word.endswith(_VERB_ENDINGS) or raw.endswith(_VERB_ENDINGS) or word.startswith(_hangul_prefixes(skip))
    ):
        return None
    return word, low
