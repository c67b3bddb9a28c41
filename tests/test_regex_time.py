"""Every compiled regular expression at module level in ``sourcewise`` runs in linear time.

Outside text (provider bodies, pages, questions, file contents) reaches these patterns, so each
is run over adversarial strings at two sizes, 16x apart: a unit repeated (generic pieces of HTML,
URLs, Markdown and words, plus the pattern's own literal pieces), then a character that fails a
match. Linear work grows about 16x, quadratic about 256x. Only a run that takes a noticeable
time at the larger size is compared, with the best of three runs at each size, and a growth past
the bound is measured twice more before it counts. Times are this process's CPU time, not the
clock's, so other work on a loaded machine does not count against a pattern.
"""

from __future__ import annotations

import gc
import importlib
import json
import pkgutil
import re
import time
from collections.abc import Iterator

import pytest

import sourcewise
from sourcewise.web.providers import duckduckgo_instant
from sourcewise.web.providers.base import HttpResponse

SMALL, LARGE = 2_000, 32_000  # 16x apart
NOTICEABLE = 0.03  # seconds at the larger size before growth is compared
# linear: ~16x the time (caches and a loaded machine have shown up to ~50x); quadratic: ~256x
MAX_GROWTH = 100
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
    """The best time of ``runs`` scans for every match. The garbage collector is off meanwhile:
    its passes over the test process's heap grow with the number of objects made, not the regex."""
    times = []
    enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(runs):
            started = time.process_time()
            for _match in pattern.finditer(text):
                pass
            times.append(time.process_time() - started)
    finally:
        if enabled:
            gc.enable()
    return min(times)


PATTERNS = sorted(module_patterns(), key=lambda p: p[0])


def test_the_patterns_are_found() -> None:
    names = {name for name, _ in PATTERNS}
    assert len(PATTERNS) >= 30, names
    assert "sourcewise.web.providers.duckduckgo_instant._ANCHOR" in names


@pytest.mark.parametrize(("name", "pattern"), PATTERNS, ids=[name for name, _ in PATTERNS])
def test_every_module_pattern_runs_in_linear_time(name: str, pattern: re.Pattern[str]) -> None:
    slow = []
    for unit in units(pattern):
        large = adversarial(unit, LARGE)
        if best_of(pattern, large, 1) < NOTICEABLE:
            continue
        small = adversarial(unit, SMALL)
        growths = []
        for _attempt in range(3):
            growths.append(best_of(pattern, large, 3) / max(best_of(pattern, small, 3), 1e-6))
            if growths[-1] <= MAX_GROWTH:
                break
        else:
            slow.append(f"{unit!r}: {min(growths):.0f}x the time for 16x the text")
    assert not slow, f"{name} = {pattern.pattern!r} grows faster than linear: {slow}"


def test_an_instant_answer_with_a_huge_result_field_parses_fast() -> None:
    body = {"Results": [{"FirstURL": "https://a.com/", "Text": "t", "Result": "<a " * 100_000}]}
    started = time.process_time()
    results = duckduckgo_instant.parse(HttpResponse(200, json.dumps(body)))
    assert time.process_time() - started < 2  # 96 KB took 8 s; 300 KB would take over a minute
    assert [r.title for r in results] == ["t"]
    html = '<a href="https://duckduckgo.com/Python">Python</a>A programming language'
    assert duckduckgo_instant._ANCHOR.search(html + "<a " * 1000)[1] == "Python"  # type: ignore[index]
