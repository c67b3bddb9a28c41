"""Every compiled regular expression at module level in ``sourcewise`` runs in linear time.

Outside text (provider bodies, pages, questions, file contents) reaches these patterns, so each
is run over adversarial strings at two sizes, 8x apart: a unit repeated (generic pieces of HTML,
URLs, Markdown and words, plus the pattern's own literal pieces), then a character that fails a
match. Linear work grows about 8x, quadratic about 64x. Only a run that takes a noticeable
time at the larger size is compared, with the best of three runs at each size, so a loaded
machine does not fail the test.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import re
import time
from collections.abc import Iterator

import pytest

import sourcewise
from sourcewise.providers import duckduckgo_instant
from sourcewise.providers.base import HttpResponse

SMALL, LARGE = 4_000, 32_000
NOTICEABLE = 0.03  # seconds at the larger size before growth is compared
MAX_GROWTH = 24  # linear: ~8 (n log n: ~10); quadratic: ~64
GENERIC = [
    "a", "a ", " ", "\t", "\n", "\r\n", "1", "1.", "a.", "aa.aa", "a-", "-", "_", "@", "a@a.", ":",
    "://", "http://a", "https://a.b/", "www.", "/", "\\", "?", "#", "&", "x=", "%", "%2", "'", '"',
    "(", ")", "[", "]", "{", "*", "**", "`", "```", "<", ">", "<a ", "<a><", "</", "<!--", "&amp",
    "a1", "1a", "가", "가 ", "ａ", "\u200b", ".", "..", ",", ";", "=", "|", "!", "~", "+",
]  # fmt: skip


def module_patterns() -> Iterator[tuple[str, re.Pattern[str]]]:
    """(``module.NAME``, pattern) for every compiled str pattern at module level, also inside a
    module-level list, tuple or dict."""
    seen: set[tuple[object, object]] = set()
    for info in pkgutil.walk_packages(sourcewise.__path__, "sourcewise."):
        if info.name.endswith("__main__"):
            continue
        try:
            module = importlib.import_module(info.name)
        except ModuleNotFoundError:  # an optional extra that is not installed
            continue
        for name, value in vars(module).items():
            if isinstance(value, dict):
                items = list(value.values())
            else:
                items = list(value) if isinstance(value, list | tuple) else [value]
            for item in items:
                key = (getattr(item, "pattern", None), getattr(item, "flags", None))
                if isinstance(item, re.Pattern) and isinstance(item.pattern, str) and key not in seen:
                    seen.add((item.pattern, item.flags))
                    yield f"{info.name}.{name}", item


def units(pattern: re.Pattern[str]) -> list[str]:
    source = pattern.pattern
    own = {c for c in source if c.isprintable()}
    runs = {r for r in re.split(r"[\\\[\]().*+?{}|^$]+", source) if 1 <= len(r) <= 8}
    return list(dict.fromkeys(GENERIC + sorted(own) + sorted(runs)))


def adversarial(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size] + "\x00"


def best_of(pattern: re.Pattern[str], text: str, runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        pattern.findall(text)
        times.append(time.perf_counter() - started)
    return min(times)


PATTERNS = sorted(module_patterns(), key=lambda p: p[0])


def test_the_patterns_are_found() -> None:
    names = {name for name, _ in PATTERNS}
    assert len(PATTERNS) >= 30, names
    assert "sourcewise.providers.duckduckgo_instant._ANCHOR" in names


@pytest.mark.parametrize(("name", "pattern"), PATTERNS, ids=[name for name, _ in PATTERNS])
def test_every_module_pattern_runs_in_linear_time(name: str, pattern: re.Pattern[str]) -> None:
    slow = []
    for unit in units(pattern):
        large = adversarial(unit, LARGE)
        if best_of(pattern, large, 1) < NOTICEABLE:
            continue
        growth = best_of(pattern, large, 3) / max(best_of(pattern, adversarial(unit, SMALL), 3), 1e-6)
        if growth > MAX_GROWTH:
            slow.append(f"{unit!r}: {growth:.0f}x the time for 8x the text")
    assert not slow, f"{name} = {pattern.pattern!r} grows faster than linear: {slow}"


def test_an_instant_answer_with_a_huge_result_field_parses_fast() -> None:
    body = {"Results": [{"FirstURL": "https://a.com/", "Text": "t", "Result": "<a " * 100_000}]}
    started = time.perf_counter()
    results = duckduckgo_instant.parse(HttpResponse(200, json.dumps(body)))
    assert time.perf_counter() - started < 2  # 96 KB took 8 s; 300 KB would take over a minute
    assert [r.title for r in results] == ["t"]
    html = '<a href="https://duckduckgo.com/Python">Python</a>A programming language'
    assert duckduckgo_instant._ANCHOR.search(html + "<a " * 1000)[1] == "Python"  # type: ignore[index]
