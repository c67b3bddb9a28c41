"""Start-up time: ``import sourcewise`` and ``sourcewise --help``, beside ``python -c pass``.

Each command runs in a fresh process, the commands taking turns in every round (so that a busy
machine slows them alike); the figure is the median wall time, and the ratio is to
``python -c pass`` measured in the same run.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

RUNS = 21


def _cli() -> list[str]:
    script = Path(sys.executable).parent / "sourcewise"
    found = str(script) if script.exists() else shutil.which("sourcewise")
    return [found] if found else [sys.executable, "-m", "sourcewise"]


COMMANDS: list[tuple[str, list[str]]] = [
    ("`python -c pass` (reference)", [sys.executable, "-c", "pass"]),
    ("`python -c 'import sourcewise'`", [sys.executable, "-c", "import sourcewise"]),
    ("`sourcewise --help`", [*_cli(), "--help"]),
    (
        "`python -c 'import sourcewise; sourcewise.route'` (routing, settings, models)",
        [sys.executable, "-c", "import sourcewise; sourcewise.route"],
    ),
]


def measure(runs: int = RUNS) -> list[float]:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    samples: list[list[float]] = [[] for _ in COMMANDS]
    for _ in range(runs):
        for i, (_, argv) in enumerate(COMMANDS):
            start = time.perf_counter()
            subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, env=env)
            samples[i].append(time.perf_counter() - start)
    return [statistics.median(s) for s in samples]


def run() -> str:
    medians = measure()
    base = medians[0]
    rows = [
        f"| command | median wall time ({RUNS} runs, taking turns) | ratio to `python -c pass` |",
        "|---|---|---|",
    ]
    for (label, _), seconds in zip(COMMANDS, medians, strict=True):
        rows.append(f"| {label} | {seconds * 1000:.0f} ms | {seconds / base:.1f}x |")
    return "\n".join(rows)


if __name__ == "__main__":
    print(run())
