"""Hostile input for ask, search_sources and source specs: a result or a SourcewiseError, never another."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sourcewise.config import Settings
from sourcewise.errors import SourcewiseError
from sourcewise.loops.ask import aask
from sourcewise.session import Session
from sourcewise.sources import resolve_sources
from sourcewise.sources.api import asearch_sources
from test_ask import CHAT, WIKI, MemorySource

HOSTILE = st.one_of(
    st.text(max_size=300),
    st.text(alphabet=st.sampled_from("\x00\x1b[]()\"':-#@\u202e\ud800 가나다 migration API"), max_size=200),
    st.just("x" * 10_000),
    st.builds(lambda s: "from:" * 500 + s, st.text(max_size=10)),
)
SPECS = st.lists(
    st.one_of(
        st.text(max_size=40), st.sampled_from(["kb", "web", "code:", "code:/nonexistent", ":", "web:x"])
    ),
    max_size=4,
)
FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def state(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One state directory for every example of the module (a fixture per example is refused)."""
    return tmp_path_factory.mktemp("state")


@FAST
@given(question=HOSTILE)
def test_ask_takes_any_question(question: str, state: Path) -> None:
    st_ = Settings(state_dir=state, source_timeout=2)

    async def go() -> None:
        sources = [MemorySource("wiki", WIKI), MemorySource("chat", CHAT)]
        async with Session(st_) as session:
            answer = await aask(question, sources=sources, session=session)
        for c in answer.citations:
            assert 1 <= c.marker <= len(answer.sources)
        assert not any(ord(ch) < 32 and ch != "\n" for ch in answer.text)

    try:
        asyncio.run(go())
    except SourcewiseError as exc:
        message = str(exc)
        assert message, repr(exc)  # noqa: PT017 (hypothesis cannot use pytest.raises: most inputs succeed)


@FAST
@given(specs=SPECS)
def test_source_specs_resolve_or_raise_clearly(specs: list[str], state: Path) -> None:
    try:
        resolve_sources(specs, Settings(state_dir=state))
    except SourcewiseError as exc:
        message = str(exc)
        assert message, repr(exc)  # noqa: PT017 (hypothesis cannot use pytest.raises: most inputs succeed)


@FAST
@given(query=HOSTILE)
def test_search_sources_takes_any_query(query: str, state: Path) -> None:
    try:
        asyncio.run(asearch_sources(query, [MemorySource("wiki", WIKI)], settings=Settings(state_dir=state)))
    except SourcewiseError as exc:
        message = str(exc)
        assert message, repr(exc)  # noqa: PT017 (hypothesis cannot use pytest.raises: most inputs succeed)
