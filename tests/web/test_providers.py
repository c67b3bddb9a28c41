"""Each provider's pure parse/build against real recorded responses and our own fixtures."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_gemini import cassette

from sourcewise import (
    AuthError,
    Blocked,
    ParseError,
    ProviderError,
    ProviderNotConfigured,
    QuotaExceeded,
    RateLimited,
    TransientError,
)
from sourcewise.web.providers import brave, duckduckgo, google, load_providers, searxng, tavily
from sourcewise.web.providers.base import HttpResponse

from conftest import FIXTURES, shared


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text("utf-8")


def ok(text: str, status: int = 200, **kw: Any) -> HttpResponse:
    return HttpResponse(status=status, text=text, **kw)


# -- registry -----------------------------------------------------------------------------------
def test_builtins_register_through_entry_points() -> None:
    from importlib.metadata import entry_points

    names = {ep.name for ep in entry_points(group="sourcewise.providers")}
    assert {"duckduckgo", "searxng", "brave", "tavily", "google"} <= names
    assert set(load_providers()) >= names


# -- DuckDuckGo -----------------------------------------------------------------------------------
def test_ddg_recorded_results_page() -> None:
    results = duckduckgo.parse(ok(shared("providers", "duckduckgo", "ddg_html.html").read_text("utf-8")))
    assert len(results) == 9
    assert results[0].title == "Caffeine and Sleep Problems"
    assert results[0].url == "https://www.sleepfoundation.org/nutrition/caffeine-and-sleep"  # unwrapped
    assert [r.position for r in results] == list(range(1, 10))
    assert all(r.url.startswith("https://") and "duckduckgo.com" not in r.url for r in results)
    assert results[0].published is not None
    assert results[0].published.year == 2025
    assert all(r.snippet for r in results)


def test_ddg_recorded_challenge_page_is_blocked_not_empty() -> None:
    with pytest.raises(Blocked, match="challenge"):
        duckduckgo.parse(ok(shared("providers", "duckduckgo", "ddg_lite.html").read_text("utf-8")))


def test_ddg_given_a_foreign_page_is_a_parse_error() -> None:
    with pytest.raises(ParseError):
        duckduckgo.parse(ok(shared("providers", "duckduckgo", "bing.html").read_text("utf-8")))


def test_ddg_http_202_is_blocked() -> None:
    with pytest.raises(Blocked):
        duckduckgo.parse(ok("<html></html>", status=202))


def test_ddg_no_results_page_is_empty() -> None:
    assert duckduckgo.parse(ok(fixture("ddg_no_results.html"))) == []


def test_ddg_skips_ads_and_handles_direct_links() -> None:
    results = duckduckgo.parse(ok(fixture("ddg_two_results.html")))
    assert [r.url for r in results] == [
        "https://react.dev/reference/react/hooks",
        "https://medium.com/@someone/hooks",
    ]
    assert results[0].title == "Built-in React Hooks – React"


def test_ddg_build_is_a_form_post() -> None:
    request = duckduckgo.build("react hooks", 10, duckduckgo.DuckDuckGoOptions())
    assert request.method == "POST"
    assert request.data is not None
    assert request.data["q"] == "react hooks"


# -- SearXNG ------------------------------------------------------------------------------------
def test_searxng_recorded_response() -> None:
    text = shared("providers", "searxng", "atman", "searxng_response.json").read_text("utf-8")
    results = searxng.parse(ok(text))
    assert len(results) == 27
    assert results[0].url.startswith("https://coffee.stackexchange.com/")
    assert all(r.title for r in results)


def test_searxng_zero_results_because_engines_failed_is_not_no_results() -> None:
    with pytest.raises(Blocked, match="CAPTCHA"):
        searxng.parse(ok(fixture("searxng_captcha_empty.json")))
    body = json.loads(fixture("searxng_captcha_empty.json"))
    body["unresponsive_engines"] = [["google", "timeout"]]
    with pytest.raises(TransientError, match="timeout"):
        searxng.parse(ok(json.dumps(body)))


def test_searxng_empty_is_empty() -> None:
    assert searxng.parse(ok(fixture("searxng_empty.json"))) == []


def test_searxng_json_format_disabled() -> None:
    with pytest.raises(AuthError, match=r"settings\.yml"):
        searxng.parse(ok("Forbidden", status=403))


def test_searxng_not_json() -> None:
    with pytest.raises(ParseError):
        searxng.parse(ok("<html>hello</html>"))


def test_searxng_needs_a_url() -> None:
    options = searxng.SearxngOptions()
    assert searxng.configured(options)[0] is False
    with pytest.raises(ProviderNotConfigured, match=r"SEARXNG_URL .*`url` under \[providers.searxng\]"):
        searxng.build("q", 10, options)
    request = searxng.build("q", 10, searxng.SearxngOptions(url="http://127.0.0.1:8888/"))
    assert request.url == "http://127.0.0.1:8888/search"
    assert request.params["format"] == "json"


# -- Brave ----------------------------------------------------------------------------------------
def test_brave_results() -> None:
    results = brave.parse(ok(fixture("brave_web.json")))
    assert [r.url for r in results] == [
        "https://fastapi.tiangolo.com/tutorial/dependencies/",
        "https://stackoverflow.com/questions/9/fastapi-dependency",
    ]
    assert results[0].published is not None
    assert brave.parse(ok(fixture("brave_no_web.json"))) == []


@pytest.mark.parametrize(
    ("name", "status", "error"),
    [
        ("brave_rate_limited.json", 429, RateLimited),
        ("brave_quota.json", 429, QuotaExceeded),
        ("brave_auth.json", 422, AuthError),
    ],
)
def test_brave_errors(name: str, status: int, error: type[ProviderError]) -> None:
    with pytest.raises(error):
        brave.parse(ok(fixture(name), status=status, retry_after=7.0))


def test_brave_rate_limit_carries_retry_after() -> None:
    with pytest.raises(RateLimited) as info:
        brave.parse(ok(fixture("brave_rate_limited.json"), status=429, retry_after=7.0))
    assert info.value.retry_after == 7.0
    assert info.value.policy == "suspend"


def test_brave_key_goes_in_the_header_and_never_in_messages() -> None:
    options = brave.BraveOptions(api_key="sekret-123")
    request = brave.build("q", 50, options)
    assert request.headers["X-Subscription-Token"] == "sekret-123"
    assert request.params["count"] == 20
    assert "sekret-123" not in repr(options)
    assert "sekret-123" not in brave.configured(options)[1]


@pytest.mark.parametrize(
    ("provider", "variable"),
    [(brave, "BRAVE_API_KEY"), (tavily, "TAVILY_API_KEY"), (google, "GOOGLE_CSE_KEY")],
)
def test_a_missing_key_names_the_providers_own_variable(provider: Any, variable: str) -> None:
    options = provider.PROVIDER.options()
    ready, detail = provider.configured(options)
    assert not ready
    assert variable in detail
    assert f"[providers.{provider.NAME}]" in detail
    with pytest.raises(ProviderNotConfigured, match=variable):
        provider.build("q", 5, options)


# -- Tavily --------------------------------------------------------------------------------------
def _cassettes() -> list[Path]:
    folder = shared("providers", "tavily", "pydantic-ai")
    found = sorted(folder.glob("*.yaml"))
    assert found, f"no recorded responses in {folder}"  # an empty folder must not pass for a checked one
    return found


def test_tavily_recorded_responses() -> None:
    for path in _cassettes():
        for interaction in cassette(path)["interactions"]:
            body = interaction["response"]["parsed_body"]
            results = tavily.parse(ok(json.dumps(body)))
            assert len(results) == len(body["results"]) > 0
            assert [r.url for r in results] == [item["url"] for item in body["results"]]
            assert all(r.provider == "tavily" for r in results)


def test_tavily_errors() -> None:
    with pytest.raises(QuotaExceeded, match="usage limit"):
        tavily.parse(ok(fixture("tavily_limit.json"), status=432))
    with pytest.raises(AuthError, match="TAVILY_API_KEY"):
        tavily.parse(ok(fixture("tavily_unauthorized.json"), status=401))
    with pytest.raises(RateLimited):
        tavily.parse(ok("{}", status=429))
    with pytest.raises(TransientError):
        tavily.parse(ok("oops", status=502))


def test_tavily_build() -> None:
    request = tavily.build("q", 5, tavily.TavilyOptions(api_key="tvly-x"))
    assert request.method == "POST"
    assert request.json == {"query": "q", "max_results": 5, "search_depth": "basic"}
    assert request.headers["Authorization"] == "Bearer tvly-x"


# -- Google Programmable Search -----------------------------------------------------------------
def test_google_recorded_responses() -> None:
    folder = shared("providers", "google_cse")
    recorded = sorted(folder.glob("*.json"))
    assert recorded, f"no recorded responses in {folder}"
    for path in recorded:
        body = json.loads(path.read_text("utf-8"))
        results = google.parse(ok(json.dumps(body)))
        assert [r.url for r in results] == [item["link"] for item in body["items"]]
        assert all(r.title for r in results)


def test_google_no_items_is_empty() -> None:
    assert google.parse(ok(fixture("google_no_items.json"))) == []


@pytest.mark.parametrize(
    ("name", "status", "error"),
    [
        ("google_quota.json", 429, QuotaExceeded),
        ("google_daily.json", 403, QuotaExceeded),
        ("google_bad_key.json", 400, AuthError),
    ],
)
def test_google_errors(name: str, status: int, error: type[ProviderError]) -> None:
    with pytest.raises(error):
        google.parse(ok(fixture(name), status=status))


def test_google_per_minute_limit_is_rate_limited() -> None:
    body = json.loads(fixture("google_quota.json"))
    body["error"]["message"] = "Quota exceeded for quota metric 'Queries' and limit 'Queries per minute'"
    with pytest.raises(RateLimited):
        google.parse(ok(json.dumps(body), status=429))


def test_google_needs_key_and_id() -> None:
    ready, detail = google.configured(google.GoogleOptions(api_key="k"))
    assert not ready
    assert "GOOGLE_CSE_ID" in detail
    assert "GOOGLE_CSE_KEY" not in detail
    request = google.build("q", 25, google.GoogleOptions(api_key="k", cse_id="cx1"))
    assert request.params["num"] == 10
    assert request.params["cx"] == "cx1"
