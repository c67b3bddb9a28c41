"""Issue 23 through ``ask``: variants searched, authority by document class, fallbacks that say
what happened. Real knowledge bases in tmp_path; the web on 127.0.0.1."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from sourcewise import KnowledgeBase, aconditional_web_search
from sourcewise.config import Settings, load_settings
from sourcewise.errors import SourceRateLimited
from sourcewise.loops.ask import aask
from sourcewise.models import SourceQuery, SourceResult
from sourcewise.planning.route import choose
from sourcewise.session import Session
from sourcewise.sources import Source, SourceOptions

from servers import LocalServer, Reply


@pytest.fixture
def st(tmp_path: Path) -> Settings:
    return load_settings(state_dir=tmp_path / "state", timeout=2.0, source_timeout=5.0)


def _kb(st: Settings, tmp_path: Path, files: dict[str, str]) -> None:
    docs = tmp_path / "docs"
    for name, body in files.items():
        (docs / name).parent.mkdir(parents=True, exist_ok=True)
        (docs / name).write_text(body, "utf-8")
    with KnowledgeBase(st.state_dir / "kb.sqlite3", semantic=False) as kb:
        kb.index([docs])


async def test_kubernetes_setup_finds_the_k8s_page_through_its_variants(st: Settings, tmp_path: Path) -> None:
    _kb(
        st,
        tmp_path,
        {
            "k8s-cluster-bootstrap.md": "# k8s cluster bootstrap\n\nRun kubeadm init on the first node, "
            "then join the workers with the printed token.\n",
            "lunch.md": "# Lunch\n\nPizza on Fridays.\n",
        },
    )
    session = Session(st)
    try:
        answer = await aask("Kubernetes setup", sources=["kb"], session=session)
    finally:
        await session.aclose()
    assert answer.hits, answer.text
    assert answer.hits[0].hit.title == "k8s cluster bootstrap"
    queries = answer.reports[0].queries
    assert queries[0] == "Kubernetes setup"
    assert "k8s setup" in queries  # the variant query, within the same deadline


async def test_a_multi_word_variant_from_config_is_searched(tmp_path: Path) -> None:
    st = load_settings(
        state_dir=tmp_path / "state", source_timeout=5.0, variants=[["rate limiting", "throttling"]]
    )
    _kb(st, tmp_path, {"api.md": "# Throttling\n\nThe edge throttles clients above 100 requests a second.\n"})
    session = Session(st)
    try:
        answer = await aask("rate limiting for the public gateway", sources=["kb"], session=session)
    finally:
        await session.aclose()
    assert "throttling" in answer.plan.variants["rate limiting"]
    assert any(q.startswith("throttling") for q in answer.reports[0].queries)
    assert answer.hits
    assert answer.hits[0].hit.title == "Throttling"


MIGRATIONS = {
    "db.md": "# Phoenix\n\nThe database migration to PostgreSQL 16 starts in May. Step one: freeze writes.\n",
    "db2.md": "# Phoenix 2\n\nDatabase migration dry run passed on staging.\n",
    "cloud.md": "# Cloud\n\nThe cloud migration from AWS to GCP is halfway.\n",
    "cloud2.md": "# Cloud 2\n\nCloud migration budget was approved.\n",
    "mail.md": "# Mail\n\nEmail migration from Exchange to O365 finished.\n",
    "mail2.md": "# Mail 2\n\nEmail migration left 3 mailboxes behind.\n",
}
MIGRATIONS_KO = {
    "db.md": "# 피닉스\n\n데이터베이스 마이그레이션은 5월에 시작합니다.\n",
    "db2.md": "# 피닉스 2\n\n데이터베이스 마이그레이션 리허설이 끝났습니다.\n",
    "cloud.md": "# 클라우드\n\n클라우드 마이그레이션은 절반쯤 진행되었습니다.\n",
    "cloud2.md": "# 클라우드 2\n\n클라우드 마이그레이션 예산이 승인되었습니다.\n",
    "mail.md": "# 메일\n\n이메일 마이그레이션이 끝났습니다.\n",
    "mail2.md": "# 메일 2\n\n이메일 마이그레이션 후 메일함 3개가 남았습니다.\n",
}


async def _ask(st: Settings, question: str, **kwargs: object) -> object:
    session = Session(st)
    try:
        return await aask(question, sources=kwargs.pop("sources", ["kb"]), session=session, **kwargs)  # type: ignore[arg-type]
    finally:
        await session.aclose()


async def test_a_reading_the_question_names_is_chosen_without_asking(st: Settings, tmp_path: Path) -> None:
    _kb(st, tmp_path, MIGRATIONS)
    answer = await _ask(st, "What are the steps of the database migration?")
    assert answer.clarification is None  # type: ignore[attr-defined]
    assert answer.hits[0].hit.title.startswith("Phoenix")  # type: ignore[attr-defined]
    vague = await _ask(st, "migration 찾아줘")
    assert vague.clarification is not None  # type: ignore[attr-defined]


async def test_reading_labels_are_whole_words(st: Settings, tmp_path: Path) -> None:
    _kb(st, tmp_path, MIGRATIONS_KO)
    answer = await _ask(st, "마이그레이션 찾아줘")
    labels = {r.label for r in answer.readings}  # type: ignore[attr-defined]
    assert labels == {"데이터베이스 마이그레이션", "클라우드 마이그레이션", "이메일 마이그레이션"}


async def test_readings_that_change_the_sources_are_asked_before_searching(
    st: Settings, tmp_path: Path
) -> None:
    _kb(st, tmp_path, {"ai.md": "# AI usage policy\n\nStaff may use approved AI tools for drafts only.\n"})
    answer = await _ask(st, "What is the AI usage policy?", sources=None)
    assert answer.clarification is not None  # type: ignore[attr-defined]
    assert answer.reports == ()  # type: ignore[attr-defined]  # nothing searched yet
    own, public = (r.label for r in answer.readings)  # type: ignore[attr-defined]
    assert "private" in own
    assert "web" in public
    chosen = await _ask(st, "What is the AI usage policy?", sources=None, reading=own)
    assert chosen.clarification is None  # type: ignore[attr-defined]
    assert [r.source for r in chosen.reports] == ["kb"]  # type: ignore[attr-defined]
    assert chosen.hits[0].hit.title == "AI usage policy"  # type: ignore[attr-defined]
    web = choose(answer.route, public, "What is the AI usage policy?", today=date(2026, 11, 28))  # type: ignore[attr-defined]
    assert web.action == "search"
    assert web.query


class Limited(Source):
    """A source whose API answers 429 with a Retry-After."""

    type = "limited"
    kind = "chat"
    authority = "chat"

    def __init__(self) -> None:
        super().__init__("team-chat", SourceOptions(), Settings())

    async def search(self, query: SourceQuery, *, limit: int | None = None) -> SourceResult:
        raise SourceRateLimited(self.name, "429 from the API", retry_after=42)


async def test_a_rate_limited_source_says_when_to_try_again(st: Settings, tmp_path: Path) -> None:
    _kb(st, tmp_path, {"api.md": "# API migration\n\nThe API migration ends in March 2026.\n"})
    answer = await _ask(st, "API migration timeline", sources=["kb", Limited()])
    report = {r.source: r for r in answer.reports}["team-chat"]  # type: ignore[attr-defined]
    assert report.status == "rate_limited"
    assert report.retry_after == 42
    assert any("team-chat" in w and "try again in 42 s" in w for w in answer.warnings)  # type: ignore[attr-defined]
    alone = await _ask(st, "API migration timeline", sources=[Limited()])
    assert "try again in 42 s" in alone.text  # type: ignore[attr-defined]


async def test_a_url_that_cannot_be_read_is_listed(server: LocalServer, tmp_path: Path) -> None:
    server.route(
        "/doc",
        Reply(200, "<html><body><article><h1>Release notes</h1><p>Version 2 adds streaming "
              "responses and a faster cache for everyone.</p></article></body></html>"),
    )  # fmt: skip
    server.route("/gone", Reply(404, "not here"))
    settings = load_settings(state_dir=tmp_path / "state", allow_private=True, source_timeout=5.0)
    good, bad = f"{server.url}/doc", f"{server.url}/gone"
    question = f"{good} 와 {bad} 참고해서 요약"
    context = await aconditional_web_search(question, settings=settings)
    assert context.web_urls == [good]
    assert context.failed_urls == [bad]
    assert context.context is not None
    assert f"# {bad}\n[웹 조회 실패]" in context.context
    answer = await _ask(settings, question, sources=None)
    assert any(w.startswith(f"[웹 조회 실패] {bad}") for w in answer.warnings)  # type: ignore[attr-defined]
    assert answer.hits  # type: ignore[attr-defined]  # the page that was read still answers


async def test_a_rate_limited_web_says_when_to_try_again(server: LocalServer, tmp_path: Path) -> None:
    server.route(
        "/sx/search", Reply(429, "slow down", headers={"Retry-After": "90"}, content_type="text/plain")
    )
    settings = load_settings(
        state_dir=tmp_path / "state",
        provider_options={"searxng": {"url": f"{server.url}/sx"}},
        providers=["searxng"],
        source_timeout=5.0,
    )
    _kb(settings, tmp_path, {"ai.md": "# Notes\n\nNothing about markets here.\n"})
    answer = await _ask(settings, "latest SaaS market size", sources=["kb", "web"])
    web = {r.source: r for r in answer.reports}["web"]  # type: ignore[attr-defined]
    assert web.status == "rate_limited", web
    assert web.retry_after is not None
    assert 0 < web.retry_after <= 120  # its own SearXNG: a short hold, at most the Retry-After it asked
    assert any(w.startswith("web is rate-limited") and "try again in" in w for w in answer.warnings)  # type: ignore[attr-defined]
