"""ddgs driven against a server on 127.0.0.1 (its DuckDuckGo backend's URL pointed there), and the
Instant Answer parser on responses written here in the API's documented shape."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sourcewise import (
    NoProviderAvailable,
    ParseError,
    ProviderError,
    RateLimited,
    TransientError,
    load_settings,
)
from sourcewise.config import Settings
from sourcewise.web.engine import Engine
from sourcewise.web.providers import ddgs_text, duckduckgo_instant
from sourcewise.web.providers.base import HttpResponse

from conftest import shared
from servers import LocalServer, Reply

JSON = "application/json"


@pytest.fixture
def ddg_backend(server: LocalServer, monkeypatch: pytest.MonkeyPatch) -> LocalServer:
    """ddgs's own seam: its DuckDuckGo engine's endpoint, here on 127.0.0.1."""
    import ddgs.engines.duckduckgo as ddg

    monkeypatch.setattr(ddg.Duckduckgo, "search_url", f"{server.url}/html/")
    return server


def ddgs_settings(tmp_path: Path, **extra: Any) -> Settings:
    options: dict[str, Any] = {
        "providers": ["ddgs"],
        "provider_options": {"ddgs": {"backend": "duckduckgo"}},
        "state_dir": tmp_path / "state",
        "timeout": 3.0,
    }
    options["provider_options"] = {**options["provider_options"], **extra.pop("provider_options", {})}
    return load_settings(**{**options, **extra})


async def test_ddgs_parses_a_recorded_results_page(ddg_backend: LocalServer, tmp_path: Path) -> None:
    html = shared("providers", "duckduckgo", "ddg_html.html").read_text("utf-8")
    ddg_backend.route("/html/", Reply(200, html))
    response = await Engine(ddgs_settings(tmp_path)).asearch("caffeine and sleep", max_results=5)
    assert response.provider == "ddgs"
    assert len(response.results) == 5
    assert "https://www.sleepfoundation.org/nutrition/caffeine-and-sleep" in {r.url for r in response.results}
    assert all("duckduckgo.com" not in r.url for r in response.results)  # redirect links unwrapped
    assert ddg_backend.seen[0].method == "POST"
    assert "caffeine" in ddg_backend.seen[0].body.decode()


async def test_ddgs_refusal_moves_the_chain_on_to_instant_answers(
    ddg_backend: LocalServer, tmp_path: Path
) -> None:
    ddg_backend.route("/html/", Reply(429, "slow down"))
    instant = {
        "AbstractURL": "https://en.wikipedia.org/wiki/Caffeine",
        "Heading": "Caffeine",
        "AbstractText": "A stimulant.",
    }
    ddg_backend.route("/ddi", Reply(200, json.dumps(instant), content_type=JSON))
    s = ddgs_settings(
        tmp_path,
        providers=["ddgs", "duckduckgo_instant"],
        provider_options={"duckduckgo_instant": {"url": f"{ddg_backend.url}/ddi"}},
    )
    response = await Engine(s).asearch("caffeine and sleep")
    assert response.provider == "duckduckgo_instant"
    assert response.results[0].url == "https://en.wikipedia.org/wiki/Caffeine"
    assert response.attempts[0][0] == "ddgs"
    assert "every backend refused" in response.attempts[0][1]


async def test_ddgs_slow_backend_is_transient_under_the_deadline(
    ddg_backend: LocalServer, tmp_path: Path
) -> None:
    # Past the 1 s deadline the search gives up as transient; had it waited the 3 s, the empty page
    # would have been read and refused ("every backend refused"), not called transient.
    ddg_backend.route("/html/", Reply(200, "<html></html>", delay=3.0))
    with pytest.raises(NoProviderAvailable, match="transient"):
        await Engine(ddgs_settings(tmp_path, timeout=1.0)).asearch("caffeine and sleep")


@pytest.mark.parametrize(
    ("exc", "error"),
    [
        ("RatelimitException", RateLimited),
        ("TimeoutException", TransientError),
        ("DDGSException", TransientError),
    ],
)
def test_ddgs_exceptions_map_to_typed_errors(exc: str, error: type[Exception]) -> None:
    import ddgs.exceptions

    mapped = ddgs_text.error_for(getattr(ddgs.exceptions, exc)("boom"))
    assert type(mapped) is error
    assert mapped.provider == "ddgs"


def test_ddgs_no_results_is_not_mistaken_for_zero_results() -> None:
    from ddgs.exceptions import DDGSException

    mapped = ddgs_text.error_for(DDGSException("No results found."))
    assert type(mapped) is ProviderError
    assert mapped.policy == "skip"


async def test_ddgs_rate_limit_suspends(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from ddgs.exceptions import RatelimitException

    def refuse(*args: object) -> object:
        raise RatelimitException("202 Ratelimit")

    monkeypatch.setattr(ddgs_text, "search_sync", refuse)
    engine = Engine(ddgs_settings(tmp_path))
    with pytest.raises(NoProviderAvailable, match="suspended"):
        await engine.asearch("caffeine and sleep")
    assert engine.state.suspended("ddgs", time.time()) is not None


@settings(deadline=None)
@given(
    st.recursive(
        st.none() | st.integers() | st.text(max_size=30),
        lambda inner: (
            st.lists(inner, max_size=3)
            | st.dictionaries(st.sampled_from(["title", "href", "body"]), inner, max_size=3)
        ),
        max_leaves=12,
    )
)
def test_ddgs_item_parser_gives_results_or_a_parse_error(items: Any) -> None:
    try:
        results = ddgs_text.parse_items(items)
    except ParseError as exc:
        provider = exc.provider
        assert provider == "ddgs"
        return
    assert all(r.provider == "ddgs" for r in results)


# -- Instant Answer API ---------------------------------------------------------------------------
INSTANT = {
    "Heading": "Python (programming language)",
    "AbstractText": "Python is a high-level, general-purpose programming language.",
    "AbstractSource": "Wikipedia",
    "AbstractURL": "https://en.wikipedia.org/wiki/Python_(programming_language)",
    "Abstract": "",
    "Answer": "",
    "Definition": "",
    "DefinitionURL": "",
    "Type": "A",
    "Results": [
        {
            "FirstURL": "https://www.python.org/",
            "Text": "Official site",
            "Result": '<a href="https://www.python.org/"><b>Official site</b></a>',
        }
    ],
    "RelatedTopics": [
        {
            "FirstURL": "https://duckduckgo.com/CPython",
            "Text": "CPython The reference implementation of Python.",
            "Result": '<a href="https://duckduckgo.com/CPython">CPython</a>The reference implementation of Python.',
        },
        {
            "Name": "Implementations",
            "Topics": [
                {
                    "FirstURL": "https://duckduckgo.com/PyPy",
                    "Text": "PyPy - A fast, compliant alternative implementation.",
                    "Result": '<a href="https://duckduckgo.com/PyPy">PyPy</a>A fast, compliant alternative implementation.',
                }
            ],
        },
    ],
}


def test_instant_answer_abstract_results_and_topics() -> None:
    results = duckduckgo_instant.parse(HttpResponse(200, json.dumps(INSTANT)))
    assert [r.url for r in results] == [
        "https://en.wikipedia.org/wiki/Python_(programming_language)",
        "https://www.python.org/",
        "https://duckduckgo.com/CPython",
        "https://duckduckgo.com/PyPy",
    ]
    assert results[0].title == "Python (programming language)"
    assert results[2].title == "CPython"
    assert results[2].snippet == "The reference implementation of Python."
    assert results[3].snippet == "A fast, compliant alternative implementation."
    assert results[1].title == "Official site"  # nested markup: the Text is the title


def test_instant_answer_empty_is_zero_results_and_request_shape() -> None:
    empty = {k: ("" if isinstance(v, str) else []) for k, v in INSTANT.items()}
    assert duckduckgo_instant.parse(HttpResponse(200, json.dumps(empty))) == []
    request = duckduckgo_instant.build("python", 5, duckduckgo_instant.InstantOptions())
    assert request.params["format"] == "json"
    assert request.url == "https://api.duckduckgo.com/"


@settings(deadline=None)
@given(st.data())
def test_instant_answer_wrong_shapes_are_parse_errors(data: st.DataObject) -> None:
    body: Any = json.loads(json.dumps(INSTANT))
    spots = [(body, k) for k in ("AbstractURL", "Heading", "Results", "RelatedTopics", "Definition")]
    spots += [
        (body["Results"], 0),
        (body["Results"][0], "FirstURL"),
        (body["RelatedTopics"], 1),
        (body["RelatedTopics"][1], "Topics"),
    ]
    container, key = data.draw(st.sampled_from(spots))
    container[key] = data.draw(
        st.none() | st.integers() | st.text(max_size=5) | st.lists(st.integers(), max_size=2) | st.booleans()
    )
    text = json.dumps(data.draw(st.sampled_from([body, [body], "x"])))
    try:
        results = duckduckgo_instant.parse(HttpResponse(200, text))
    except ParseError as exc:
        provider = exc.provider
        assert provider == "duckduckgo_instant"
        return
    assert all(r.url for r in results)
