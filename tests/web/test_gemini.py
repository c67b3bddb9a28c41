"""The gemini provider: recorded generateContent responses, served from 127.0.0.1 end to end."""

from __future__ import annotations

import asyncio
import copy
import functools
import json
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sourcewise import (
    AuthError,
    NoProviderAvailable,
    ParseError,
    ProviderError,
    RateLimited,
    Session,
    load_settings,
)
from sourcewise.config import DEFAULT_CHAIN, Settings
from sourcewise.net.redirects import resolve_redirects
from sourcewise.registry import Registry
from sourcewise.web.engine import Engine
from sourcewise.web.providers import gemini, load_providers
from sourcewise.web.providers.base import HttpResponse

from conftest import shared
from servers import LocalServer, Reply, Seen

JSON = "application/json"
MODEL = "gemini-test"


@functools.cache
def _cassette(path: Path) -> Any:
    """A recording parsed once per test process, with libyaml where PyYAML has it (the pure-Python
    parser takes ~0.1 s a file, and most tests here replay the same one); callers get a deep copy,
    free to change it."""
    return yaml.load(path.read_text("utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def cassette(path: Path) -> Any:
    return copy.deepcopy(_cassette(path))


def recorded_bodies() -> list[tuple[str, dict[str, Any]]]:
    out = []
    for path in sorted(shared("providers", "gemini", "pydantic-ai").glob("*.yaml")):
        for interaction in cassette(path)["interactions"]:
            body = interaction["response"].get("parsed_body")
            uri = interaction["request"]["uri"]
            if ("generativelanguage" in uri or "aiplatform" in uri) and isinstance(body, dict):
                out.append((path.name, body))
    return out


def weather_body() -> dict[str, Any]:
    path = shared("providers", "gemini", "pydantic-ai", "test_google_model_web_search_tool.yaml")
    body = cassette(path)["interactions"][0]["response"]["parsed_body"]
    assert isinstance(body, dict)
    return body


def ok(body: Any, status: int = 200) -> HttpResponse:
    return HttpResponse(status=status, text=body if isinstance(body, str) else json.dumps(body))


# -- parsing the recordings ---------------------------------------------------------------------
def test_every_recorded_response_parses() -> None:
    bodies = recorded_bodies()
    assert len(bodies) >= 10
    grounded = 0
    for name, body in bodies:
        result = gemini.parse_grounded(ok(body))
        chunks = body["candidates"][0].get("groundingMetadata", {}).get("groundingChunks", [])
        assert len(result.results) == len(chunks), name
        assert [r.position for r in result.results] == list(range(1, len(chunks) + 1))
        grounded += bool(chunks)
    assert grounded >= 7


def test_results_keep_geminis_titles_and_the_sentence_they_ground() -> None:
    result = gemini.parse_grounded(ok(weather_body()))
    assert [r.title for r in result.results] == [
        "Weather information for San Francisco, CA, US",
        "weather.gov",
        "wunderground.com",
    ]
    assert result.results[1].snippet.startswith("According to the latest weather reports")
    assert result.text.startswith("## Weather in San Francisco")


def test_thoughts_are_not_part_of_the_answer() -> None:
    name, body = next(b for b in recorded_bodies() if "thinking" in b[0])
    parts = body["candidates"][0]["content"]["parts"]
    thought = next(p["text"] for p in parts if p.get("thought"))
    assert thought not in gemini.parse_grounded(ok(body)).text, name


def test_request_puts_the_key_in_a_header_and_asks_for_google_search() -> None:
    request = gemini.build(
        "what is new in python", 5, gemini.GeminiOptions(api_key="sekrit", model="gemini-x")
    )
    assert request.url.endswith("/models/gemini-x:generateContent")
    assert "sekrit" not in request.url
    assert request.headers["x-goog-api-key"] == "sekrit"
    assert request.json["tools"] == [{"google_search": {}}]


@pytest.mark.parametrize(
    ("status", "body", "error", "match"),
    [
        (
            400,
            {
                "error": {
                    "status": "INVALID_ARGUMENT",
                    "message": "API key not valid. Please pass a valid API key.",
                }
            },
            AuthError,
            "GEMINI_API_KEY",
        ),
        (429, {"error": {"status": "RESOURCE_EXHAUSTED", "message": "Quota exceeded"}}, RateLimited, "429"),
        (
            404,
            {"error": {"status": "NOT_FOUND", "message": "models/x is not found"}},
            ProviderError,
            r"`model` under \[providers.gemini\]",
        ),
        (200, {"promptFeedback": {"blockReason": "SAFETY"}}, ProviderError, "blocked"),
        (200, {"candidates": []}, ParseError, "no candidates"),
        (200, "<html>proxy error</html>", ParseError, "JSON"),
    ],
)
def test_errors_are_typed(status: int, body: Any, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        gemini.parse_grounded(ok(body, status))


_values = (
    st.none() | st.booleans() | st.integers() | st.text(max_size=5) | st.lists(st.integers(), max_size=2)
)


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_wrong_shapes_are_parse_errors(data: st.DataObject) -> None:
    body = copy.deepcopy(weather_body())
    candidate = body["candidates"][0]
    meta = candidate["groundingMetadata"]
    spots: list[tuple[Any, Any]] = [
        (body, "candidates"),
        (candidate, "content"),
        (candidate["content"], "parts"),
        (candidate["content"]["parts"], 0),
        (candidate["content"]["parts"][0], "text"),
        (candidate, "groundingMetadata"),
        (meta, "groundingChunks"),
        (meta["groundingChunks"], 1),
        (meta["groundingChunks"][1], "web"),
        (meta["groundingChunks"][1]["web"], "uri"),
        (meta, "groundingSupports"),
        (meta["groundingSupports"], 0),
        (meta["groundingSupports"][0], "segment"),
        (meta["groundingSupports"][0]["segment"], "endIndex"),
        (meta["groundingSupports"][0], "groundingChunkIndices"),
    ]
    container, key = data.draw(st.sampled_from(spots))
    container[key] = data.draw(_values)
    try:
        result = gemini.parse_grounded(ok(body))
    except ParseError as exc:
        provider = exc.provider
        assert provider == "gemini"
        return
    assert isinstance(result.text, str)  # a shape that still makes sense: parsed, and citable
    from sourcewise.web.cite import cite

    cite(result.text, result.metadata)


# -- end to end through the engine --------------------------------------------------------------
REAL = {1: "https://www.weather.gov/mtr/", 2: "https://www.wunderground.com/weather/us/ca/san-francisco"}


def serve(server: LocalServer, body: dict[str, Any], broken: set[int] = frozenset()) -> dict[str, Any]:  # type: ignore[assignment]
    """Serve ``body`` as the model's answer, its redirect links pointing at this server."""
    body = copy.deepcopy(body)
    for i, chunk in enumerate(body["candidates"][0]["groundingMetadata"]["groundingChunks"]):
        if "vertexaisearch" in chunk["web"]["uri"]:
            path = f"/grounding-api-redirect/{i}"
            chunk["web"]["uri"] = server.url + path
            reply = Reply(500, "oops") if i in broken else Reply(302, "", headers={"Location": REAL[i]})
            server.route(path, reply)
    server.route(f"/models/{MODEL}:generateContent", Reply(200, json.dumps(body), content_type=JSON))
    return body


def gemini_settings(server: LocalServer, tmp_path: Path, **extra: Any) -> Settings:
    options: dict[str, Any] = {
        "providers": ["gemini"],
        "provider_options": {"gemini": {"api_key": "sekrit", "url": f"{server.url}/models", "model": MODEL}},
        "gemini_redirect_hosts": ["127.0.0.1"],
        "allow_hosts": ["127.0.0.1"],
        "state_dir": tmp_path / "state",
        "timeout": 2.0,
    }
    options["provider_options"] = {**options["provider_options"], **extra.pop("provider_options", {})}
    return load_settings(**{**options, **extra})


async def test_search_returns_rated_real_pages_and_a_cited_answer(
    server: LocalServer, tmp_path: Path
) -> None:
    serve(server, weather_body())
    response = await Engine(gemini_settings(server, tmp_path)).asearch("weather in San Francisco")
    assert response.provider == "gemini"
    urls = {r.url for r in response.results}
    assert set(REAL.values()) <= urls
    gov = next(r for r in response.results if r.url == REAL[1])
    assert gov.title == "weather.gov"
    assert gov.canonical_url.startswith("https://weather.gov")
    assert response.answer is not None
    body, sources = response.answer.split("\n\nSources:\n")
    assert "69°F.[1]" in body
    assert "upper 50s.[2]" in body
    assert f"[2] weather.gov ({REAL[1]})" in sources.splitlines()
    seen: Seen = next(s for s in server.seen if s.path.endswith(":generateContent"))
    assert seen.headers["x-goog-api-key"] == "sekrit"
    assert json.loads(seen.body)["tools"] == [{"google_search": {}}]
    assert "sekrit" not in response.model_dump_json()


async def test_resolved_links_are_cached(server: LocalServer, tmp_path: Path) -> None:
    serve(server, weather_body())
    s = gemini_settings(server, tmp_path)
    await Engine(s).asearch("weather in San Francisco")
    first = sum(server.hits(f"/grounding-api-redirect/{i}") for i in REAL)
    response = await Engine(s).asearch("weather in San Francisco")
    assert first == 2
    assert sum(server.hits(f"/grounding-api-redirect/{i}") for i in REAL) == 2
    assert REAL[2] in {r.url for r in response.results}


async def test_a_link_that_fails_to_resolve_is_kept(server: LocalServer, tmp_path: Path) -> None:
    serve(server, weather_body(), broken={2})
    response = await Engine(gemini_settings(server, tmp_path)).asearch("weather in San Francisco")
    urls = {r.url for r in response.results}
    assert REAL[1] in urls
    assert f"{server.url}/grounding-api-redirect/2" in urls
    assert response.answer is not None
    assert f"({server.url}/grounding-api-redirect/2)" in response.answer


async def test_links_are_resolved_through_the_address_guard(server: LocalServer, tmp_path: Path) -> None:
    serve(server, weather_body())
    s = gemini_settings(server, tmp_path, allow_hosts=[])  # 127.0.0.1 is a loopback address: refused
    response = await Engine(s).asearch("weather in San Francisco")
    assert server.hits("/grounding-api-redirect/1") == 0
    assert f"{server.url}/grounding-api-redirect/1" in {r.url for r in response.results}


async def test_resolving_links_shares_the_calls_timeout(server: LocalServer, tmp_path: Path) -> None:
    # The model answers after 1 s of a 3 s budget and the redirect links hang: resolving gets what
    # is left less a margin (0.25 s) for the whole batch, about 2.75 s in all, not a fresh 3 s per
    # link (4 s and more), and the links are kept. The outer deadline sits between the two, with
    # room for a busy machine.
    body = serve(server, weather_body())
    server.route(
        f"/models/{MODEL}:generateContent", Reply(200, json.dumps(body), content_type=JSON, delay=1.0)
    )
    for i in REAL:
        server.route(f"/grounding-api-redirect/{i}", Reply(302, "", headers={"Location": REAL[i]}, delay=30.0))
    async with asyncio.timeout(3.6):  # was 1 s + 3 s per link: the call outlasted its timeout
        response = await Engine(gemini_settings(server, tmp_path, timeout=3.0)).asearch("weather in SF")
    assert response.provider == "gemini"
    assert f"{server.url}/grounding-api-redirect/1" in {r.url for r in response.results}


async def test_no_time_left_means_no_link_is_requested(server: LocalServer, tmp_path: Path) -> None:
    serve(server, weather_body())
    links = [f"{server.url}/grounding-api-redirect/{i}" for i in REAL]
    settings = gemini_settings(server, tmp_path)
    async with Session(settings) as s:
        found = await resolve_redirects(
            links, settings, fetcher=s.fetcher, cache=s.redirects, clock=time.time, seconds=0.0
        )
    assert found == {}
    assert sum(server.hits(f"/grounding-api-redirect/{i}") for i in REAL) == 0


async def test_refused_key_moves_the_chain_on(server: LocalServer, tmp_path: Path) -> None:
    error = {"error": {"code": 400, "status": "INVALID_ARGUMENT", "message": "API key not valid."}}
    server.route(f"/models/{MODEL}:generateContent", Reply(400, json.dumps(error), content_type=JSON))
    server.route(
        "/ddi",
        Reply(
            200,
            json.dumps(
                {
                    "AbstractURL": "https://en.wikipedia.org/wiki/Weather",
                    "Heading": "Weather",
                    "AbstractText": "Weather is...",
                }
            ),
            content_type=JSON,
        ),
    )
    s = gemini_settings(
        server,
        tmp_path,
        providers=["gemini", "duckduckgo_instant"],
        provider_options={"duckduckgo_instant": {"url": f"{server.url}/ddi"}},
    )
    response = await Engine(s).asearch("weather in San Francisco")
    assert response.provider == "duckduckgo_instant"
    assert response.answer is None
    assert response.attempts[0][0] == "gemini"
    assert "auth failed" in response.attempts[0][1]


# -- configuration -----------------------------------------------------------------------------
def test_gemini_is_first_in_the_default_chain_and_ready_with_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    assert DEFAULT_CHAIN[0] == "gemini"
    ready, detail = gemini.configured(gemini.GeminiOptions())
    assert ready is False
    assert "GEMINI_API_KEY" in detail
    assert "[providers.gemini]" in detail
    monkeypatch.setenv("GEMINI_API_KEY", "from-env")
    options = Registry.load(load_settings()).options_for("gemini")
    assert isinstance(options, gemini.GeminiOptions)
    ready, detail = gemini.configured(options)
    assert ready
    assert "from-env" not in detail
    assert "from-env" not in repr(options)


def test_every_new_provider_is_registered() -> None:
    from importlib.metadata import entry_points

    names = {ep.name for ep in entry_points(group="sourcewise.providers")}
    new = {"gemini", "gemini-cli", "mcp", "ddgs", "duckduckgo_instant"}
    assert new <= names
    assert new <= set(load_providers())
    assert set(DEFAULT_CHAIN) <= set(load_providers())


async def test_the_users_body_cap_holds_for_gemini(server: LocalServer, tmp_path: Path) -> None:
    """Gemini's answer is read under the user's max_bytes, like every other provider's body."""
    body = weather_body()
    body["candidates"][0]["content"]["parts"][0]["text"] += " " * 5_000
    serve(server, body)
    with pytest.raises(NoProviderAvailable) as info:
        await Engine(gemini_settings(server, tmp_path, max_bytes=2048)).asearch("weather in San Francisco")
    assert "larger than 2048 bytes" in str(info.value)
    response = await Engine(gemini_settings(server, tmp_path / "b")).asearch("weather in San Francisco")
    assert response.provider == "gemini"


async def test_an_unresolved_grounding_link_is_never_official(server: LocalServer, tmp_path: Path) -> None:
    """Issue 24: a vertexaisearch link that is not resolved sits on cloud.google.com, an official
    site; it is rated as what it is, a link whose final site is unknown (tier 4), even for a
    question about Google Cloud."""
    server.route(
        f"/models/{MODEL}:generateContent", Reply(200, json.dumps(weather_body()), content_type=JSON)
    )
    settings = gemini_settings(server, tmp_path, gemini_redirect_hosts=[])  # nothing is resolved
    response = await Engine(settings).asearch("google cloud weather in San Francisco")
    links = [r for r in response.results if "vertexaisearch.cloud.google.com" in r.url]
    assert len(links) == 2
    for link in links:
        assert link.tier == 4
        assert "final site is unknown" in link.reason


async def test_links_are_resolved_with_the_sessions_one_guarded_client(
    server: LocalServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Issue 19: resolving grounding links builds no client of its own; the GETs go through the
    # session fetcher's guarded client (it sends the fetcher's Accept header), every search.
    serve(server, weather_body())
    built: list[httpx.AsyncClient] = []
    real_init = httpx.AsyncClient.__init__

    def counting_init(self: httpx.AsyncClient, *args: Any, **kwargs: Any) -> None:
        built.append(self)
        real_init(self, *args, **kwargs)

    monkeypatch.setattr(httpx.AsyncClient, "__init__", counting_init)
    settings = gemini_settings(server, tmp_path)
    async with Session(settings) as session:
        first = await session.engine.asearch("weather in San Francisco")
        ours = {id(session.client), id(session.fetcher.client(settings.allow_private))}
        assert {id(c) for c in built} == ours  # the provider client and the fetcher's: no other
        for question in ("weather in Oakland", "weather in Berkeley"):
            await session.engine.asearch(question)
        assert len(built) == 2  # later searches built none
    assert set(REAL.values()) <= {r.url for r in first.results}
    link_gets = [s for s in server.seen if s.path.startswith("/grounding-api-redirect/")]
    assert link_gets, "no grounding link was requested"
    assert all(s.headers.get("Accept", "").startswith("text/html") for s in link_gets)


async def test_the_sessions_client_refuses_links_to_private_addresses(
    server: LocalServer, tmp_path: Path
) -> None:
    # The same client keeps the guard: without allow_hosts, links on 127.0.0.1 (a loopback
    # address) are never requested, through the engine or directly, and are kept as they were.
    body = serve(server, weather_body())
    settings = gemini_settings(server, tmp_path, allow_hosts=[])
    async with Session(settings) as session:
        response = await session.engine.asearch("weather in San Francisco")
        direct = await resolve_redirects(
            [f"{server.url}/grounding-api-redirect/1"], settings,
            fetcher=session.fetcher, cache=session.redirects, clock=time.time,
        )  # fmt: skip
    assert direct == {}
    assert sum(server.hits(f"/grounding-api-redirect/{i}") for i in REAL) == 0
    links = {c["web"]["uri"] for c in body["candidates"][0]["groundingMetadata"]["groundingChunks"]}
    assert f"{server.url}/grounding-api-redirect/1" in links
    assert f"{server.url}/grounding-api-redirect/1" in {r.url for r in response.results}
