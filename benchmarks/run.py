"""Run the benchmarks: ``python benchmarks/run.py [pipeline|extraction|citations ...]``; prints Markdown for RESULTS.md."""

from __future__ import annotations

import platform
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))


SUITES = {
    "pipeline": "bench_pipeline",
    "extraction": "bench_extraction",
    "ask": "bench_ask",
    "messages": "bench_messages",
    "code": "bench_code",
    "kb": "bench_kb",
    "korquad": "bench_korquad",
    "retrieve": "bench_retrieve",
    "citations": "bench_citations",
    "doors": "bench_doors",
    "startup": "bench_startup",
    "passages": "bench_passages",
    "calls": "bench_calls",
    "robots": "bench_robots",
    "answers": "bench_answers",
    "plans": "bench_plans",
    "team": "bench_team",
    "tracking": "bench_tracking",
    "load": "bench_load",
}


def main(argv: list[str]) -> None:
    chosen = argv or list(SUITES)
    print(f"Python {platform.python_version()} on {platform.machine()}, {platform.system()}\n")
    for name in chosen:
        module = __import__(SUITES[name])
        print(f"## {name}\n\n{module.run()}\n")


if __name__ == "__main__":
    main(sys.argv[1:])
