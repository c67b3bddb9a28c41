"""insert_citations over the recorded Gemini answers (../shared/data/providers/gemini).

Placement: a support is placed exactly when its marker lands right after its segment text, at the
occurrence the offsets mean. Every recorded support has its text, so the check needs no offsets
of its own. gemini-cli's hand-written multi-byte vectors have no segment text; for them the whole
output is compared with the expected one.

Two references run in the same process on the same inputs:
- "str offsets": ``endIndex`` read as a Python str index, as a naive port would do;
- "byte offsets only": ``endIndex`` read as a UTF-8 byte offset, no check against the text
  (gemini-cli's own method).
"""

from __future__ import annotations

import json
import logging
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

GEMINI = Path(__file__).resolve().parents[2] / "shared" / "data" / "providers" / "gemini"
Insert = Callable[[str, dict[str, Any]], str]


def load() -> list[tuple[str, dict[str, Any]]]:
    """(answer text, groundingMetadata) of every recorded response with grounding supports."""
    out = []
    for path in sorted((GEMINI / "pydantic-ai").glob("*.yaml")):
        for interaction in yaml.safe_load(path.read_text("utf-8"))["interactions"]:
            body = interaction["response"].get("parsed_body")
            for candidate in body.get("candidates", []) if isinstance(body, dict) else []:
                meta = candidate.get("groundingMetadata") or {}
                if meta.get("groundingSupports"):
                    parts = candidate["content"]["parts"]
                    out.append(("".join(p.get("text", "") for p in parts if not p.get("thought")), meta))
    if not out:
        raise SystemExit(f"no recorded Gemini answers under {GEMINI}")
    return out


def vectors() -> list[tuple[str, dict[str, Any], str]]:
    data = json.loads(
        (GEMINI / "gemini-cli-test-vectors" / "web_search_citation_vectors.json").read_text("utf-8")
    )
    out = []
    for case in data["cases"]:
        candidate = case["response"]["candidates"][0]
        text = "".join(p["text"] for p in candidate["content"]["parts"])
        expected = case["expected_llmContent"].split("\n\n", 1)[1]
        out.append((text, candidate["groundingMetadata"], expected))
    return out


def _sources(meta: dict[str, Any]) -> str:
    chunks = meta.get("groundingChunks") or []
    lines = [
        f"[{i}] {c['web'].get('title') or 'Untitled'} ({c['web'].get('uri') or 'No URI'})"
        for i, c in enumerate(chunks, 1)
    ]
    return "\n\nSources:\n" + "\n".join(lines) if lines else ""


def _markers(support: dict[str, Any]) -> str:
    return "".join(f"[{i + 1}]" for i in sorted(set(support["groundingChunkIndices"])))


def naive_str(text: str, meta: dict[str, Any]) -> str:
    supports = sorted(meta["groundingSupports"], key=lambda s: s["segment"]["endIndex"], reverse=True)
    for s in supports:
        end = s["segment"]["endIndex"]
        text = text[:end] + _markers(s) + text[end:]
    return text + _sources(meta)


def bytes_only(text: str, meta: dict[str, Any]) -> str:
    data = text.encode()
    supports = sorted(meta["groundingSupports"], key=lambda s: s["segment"]["endIndex"], reverse=True)
    for s in supports:
        end = s["segment"]["endIndex"]
        data = data[:end] + _markers(s).encode() + data[end:]
    return data.decode("utf-8", "replace") + _sources(meta)


def ours(text: str, meta: dict[str, Any]) -> str:
    from sourcewise import insert_citations

    return insert_citations(text, meta)


def placed(method: Insert, text: str, meta: dict[str, Any]) -> tuple[int, int]:
    """(exact, total): a support is exact when its markers follow its text where the text ends."""
    out = method(text, meta).split("\n\nSources:\n")[0]
    exact = 0
    for s in meta["groundingSupports"]:
        segment, marker = s["segment"]["text"], _markers(s)
        exact += segment + marker in out
    return exact, len(meta["groundingSupports"])


def timed(
    methods: list[tuple[str, Insert]], cases: list[tuple[str, dict[str, Any]]], repeat: int = 100
) -> dict[str, list[float]]:
    """Time per answer (µs) of each method in 5 runs, the methods taking turns within each run so
    that the machine's load falls on all of them alike."""
    out: dict[str, list[float]] = {name: [] for name, _ in methods}
    for _ in range(5):
        for name, method in methods:
            start = time.perf_counter()
            for _ in range(repeat):
                for text, meta in cases:
                    method(text, meta)
            out[name].append((time.perf_counter() - start) / (repeat * len(cases)) * 1e6)
    return out


def run() -> str:
    logging.getLogger("sourcewise").setLevel(logging.ERROR)
    cases, cli = load(), vectors()
    methods: list[tuple[str, Insert]] = [
        ("sourcewise `insert_citations`", ours),
        ("byte offsets only (gemini-cli's method)", bytes_only),
        ("str offsets (naive reference)", naive_str),
    ]
    rows = []
    runs = timed(methods, cases)
    base = runs[methods[2][0]]
    for name, method in methods:
        exact = total = 0
        for text, meta in cases:
            e, t = placed(method, text, meta)
            exact += e
            total += t
        vec = sum(method(text, meta) == expected for text, meta, expected in cli)
        rows.append(
            f"| {name} | {exact}/{total} | {vec}/{len(cli)} | {statistics.median(runs[name]):.1f} µs"
            f" | {statistics.median(a / b for a, b in zip(runs[name], base, strict=True)):.1f}x |"
        )
    return "\n".join(
        [
            f"{len(cases)} recorded answers with {sum(len(m['groundingSupports']) for _, m in cases)} supports;"
            f" {len(cli)} gemini-cli multi-byte vectors.",
            "",
            "| method | supports placed exactly | gemini-cli vectors equal | median time per answer (5 runs) | time ratio to str offsets (median of 5 per-run ratios) |",
            "|---|---|---|---|---|",
            *rows,
        ]
    )


if __name__ == "__main__":
    print(run())
