"""``robots_allowed`` on Google's robots.txt conformance cases (github.com/google/robotstxt-spec-test:
the correctness and stress folders, 400 expectations), read from the git directory the ``fetch``
tool brings (``SOURCEWISE_ROBOTS_SPEC`` names another; nothing of it is committed here).

For each parser: how many expectations it agrees with, and the time per check (parse the file and
answer for one URL and user agent, as ``robots_allowed`` does), median of rounds over all cases.
References, measured in the same run: the standard library's ``urllib.robotparser`` (always
there) and Protego (Scrapy's parser, the issue's reference, when it is importable; it is not a
dependency: ``pip install --target DIR protego`` and put DIR on ``PYTHONPATH``).
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from urllib.robotparser import RobotFileParser

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from robots_spec import SPEC_GIT, Case, load_cases
from sourcewise.web.robots import robots_allowed

ROUNDS = 7

Check = Callable[[bytes, str, str], bool]


def _stdlib(body: bytes, agent: str, url: str) -> bool:
    parser = RobotFileParser()
    parser.parse(body.decode("utf-8", "replace").splitlines())
    return parser.can_fetch(agent, url)


def _protego() -> Check | None:
    try:
        from protego import Protego  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        return None

    def check(body: bytes, agent: str, url: str) -> bool:
        return bool(Protego.parse(body.decode("utf-8", "replace")).can_fetch(url, agent))

    return check


def _measure(check: Check, cases: list[Case]) -> tuple[int, float, float]:
    agreed = sum(check(c.robots_txt, c.user_agent, c.url) is c.allowed for c in cases)
    walls, cpus = [], []
    for _ in range(ROUNDS):
        wall, cpu = time.perf_counter(), time.process_time()
        for c in cases:
            check(c.robots_txt, c.user_agent, c.url)
        walls.append((time.perf_counter() - wall) / len(cases))
        cpus.append((time.process_time() - cpu) / len(cases))
    return agreed, statistics.median(walls), statistics.median(cpus)


def run() -> str:
    cases = load_cases()
    if not cases:
        return f"Skipped: Google's robotstxt-spec-test is not at {SPEC_GIT}."
    parsers: list[tuple[str, Check | None]] = [
        ("sourcewise.robots_allowed", robots_allowed),
        ("urllib.robotparser (stdlib)", _stdlib),
        ("Protego", _protego()),
    ]
    lines = [
        f"Cases: {len(cases)} expectations from {SPEC_GIT} (correctness and stress). "
        f"Load: {os.getloadavg()[0]:.2f}. Median of {ROUNDS} rounds.",
        "",
        "| parser | agrees | of | per check (wall) | per check (CPU) | CPU vs ours |",
        "|---|---|---|---|---|---|",
    ]
    ours_cpu = 0.0
    for name, check in parsers:
        if check is None:
            lines.append(f"| {name} | not installed | | | | |")
            continue
        agreed, wall, cpu = _measure(check, cases)
        ours_cpu = ours_cpu or cpu
        lines.append(
            f"| {name} | {agreed} | {len(cases)} | {wall * 1e6:.1f} µs | {cpu * 1e6:.1f} µs | {cpu / ours_cpu:.2f} |"
        )
    misses = [c for c in cases if robots_allowed(c.robots_txt, c.user_agent, c.url) is not c.allowed]
    lines += ["", "Where `robots_allowed` disagrees:", ""]
    for c in misses:
        expected = "ALLOWED" if c.allowed else "DISALLOWED"
        rules = c.robots_txt.decode("utf-8", "replace").replace("\n", "⏎")
        lines.append(f"- `{Path(c.file).name}`: `{rules}` {c.url} as {c.user_agent}: expected {expected}")
    return "\n".join(lines)


if __name__ == "__main__":
    print(run())
