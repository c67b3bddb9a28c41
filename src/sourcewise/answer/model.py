"""Writing the answer: extractive by default; a model, when one is configured, held to its sources.

The model is any OpenAI-compatible Chat Completions endpoint (OpenAI, Ollama, vLLM, llama.cpp
server). It sees only the numbered passages and must end every sentence with the ``[n]`` of the
passages that support it. Its answer is then checked, sentence by sentence: a citation whose
passage does not support the sentence (fewer than ``SUPPORT`` of the sentence's content words
in the passage) is dropped and flagged; a sentence left with no supported citation is dropped and
flagged. A model that is down or answers garbage is a ``ModelError``; ``ask`` then falls back to the
extractive answer and says so.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import httpx

from sourcewise.answer.extractive import sentences, strip_controls, support
from sourcewise.config import Settings
from sourcewise.errors import ModelError
from sourcewise.models import RankedHit

__all__ = ["MAX_PASSAGE", "SUPPORT", "complete_chat", "parse_cited", "write_with_model"]

SUPPORT = 0.5
MAX_PASSAGE = 1500  # characters of each hit shown to the model
MAX_PASSAGES = 8
MAX_REPLY = 1_000_000  # bytes of the model's HTTP answer read at most
PROMPT = (
    "Answer the question using ONLY the numbered passages. End every sentence with the marker of "
    "each passage that supports it, like [1] or [2][3]. Do not use outside knowledge. If the "
    "passages do not answer the question, say so in one sentence without a marker."
)


def parse_cited(text: str) -> list[tuple[str, list[int]]]:
    """Model text as (sentence without markers, the numbers it cites); linear, no regex."""
    out: list[tuple[str, list[int]]] = []
    for sentence in sentences(text):
        plain: list[str] = []
        numbers: list[int] = []
        i = 0
        while i < len(sentence):
            close = sentence.find("]", i + 1) if sentence[i] == "[" else -1
            inner = sentence[i + 1 : close] if close > 0 else ""
            if inner.isdigit() and len(inner) <= 3:
                numbers.append(int(inner))
                i = close + 1
                continue
            plain.append(sentence[i])
            i += 1
        clean = "".join(plain).strip()
        if clean:
            out.append((clean, numbers))
    return out


def _passages(hits: Sequence[RankedHit]) -> str:
    return "\n\n".join(
        f"[{i}] {h.hit.title}\n{(h.hit.text or h.hit.snippet)[:MAX_PASSAGE]}"
        for i, h in enumerate(hits[:MAX_PASSAGES], 1)
    )


def _content(payload: Any) -> str:
    try:
        content = payload["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError) as exc:
        raise ModelError("the model's answer has no choices[0].message.content") from exc
    if not isinstance(content, str) or not content.strip():
        raise ModelError("the model's answer is empty or not text")
    return content


async def _complete(
    question: str, hits: Sequence[RankedHit], settings: Settings, client: httpx.AsyncClient
) -> str:
    user = f"Passages:\n\n{_passages(hits)}\n\nQuestion: {question}"
    return await complete_chat(PROMPT, user, settings, client)


async def complete_chat(system: str, user: str, settings: Settings, client: httpx.AsyncClient) -> str:
    """The configured model's reply to one system + user exchange; ``ModelError`` when it fails.
    ``client``: the session's HTTP client (``Session.client``)."""
    if settings.model_url is None:
        raise ModelError("no model configured (model_url)")
    url = settings.model_url.rstrip("/") + "/chat/completions"
    headers = {"Content-Type": "application/json"}
    if settings.model_api_key is not None:
        headers["Authorization"] = f"Bearer {settings.model_api_key.get_secret_value()}"
    body = {
        "model": settings.model_name,
        "temperature": 0,
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
    }
    try:
        async with client.stream(
            "POST", url, json=body, headers=headers, timeout=settings.model_timeout
        ) as response:
            raw = bytearray()
            async for chunk in response.aiter_bytes():
                raw += chunk
                if len(raw) > MAX_REPLY:
                    raise ModelError(f"the model's answer is over {MAX_REPLY} bytes")
    except httpx.HTTPError as exc:
        raise ModelError(f"the model at {settings.model_url} did not answer: {type(exc).__name__}") from exc
    if response.status_code != 200:
        raise ModelError(f"the model at {settings.model_url} answered HTTP {response.status_code}")
    try:
        return _content(json.loads(raw))
    except (ValueError, UnicodeDecodeError) as exc:
        raise ModelError("the model's answer is not JSON") from exc


async def write_with_model(
    question: str, hits: Sequence[RankedHit], settings: Settings, client: httpx.AsyncClient
) -> tuple[list[tuple[str, list[int]]], list[str]]:
    """(sentence, hit indexes) parts that survive the support check, and what was dropped."""
    shown = list(hits[:MAX_PASSAGES])
    parts: list[tuple[str, list[int]]] = []
    dropped: list[str] = []
    for sentence, numbers in parse_cited(await _complete(question, shown, settings, client)):
        sentence = strip_controls(sentence)
        kept: list[int] = []
        for n in dict.fromkeys(numbers):
            if not 1 <= n <= len(shown):
                dropped.append(f"[{n}] points at no passage: {sentence[:120]}")
            elif support(sentence, shown[n - 1].hit.text or shown[n - 1].hit.snippet) < SUPPORT:
                dropped.append(f"[{n}] does not support: {sentence[:120]}")
            else:
                kept.append(n - 1)
        if kept:
            parts.append((sentence, kept))
        elif numbers:
            dropped.append(f"sentence without a supporting source removed: {sentence[:120]}")
        else:
            dropped.append(f"sentence without a citation removed: {sentence[:120]}")
    if not parts:
        raise ModelError("no sentence of the model's answer is supported by the passages")
    return parts, dropped
