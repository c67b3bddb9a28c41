"""Issue 23: document classes for the authority hierarchies, from path, title and headings."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sourcewise import KnowledgeBase
from sourcewise.answer.doctype import DOCUMENT_CLASSES, classify_hit, document_class
from sourcewise.config import load_settings
from sourcewise.loops.ask import aask
from sourcewise.models import Hit
from sourcewise.session import Session
from sourcewise.sources import SourceOptions


@pytest.mark.parametrize(
    ("path", "title", "cls"),
    [
        ("meetings/2026-11-02.md", "Aurora sync", "meeting_notes"),
        ("notes/aurora.md", "Meeting notes: Aurora launch", "meeting_notes"),
        ("회의록/2026-11-02.md", "오로라 출시", "meeting_notes"),
        ("docs/aurora-status.md", "Aurora", "status_doc"),
        ("reports/weekly.md", "Weekly update, week 46", "status_doc"),
        ("보고/오로라.md", "오로라 진행 현황", "status_doc"),
        ("specs/search.md", "Ranking", "shared_doc"),
        ("docs/rfc-12.md", "RFC 12: tiers", "shared_doc"),
        ("handbook/expenses.md", "Expenses", "wiki"),
        ("규정/휴가.md", "휴가 규정", "wiki"),
        ("news/all-hands.md", "Announcement: new office", "announcement"),
        ("exports/slack-eng.txt", "#eng", "chat"),
    ],
)
def test_classes_from_path_and_title(path: str, title: str, cls: str) -> None:
    assert document_class(path, title) == cls


def test_plain_pages_keep_their_source_class() -> None:
    assert document_class("docs/install.md", "Install") is None
    hit = Hit(title="Install", location="docs/install.md#L1-L3", source="kb", kind="knowledge_base",
              authority="wiki", score=1.0, path="docs/install.md")  # fmt: skip
    assert classify_hit(hit, "wiki").authority == "wiki"
    minutes = hit.model_copy(update={"title": "Minutes of the install review"})
    assert classify_hit(minutes, "wiki").authority == "meeting_notes"
    chosen = hit.model_copy(update={"authority": "email"})  # the source chose: kept
    assert classify_hit(chosen.model_copy(update={"title": "Meeting"}), "wiki").authority == "email"


def test_front_matter_type_and_config_overrides() -> None:
    hit = Hit(title="Aurora", location="x.md#L1-L2", source="kb", kind="knowledge_base", authority="wiki",
              score=1.0, path="x.md", meta={"type": "meeting-notes"})  # fmt: skip
    assert classify_hit(hit, "wiki").authority == "meeting_notes"
    options = SourceOptions(classes={"x.*": "status_doc"})
    assert classify_hit(hit, "wiki", options.classes).authority == "status_doc"


@given(st.text(max_size=80), st.text(max_size=80))
def test_any_text_gives_a_known_class_or_none(path: str, title: str) -> None:
    assert document_class(path, title) in (*DOCUMENT_CLASSES, None)


KB = {
    "meetings/2026-11-10-aurora.md": "---\ndate: 2026-11-10\n---\n# Aurora launch meeting\n\n"
    "Attendees: Kim, Lee, Park.\n\nWe decided to launch Aurora on December 1, after the security review. "
    "Lee owns the rollback plan.\n",
    "status/aurora.md": "---\ndate: 2026-11-19\n---\n# Aurora status\n\n"
    "Aurora is on track: the security review is done, load tests pass, and the launch checklist is 8 of 10 "
    "complete. Remaining: billing sign-off and the on-call rota.\n",
    "exports/slack-aurora.txt": "2026-10-20 kim: aurora launch maybe december?\n"
    "2026-10-20 lee: aurora status is fine i think, launch soon\n"
    "2026-10-21 park: did we decide on aurora yet\n",
}


@pytest.mark.parametrize(
    ("question", "first"),
    [
        ("What did we decide about the Aurora launch?", "meetings/2026-11-10-aurora.md"),
        ("What is the status of Aurora?", "status/aurora.md"),
    ],
)
async def test_authority_ranks_meeting_notes_for_decisions_and_the_status_page_for_status(
    tmp_path: Path, question: str, first: str
) -> None:
    docs = tmp_path / "docs"
    for name, body in KB.items():
        (docs / name).parent.mkdir(parents=True, exist_ok=True)
        (docs / name).write_text(body, "utf-8")
    settings = load_settings(state_dir=tmp_path / "state", source_timeout=5.0)
    with KnowledgeBase(settings.state_dir / "kb.sqlite3", semantic=False) as kb:
        kb.index([docs])
    session = Session(settings)
    try:
        answer = await aask(question, sources=["kb"], session=session)
    finally:
        await session.aclose()
    top = answer.hits[0].hit
    assert (top.path or "").endswith(first), [(h.hit.path, h.relevance) for h in answer.hits]
    assert top.authority == ("meeting_notes" if "meetings" in first else "status_doc")
    chat = [h.hit for h in answer.hits if (h.hit.path or "").endswith("slack-aurora.txt")]
    assert chat  # the chat export was found, and ranked below
    assert chat[0].authority == "chat"


async def test_an_undated_page_gets_no_recency(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "undated.md").write_text("# Aurora\n\nAurora notes.\n", "utf-8")
    (docs / "dated.md").write_text("---\ndate: 2026-01-05\n---\n# Aurora plan\n\nAurora plan.\n", "utf-8")
    settings = load_settings(state_dir=tmp_path / "state", source_timeout=5.0)
    with KnowledgeBase(settings.state_dir / "kb.sqlite3", semantic=False) as kb:
        kb.index([docs])
        hits = {Path(h.path or "").name: h for h in kb.search("aurora", limit=5)}
    assert hits["undated.md"].timestamp is None  # its file's mtime (today) is not its date
    assert hits["dated.md"].timestamp is not None
    assert hits["dated.md"].timestamp.date().isoformat() == "2026-01-05"
