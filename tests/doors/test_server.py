"""The HTTP API on a real uvicorn server on 127.0.0.1, providers and pages served on 127.0.0.1."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from sourcewise import load_settings
from sourcewise.doors.http import create_app
from sourcewise.doors.service import DoorSettings, Service

from doorkit import JSON, SMALL, uvicorn_thread
from servers import LocalServer, Reply

ARTICLE = "<html><head><title>Guide</title></head><body><article>{}</article></body></html>".format(
    "".join(f"<p>Paragraph {i} explains server components and caching in detail.</p>" for i in range(300))
)
CAPTCHA = '{"results": [], "unresponsive_engines": [["google", "CAPTCHA"]]}'


def start(server: LocalServer, tmp_path: Path, doors: dict[str, Any] | None = None, **settings: Any) -> Any:
    server.route("/sx/search", Reply(200, SMALL, content_type=JSON))
    server.route("/article", Reply(200, ARTICLE))
    conf = load_settings(
        providers=["searxng"],
        provider_options={"searxng": {"url": f"{server.url}/sx"}},
        state_dir=tmp_path / "state",
        timeout=5,
        **settings,
    )
    return uvicorn_thread(create_app(conf, DoorSettings(**(doors or {}))))


@pytest.fixture
def api(server: LocalServer, tmp_path: Path) -> Iterator[str]:
    with start(server, tmp_path, allow_private=True) as url:
        yield url


def error_of(response: httpx.Response) -> dict[str, Any]:
    body: dict[str, Any] = response.json()["error"]
    assert body["status"] == response.status_code
    assert "Traceback" not in response.text
    return body


def test_search_answers_with_rated_results(api: str, server: LocalServer) -> None:
    response = httpx.post(f"{api}/search", json={"query": "react server components", "max_results": 2})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["provider"] == "searxng"
    assert len(body["results"]) == 2
    assert body["results"][0]["tier"] == 1
    assert server.hits("/sx/search") == 1


@pytest.mark.parametrize(
    ("payload", "status", "kind", "words"),
    [
        ({"query": "ab"}, 400, "InvalidQuery", "at least 3 characters"),
        ({"query": "   "}, 400, "InvalidQuery", "at least 3"),
        ({}, 422, "InvalidRequest", "query: Field required"),
        ({"query": 5}, 422, "InvalidRequest", "query"),
        ({"query": "react", "tier": 9}, 422, "InvalidRequest", "tier"),
        ({"query": "react", "tier": True}, 422, "InvalidRequest", "tier"),
        ({"query": "react", "tier": "1"}, 422, "InvalidRequest", "tier"),
        ({"query": "react", "tier": 1.0}, 422, "InvalidRequest", "tier"),
        ({"query": "react", "max_results": False}, 422, "InvalidRequest", "max_results"),
        ({"query": "react", "strategy": "fast"}, 422, "InvalidRequest", "strategy"),
        ({"query": "react", "colour": "red"}, 422, "InvalidRequest", "colour"),
        ({"query": "r" * 501}, 422, "InvalidRequest", "500"),
    ],
)
def test_bad_search_input_is_a_clear_4xx(api: str, payload: Any, status: int, kind: str, words: str) -> None:
    response = httpx.post(f"{api}/search", json=payload)
    assert response.status_code == status
    error = error_of(response)
    assert error["type"] == kind
    assert words in error["message"]


def test_malformed_json_is_422(api: str) -> None:
    response = httpx.post(f"{api}/search", content=b"{not json", headers={"content-type": "application/json"})
    assert response.status_code == 422
    assert error_of(response)["type"] == "InvalidRequest"


def test_provider_failure_is_503_with_the_typed_reason(api: str, server: LocalServer) -> None:
    server.route("/sx/search", Reply(200, CAPTCHA, content_type=JSON))
    response = httpx.post(f"{api}/search", json={"query": "react server components"})
    assert response.status_code == 503
    error = error_of(response)
    assert error["type"] == "NoProviderAvailable"
    assert error["attempts"][0]["provider"] == "searxng"
    assert "blocked" in error["attempts"][0]["reason"]
    health = httpx.get(f"{api}/health").json()
    assert health["providers_suspended"] == ["searxng"]
    assert health["providers_ready"] == []


def test_fetch_reads_slices_and_the_next_comes_from_the_cache(api: str, server: LocalServer) -> None:
    url = f"{server.url}/article"
    first = httpx.post(f"{api}/fetch", json={"url": url, "max_chars": 500, "prompt": "caching"}).json()
    assert first["title"] == "Guide"
    assert len(first["content"]) == 500
    assert first["next_start"] == 500
    assert first["passages"]
    second = httpx.post(f"{api}/fetch", json={"url": url, "start": first["next_start"], "max_chars": 500})
    assert second.status_code == 200
    assert second.json()["from_cache"] is True
    assert second.json()["start"] == 500
    assert server.hits("/article") == 1


def test_fetch_guard_holds_through_the_door(server: LocalServer, tmp_path: Path) -> None:
    with start(server, tmp_path) as api:  # the operator did not allow private addresses
        for target in (
            f"{server.url}/article",
            "http://[::1]:1/",
            "http://169.254.169.254/latest/meta-data/",
        ):
            response = httpx.post(f"{api}/fetch", json={"url": target})
            assert response.status_code == 403, target
            assert error_of(response)["type"] == "AddressNotAllowed"
            # a remote caller cannot pass allow_private: it is told who can (the operator)
            assert "allow_private=True" not in response.text, target
            if "169.254" not in target:
                assert "the server's operator can" in error_of(response)["message"], target
        # a caller cannot ask for the guard to be lifted
        response = httpx.post(f"{api}/fetch", json={"url": f"{server.url}/article", "allow_private": True})
        assert response.status_code == 422
    assert server.hits("/article") == 0


def test_fetch_failures_are_typed(api: str, server: LocalServer) -> None:
    server.route("/gone", Reply(404, "no"))
    response = httpx.post(f"{api}/fetch", json={"url": f"{server.url}/gone"})
    assert response.status_code == 502
    assert error_of(response)["type"] == "FetchHTTPError"
    response = httpx.post(f"{api}/fetch", json={"url": "ftp://example.com/x"})
    assert response.status_code == 400
    assert error_of(response)["type"] == "InvalidURL"
    response = httpx.post(f"{api}/fetch", json={"url": f"{server.url}/article", "max_chars": 0})
    assert response.status_code == 422


def test_route_endpoint(api: str) -> None:
    body = httpx.post(f"{api}/route", json={"question": "what is the latest react version"}).json()
    assert body["action"] == "search"
    assert "latest" in body["signals"]["recency"]
    assert httpx.post(f"{api}/route", json={"question": "?"}).status_code == 400  # "hi" is a question now


def test_api_key_is_required_compared_and_never_echoed(server: LocalServer, tmp_path: Path) -> None:
    secret = "s3cret-key-for-the-test"
    with start(server, tmp_path, doors={"api_key": secret}) as api:
        query = {"query": "react server components"}
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"X-API-Key": secret[:-1]}):
            response = httpx.post(f"{api}/search", json=query, headers=headers)
            assert response.status_code == 401
            assert error_of(response)["type"] == "Unauthorized"
            assert secret not in response.text
        assert httpx.post(
            f"{api}/search", json=query, headers={"Authorization": f"Bearer {secret}"}
        ).is_success
        assert httpx.post(f"{api}/search", json=query, headers={"X-API-Key": secret}).is_success
        assert httpx.get(f"{api}/health").is_success
        assert httpx.get(f"{api}/openapi.json").is_success


def test_rate_limit_per_client(server: LocalServer, tmp_path: Path) -> None:
    with start(server, tmp_path, doors={"rate_limit": 6, "rate_burst": 2}) as api:
        codes = [httpx.post(f"{api}/route", json={"question": "what is new"}).status_code for _ in range(3)]
        assert codes == [200, 200, 429]
        response = httpx.post(f"{api}/route", json={"question": "what is new"})
        assert error_of(response)["type"] == "RateLimited"
        assert 1 <= int(response.headers["retry-after"]) <= 10


def test_body_size_limit(server: LocalServer, tmp_path: Path) -> None:
    with start(server, tmp_path, doors={"max_body_bytes": 2048}) as api:
        big = {"question": "q" * 3000}
        response = httpx.post(f"{api}/route", json=big)
        assert response.status_code == 413
        assert error_of(response)["type"] == "PayloadTooLarge"

        def chunks() -> Iterator[bytes]:  # no Content-Length: the limit holds while reading
            yield b'{"question": "'
            yield b"q" * 3000
            yield b'"}'

        response = httpx.post(f"{api}/route", content=chunks(), headers={"content-type": "application/json"})
        assert response.status_code == 413

        # A small Content-Length beside a chunked body: the length that passes the guard unread
        # is only one that frames the body alone, so this body is still counted.
        body = b'{"question": "' + b"q" * 3000 + b'"}'
        chunked = f"{len(body):x}\r\n".encode() + body + b"\r\n0\r\n\r\n"
        head = b"POST /route HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        head += b"Content-Length: 20\r\nTransfer-Encoding: chunked\r\n\r\n"
        host, port = api.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=30) as conn:
            conn.sendall(head + chunked)
            status = conn.recv(4096).split(b"\r\n", 1)[0]
        assert status.split()[1] in (b"400", b"413"), status  # refused, by the guard or the parser


def test_time_limit_is_504(server: LocalServer, tmp_path: Path) -> None:
    with start(server, tmp_path, doors={"request_timeout": 0.5}) as api:
        server.route("/sx/search", Reply(200, SMALL, content_type=JSON, delay=2.0))
        response = httpx.post(f"{api}/search", json={"query": "react server components"}, timeout=10)
        assert response.status_code == 504
        assert error_of(response)["type"] == "Timeout"


def test_unexpected_failure_is_500_without_internals(
    api: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    async def broken(self: Service, question: str) -> None:
        raise RuntimeError("internal detail /etc/secret")

    # A stand-in for a bug: no real input makes route() crash, and the test needs one.
    monkeypatch.setattr(Service, "route", broken)
    response = httpx.post(f"{api}/route", json={"question": "what is new"})
    assert response.status_code == 500
    assert error_of(response)["type"] == "InternalError"
    assert "/etc/secret" not in response.text
    assert httpx.get(f"{api}/health").is_success  # the server carries on


def test_openapi_and_docs(api: str) -> None:
    spec = httpx.get(f"{api}/openapi.json").json()
    assert {"/web/search", "/web/fetch", "/sources/search", "/route", "/health"} <= set(spec["paths"])
    assert "/search" not in spec["paths"]  # the old name still answers, but is not advertised
    assert "503" in spec["paths"]["/web/search"]["post"]["responses"]
    assert httpx.get(f"{api}/docs").status_code == 200
