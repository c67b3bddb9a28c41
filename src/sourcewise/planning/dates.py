"""Relative and explicit dates in a question, resolved against ``today`` (never the clock)."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date, timedelta

from sourcewise.errors import InvalidOption

__all__ = ["parse_date", "relative_dates"]

_N = r"(\d{1,3})"


def parse_date(text: str, what: str = "date") -> date:
    """``2025-01-31``, ``2025/01/31`` or ``2025.01.31``; ``InvalidOption`` otherwise."""
    match = re.fullmatch(r"(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})", text.strip())
    try:
        if match:
            return date(int(match[1]), int(match[2]), int(match[3]))
    except ValueError:
        pass
    raise InvalidOption(f"{what} needs a date like 2025-01-31, got {text!r}")


def _week(day: date) -> date:
    return day - timedelta(days=day.weekday())


def _month(day: date) -> date:
    return day.replace(day=1)


def _prev_month(day: date) -> date:
    return _month(_month(day) - timedelta(days=1))


def _quarter(year: int, q: int) -> tuple[date, date]:
    start = date(year, 3 * q - 2, 1)
    end_month = 3 * q
    end = (date(year + 1, 1, 1) if end_month == 12 else date(year, end_month + 1, 1)) - timedelta(days=1)
    return start, end


def relative_dates(text: str, today: date) -> tuple[date | None, date | None, list[str]]:
    """(after, before, the phrases used) for relative dates in ``text``; ``(None, None, [])`` if none
    (also when the dates would fall outside the calendar, as "q4 9999" would).

    Ranges are inclusive; weeks start on Monday. Korean and English forms are understood.
    """
    try:
        return _relative_dates(text, today)
    except (ValueError, OverflowError):
        return None, None, []


# A word that every pattern of ``_relative_dates`` needs (each pattern matches only where one of
# these occurs), looked for first in one pass: a question that has none names no date.
_ANY_DATE_WORD = re.compile(
    r"today|오늘|yesterday|어제|week|주|month|달|year|올해|금년|작년|해|recently|lately|최근|past|last|지난|q[1-4]|분기"
)


# The patterns of _relative_dates, compiled once, in the order they are tried.
_RULES = [
    re.compile(r"\b(today)\b|오늘"),
    re.compile(r"\b(yesterday)\b|어제"),
    re.compile(r"\bthis week\b|이번\s?주"),
    re.compile(r"\blast week\b|지난\s?주|저번\s?주"),
    re.compile(r"\bthis month\b|이번\s?달"),
    re.compile(r"\blast month\b|지난\s?달|저번\s?달"),
    re.compile(r"\bthis year\b|올해|금년"),
    re.compile(r"\blast year\b|작년|지난\s?해"),
    re.compile(r"\b(recently|lately)\b|최근"),
]
_LAST_N = re.compile(
    rf"\b(?:past|last)\s++{_N}\s++(day|week|month)s?\b|(?:지난|최근)\s*{_N}\s*(일|주|개월|달)"
)
# Spaces are bounded ({0,3}): an unbounded \s* before an optional part rescans a run of spaces from
# every start, quadratic on hostile text (tests/test_regex_time.py).
_QUARTER = re.compile(
    r"\bq([1-4])(?:\s{0,3}(\d{4}))?\b|(\d{4})\s{0,3}q([1-4])\b|(\d{4})?\s{0,3}(?:년\s{0,3})?([1-4])\s{0,3}분기"
)

# _ANY_DATE_WORD's words, each looked for as a plain substring (faster than the pattern, same
# answer: every alternative of the pattern is one of these words, or "q" and a digit 1-4).
_DATE_WORDS_ASCII = ("today", "yesterday", "week", "month", "year", "recently", "lately", "past", "last")
_DATE_WORDS_HANGUL = ("오늘", "어제", "주", "달", "올해", "금년", "작년", "해", "최근", "지난", "분기")
_QUARTER_WORD = re.compile(r"q[1-4]")


def _names_a_date(low: str) -> bool:
    """``_ANY_DATE_WORD.search(low)`` is not None, by plain substring tests."""
    for word in _DATE_WORDS_ASCII:
        if word in low:
            return True
    if not low.isascii():
        for word in _DATE_WORDS_HANGUL:
            if word in low:
                return True
    return "q" in low and _QUARTER_WORD.search(low) is not None


# The words each of _RULES needs (one of them), tested before the pattern runs: most questions
# that name a date name one, so most patterns need not run at all.
_NEEDS: tuple[tuple[str, ...], ...] = (
    ("today", "오늘"),
    ("yesterday", "어제"),
    ("this week", "이번"),
    ("last week", "지난", "저번"),
    ("this month", "이번"),
    ("last month", "지난", "저번"),
    ("this year", "올해", "금년"),
    ("last year", "작년", "지난"),
    ("recently", "lately", "최근"),
)


# The days each of _RULES means (first and last, inclusive), computed only for the rule that matched.
_SPANS: tuple[Callable[[date], tuple[date, date]], ...] = (
    lambda today: (today, today),
    lambda today: (today - timedelta(days=1), today - timedelta(days=1)),
    lambda today: (_week(today), today),
    lambda today: (_week(today) - timedelta(days=7), _week(today) - timedelta(days=1)),
    lambda today: (_month(today), today),
    lambda today: (_prev_month(today), _month(today) - timedelta(days=1)),
    lambda today: (date(today.year, 1, 1), today),
    lambda today: (date(today.year - 1, 1, 1), date(today.year - 1, 12, 31)),
    lambda today: (today - timedelta(days=30), today),
)


def _relative_dates(text: str, today: date) -> tuple[date | None, date | None, list[str]]:
    # One space between words: a pattern's \s* then never rescans a long run of blanks.
    low = " ".join(text.lower().split())
    if not _names_a_date(low):
        return None, None, []  # none of the patterns below can match: most questions
    if today.year == 1:
        for span in _SPANS:  # near the start of the calendar a span may not exist: then no dates
            span(today)
    last = "past" in low or "last" in low or "지난" in low or "최근" in low
    match = _LAST_N.search(low) if last else None
    if match:  # before the single words: "최근 30일" is thirty days, not "recently"
        count = int(match[1] or match[3])
        unit = match[2] or match[4]
        days = {"day": 1, "일": 1, "week": 7, "주": 7, "month": 30, "개월": 30, "달": 30}[unit] * count
        return today - timedelta(days=days), today, [match.group(0)]
    for pattern, needs, span in zip(_RULES, _NEEDS, _SPANS, strict=True):
        for word in needs:
            if word in low:
                break
        else:
            continue  # the pattern cannot match without one of these
        match = pattern.search(low)
        if match:
            after, before = span(today)
            return after, before, [match.group(0)]
    match = _QUARTER.search(low) if "q" in low or "분기" in low else None
    if match:
        q = int(match[1] or match[4] or match[6])
        year = int(match[2] or match[3] or match[5] or today.year)
        after, before = _quarter(year, q)
        return after, before, [match.group(0).strip()]
    return None, None, []
