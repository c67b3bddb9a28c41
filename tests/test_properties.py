"""Issue 7 item 10: every public function and every CLI command, driven with hostile input.

The contract: a result, or a ``SourcewiseError`` subclass with a message; never another
exception. The CLI: exit code 0-3, a message on stderr when it fails, never a traceback.
``canonical_url`` is idempotent. The example budget comes from the Hypothesis profile in
``conftest.py`` ("ci" under CI: fixed and derandomised).

Nothing here touches the internet: searches go to a SearXNG-compatible server on 127.0.0.1
that answers with generated JSON, and fetched URLs are literal private addresses, which the
guard refuses before any connection (or a server on 127.0.0.1 with ``--allow-private``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import sourcewise
from sourcewise import SourcewiseError, canonical_url
from sourcewise.models import SearchResponse, SearchResult
from sourcewise.planning.widen import broaden
from sourcewise.web.providers import HttpResponse, load_providers

from clirun import run_cli
from servers import LocalServer, Reply, local_server

# -- strategies ----------------------------------------------------------------------------

HOSTILE_CHARS = list(
    "\x00\x07\x08\x1b\x7f\x85\x9b\u202e\u2066\ud800\udcff\ufeff\n\t\r \"'“”「」<>@#-.:/\\%?&=+가년분기제외이 "
    "aZ09_~ⓐ．１"
)
hostile_text = st.one_of(
    st.text(max_size=60),
    st.text(st.sampled_from(HOSTILE_CHARS), max_size=80),
    st.builds(
        lambda unit, n: unit * n,
        st.text(st.sampled_from(HOSTILE_CHARS), min_size=1, max_size=4),
        st.integers(1, 4000),
    ),
    st.integers(0, 70_000).map(lambda n: "x" * n),
)
HOSTS = [
    "example.com",
    "www.Example.COM.",
    "127.0.0.1",
    "2130706433",
    "0x7f.1",
    "0177.0.0.1",
    "127.000.000.001",
    "[::1]",
    "[::ffff:127.0.0.1]",
    "[fe80::1%25eth0]",
    "[::1",
    "ⓐ.com",
    "xn--.com",
    "a．2",
    "１２７.0.0.1",
    "a..b",
    ".com",
    "evil.com\\@127.0.0.1",
    "localhost",
    "%31%32%37.0.0.1",
    "169.254.169.254",
    "metadata.google.internal",
    "u@",
    "",
    "a b.com",
    "bücher.de",
    "xn--bcher-kva.de",
    "foo.09",
    "a" * 64 + ".com",  # a label DNS cannot carry
    ".".join(["b" * 50] * 5) + ".com",  # a name over 253 characters
]
url_grammar = st.builds(
    lambda scheme, sep, user, host, port, path, query, frag: (
        f"{scheme}{sep}{user}{host}{port}{path}{query}{frag}"
    ),
    st.sampled_from(["http", "https", "HTTP", "hTtPs", "ftp", "", "javascript", " http"]),
    st.sampled_from(["://", ":/", ":", ":\\\\", "//", ":///", "://\t", ""]),
    st.one_of(st.just(""), st.text(st.sampled_from(HOSTILE_CHARS), max_size=8).map(lambda u: u + "@")),
    st.one_of(st.sampled_from(HOSTS), st.text(st.sampled_from(list("ab.-_1ⓐ．%")), max_size=12)),
    st.one_of(
        st.sampled_from(["", ":80", ":443", ":8080", ":", ":abc", ":0"]),
        st.integers(-1, 70_000).map(lambda p: f":{p}"),
    ),
    st.one_of(st.just(""), st.text(st.sampled_from(HOSTILE_CHARS), max_size=30).map(lambda p: "/" + p)),
    st.one_of(st.just(""), st.text(st.sampled_from(HOSTILE_CHARS), max_size=20).map(lambda q: "?" + q)),
    st.one_of(st.just(""), st.sampled_from(["#x", "#!/a", "#/b/../c", "#%zz"])),
)
any_url = st.one_of(
    url_grammar, st.text(max_size=40), st.integers(0, 9000).map(lambda n: "http://a.com/" + "a" * n)
)
json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), hostile_text, url_grammar),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
RESULT_KEYS = [
    "url",
    "link",
    "title",
    "content",
    "snippet",
    "description",
    "publishedDate",
    "page_age",
    "published_date",
    "pagemap",
    "results",
    "items",
    "web",
    "kind",
    "query",
    "unresponsive_engines",
    "error",
    "type",
    "detail",
]
provider_json = st.one_of(
    json_values,
    st.dictionaries(st.sampled_from(RESULT_KEYS), json_values, max_size=6),
    st.fixed_dictionaries(
        {
            "results": st.lists(
                st.dictionaries(st.sampled_from(RESULT_KEYS), json_values, max_size=5), max_size=4
            )
        },
        optional={"unresponsive_engines": json_values, "query": json_values},
    ),
    st.fixed_dictionaries({"kind": st.just("customsearch#search"), "items": json_values}),
    st.fixed_dictionaries({"web": st.fixed_dictionaries({"results": json_values}), "query": st.just({})}),
)


def holds(call: Callable[[], Any]) -> Any:
    """The contract: a result or a typed, worded error."""
    try:
        return call()
    except SourcewiseError as exc:
        error = exc
    assert str(error).strip(), f"{type(error).__name__} without a message"
    return None


@pytest.fixture(scope="module")
def searx() -> Iterator[LocalServer]:
    with local_server() as server:
        server.route("/search", Reply(200, '{"results": []}', content_type="application/json"))
        yield server


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory, searx: LocalServer) -> sourcewise.Settings:
    state = tmp_path_factory.mktemp("state")
    return sourcewise.load_settings(
        state_dir=state,
        providers=["searxng"],
        provider_options={"searxng": {"url": searx.url}},
        timeout=2.0,
        fetch_retries=0,
    )


# -- the library ---------------------------------------------------------------------------


@given(any_url)
def test_canonical_url_is_typed_and_idempotent(url: str) -> None:
    key = holds(lambda: canonical_url(url))
    if key is not None:
        assert canonical_url(key) == key
        assert "@" not in key.split("/")[2]


@given(any_url)
def test_request_url_agrees_with_the_key(url: str) -> None:
    from sourcewise.net.fetch import request_url

    target = holds(lambda: request_url(url))
    if target is not None:
        assert canonical_url(target) == canonical_url(url).split("#")[0]  # fragments are not sent


@given(hostile_text, st.one_of(st.none(), hostile_text))
def test_rate_source_and_extract_urls(text: str, query: str | None) -> None:
    for url in sourcewise.extract_urls(text):
        canonical_url(url)  # never returns what canonical_url rejects
    holds(lambda: sourcewise.rate_source(text, query))
    holds(lambda: sourcewise.rate_source("https://docs.python.org/3/", text))


@given(hostile_text, st.one_of(st.none(), st.dates(), st.just("2026-01-01"), st.integers()))
def test_route_plan_classify(text: str, today: Any) -> None:
    holds(lambda: sourcewise.classify_query(text))
    holds(lambda: sourcewise.route(text, today=today))
    plan = holds(lambda: sourcewise.plan(text, today=today))
    for _ in range(6):  # broadening ends: four steps at most
        if plan is None:
            break
        plan = broaden(plan)
    assert plan is None


@given(hostile_text, st.sampled_from([None, ["web"], ["chat", "email"], "chat", 89, [None], []]))
def test_plan_sources(text: str, sources: Any) -> None:
    holds(lambda: sourcewise.plan(text, sources, today=date(2026, 1, 1)))


@given(st.sampled_from(sorted(load_providers())), st.integers(100, 599), provider_json)
def test_every_provider_parses_every_shape_to_results_or_a_typed_error(
    name: str, status: int, body: Any
) -> None:
    provider = load_providers()[name]
    text = json.dumps(body, ensure_ascii=False) if not isinstance(body, str) else body
    holds(lambda: provider.parse(HttpResponse(status=status, text=text, received_at=1.7e9)))


@given(provider_json, hostile_text, st.sampled_from(["quick", "deep", "progressive", "json", "xml"]))
def test_search_over_any_answer(
    searx: LocalServer, config: sourcewise.Settings, body: Any, query: str, fmt: str
) -> None:
    searx.route("/search", Reply(200, json.dumps(body), content_type="application/json"))
    response = holds(lambda: sourcewise.search(query, settings=config))
    if response is not None:
        text = holds(lambda: sourcewise.render(response, fmt))
        assert text is None or "\x1b" not in text


@given(hostile_text, st.sampled_from(["quick", "deep", "progressive", "json"]))
def test_render_any_result(title: str, fmt: str) -> None:
    # Built as merge_results() builds results (model_construct): provider text is not re-validated.
    result = SearchResult.model_construct(
        title=title or "t",
        url="https://example.com/",
        canonical_url="https://example.com/",
        snippet=title[:200],
        tier=3,
        reliability_score=55,
        reason=title,
    )
    text = sourcewise.render(SearchResponse.model_construct(query=title, results=(result,)), fmt)
    assert "\x1b" not in text
    assert "\ud800" not in text


@given(
    st.sampled_from(["127.0.0.1", "2130706433", "[::1]", "10.0.0.1", "169.254.169.254", "0x7f.1"]),
    url_grammar,
    st.one_of(st.none(), hostile_text),
)
def test_fetch_refuses_or_fails_typed(
    config: sourcewise.Settings, host: str, tail: str, prompt: str | None
) -> None:
    path = tail.split("/", 3)[-1] if "/" in tail else tail
    holds(lambda: sourcewise.fetch(f"http://{host}/{path}", prompt, settings=config))
    holds(lambda: sourcewise.fetch(tail, prompt, settings=config, best_effort=True))


@given(hostile_text)
def test_conditional_web_search_never_raises_for_the_web(config: sourcewise.Settings, question: str) -> None:
    holds(lambda: sourcewise.conditional_web_search(question, settings=config))


@given(st.binary(max_size=200), st.text(max_size=200))
def test_load_settings_from_any_file(tmp_path_factory: pytest.TempPathFactory, raw: bytes, text: str) -> None:
    folder = tmp_path_factory.mktemp("cfg")
    for i, content in enumerate((raw, text.encode("utf-8", "surrogateescape"))):
        path = folder / f"c{i}.toml"
        path.write_bytes(content)
        holds(lambda p=path: sourcewise.load_settings(p))  # type: ignore[misc]


# -- the CLI -------------------------------------------------------------------------------

COMMANDS = [
    ["search", "{text}"],
    ["search", "{text}", "--format", "{text}"],
    ["search", "{text}", "--json", "--tier", "9"],
    ["search", "{text}", "-n", "0", "-s", "{text}"],
    ["search", "{text}", "-p", "{text}"],
    ["rate", "{url}", "--query", "{text}"],
    ["route", "{text}", "--today", "{text}"],
    ["route", "{text}", "--json"],
    ["plan", "{text}", "--kind", "{text}", "--broaden", "3"],
    ["plan", "{text}", "--json"],
    ["context", "{text}"],
    ["fetch", "{url}", "--max-chars", "0"],
    ["fetch", "{url}", "--prompt", "{text}", "--json"],
    ["providers", "--reset", "{text}"],
    ["providers", "--json"],
    ["cache", "clear"],
    # The sources: the web through the local SearXNG, indexes in a scratch folder ({dir}; {name}
    # is the text as one file name in it), never a model download or a search of the whole disk.
    ["ask", "{text}"],
    ["ask", "{text}", "-S", "web"],
    ["ask", "{text}", "-S", "web", "-f", "{text}", "--reading", "{text}", "--explain"],
    ["ask", "{text}", "-S", "nope{text}", "--json"],
    ["index", "{dir}/{name}", "--no-semantic", "--kb", "{dir}/kb.sqlite3"],
    ["index", "{dir}", "--no-semantic", "--json", "--kb", "{dir}/{name}.sqlite3"],
    ["sources", "--json"],
    ["sources", "--config", "{dir}/{name}"],
    ["retrieve", "{text}", "-S", "code:{dir}", "--no-model", "--max-cycles", "1", "--include", "{text}"],
    ["retrieve", "{text}", "-S", "nope{text}", "-n", "{text}", "--json"],
    # The doors: help, or option values that must fail before any server starts (port 0, workers 0).
    ["mcp", "--help"],
    ["serve", "--help"],
    ["mcp", "--http", "--port", "0", "--host", "{text}"],
    ["mcp", "--port", "x{text}"],
    ["serve", "--workers", "0", "--host", "{text}", "--config", "{dir}/{name}"],
    ["{text}"],
]


@pytest.fixture(scope="module")
def cli_env(tmp_path_factory: pytest.TempPathFactory, searx: LocalServer) -> dict[str, str]:
    home = tmp_path_factory.mktemp("home")
    return {
        "XDG_CACHE_HOME": str(Path(home) / "cache"),
        "XDG_CONFIG_HOME": str(Path(home) / "cfg"),
        "SEARXNG_URL": searx.url,
        "SOURCEWISE_PROVIDERS": "searxng",
        "SOURCEWISE_TIMEOUT": "2",
    }


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A folder of hostile files for index and retrieve."""
    folder = tmp_path_factory.mktemp("scratch")
    (folder / "notes.md").write_text("# React \x1b[2J hooks\n\nuse \u202e state 가나다 hooks\n" * 50, "utf-8")
    (folder / "bad.txt").write_bytes(b"\xff\xfe\x00garbage \xc3(" * 100)
    (folder / "app.py").write_text("def hooks():\n    return '\x07'\n", "utf-8")
    return str(folder)


def file_name(text: str) -> str:
    """``text`` as one file name (hostile still: NUL, surrogates, too long), never a way up or out."""
    name = text.replace("/", "_").replace("\\", "_")[:400]
    return name if name.strip(".") else f"x{name}"


def run_command(cli_env: dict[str, str], scratch: str, command: list[str], text: str, url: str) -> None:
    """Run one CLI command and check the contract: exit 0-3, a message when it fails, no traceback."""
    fill = {"{text}": text, "{url}": url, "{dir}": scratch, "{name}": file_name(text)}
    args = [re.sub(r"\{(?:text|url|dir|name)\}", lambda m: fill[m.group()], part) for part in command]
    result = run_cli(args, cli_env)  # any exception but SystemExit fails here, with its traceback
    assert result.returncode in (0, 1, 2, 3), (args, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    if result.returncode:
        assert result.stderr.strip(), f"exit {result.exit_code} without a message: {args!r}"


@given(st.sampled_from(COMMANDS), hostile_text.filter(lambda t: len(t) < 20_000), any_url)
def test_every_command_exits_cleanly(
    cli_env: dict[str, str], scratch: str, command: list[str], text: str, url: str
) -> None:
    run_command(cli_env, scratch, command, text, url)


WORST_TEXTS = [
    "../\x00\x1b[2J\u202e\ud800가 react hooks",  # a way up, NUL, escapes, bidi, a lone surrogate
    "react hooks 가" + "x" * 300,  # as a file name: longer than any file system allows
]
WORST_URL = "http://alice:hunter2@127.0.0.1:9/\x1b[2J?a=가"


@pytest.mark.parametrize("text", WORST_TEXTS, ids=["controls", "long"])
@pytest.mark.parametrize("command", COMMANDS, ids=[" ".join(c) for c in COMMANDS])
def test_each_command_once_with_the_worst_input(
    cli_env: dict[str, str], scratch: str, command: list[str], text: str
) -> None:
    """Every command runs at least once, whichever ones the Hypothesis budget draws."""
    run_command(cli_env, scratch, command, text, WORST_URL)
