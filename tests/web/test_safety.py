"""Issue 7, safety: the cache cannot bypass the guard, secrets stay out of messages, provider
bodies are capped, challenge pages suspend, and the URL that was checked is the URL fetched."""

from __future__ import annotations

import gzip
import logging
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sourcewise import (
    AddressNotAllowed,
    FetchConnectionError,
    FetchHTTPError,
    InvalidURL,
    NoProviderAvailable,
    Session,
    afetch,
    canonical_url,
    fetch,
    load_settings,
)
from sourcewise.config import Settings
from sourcewise.net import fetch as fetch_module
from sourcewise.net.fetch import Fetcher
from sourcewise.net.guard import AddressGuard
from sourcewise.net.redirects import _resolvable, request_link, resolve_redirects
from sourcewise.web import urlparse
from sourcewise.web.engine import Engine

from clirun import run_cli
from doorkit import uvicorn_thread
from servers import LocalServer, Reply

PAGE = "<html><head><title>Secret</title></head><body><p>" + "internal numbers " * 30 + "</p></body></html>"
JSON = "application/json"


async def resolve_links(links: list[str], settings: Settings) -> dict[str, str]:
    """Resolved through a session's fetcher and redirect cache, as a provider call gets them."""
    async with Session(settings) as s:
        return await resolve_redirects(links, settings, fetcher=s.fetcher, cache=s.redirects, clock=time.time)


def settings_for(tmp_path: Path, **extra: object) -> Settings:
    base: dict[str, object] = {"state_dir": tmp_path / "state", "timeout": 2.0, "fetch_retries": 0}
    base.update(extra)
    return load_settings(**base)


# -- item 2: the page cache never serves a page to a caller whose guard refuses its address --


async def test_cached_private_page_is_not_served_to_a_default_fetch(
    server: LocalServer, tmp_path: Path
) -> None:
    server.route("/secret", Reply(200, PAGE))
    settings = settings_for(tmp_path)
    page = await afetch(f"{server.url}/secret", allow_private=True, settings=settings)
    assert page.title == "Secret"
    again = await afetch(f"{server.url}/secret", allow_private=True, settings=settings)
    assert again.from_cache  # the cache works for a caller allowed the address
    for url in (f"{server.url}/secret", f"http://2130706433:{server.port}/secret?utm_source=x"):
        with pytest.raises(AddressNotAllowed):
            await afetch(url, settings=settings)
    assert server.hits("/secret") == 1  # refused before any connection


def test_cached_private_page_is_not_served_in_another_process(server: LocalServer, tmp_path: Path) -> None:
    """This process fetches and caches a private page; another process, reading the same state, gets it
    from the cache when it allows private addresses and is refused when it does not."""
    server.route("/secret", Reply(200, PAGE))
    state = tmp_path / "state"
    settings = load_settings(state_dir=state, timeout=2.0, fetch_retries=0)
    assert not fetch(f"{server.url}/secret", allow_private=True, settings=settings).from_cache
    script = textwrap.dedent(
        f"""
        import sys
        from sourcewise import fetch, load_settings, AddressNotAllowed
        settings = load_settings(state_dir={str(state)!r}, timeout=2.0, fetch_retries=0)
        for mode, url in zip(sys.argv[1::2], sys.argv[2::2]):
            try:
                page = fetch(url, allow_private=mode == "private", settings=settings)
            except AddressNotAllowed:
                print("refused")
            else:
                print("cache" if page.from_cache else "fetched")
        """
    )
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "cfg")}
    asked = [
        "private",
        f"{server.url}/secret",
        "default",
        f"http://2130706433:{server.port}/secret?utm_source=x",
    ]
    out = subprocess.run(
        [sys.executable, "-c", script, *asked], capture_output=True, text=True, env=env, check=False
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["cache", "refused"]
    assert server.hits("/secret") == 1


async def test_a_host_allowed_by_name_is_served_from_the_cache(server: LocalServer, tmp_path: Path) -> None:
    server.route("/ok", Reply(200, PAGE))
    await afetch(f"{server.url}/ok", allow_private=True, settings=settings_for(tmp_path))
    named = settings_for(tmp_path, allow_hosts=["127.0.0.1"])
    page = await afetch(f"{server.url}/ok", settings=named)
    assert page.from_cache
    assert server.hits("/ok") == 1


async def test_a_redirect_hop_to_a_private_address_is_rechecked(server: LocalServer, tmp_path: Path) -> None:
    server.route("/hop", Reply(302, b"", headers={"Location": "/secret"}))
    server.route("/secret", Reply(200, PAGE))
    settings = settings_for(tmp_path)
    await afetch(f"{server.url}/hop", allow_private=True, settings=settings)
    with pytest.raises(AddressNotAllowed):
        await afetch(f"{server.url}/secret", settings=settings)


# -- item 2 for grounding links: the redirect cache keeps the guard's decision too ----------------

INTRANET = "https://intranet.example/secret-path"


async def test_a_link_resolved_with_allow_private_is_not_served_to_a_default_caller(
    server: LocalServer, tmp_path: Path
) -> None:
    server.route("/r", Reply(302, "", headers={"Location": INTRANET}))
    link = f"{server.url}/r"

    async def resolve(**extra: object) -> dict[str, str]:
        # a fresh cache object per call: the SQLite file is what a later process would read
        settings = settings_for(tmp_path, gemini_redirect_hosts=["127.0.0.1"], **extra)
        return await resolve_links([link], settings)

    assert await resolve(allow_private=True) == {link: INTRANET}
    assert await resolve(allow_private=True) == {link: INTRANET}
    assert server.hits("/r") == 1  # served from the cache to a caller allowed the address
    assert await resolve() == {}  # the default guard refuses 127.0.0.1: not from the cache either
    assert server.hits("/r") == 1
    assert await resolve(allow_hosts=["127.0.0.1"]) == {link: INTRANET}  # allowed by name
    assert server.hits("/r") == 1


async def test_a_link_with_user_info_is_requested_stored_and_logged_without_it(
    server: LocalServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="sourcewise")
    server.route("/r", Reply(302, "", headers={"Location": INTRANET}))
    server.route("/u", Reply(302, "", headers={"Location": "https://bob:pa55word@example.com/x"}))
    server.route("/gone", Reply(500, "oops"))
    settings = settings_for(tmp_path, allow_private=True, gemini_redirect_hosts=["127.0.0.1"])
    links = [f"http://alice:hunter2@127.0.0.1:{server.port}/{p}" for p in ("r", "u", "gone")]
    found = await resolve_links(links, settings)
    assert found == {links[0]: INTRANET}  # a target with user info is never kept
    assert all("authorization" not in {k.lower() for k in s.headers} for s in server.seen)
    stored = b"".join(f.read_bytes() for f in (tmp_path / "state").glob("redirects.sqlite3*"))
    assert b"secret-path" in stored  # the file was written and is readable as bytes
    for secret in ("hunter2", "alice", "pa55word"):
        assert secret.encode() not in stored
        assert secret not in caplog.text
    again = await resolve_links([f"http://127.0.0.1:{server.port}/r"], settings)
    assert again == {f"http://127.0.0.1:{server.port}/r": INTRANET}
    assert server.hits("/r") == 1  # keyed without the user info


@given(
    junk=st.text(max_size=40),
    rest=st.text(max_size=40),
    host=st.sampled_from(["vertexaisearch.cloud.google.com", "127.0.0.1"]),
)
def test_a_resolvable_link_is_requested_without_user_info_at_the_host_it_was_checked_for(
    junk: str, rest: str, host: str
) -> None:
    hosts = frozenset({"vertexaisearch.cloud.google.com", "127.0.0.1"})
    for link in (f"https://{junk}@{host}/{rest}", f"http://{junk}{host}/{rest}", f"https://{host}{junk}"):
        if not _resolvable(link, hosts):
            continue
        sent = urlsplit(request_link(link))
        assert "@" not in sent.netloc
        assert sent.hostname == urlsplit(link).hostname
        assert (sent.scheme, sent.path, sent.query) == urlsplit(link)[0:1] + urlsplit(link)[2:4]


# -- item 3: user info never printed, logged or stored --------------------------------------


async def test_user_info_never_appears_in_errors_or_pages(server: LocalServer, tmp_path: Path) -> None:
    server.route("/page", Reply(200, PAGE))
    settings = settings_for(tmp_path, allow_private=True)
    with pytest.raises(FetchHTTPError) as info:
        await afetch(f"http://alice:hunter2@127.0.0.1:{server.port}/missing", settings=settings)
    assert "hunter2" not in str(info.value)
    assert "hunter2" not in info.value.url
    page = await afetch(f"http://alice:hunter2@127.0.0.1:{server.port}/page", settings=settings)
    assert "hunter2" not in page.model_dump_json()
    assert all("authorization" not in {k.lower() for k in s.headers} for s in server.seen)
    with pytest.raises(InvalidURL) as bad:
        canonical_url("http://alice:hunter2@/x")
    assert "hunter2" not in str(bad.value)


def test_cli_never_prints_user_info(server: LocalServer, tmp_path: Path) -> None:
    env = {"XDG_CACHE_HOME": str(tmp_path / "c"), "XDG_CONFIG_HOME": str(tmp_path / "cfg")}
    for url in (f"http://alice:hunter2@127.0.0.1:{server.port}/missing", "http://alice:hunter2@[::1/"):
        out = run_cli(["fetch", url, "--allow-private"], env)
        assert out.returncode in (1, 2)
        assert "hunter2" not in out.stderr + out.stdout
        assert out.stderr.startswith("error:")


# -- item 5: provider bodies are capped after decompression ---------------------------------


async def test_provider_gzip_bomb_is_refused_and_the_chain_moves_on(
    server: LocalServer, tmp_path: Path
) -> None:
    bomb = gzip.compress(b'{"results": [' + b" " * 20_000_000 + b"]}")
    assert len(bomb) < 100_000
    server.route(
        "/sx/search",
        Reply(200, bomb, headers={"Content-Encoding": "gzip"}, content_type=JSON),
    )
    settings = load_settings(
        providers=["searxng"],
        provider_options={"searxng": {"url": f"{server.url}/sx"}},
        state_dir=tmp_path / "s",
        max_bytes=1_000_000,
    )
    with pytest.raises(NoProviderAvailable) as info:
        await Engine(settings).asearch("react hooks")
    assert "larger than 1000000 bytes" in str(info.value)


# -- item 6: a challenge page with status 200 is Blocked and suspends -----------------------


async def test_searxng_challenge_page_with_200_suspends(server: LocalServer, tmp_path: Path) -> None:
    challenge = (
        "<html><head><title>Just a moment...</title></head><body><div class='cf-chl-x'></div></body></html>"
    )
    server.route("/sx/search", Reply(200, challenge))
    settings = load_settings(
        providers=["searxng"],
        provider_options={"searxng": {"url": f"{server.url}/sx"}},
        state_dir=tmp_path / "s",
    )
    engine = Engine(settings)
    with pytest.raises(NoProviderAvailable) as info:
        await engine.asearch("react hooks")
    assert "blocked" in info.value.attempts[0][1]
    assert engine.state.suspended("searxng", engine.clock()) is not None


# -- item 7: the URL validated and keyed is the URL sent ------------------------------------


async def test_backslash_userinfo_trick_connects_to_the_keyed_host(
    server: LocalServer, tmp_path: Path
) -> None:
    asked: list[str] = []

    async def resolver(host: str, port: int) -> list[str]:
        asked.append(host)
        raise OSError("no such host in this test")

    fetcher = Fetcher(settings_for(tmp_path, allow_private=True), resolver=resolver)
    url = f"http://evil.com\\@127.0.0.1:{server.port}/"
    assert canonical_url(url).startswith("https://evil.com/")
    with pytest.raises(FetchConnectionError):
        await fetcher.document(url, allow_private=True)
    await fetcher.aclose()
    assert asked == ["evil.com"]
    assert server.seen == []


@pytest.mark.parametrize(
    "form",
    [
        "http:/127.0.0.1:{port}/p",
        "http:127.0.0.1:{port}/p",
        "http:\\\\127.0.0.1:{port}\\p",
        " http://127.0.0.1:{port}/\tp\n",
    ],
)
async def test_odd_forms_are_fetched_as_keyed(form: str, server: LocalServer, tmp_path: Path) -> None:
    server.route("/p", Reply(200, PAGE))
    url = form.format(port=server.port)
    assert urlparse.parse_web_url(url).request_url() == f"http://127.0.0.1:{server.port}/p"
    page = await afetch(url, settings=settings_for(tmp_path, allow_private=True))
    assert page.title == "Secret"
    assert server.hits("/p") == 1


async def test_spaces_and_odd_hosts_are_sent_escaped_or_refused(server: LocalServer, tmp_path: Path) -> None:
    server.route("/a%20b", Reply(200, PAGE))
    settings = settings_for(tmp_path, allow_private=True)
    page = await afetch(f"http://127.0.0.1:{server.port}/a b", settings=settings)
    assert page.title == "Secret"
    assert [s.path for s in server.seen if s.path != "/robots.txt"] == ["/a%20b"]
    for url in (f"http://0177.0.0.1:{server.port}/a b", f"http://127.000.000.001:{server.port}/a b"):
        assert (await afetch(url, settings=settings, use_cache=False)).title == "Secret"
    for bad in ("https://xn--.com/", "http://a b.com/"):
        with pytest.raises(InvalidURL):
            await afetch(bad, settings=settings)


# -- a host name DNS cannot carry (a label over 63 characters, a name over 253) ----------------

LONG_LABEL = "a" * 64 + ".com"
LONG_NAME = ".".join(["a" * 50] * 5) + ".com"  # 258 characters, every label short


@given(st.lists(st.integers(1, 80), min_size=1, max_size=6), st.sampled_from(["com", "xn--bcher-kva"]))
def test_a_host_is_a_url_exactly_when_dns_can_carry_it(labels: list[int], top: str) -> None:
    host = ".".join("a" * n for n in labels) + "." + top
    fits = max(labels) <= 63 and len(host) <= 253
    if fits:
        assert canonical_url(f"https://{host}/") == f"https://{host}/"
        host.encode("idna")  # what getaddrinfo does with it: no UnicodeError
    else:
        with pytest.raises(InvalidURL, match="63 per label"):
            canonical_url(f"https://{host}/x")
        with pytest.raises(InvalidURL):
            urlparse.parse_web_url(f"http://u:p@{host.upper()}.:8080/")


async def test_the_guard_turns_a_name_the_resolver_cannot_encode_into_invalid_url() -> None:
    guard = AddressGuard()  # the system resolver: getaddrinfo fails before any DNS query
    for host in (LONG_LABEL, "a..com"):
        with pytest.raises(InvalidURL):
            await guard.addresses(host, 443)


def test_a_host_dns_cannot_carry_is_invalid_url_in_the_library_cli_and_http(
    server: LocalServer, tmp_path: Path
) -> None:
    import sourcewise
    from sourcewise.doors.http import create_app
    from sourcewise.doors.service import DoorSettings

    settings = settings_for(tmp_path)
    env = {"XDG_CACHE_HOME": str(tmp_path / "c"), "XDG_CONFIG_HOME": str(tmp_path / "cfg")}
    with uvicorn_thread(create_app(settings, DoorSettings())) as api:
        for host in (LONG_LABEL, LONG_NAME):
            url = f"https://{host}/"
            with pytest.raises(InvalidURL):
                sourcewise.fetch(url, settings=settings)
            with pytest.raises(InvalidURL):
                sourcewise.fetch(url, settings=settings, best_effort=True)
            out = run_cli(["fetch", url], env)
            assert out.returncode == 2, out.stderr
            assert out.stderr.startswith("error: Invalid URL")
            assert "Traceback" not in out.stderr
            response = httpx.post(f"{api}/fetch", json={"url": url}, timeout=60)
            assert response.status_code == 400, response.text
            assert response.json()["error"]["type"] == "InvalidURL"


async def test_a_host_dns_cannot_carry_is_a_tool_error_over_mcp(tmp_path: Path) -> None:
    from mcp import Client

    from sourcewise.doors.mcp import build_server

    async with Client(build_server(settings_for(tmp_path))) as client:
        for host in (LONG_LABEL, LONG_NAME):
            result = await client.call_tool("web_fetch", {"url": f"https://{host}/"})
            assert result.is_error
            block = result.content[0]
            assert block.type == "text"
            assert "InvalidURL" in block.text


# -- the doors bound a page slice's start (10**9: past any page, and exact as a JSON number) --------


def test_http_fetch_refuses_a_start_past_any_page(server: LocalServer, tmp_path: Path) -> None:
    from sourcewise.doors.http import create_app
    from sourcewise.doors.service import DoorSettings

    server.route("/page", Reply(200, PAGE))
    settings = settings_for(tmp_path, allow_private=True)
    with uvicorn_thread(create_app(settings, DoorSettings())) as api:
        schema = httpx.get(f"{api}/openapi.json", timeout=30).json()
        assert schema["components"]["schemas"]["FetchRequest"]["properties"]["start"]["maximum"] == 10**9
        for start in (10**30, 10**9 + 1, 2**53 + 1):
            response = httpx.post(
                f"{api}/fetch", json={"url": f"{server.url}/page", "start": start}, timeout=60
            )
            assert response.status_code == 422, response.text
            assert "start" in response.text
        assert server.hits("/page") == 0
        response = httpx.post(f"{api}/fetch", json={"url": f"{server.url}/page", "start": 10**9}, timeout=60)
        assert response.status_code == 200, response.text
        assert response.json()["content"] == ""


async def test_mcp_web_fetch_refuses_a_start_past_any_page(server: LocalServer, tmp_path: Path) -> None:
    from mcp import Client

    from sourcewise.doors.mcp import build_server

    server.route("/page", Reply(200, PAGE))
    async with Client(build_server(settings_for(tmp_path, allow_private=True))) as client:
        for start in (10**30, 10**9 + 1):
            result = await client.call_tool("web_fetch", {"url": f"{server.url}/page", "start": start})
            assert result.is_error
            block = result.content[0]
            assert block.type == "text"
            assert "start" in block.text
        assert server.hits("/page") == 0
        result = await client.call_tool("web_fetch", {"url": f"{server.url}/page", "start": 10**9})
        assert not result.is_error


def test_protocol_relative_is_refused_and_a_port_is_sent_as_written() -> None:
    with pytest.raises(InvalidURL):  # issue 24: refused, never guessed, as the README says
        urlparse.parse_web_url("//example.com/x")
    assert fetch_module.request_url("http://a.com:443/x") == "http://a.com:443/x"
