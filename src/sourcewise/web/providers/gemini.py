"""Gemini grounded search (seed 002): ``generateContent`` with the ``google_search`` tool.

Gemini searches Google, writes an answer, and says which sources ground which sentences
(``groundingMetadata``). The sources become rated results; the answer gets ``[n]`` citations
(``web.cite``). Source links are ``vertexaisearch.cloud.google.com`` redirects, resolved to the
real page before rating (``net.redirects``) so that tiers and dedup see the real site; Gemini's
title is kept. The key goes in the ``x-goog-api-key`` header, never in the URL.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings

from sourcewise.errors import AuthError, InvalidInput, ParseError, ProviderError, ProviderNotConfigured
from sourcewise.models import RawResult
from sourcewise.net.http import send
from sourcewise.net.reasons import brief
from sourcewise.net.redirects import resolve_redirects
from sourcewise.web.cite import cite
from sourcewise.web.providers.base import (
    HttpRequest,
    HttpResponse,
    Provider,
    ProviderCall,
    ProviderOutput,
    check_status,
    json_body,
    key_detail,
    option_aliases,
    options_config,
)

__all__ = ["PROVIDER", "GeminiOptions", "Grounded", "build", "parse", "parse_grounded", "with_links"]

NAME = "gemini"
log = logging.getLogger("sourcewise")


@dataclass(frozen=True)
class Grounded:
    """The answer text (thoughts left out), its grounding metadata, and the sources as results."""

    text: str
    metadata: dict[str, Any]
    results: list[RawResult]


class GeminiOptions(BaseSettings):
    """``[providers.gemini]``: the key (or ``GEMINI_API_KEY``), the model and the endpoint."""

    model_config = options_config(NAME)

    api_key: SecretStr | None = Field(
        default=None, validation_alias=option_aliases(NAME, "api_key", "GEMINI_API_KEY")
    )
    model: str = Field(default="gemini-2.5-flash", min_length=1, pattern=r"^[A-Za-z0-9._-]+$")
    url: str = "https://generativelanguage.googleapis.com/v1beta/models"


def configured(options: GeminiOptions) -> tuple[bool, str]:
    ready, detail = key_detail(options.api_key, "GEMINI_API_KEY", NAME)
    return ready, f"{detail}; model {options.model}" if ready else detail


def build(query: str, max_results: int, options: GeminiOptions) -> HttpRequest:
    if options.api_key is None:
        raise ProviderNotConfigured(NAME, configured(options)[1])
    return HttpRequest(
        "POST",
        f"{options.url.rstrip('/')}/{options.model}:generateContent",
        headers={"x-goog-api-key": options.api_key.get_secret_value()},
        json={"contents": [{"role": "user", "parts": [{"text": query}]}], "tools": [{"google_search": {}}]},
    )


def _error(response: HttpResponse) -> tuple[str, str]:
    """Google's ``{"error": {"status", "message"}}``, or the start of the body."""
    try:
        body = json_body(NAME, response)
    except ParseError:
        return "", brief(response.text, 120)
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict):
        return "", brief(response.text, 120)
    return str(error.get("status") or ""), brief(str(error.get("message") or ""), 200)


def _check(response: HttpResponse) -> None:
    if 200 <= response.status < 300:
        return
    status, message = _error(response)
    if response.status == 400 and ("API key" in message or status == "UNAUTHENTICATED"):
        raise AuthError(NAME, f"the key was refused ({message}): check GEMINI_API_KEY")
    if response.status == 404:
        raise ProviderError(
            NAME,
            f"model not found ({message}); set `model` under [providers.gemini] (SOURCEWISE_GEMINI_MODEL)",
        )
    check_status(NAME, response, message)


def _field(obj: Any, key: str, kind: type | tuple[type, ...], what: str, default: Any = None) -> Any:
    value = obj.get(key, default)
    if value is not None and not isinstance(value, kind):
        raise ParseError(NAME, f"{what} is not a {getattr(kind, '__name__', 'valid value')}")
    return default if value is None else value


def _text(candidate: dict[str, Any]) -> str:
    content = _field(candidate, "content", dict, "candidate.content", {})
    parts = _field(content, "parts", list, "content.parts", [])
    texts = []
    for part in parts:
        if not isinstance(part, dict):
            raise ParseError(NAME, "a content part is not an object")
        text = _field(part, "text", str, "part.text", "")
        if not part.get("thought"):  # offsets count the answer only, not the model's thoughts
            texts.append(text)
    return "".join(texts)


def _sources(metadata: dict[str, Any]) -> list[tuple[str, str]]:
    """(title, uri) per grounding chunk, in order; shapes checked."""
    out = []
    for chunk in _field(metadata, "groundingChunks", list, "groundingChunks", []):
        if not isinstance(chunk, dict):
            raise ParseError(NAME, "a grounding chunk is not an object")
        web = _field(chunk, "web", dict, "chunk.web", None) or _field(
            chunk, "retrievedContext", dict, "chunk.retrievedContext", {}
        )
        out.append((_field(web, "title", str, "chunk title", ""), _field(web, "uri", str, "chunk uri", "")))
    for support in _field(metadata, "groundingSupports", list, "groundingSupports", []):
        if not isinstance(support, dict):
            raise ParseError(NAME, "a grounding support is not an object")
        _field(support, "segment", dict, "support.segment", {})
        _field(support, "groundingChunkIndices", list, "groundingChunkIndices", [])
    return out


def _snippets(metadata: dict[str, Any]) -> dict[int, str]:
    """For each chunk, the first answer sentence it grounds: the best snippet Gemini gives."""
    out: dict[int, str] = {}
    for support in metadata.get("groundingSupports") or []:
        text = (support.get("segment") or {}).get("text")
        for index in support.get("groundingChunkIndices") or []:
            if isinstance(index, int) and isinstance(text, str):
                out.setdefault(index, text)
    return out


def parse_grounded(response: HttpResponse) -> Grounded:
    """Text, metadata and results from a ``generateContent`` response; ``ParseError`` if malformed."""
    _check(response)
    body = json_body(NAME, response)
    if not isinstance(body, dict):
        raise ParseError(NAME, "the JSON is not an object")
    candidates = _field(body, "candidates", list, "candidates", [])
    if not candidates:
        feedback = body.get("promptFeedback")
        reason = feedback.get("blockReason") if isinstance(feedback, dict) else None
        if reason:
            raise ProviderError(NAME, f"the question was blocked ({reason})")
        raise ParseError(NAME, "the JSON has no candidates")
    first = candidates[0]
    if not isinstance(first, dict):
        raise ParseError(NAME, "the candidate is not an object")
    metadata = _field(first, "groundingMetadata", dict, "groundingMetadata", {})
    sources = _sources(metadata)
    snippets = _snippets(metadata)
    results = [
        RawResult(title=title, url=uri, snippet=snippets.get(i, ""), provider=NAME, position=i + 1)
        for i, (title, uri) in enumerate(sources)
        if uri
    ]
    return Grounded(_text(first), metadata, results)


def parse(response: HttpResponse) -> list[RawResult]:
    return parse_grounded(response).results


def with_links(grounded: Grounded, links: dict[str, str]) -> Grounded:
    """The same answer with each chunk's link replaced by the page it redirects to."""
    chunks = []
    for chunk in grounded.metadata.get("groundingChunks") or []:
        web = chunk.get("web")
        if isinstance(web, dict) and web.get("uri") in links:
            chunk = {**chunk, "web": {**web, "uri": links[web["uri"]]}}
        chunks.append(chunk)
    metadata = {**grounded.metadata, "groundingChunks": chunks}
    results = [r.model_copy(update={"url": links.get(r.url, r.url)}) for r in grounded.results]
    return Grounded(grounded.text, metadata, results)


async def run(call: ProviderCall) -> ProviderOutput:
    if not isinstance(call.options, GeminiOptions):
        raise ProviderError(NAME, "called without its [providers.gemini] options (the engine passes them)")
    request = build(call.query, call.max_results, call.options)
    started = call.clock()
    response = await send(
        call.client, request, NAME, call.deadline, started, max_bytes=call.settings.max_bytes
    )
    grounded = parse_grounded(response)
    links = await resolve_redirects(  # within what is left of the call's budget
        (r.url for r in grounded.results), call.settings,
        fetcher=call.fetcher, cache=call.redirects, clock=call.clock, seconds=call.left(),
    )  # fmt: skip
    grounded = with_links(grounded, links)
    try:
        cited = cite(grounded.text, grounded.metadata)
    except InvalidInput as exc:  # past the documented limits: an answer we will not cite
        raise ParseError(NAME, str(exc)) from exc
    for note in cited.notes:
        log.info("gemini citations: %s", note)
    return ProviderOutput(grounded.results[: call.max_results], cited.text if grounded.text else None)


PROVIDER = Provider(
    name=NAME,
    summary="Gemini grounded Google search with cited answers (GEMINI_API_KEY)",
    configured=configured,
    build=build,
    parse=parse,
    max_per_request=20,
    run=run,
    options=GeminiOptions,
)
