"""A failed connection's reason is short, whole and names its cause: real requests to a refused
port on 127.0.0.1, a name that cannot resolve (``.invalid``, RFC 6761) and a server on 127.0.0.1
that does not answer in time, through httpx and through the real ddgs library."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from test_ddgs import ddgs_settings

from sourcewise.errors import NoProviderAvailable, TransientError
from sourcewise.net.http import HttpRequest, send
from sourcewise.net.reasons import REASON_MAX, brief, failure
from sourcewise.web.engine import Engine
from sourcewise.web.providers import ddgs_text

from doorkit import free_port
from servers import LocalServer, Reply

# ddgs's message when DNS could not be reached (seen offline, 2026-11-28), as a user saw it cut.
DDGS_DNS = (
    "DNSError: DNSError('error sending request for url (https://search.yahoo.com/search;_ylt=x5PlY-"
    "HFEv;_ylu=Q2i8ZOt?p=react+server+components) > error resolving DNS > DNS error: no records found "
    'for Query { name: Name("search.yahoo.com."), query_type: A, query_class: IN }\')'
)


async def _error(url: str, seconds: float = 5.0) -> httpx.HTTPError:
    async with httpx.AsyncClient(timeout=seconds) as client:
        with pytest.raises(httpx.HTTPError) as raised:
            await client.get(url)
    return raised.value


async def test_a_refused_port_is_said_to_refuse() -> None:
    port = free_port()
    async with httpx.AsyncClient() as client:
        request = HttpRequest("GET", f"http://127.0.0.1:{port}/search", params={"q": "secret words"})
        with pytest.raises(TransientError) as raised:
            await send(client, request, "searxng", 5.0, 0.0)
    assert raised.value.detail == f"connection refused (127.0.0.1:{port})"


async def test_a_name_that_cannot_resolve_is_said_so_without_user_info_or_query() -> None:
    exc = await _error("http://user:hunter2@nothing.invalid/search?q=secret+words")
    said = failure(exc, str(exc.request.url))
    assert said == "cannot resolve host (nothing.invalid)"


async def test_a_server_that_does_not_answer_in_time_is_said_to_time_out(server: LocalServer) -> None:
    server.route("/slow", Reply(200, "late", delay=2.0))
    exc = await _error(f"{server.url}/slow?q=words", seconds=0.2)
    assert failure(exc, f"{server.url}/slow") == f"timed out ({server.url.removeprefix('http://')})"


@pytest.mark.parametrize(
    ("target", "said"),
    [
        ("http://127.0.0.1:{port}/html/", "connection refused (127.0.0.1:{port})"),
        ("http://user:hunter2@nothing.invalid/html/?key=K", "cannot resolve host (nothing.invalid)"),
    ],
)
async def test_the_ddgs_library_failing_to_connect_says_why(
    target: str, said: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ddgs.engines.duckduckgo as ddg

    port = free_port()
    monkeypatch.setattr(ddg.Duckduckgo, "search_url", target.format(port=port))
    with pytest.raises(NoProviderAvailable) as raised:
        await Engine(ddgs_settings(tmp_path)).asearch("react server components")
    reason = dict(raised.value.attempts)["ddgs"]
    assert reason == f"transient: {said.format(port=port)}"
    assert "hunter2" not in str(raised.value)


def test_a_library_message_with_a_url_is_the_cause_and_the_host() -> None:
    from ddgs.exceptions import DDGSException

    assert ddgs_text.error_for(DDGSException(DDGS_DNS)).detail == "cannot resolve host (search.yahoo.com)"


def _closed(text: str) -> bool:
    stack: list[str] = []
    for ch in text:
        if ch in "([{":
            stack.append(")]}"["([{".index(ch)])
        elif ch in ")]}" and stack and ch == stack[-1]:
            stack.pop()
    return not stack


@given(
    words=st.lists(
        st.text(st.characters(exclude_categories=["Cs", "Z", "Cc"]), min_size=1, max_size=30)
        | st.sampled_from(["http://u:pw@h.example/p?q=1", "https://a.b/x;y=1?q=2", "(", ")", "[x", "'"]),
        max_size=40,
    )
)
@example(words=DDGS_DNS.split(" "))
def test_a_brief_reason_is_short_whole_and_keeps_no_url(words: list[str]) -> None:
    text = " ".join(words)
    said = brief(text)
    assert "://" not in said
    assert "pw@" not in said
    assert _closed(said)
    full = brief(text, limit=10**6)
    if said == full:  # short enough: only URLs and white space changed
        if "://" not in text and _closed(text):
            assert said == " ".join(text.split())
        return
    assert len(said) <= REASON_MAX
    # brackets the cut left open are closed, or dropped where closing them would pass the limit
    bare = str.maketrans("", "", "()[]{}")
    kept = said.rstrip(")]}").removesuffix("…").translate(bare)
    whole = full.translate(bare)
    assert whole.startswith(kept)
    # cut where a word ends (or inside the one word that does not fit at all)
    assert whole[len(kept) : len(kept) + 1] in (" ", ",", ";", ":", "-", "–", "—") or " " not in kept


def test_a_servers_long_error_body_is_said_short_and_whole() -> None:
    from sourcewise.net.http import HttpResponse
    from sourcewise.web.providers import tavily

    body = (
        "<html><body>Upstream https://user:pw@backend.example/v1/search?key=SECRET-KEY&q=the+query "
        "answered with an error while handling the request from the gateway, please retry later</body>"
    )
    with pytest.raises(TransientError) as raised:
        tavily.parse(HttpResponse(status=502, text=body))
    detail = raised.value.detail
    assert detail.startswith("HTTP 502 from the server: <html><body>Upstream backend.example answered")
    assert "SECRET" not in detail
    assert "pw" not in detail
    assert detail.endswith("…")
    words = detail.removesuffix("…").removeprefix("HTTP 502 from the server: ").split()
    assert words
    assert all(word in body for word in words[1:])  # whole words of the body, none cut


def test_a_lone_surrogate_in_a_message_is_no_crash() -> None:
    # A provider body or an exception's text can hold one (found by the property test over every
    # provider's parse): RE2 reads UTF-8 and had raised UnicodeEncodeError.
    said = brief("\ud800 failed at http://user:pw@a.example/x?q=1 (\ud800")
    assert "a.example" in said
    assert "pw" not in said
    assert said.endswith(")")


def test_a_reason_keeps_its_limit_even_with_brackets_left_open() -> None:
    # Found in review: closing the brackets a cut left open came after the limit was used up.
    from sourcewise.text.words import cut_words

    said = brief("x " * 10 + "(" * 60 + "y " * 100)
    assert len(said) <= REASON_MAX
    assert brief("failed (at a.example) [x") == "failed (at a.example) [x]"
    assert cut_words("hello world foo", 0) == ""
    assert len(cut_words("hello world foo", 1)) == 1
