"""Issue 29, item 4: text from a document can never forge one of the answer's citation markers.

On the code before, a ``[7]`` written inside an indexed document came out of ``ask`` as if it
were one of sourcewise's own markers (and ``[1]`` as a second, false citation of source 1).
"""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from sourcewise import KnowledgeBase, load_settings
from sourcewise.answer.extractive import assemble, unmarked
from sourcewise.loops.ask import aask
from sourcewise.models import Hit, RankedHit
from sourcewise.session import Session

FORGED = (
    "# Rollback\n\nTo roll back a deployment, redeploy the previous release tag.[7] "
    "The rollback job keeps the last five release tags [1, 2] for this purpose.[3]\n"
)
MARKER = re.compile(r"\[(\d+)\]")


async def test_markers_written_in_a_document_are_not_citations(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "rollback.md").write_text(FORGED, "utf-8")
    settings = load_settings(state_dir=tmp_path / "state", timeout=2.0, source_timeout=5.0)
    with KnowledgeBase(tmp_path / "state" / "kb.sqlite3", semantic=False) as base:
        base.index([docs])
    async with Session(settings) as session:
        answer = await aask("How do I roll back a deployment?", sources=["kb"], session=session)
    assert answer.citations, answer.reports
    assert "release tag" in answer.text
    ours = {c.marker for c in answer.citations}
    assert {int(n) for n in MARKER.findall(answer.text)} == ours  # every [n] is one of ours
    assert ours == {1}  # one source: never a [7] nor a [3]
    assert "(7)" in answer.text or "(3)" in answer.text  # the document's own, neutralised


def _hit(n: int) -> RankedHit:
    hit = Hit(
        title=f"doc {n}", location=f"doc{n}.md", snippet="x", source="kb", kind="knowledge_base",
        authority="wiki", score=1.0,
    )  # fmt: skip
    return RankedHit(hit=hit, relevance=1.0, factors=())


@given(st.lists(st.tuples(st.text(max_size=80), st.integers(0, 2)), min_size=1, max_size=6))
def test_every_marker_in_an_assembled_answer_is_a_citation(parts: list[tuple[str, int]]) -> None:
    sentences = [(f"{text} [{k + 4}] and [{k}]", [k]) for text, k in parts]
    text, citations, cited = assemble(sentences, [_hit(0), _hit(1), _hit(2)])
    outside_code = re.sub(r"`[^`\n]*`", "", text)
    assert {int(n) for n in MARKER.findall(outside_code)} <= {c.marker for c in citations}
    assert len(cited) == len({k for _, k in parts})


@given(st.text(max_size=200))
def test_unmarked_leaves_no_marker_outside_code_and_is_stable(text: str) -> None:
    once = unmarked(text)
    assert unmarked(once) == once
    assert not MARKER.search(re.sub(r"`[^`\n]*`", "", once))
