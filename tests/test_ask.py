"""``ask``: fan-out, fallbacks, merge and rank, ambiguity, extractive and model-written answers.

The private sources here are ``Source`` subclasses written by the test, as a user's plug-in would
be: each holds documents in memory and can be told to be slow, to fail, to be rate-limited, or
to find nothing until the query is broadened. The web is a SearXNG-shaped server on 127.0.0.1 and
the answer model is a Chat Completions endpoint on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import ClassVar

import pytest

from sourcewise.config import Settings, load_settings
from sourcewise.errors import InvalidOption, InvalidQuery, SourceRateLimited
from sourcewise.loops.ask import aask
from sourcewise.models import Authority, Hit, SourceKind, SourceQuery, SourceResult
from sourcewise.session import Session
from sourcewise.sources import Source, SourceOptions
from sourcewise.text.analyze import analyze

from servers import LocalServer, Reply

TODAY = date(2026, 11, 21)


@dataclass
class Doc:
    title: str
    text: str
    authority: Authority = "wiki"
    when: datetime | None = None


class MemorySource(Source):
    """Documents in memory, matched on analyzed terms; behaviour set per test."""

    type = "memory"
    kind: ClassVar[SourceKind] = "knowledge_base"  # type: ignore[misc]
    authority = "wiki"
    filters: ClassVar[frozenset[str]] = frozenset({"after", "before", "from", "in"})

    def __init__(
        self,
        name: str,
        docs: list[Doc],
        *,
        delay: float = 0.0,
        fail: BaseException | None = None,
        needs_at_most: int | None = None,
    ) -> None:
        super().__init__(name, SourceOptions(), Settings())
        self.docs = docs
        self.delay = delay
        self.fail = fail
        self.needs_at_most = needs_at_most  # find nothing while the query has more words than this
        self.started: float | None = None
        self.finished: float | None = None
        self.cancelled = False

    async def search(self, query: SourceQuery, *, limit: int | None = None) -> SourceResult:
        loop = asyncio.get_running_loop()
        self.started = loop.time()
        try:
            await asyncio.sleep(self.delay)
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        self.finished = loop.time()
        if self.fail is not None:
            raise self.fail
        parsed, warnings = self.parse(query)
        words = set(analyze(parsed.text))
        if self.needs_at_most is not None and len(parsed.text.split()) > self.needs_at_most:
            return self.result(query, [], warnings)
        hits = []
        for i, doc in enumerate(self.docs):
            shared_terms = len(words & set(analyze(f"{doc.title} {doc.text}")))
            if shared_terms:
                hits.append(self.hit(i, doc, shared_terms, timestamp=doc.when))
        hits.sort(key=lambda h: -h.score)
        return self.result(query, hits[: limit or 10], warnings)

    def hit(self, i: int, doc: Doc, score: float, *, timestamp: datetime | None = None) -> Hit:
        return Hit(
            title=doc.title,
            location=f"memory://{self.name}/{i}",
            text=doc.text,
            snippet=doc.text[:200],
            source=self.name,
            kind=self.kind,
            authority=doc.authority,
            score=score,
            timestamp=timestamp,
        )


WIKI = [
    Doc(
        "API migration timeline",
        "We decided to finish the API migration by March 2026. The old API stays read-only.",
    ),
    Doc("Lunch menu", "Pizza on Fridays."),
]
CHAT = [
    Doc("#eng", "The API migration moves to v2 endpoints; clients get six months.", "chat"),
]


@pytest.fixture
def st(tmp_path: Path) -> Settings:
    return load_settings(state_dir=tmp_path / "state", timeout=2.0, source_timeout=2.0)


Opened = Callable[[Settings], Session]


@pytest.fixture
async def opened() -> AsyncIterator[Opened]:
    """``opened(settings)``: a ``Session`` for the test to hand to ``aask``, closed after the test."""
    made: list[Session] = []

    def open_one(settings: Settings) -> Session:
        made.append(Session(settings))
        return made[-1]

    yield open_one
    for session in made:
        await session.aclose()


async def test_every_source_runs_at_once_and_results_merge(st: Settings) -> None:
    a = MemorySource("wiki", WIKI, delay=0.2)
    b = MemorySource("chat", CHAT, delay=0.2)
    async with Session(st) as session:
        answer = await aask(
            "What did we decide about the API migration?", sources=[a, b], session=session, today=TODAY
        )
    assert a.started is not None
    assert b.started is not None
    assert a.finished is not None
    assert b.finished is not None
    assert max(a.started, b.started) < min(a.finished, b.finished), "the sources ran one after the other"
    assert [r.status for r in answer.reports] == ["ok", "ok"]
    assert {h.hit.source for h in answer.hits} == {"wiki", "chat"}
    assert answer.text
    assert answer.citations


async def test_a_slow_or_failing_source_never_loses_the_others(opened: Opened, tmp_path: Path) -> None:
    st = load_settings(state_dir=tmp_path / "s", source_timeout=1.0)
    good = MemorySource("wiki", WIKI)
    slow = MemorySource("slow", CHAT, delay=5)
    broken = MemorySource("broken", CHAT, fail=RuntimeError("disk on fire"))
    limited = MemorySource(
        "limited", CHAT, fail=SourceRateLimited("limited", "429 from the API", retry_after=42)
    )
    answer = await aask("API migration timeline", sources=[good, slow, broken, limited], session=opened(st))
    by = {r.source: r for r in answer.reports}
    assert by["wiki"].status == "ok"
    assert by["slow"].status == "timeout"
    assert by["broken"].status == "failed"
    assert "disk on fire" in (by["broken"].error or "")
    assert by["limited"].status == "rate_limited"
    assert by["limited"].retry_after == 42
    assert answer.hits
    assert all(h.hit.source == "wiki" for h in answer.hits)


async def test_an_empty_source_is_asked_again_with_the_broader_query(opened: Opened, st: Settings) -> None:
    picky = MemorySource("wiki", WIKI, needs_at_most=2)
    answer = await aask(
        "PostgreSQL API migration timeline decision after:2025-01-01",
        sources=[picky],
        session=opened(st),
        today=TODAY,
    )
    report = answer.reports[0]
    assert len(report.queries) >= 2, report
    assert report.broadened, "the report says what broadening dropped"
    assert report.status == "ok"
    assert answer.hits


async def test_nothing_anywhere_suggests_rewordings(opened: Opened, st: Settings) -> None:
    answer = await aask(
        "Kubernetes cluster upgrade plan",
        sources=[MemorySource("wiki", WIKI)],
        session=opened(st),
        today=TODAY,
    )
    assert answer.hits == ()
    assert answer.text.startswith("Nothing found in wiki")
    assert answer.suggestions, "rewordings are offered"
    assert answer.reports[0].status == "empty"


def _sentences_supported(answer_text: str, citations: list, sources: list) -> None:  # type: ignore[type-arg]
    for c in citations:
        cited = sources[c.marker - 1].hit
        assert c.sentence in (cited.text or cited.snippet), (c.sentence, cited.text)
        assert answer_text[c.start : c.end].startswith(c.sentence)


async def test_extractive_answer_cites_every_sentence_from_its_source(opened: Opened, st: Settings) -> None:
    answer = await aask(
        "When is the API migration finished?",
        sources=[MemorySource("wiki", WIKI), MemorySource("chat", CHAT)],
        session=opened(st),
        today=TODAY,
    )
    assert answer.writer == "extractive"
    assert "March 2026" in answer.text
    _sentences_supported(answer.text, list(answer.citations), list(answer.sources))
    for part in answer.text.split("] "):
        assert "[" in part, f"a sentence without a citation: {part!r}"


async def test_authority_follows_the_query_type(opened: Opened, st: Settings) -> None:
    docs = [
        Doc("chat", "The expense policy limit is 100 dollars per dinner, someone said.", "chat"),
        Doc("wiki", "Expense policy: the limit is 80 dollars per dinner.", "wiki"),
    ]
    answer = await aask(
        "What is the expense policy limit?", sources=[MemorySource("m", docs)], session=opened(st)
    )
    assert answer.plan.query_type.kind == "fact"
    assert answer.hits[0].hit.authority == "wiki"
    factors = {f.name: f for f in answer.hits[0].factors}
    assert factors["authority"].weight == 0.4
    assert "level 1" in factors["authority"].note


MIGRATIONS_SPLIT = [
    Doc("Phoenix", "The database migration to PostgreSQL 16 starts in May."),
    Doc("Phoenix 2", "Database migration dry run passed on staging."),
    Doc("Cloud", "The cloud migration from AWS to GCP is halfway."),
    Doc("Cloud 2", "Cloud migration budget was approved."),
    Doc("Mail", "Email migration from Exchange to O365 finished."),
    Doc("Mail 2", "Email migration left 3 mailboxes behind."),
]


async def test_clearly_different_readings_get_one_clarifying_question(opened: Opened, st: Settings) -> None:
    answer = await aask("migration 찾아줘", sources=[MemorySource("m", MIGRATIONS_SPLIT)], session=opened(st))
    assert answer.clarification is not None
    labels = {r.label for r in answer.readings}
    assert labels == {"database migration", "cloud migration", "email migration"}
    assert answer.writer == "none"
    chosen = await aask(
        "migration 찾아줘",
        sources=[MemorySource("m", MIGRATIONS_SPLIT)],
        reading="cloud migration",
        session=opened(st),
    )
    assert chosen.clarification is None
    assert all("cloud" in h.hit.text.lower() for h in chosen.hits)


async def test_one_dominant_reading_asks_nothing(opened: Opened, st: Settings) -> None:
    docs = [
        *MIGRATIONS_SPLIT[:2],
        Doc("Phoenix 3", "Database migration rollback plan."),
        Doc("Phoenix 4", "Database migration owners: Kim."),
        Doc("Cloud", "Cloud migration is paused."),
    ]
    answer = await aask("migration status", sources=[MemorySource("m", docs)], session=opened(st))
    assert answer.clarification is None
    assert answer.readings
    assert answer.readings[0].label == "database migration"
    assert answer.text


async def test_internal_questions_stay_off_the_configured_web(st: Settings, server: LocalServer) -> None:
    server.route(
        "/sx/search", Reply(body=json.dumps({"query": "x", "results": []}), content_type="application/json")
    )
    st = load_settings(
        state_dir=st.state_dir,
        provider_options={"searxng": {"url": f"{server.url}/sx"}},
        providers=["searxng"],
        sources=["web"],
    )
    async with Session(st) as session:
        configured = await aask("우리 회사 휴가 규정 알려줘", session=session)
        assert server.hits("/sx/search") == 0
        assert any("web left out" in w for w in configured.warnings)
        # named in the ask (-S web), the web is searched: the asker's choice wins over the route
        named = await aask("Terraform state lock from:kim", sources=["web"], session=session)
    assert server.hits("/sx/search") >= 1
    assert "web" in {r.source for r in named.reports}
    assert any("as asked" in w for w in named.warnings), named.warnings


async def test_the_web_joins_through_the_provider_chain(
    opened: Opened, st: Settings, server: LocalServer
) -> None:
    body = {
        "query": "x",
        "results": [
            {"url": "https://react.dev/reference/rsc/server-components", "title": "Server Components",
             "content": "React Server Components render ahead of time, before bundling."},
        ],
        "unresponsive_engines": [],
    }  # fmt: skip
    server.route("/sx/search", Reply(body=json.dumps(body), content_type="application/json"))
    st = load_settings(
        state_dir=st.state_dir,
        provider_options={"searxng": {"url": f"{server.url}/sx"}},
        providers=["searxng"],
    )
    answer = await aask(
        "React Server Components latest changes",
        sources=["web", MemorySource("wiki", WIKI)],
        session=opened(st),
    )
    web = [h for h in answer.hits if h.hit.kind == "web"]
    assert web
    assert web[0].hit.tier == 1
    assert {r.source: r.status for r in answer.reports}["web"] == "ok"


def _chat_reply(content: str) -> Reply:
    body = {"id": "x", "object": "chat.completion", "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}]}  # fmt: skip
    return Reply(body=json.dumps(body), content_type="application/json")


async def test_model_answer_keeps_supported_citations_and_flags_the_rest(
    opened: Opened, st: Settings, server: LocalServer
) -> None:
    server.route(
        "/v1/chat/completions",
        _chat_reply(
            "The API migration finishes by March 2026 [1]. "
            "The old API stays read-only [1][2]. "
            "Clients must pay a migration fee [1]."
        ),
    )
    st = load_settings(state_dir=st.state_dir, model_url=f"{server.url}/v1", model_name="test")
    sources = [MemorySource("wiki", WIKI), MemorySource("chat", CHAT)]
    answer = await aask("When does the API migration finish?", sources=sources, session=opened(st))
    assert answer.writer == "model"
    assert "March 2026" in answer.text
    assert "fee" not in answer.text
    assert any("fee" in d for d in answer.dropped)
    assert any("[2] does not support" in d for d in answer.dropped)
    sent = json.loads(server.seen[-1].body)
    assert sent["model"] == "test"
    assert "[1]" in sent["messages"][1]["content"]


@pytest.mark.parametrize(
    "reply", [Reply(status=500, body="boom"), Reply(body="not json"), _chat_reply("Nothing cites here.")]
)
async def test_a_broken_model_falls_back_to_the_extractive_answer(
    opened: Opened, st: Settings, server: LocalServer, reply: Reply
) -> None:
    server.route("/v1/chat/completions", reply)
    st = load_settings(state_dir=st.state_dir, model_url=f"{server.url}/v1")
    answer = await aask("API migration timeline", sources=[MemorySource("wiki", WIKI)], session=opened(st))
    assert answer.writer == "extractive"
    assert any("model answer unavailable" in w for w in answer.warnings)


async def test_a_model_that_is_down_falls_back(opened: Opened, st: Settings) -> None:
    st = load_settings(state_dir=st.state_dir, model_url="http://127.0.0.1:9/v1", model_timeout=1)
    answer = await aask("API migration timeline", sources=[MemorySource("wiki", WIKI)], session=opened(st))
    assert answer.writer == "extractive"
    assert answer.citations


async def test_cancelling_the_ask_cancels_every_source(opened: Opened, st: Settings) -> None:
    a = MemorySource("a", WIKI, delay=10)
    b = MemorySource("b", CHAT, delay=10)
    task = asyncio.create_task(aask("API migration timeline", sources=[a, b], session=opened(st)))
    await asyncio.sleep(0.2)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert a.cancelled
    assert b.cancelled


@pytest.mark.parametrize(
    ("question", "kwargs", "error"),
    [
        ("", {}, InvalidQuery),
        ("x" * 5000, {}, InvalidQuery),
        ("API migration", {"sources": ["nope"]}, InvalidOption),
        ("API migration", {"limit": 0}, InvalidOption),
        ("API migration", {"sources": ["code:"]}, InvalidOption),
    ],
)
async def test_bad_input_is_a_clear_error(
    opened: Opened, st: Settings, question: str, kwargs: dict, error: type
) -> None:  # type: ignore[type-arg]
    with pytest.raises(error):
        await aask(question, session=opened(st), **kwargs)


async def test_when_every_source_fails_the_answer_says_so_not_nothing_found(
    opened: Opened, tmp_path: Path
) -> None:
    st = load_settings(state_dir=tmp_path / "s", source_timeout=0.2)
    answer = await aask(
        "API migration timeline",
        sources=[MemorySource("slow", CHAT, delay=5), MemorySource("wiki", [])],
        session=opened(st),
    )
    assert answer.hits == ()
    assert answer.text.startswith("No answer: slow timeout"), answer.text
    assert "Nothing found in wiki" in answer.text


class NearestSource(MemorySource):
    """Returns every document for any query, best first by shared terms, as a semantic index returns
    its nearest neighbours however far they are."""

    async def search(self, query: SourceQuery, *, limit: int | None = None) -> SourceResult:
        parsed, warnings = self.parse(query)
        words = set(analyze(parsed.text))
        hits = [
            self.hit(i, doc, 0.1 + len(words & set(analyze(f"{doc.title} {doc.text}"))))
            for i, doc in enumerate(self.docs)
        ]
        hits.sort(key=lambda h: -h.score)
        return self.result(query, hits[: limit or 10], warnings)


OFF_TOPIC = [
    Doc(
        "Configuration",
        "Web provider keys are read from their usual variables: `BRAVE_API_KEY`, `TAVILY_API_KEY`. "
        "A config file sets the state directory.",
    ),
    Doc("Korean search", "Mixed Korean and English works: `API 버전 관리`. Stems match."),
    Doc("Code", "```python\ndef main():\n    return load_settings()\n```"),
]


@pytest.mark.parametrize(
    "question", ["What did we decide about the API migration timeline?", "zzqx vvbn wqpo", "a" * 2000]
)
async def test_a_question_nothing_answers_says_so_instead_of_citing_filler(
    opened: Opened, st: Settings, question: str
) -> None:
    from sourcewise.doors.present import render_answer

    answer = await aask(question, sources=[NearestSource("kb", OFF_TOPIC)], session=opened(st), today=TODAY)
    assert answer.hits, "the source returned its nearest passages"
    assert answer.answered is False
    assert answer.citations == ()
    assert answer.sources == ()
    assert answer.text.startswith("Nothing in kb answers this question"), answer.text
    assert "[1]" not in answer.text
    shown = render_answer(answer, "quick")
    assert "Closest results (may not answer):" in shown
    assert "- Configuration - memory://kb/0" in shown or "- Korean search - memory://kb/1" in shown
    assert "[1]" not in shown


async def test_a_sentence_covering_the_question_still_answers_it(opened: Opened, st: Settings) -> None:
    docs = [*OFF_TOPIC, Doc("Migration plan", "The API migration timeline ends in March. Pizza on Fridays.")]
    answer = await aask(
        "What did we decide about the API migration timeline?",
        sources=[NearestSource("kb", docs)],
        session=opened(st),
        today=TODAY,
    )
    assert answer.answered is True
    assert answer.text == "The API migration timeline ends in March.[1]"
    assert answer.sources[0].hit.title == "Migration plan"


async def test_minor_ambiguity_answers_with_the_best_of_each_reading(opened: Opened, st: Settings) -> None:
    docs = [
        Doc("Phoenix", "The database migration to PostgreSQL 16 starts in May."),
        Doc("Phoenix 2", "Database migration dry run passed on staging."),
        Doc("Cloud", "The cloud migration from AWS to GCP is halfway."),
        Doc("Mail", "Email migration from Exchange to O365 finished."),
    ]
    answer = await aask("migration 찾아줘", sources=[MemorySource("m", docs)], session=opened(st))
    assert answer.clarification is None
    labels = [r.label for r in answer.readings]
    assert set(labels) == {"database migration", "cloud migration", "email migration"}
    cited = [s.reading for s in answer.sources]
    assert set(cited) == set(labels), answer.text
    assert "PostgreSQL" in answer.text or "dry run" in answer.text
    assert "AWS to GCP" in answer.text
    assert "Exchange to O365" in answer.text
    assert answer.sources[0].hit.location == answer.hits[0].hit.location, "the best hit still opens"
    tags = {h.hit.title: h.reading for h in answer.hits}
    assert tags == {
        "Phoenix": "database migration",
        "Phoenix 2": "database migration",
        "Cloud": "cloud migration",
        "Mail": "email migration",
    }
    _sentences_supported(answer.text, list(answer.citations), list(answer.sources))


@pytest.mark.parametrize("fmt", ["quick", "deep", "progressive"])
async def test_every_format_numbers_its_sources_as_the_answer_markers(
    opened: Opened, st: Settings, fmt: str
) -> None:
    from sourcewise.doors.present import render_answer

    docs = [
        Doc("API migration timeline", "The API migration waits on legal. Owners: Kim."),
        Doc("Notes", "The API migration timeline ends in March."),
        Doc("Lunch", "API lunch is on Fridays."),
    ]
    answer = await aask(
        "API migration timeline and owners", sources=[MemorySource("m", docs)], session=opened(st)
    )
    assert len(answer.sources) >= 2
    assert answer.hits[0].hit.location != answer.sources[0].hit.location, "cited order differs from rank"
    shown = render_answer(answer, fmt, explain=True, specs=["m", "code:./my repo"])
    lines = shown.split("\n")
    for c in answer.citations:
        assert f"[{c.marker}]" in answer.text
        numbered = [line for line in lines if line.startswith(f"[{c.marker}] ")]
        assert len(numbered) == 1, shown
        assert c.location in numbered[0], (c.marker, numbered[0])
    listed = [line for line in lines if line[:1] == "[" and "] " in line]
    assert len(listed) == len(answer.sources), "every source once, nothing else numbered"
    for line in listed:  # --explain: each numbered source is followed by its factors
        follows = lines[lines.index(line) + 1]
        assert follows.startswith("    relevance "), shown
        assert "keyword" in follows
    if fmt == "progressive":
        assert (
            "sourcewise ask 'API migration timeline and owners' -S m -S 'code:./my repo' --format deep --explain"
            in shown
        )
    if fmt == "deep":
        assert f"All results ({len(answer.hits)}), by relevance:" in shown


async def test_a_release_question_asks_gemini_the_question_itself(
    opened: Opened, st: Settings, server: LocalServer
) -> None:
    body = {
        "candidates": [
            {
                "content": {"role": "model", "parts": [{"text": "Python 3.14 adds template strings."}]},
                "groundingMetadata": {
                    "groundingChunks": [
                        {
                            "web": {
                                "uri": "https://docs.python.org/3/whatsnew/3.14.html",
                                "title": "python.org",
                            }
                        }
                    ],
                    "groundingSupports": [
                        {
                            "segment": {
                                "startIndex": 0,
                                "endIndex": 34,
                                "text": "Python 3.14 adds template strings.",
                            },
                            "groundingChunkIndices": [0],
                        }
                    ],
                },
            }
        ]
    }
    server.route("/models/gm:generateContent", Reply(body=json.dumps(body), content_type="application/json"))
    gemini = load_settings(
        state_dir=st.state_dir,
        providers=["gemini", "searxng"],
        provider_options={
            "gemini": {"api_key": "k", "url": f"{server.url}/models", "model": "gm"},
            "searxng": {"url": f"{server.url}/sx"},
        },
        source_timeout=5.0,
    )
    question = "What changed in Python 3.14?"
    answer = await aask(question, session=opened(gemini), today=TODAY)  # default sources: kb + the web
    assert answer.route.action == "search", answer.route.reason
    assert {r.source: r.status for r in answer.reports}["web"] == "ok", answer.reports
    sent = [json.loads(s.body) for s in server.seen if s.path.endswith(":generateContent")]
    assert sent, "Gemini was asked"
    assert sent[0]["contents"][0]["parts"][0]["text"] == question
    assert server.hits("/sx/search") == 0
    assert "template strings" in answer.text
    keywords = load_settings(
        state_dir=st.state_dir,
        providers=["searxng"],
        provider_options={"searxng": {"url": f"{server.url}/sx"}},
    )
    async with Session(keywords) as session:
        web = session.source("web")
        assert web.query_for(answer.plan)[0].query != question, "a keyword engine keeps the keyword query"


async def test_an_unavailable_source_beside_a_good_one(opened: Opened, st: Settings) -> None:
    from sourcewise.doors.present import render_answer
    from sourcewise.errors import SourceUnavailable

    down = MemorySource("tracker", CHAT, fail=SourceUnavailable("tracker", "the export file is missing"))
    answer = await aask(
        "When is the API migration finished?", sources=[down, MemorySource("wiki", WIKI)], session=opened(st)
    )
    by = {r.source: r for r in answer.reports}
    assert by["tracker"].status == "unavailable"
    assert by["wiki"].status == "ok"
    assert answer.answered
    assert "March 2026" in answer.text
    assert {s.hit.source for s in answer.sources} == {"wiki"}
    shown = render_answer(answer, "quick")
    assert "! tracker: unavailable, skipped (the export file is missing)" in shown.split("\n")
    assert "wiki" not in "\n".join(line for line in shown.split("\n") if line.startswith("!"))


async def test_the_terminal_answer_keeps_the_indentation_of_its_code(opened: Opened, st: Settings) -> None:
    # `sourcewise ask "How do I index my notes?"` printed a Python loop's body flush left: every
    # line of the answer was stripped on both sides for the terminal.
    from sourcewise.doors.present import render_answer

    code = '```python\nfor hit in kb.search("notes"):\n    print(hit.location)\n```'
    answer = await aask(
        "How do I search the knowledge base for notes?",
        sources=[
            MemorySource("wiki", [Doc("Searching", "To search the knowledge base for notes:\n\n" + code)])
        ],
        session=opened(st),
    )
    assert "    print(hit.location)" in answer.text
    shown = render_answer(answer, "quick").split("\n")
    assert "    print(hit.location)" in shown
    assert all(line == line.rstrip() for line in shown)
