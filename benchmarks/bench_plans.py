"""The planning benchmark: labelled questions against ``route`` and ``plan``, field by field.

``benchmarks/data/plans_en.jsonl`` and ``plans_ko.jsonl`` hold 160 questions (80 English, 80 Korean)
written the way people ask them: internal, external and recency mixes, negations, ambiguous and
clear questions, variants, dates, URLs. Each is labelled with what a careful analyst expects, not
with what the code printed:

- ``route``: ``search``, ``skip``, ``fetch``, or ``clarify`` (readings that change the sources);
- ``type``: seed 003's query type;
- ``keywords``: the terms results must contain (entities, topic nouns, named document kinds such
  as "policy" or "spec", quoted phrases); no question, request, recency, date or organisation
  words, nothing excluded; compared as a set of lower-cased words;
- ``negations``: the excluded phrases, compared as a set;
- ``queries`` (some questions): the chat keyword query (compared as a multiset of its words) and
  the web query of a question routed to the web (compared as a set of words, English function
  words aside: a search engine ignores them).

Agreement is the share of questions whose field matches exactly. The same run measures the
planner on the main checkout (``/work/main/src``, before this work) as the reference.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import date
from pathlib import Path
from typing import Any

DATA = Path(__file__).parent / "data"
TODAY = date(2026, 11, 21)
SOURCES = ["chat", "knowledge_base", "project_tracker", "web"]
FIELDS = ("route", "type", "keywords", "negations", "queries")
REFERENCE = Path("/work/main/src")


def load() -> dict[str, list[dict[str, Any]]]:
    out = {
        lang: [json.loads(line) for line in (DATA / f"plans_{lang}.jsonl").open(encoding="utf-8")]
        for lang in ("en", "ko")
    }
    assert all(out.values()), "no labelled questions found"
    return out


_FUNCTION = frozenset("a an the in of for on to and with about".split())


def _web(query: str) -> list[str]:
    return sorted({w for w in query.lower().split() if w not in _FUNCTION})


def _words(items: list[str]) -> list[str]:
    return sorted({w for item in items for w in item.lower().split()})


def predict(question: str) -> dict[str, Any]:
    """What the installed sourcewise says about ``question``, in the labels' terms."""
    from sourcewise import plan, route
    from sourcewise.config import load_settings

    settings = load_settings()
    decision = route(question, today=TODAY, settings=settings)
    action = "clarify" if getattr(decision, "readings", None) else decision.action
    p = plan(question, SOURCES, today=TODAY, settings=settings)
    chat = next((q.query for q in p.sources if q.source == "chat" and q.mode == "keyword"), "")
    web = decision.query if decision.action == "search" and decision.query else ""
    return {
        "route": action,
        "type": p.query_type.kind,
        "keywords": _words([*p.entities, *p.keywords, *p.phrases]),
        "negations": sorted(n.lower() for n in p.negations),
        "queries": {"chat": sorted(chat.split()), "web": _web(web)},
    }


def _agrees(field: str, label: dict[str, Any], got: dict[str, Any]) -> bool | None:
    if field == "keywords":
        return _words(label["keywords"]) == got["keywords"]
    if field == "negations":
        return sorted(n.lower() for n in label["negations"]) == got["negations"]
    if field == "queries":
        wanted = label.get("queries", {})
        if not wanted:
            return None
        chat = "chat" not in wanted or sorted(wanted["chat"].split()) == got["queries"]["chat"]
        web = "web" not in wanted or _web(wanted["web"]) == got["queries"]["web"]
        return chat and web
    return bool(label[field] == got[field])


def evaluate() -> dict[str, Any]:
    """Per language and field: agreed, labelled, and the misses."""
    result: dict[str, Any] = {}
    for lang, rows in load().items():
        scores: dict[str, Any] = {f: {"agree": 0, "total": 0, "misses": []} for f in FIELDS}
        for row in rows:
            got = predict(row["q"])
            for field in FIELDS:
                ok = _agrees(field, row, got)
                if ok is None:
                    continue
                scores[field]["total"] += 1
                scores[field]["agree"] += ok
                if not ok:
                    want = row[field]
                    scores[field]["misses"].append([row["q"], want, got[field]])
        result[lang] = scores
    return result


def _reference() -> dict[str, Any] | None:
    if not (REFERENCE / "sourcewise").is_dir():
        return None
    env = {**os.environ, "PYTHONPATH": str(REFERENCE), "HF_HUB_OFFLINE": "1"}
    out = subprocess.run(
        [sys.executable, __file__, "--json"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=600,
    )
    return json.loads(out.stdout) if out.returncode == 0 else None


def run() -> str:
    import sourcewise

    ours = evaluate()
    ref = _reference()
    lines = [
        f"Questions: {sum(len(v) for v in load().values())} ({', '.join(f'{k}: {len(v)}' for k, v in load().items())}); "
        f"planner from {Path(sourcewise.__file__).parent}; reference: {REFERENCE} (main, same run)\n",
        "| field | en | en (main) | ko | ko (main) |",
        "|---|---|---|---|---|",
    ]
    for field in FIELDS:
        cells = []
        for lang in ("en", "ko"):
            for scores in (ours, ref):
                if scores is None:
                    cells.append("-")
                    continue
                s = scores[lang][field]
                cells.append(f"{s['agree']}/{s['total']} ({100 * s['agree'] / max(1, s['total']):.1f}%)")
        lines.append(f"| {field} | " + " | ".join(cells) + " |")
    lines.append("\nMisses (question, label, planner):\n")
    for lang in ("en", "ko"):
        for field in FIELDS:
            for q, want, got in ours[lang][field]["misses"]:
                lines.append(f"- {lang} {field}: {q!r}: want {want!r}, got {got!r}")
    return "\n".join(lines)


if __name__ == "__main__":
    if sys.argv[1:] == ["--json"]:
        print(json.dumps(evaluate(), ensure_ascii=False))
    else:
        print(run())
