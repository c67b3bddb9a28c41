"""Issue 23: an internal word skips the web only when the question is about the asker's own
organisation, never when it names a public subject. A table in both languages."""

from __future__ import annotations

from datetime import date

import pytest

from sourcewise import route
from sourcewise.config import load_settings

TODAY = date(2026, 11, 21)

TABLE = [
    # (question, action): public subjects that carry an "internal" word are searched
    ("latest EU AI Act policy news", "search"),
    ("Kubernetes network policy latest version", "search"),
    ("internal combustion engine market trends", "search"),
    ("internal rate of return benchmark for SaaS companies", "search"),
    ("2026 data retention policy trends in the banking industry", "search"),
    ("Python packaging process changes in the latest release", "search"),
    ("정부 AI 정책 최신 동향", "search"),
    ("최신 개인정보보호 규정 업계 동향", "search"),
    ("2026년 클라우드 시장 절차 간소화 트렌드", "search"),
    # the asker's own organisation: private sources only
    ("What is our policy on remote work?", "skip"),
    ("our company policy on expenses, latest version", "skip"),
    ("Where is the internal wiki page for onboarding?", "skip"),
    ("How do we handle incident reviews internally?", "skip"),
    ("our team's latest deploy process", "skip"),
    ("사내 규정", "skip"),
    ("우리 회사 최신 규정", "skip"),
    ("저희 팀 배포 절차 최신본", "skip"),
    ("당사 복리후생 현황", "skip"),
    ("사내 AI 활용 가이드 최신판", "skip"),
    # an internal thing with nothing public asked: private
    ("재택근무 정책은?", "skip"),
    ("employee handbook for new hires", "skip"),
    ("휴가 신청 절차", "skip"),
]


@pytest.mark.parametrize(("question", "action"), TABLE)
def test_internal_words_weigh_against_public_subjects(question: str, action: str) -> None:
    decision = route(question, today=TODAY, settings=load_settings())
    assert decision.action == action, decision.reason
    if action == "skip" and decision.signals["internal"]:
        assert "web" not in decision.reason


def test_both_languages_in_the_table() -> None:
    korean = [q for q, _ in TABLE if any("\uac00" <= ch <= "\ud7a3" for ch in q)]
    assert len(korean) >= 8
    assert len(TABLE) - len(korean) >= 8


def test_a_configured_internal_keyword_names_the_organisation() -> None:
    settings = load_settings(internal_keywords=["aurora"])
    assert route("aurora latest release notes", today=TODAY, settings=settings).action == "skip"
    assert route("aurora latest release notes", today=TODAY, settings=load_settings()).action == "search"
