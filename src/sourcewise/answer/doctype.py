"""Document classes for seed 003's authority hierarchies, from what a hit already carries.

A knowledge base (or any document source) holds pages of different standing: meeting notes
(where decisions are written down), status updates, specifications and shared documents, wiki
and policy pages, announcements, and exported chats. ``document_class`` tells them apart from the
hit's path, title, first heading and any ``type`` the source put in ``meta`` (front matter), by
the words they use, in English and Korean; the first rule that matches decides:

| class            | path, title or heading says (any of)                                          |
|------------------|-------------------------------------------------------------------------------|
| ``meeting_notes``| meeting, minutes, standup, retro, 1on1, sync notes, 회의록, 회의, 미팅, 회고       |
| ``status_doc``   | status, weekly update, progress report, weekly report, 현황, 주간보고, 진행 상황    |
| ``announcement`` | announcement, newsletter, 공지, 공지사항                                          |
| ``chat``         | chat, slack, transcript, messages, 채팅, 대화, 메신저 (an exported conversation)    |
| ``shared_doc``   | spec, specification, rfc, design doc, prd, proposal, adr, 명세, 스펙, 설계, 기획서   |
| ``wiki``         | policy, handbook, guide, runbook, faq, how-to, 정책, 규정, 가이드, 매뉴얼, 사규      |

A hit none of them matches keeps the class its source gave it. A source overrides the rules in
its config: ``[sources.NAME] classes = {"minutes/*" = "meeting_notes", "*Weekly*" = "status_doc"}``
(globs over the path, then the title; the first that matches wins). Pure, no index change:
every input is a field of the ``Hit``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from fnmatch import fnmatchcase
from itertools import pairwise
from typing import get_args

from sourcewise.models import Authority, Hit

__all__ = ["DOCUMENT_CLASSES", "RULES", "classify_hit", "document_class"]

DOCUMENT_CLASSES: tuple[Authority, ...] = (
    "meeting_notes",
    "status_doc",
    "announcement",
    "chat",
    "shared_doc",
    "wiki",
)
RULES: tuple[tuple[Authority, frozenset[str], tuple[str, ...]], ...] = (
    # (class, English words and word pairs, Korean stems found inside a word)
    (
        "meeting_notes",
        frozenset("meeting meetings minutes standup retro retrospective 1on1".split())
        | {"meeting notes", "sync notes", "weekly sync", "stand up"},
        ("회의록", "회의", "미팅", "회고", "스탠드업"),
    ),
    (
        "status_doc",
        frozenset("status statusreport".split())
        | {"weekly update", "progress report", "weekly report", "status update", "status report"},
        ("현황", "주간보고", "주간 보고", "진행 상황", "진행상황", "상태 보고"),
    ),
    ("announcement", frozenset("announcement announcements newsletter".split()), ("공지",)),
    ("chat", frozenset("chat chats slack transcript messages discord".split()), ("채팅", "대화", "메신저")),
    (
        "shared_doc",
        frozenset("spec specs specification rfc prd proposal adr".split()) | {"design doc"},
        ("명세", "스펙", "설계", "기획서", "제안서"),
    ),
    (
        "wiki",
        frozenset("policy policies handbook guide guidelines runbook faq wiki".split()) | {"how to"},
        ("정책", "규정", "가이드", "매뉴얼", "사규", "위키"),
    ),
)
_META = {"meeting": "meeting_notes", "minutes": "meeting_notes", "status": "status_doc", "spec": "shared_doc"}
_SPLIT = re.compile(r"[\s/\\_.#:,()\[\]-]+")  # one character class: linear in the text
_KNOWN: frozenset[str] = frozenset(get_args(Authority))


def _words(text: str) -> list[str]:
    return [w for w in _SPLIT.split(text.lower()) if w]


def _matches(words: list[str], english: frozenset[str], korean: tuple[str, ...], text: str) -> bool:
    if any(w in english for w in words):
        return True
    if any(f"{a} {b}" in english for a, b in pairwise(words)):
        return True
    return not text.isascii() and any(k in text for k in korean)


def document_class(
    path: str | None, title: str, headings: tuple[str, ...] = (), meta: Mapping[str, str] | None = None
) -> Authority | None:
    """The class the document's own words give it, or ``None`` when none of ``RULES`` matches."""
    declared = (meta or {}).get("type", "").strip().lower().replace("-", "_").replace(" ", "_")
    if declared in _KNOWN:
        return declared
    for stem, cls in _META.items():
        if declared.startswith(stem):
            return cls
    # the file's folders and name, its title and its first heading: what a reader sees first
    places = [" ".join((path or "").split("/")[-3:]), title, *headings[:1]]
    for cls, english, korean in RULES:
        for text in places:
            if text and _matches(_words(text), english, korean, text):
                return cls
    return None


def classify_hit(hit: Hit, default: Authority, overrides: Mapping[str, Authority] | None = None) -> Hit:
    """``hit`` with its document class: a configured override first, then ``document_class`` for
    a hit its source left at the source's own class ``default``; anything else as it came."""
    for pattern, cls in (overrides or {}).items():
        if fnmatchcase(hit.path or hit.location, pattern) or fnmatchcase(hit.title, pattern):
            return hit if hit.authority == cls else hit.model_copy(update={"authority": cls})
    if hit.authority != default:
        return hit
    found = document_class(hit.path or hit.location, hit.title, hit.heading_path, hit.meta)
    return hit if found is None or found == hit.authority else hit.model_copy(update={"authority": found})
