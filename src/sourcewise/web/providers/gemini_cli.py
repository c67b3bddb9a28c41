"""The ``gemini`` CLI as a provider (seed 000's "Gemini via Bash").

When a ``gemini`` executable is on PATH (``command`` under ``[providers.gemini-cli]``), it is run
non-interactively (``--output-format json -p PROMPT``, no shell) with a prompt asking it to use its
``google_web_search`` tool and answer with JSON. An answer in prose instead (the tool's own
``Sources:`` list, markdown links, numbered sources) is read too: its links are the results and
its text the answer (``web.prose``). The run is killed at its ``timeout`` seconds or
when the search's deadline passes. A timeout, a missing login or output that is neither the JSON
asked for nor prose with links are typed provider errors, so the chain moves on. Output is read
in chunks: past ``MAX_OUTPUT`` bytes the CLI (and anything it started) is killed and the answer
refused, so memory stays bounded.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import shutil
import signal
from typing import Any

from pydantic import Field
from pydantic_settings import BaseSettings

from sourcewise.errors import AuthError, ParseError, ProviderError, ProviderNotConfigured
from sourcewise.models import RawResult
from sourcewise.net.reasons import brief
from sourcewise.net.redirects import resolve_redirects
from sourcewise.text.words import printable
from sourcewise.web.prose import read_prose
from sourcewise.web.providers.base import (
    Provider,
    ProviderCall,
    ProviderOutput,
    no_parse,
    no_request,
    options_config,
)

__all__ = ["PROVIDER", "CliTimeout", "command", "parse_output", "prompt"]

NAME = "gemini-cli"
MAX_OUTPUT = 2_000_000
REAP_WAIT = 5.0  # seconds a killed CLI is given to be reaped before the search goes on
MAX_STDERR = 64_000  # kept for the error message; the rest is read and dropped
CHUNK = 65_536
log = logging.getLogger("sourcewise")
# Whole words: "author" or "oauth2" in a crash message is not a missing login.
_LOGIN = re.compile(
    r"\b(?:auth|authenticat\w*|unauthori[sz]ed|log(?:ged)? ?in|credentials?|api key"
    r"|GEMINI_API_KEY|GOOGLE_API_KEY)\b",
    re.IGNORECASE,
)


class CliTimeout(ProviderError):
    """The CLI did not finish in time and was killed; the chain moves on without a retry."""

    kind = "timed out"


class GeminiCliOptions(BaseSettings):
    """``[providers.gemini-cli]``: the executable and the seconds one run may take."""

    model_config = options_config(NAME)

    command: str = Field(default="gemini", min_length=1, description="the gemini CLI executable")
    timeout: float = Field(default=60.0, gt=0, le=600, description="seconds for one CLI run")


def configured(options: GeminiCliOptions) -> tuple[bool, str]:
    path = shutil.which(options.command)
    if path:
        return True, f"runs {path} (needs a logged-in gemini CLI)"
    return False, f"no `{options.command}` executable on PATH: install gemini-cli and log in"


def prompt(query: str, max_results: int) -> str:
    return (
        "Use the google_web_search tool to search the web for this query: "
        f"{json.dumps(query, ensure_ascii=False)}. Answer with JSON only, no prose and no code fence, "
        'in exactly this shape: {"answer": "a short answer", "results": [{"title": "...", '
        f'"url": "https://...", "snippet": "..."}}]}} with at most {max_results} results, '
        "each a page you found with the tool."
    )


def command(query: str, max_results: int, options: GeminiCliOptions) -> list[str]:
    return [options.command, "--output-format", "json", "-p", prompt(query, max_results)]


def _json_in(text: str) -> Any:
    """The JSON value in ``text``: as is, inside a code fence, or between the outer braces."""
    candidates = [text.strip()]
    # Split, not a regex: the odd pieces are the insides of code fences, found in linear time.
    for inside in text.split("```")[1::2]:
        candidates.append(inside.removeprefix("json"))
    if "{" in text and "}" in text:
        candidates.append(text[text.index("{") : text.rindex("}") + 1])
    for candidate in candidates:
        try:
            return json.loads(candidate)
        except ValueError:
            continue
    raise ParseError(NAME, f"the CLI did not answer with JSON: {brief(printable(text), 80)!r}")


def _from_prose(text: str, error: ParseError) -> tuple[list[RawResult], str | None]:
    """Results and answer from a reply in prose; ``error`` when it links to no source either."""
    read = read_prose(text, NAME)
    if not read.results:
        raise error
    return read.results, read.answer or None


def parse_output(stdout: str) -> tuple[list[RawResult], str | None]:
    """Results and answer from the CLI's output: the JSON asked for, or prose with links to its
    sources; ``ParseError`` when it is neither."""
    try:
        outer = _json_in(stdout)
    except ParseError as exc:
        return _from_prose(stdout, exc)
    if isinstance(outer, dict) and isinstance(outer.get("error"), dict):
        message = brief(printable(str(outer["error"].get("message") or "unknown error")), 200)
        raise ProviderError(NAME, f"the CLI reported an error: {message}")
    if isinstance(outer, dict) and "response" in outer:  # --output-format json wraps the reply
        if not isinstance(outer["response"], str):
            raise ParseError(NAME, "the CLI's 'response' is not text")
        try:
            outer = _json_in(outer["response"])
        except ParseError as exc:
            return _from_prose(outer["response"], exc)
    if not isinstance(outer, dict) or not isinstance(outer.get("results"), list):
        raise ParseError(NAME, "the reply has no 'results' list")
    answer = outer.get("answer")
    results: list[RawResult] = []
    for item in outer["results"]:
        if not isinstance(item, dict):
            raise ParseError(NAME, "a result is not an object")
        fields = [item.get(k, "") for k in ("title", "url", "snippet")]
        if not all(isinstance(v, str) for v in fields):
            raise ParseError(NAME, "a result's title, url or snippet is not text")
        title, url, snippet = fields
        results.append(
            RawResult(title=title, url=url, snippet=snippet, provider=NAME, position=len(results) + 1)
        )
    return results, answer if isinstance(answer, str) and answer.strip() else None


def _first_line(text: str) -> str:
    lines = text.strip().splitlines()
    return brief(printable(lines[0]), 200) if lines else ""


class _TooMuch(Exception):
    pass


async def _capped(stream: asyncio.StreamReader | None, limit: int) -> bytes:
    """Everything ``stream`` gives, in chunks; ``_TooMuch`` as soon as it passes ``limit``."""
    data = bytearray()
    while stream is not None and (chunk := await stream.read(CHUNK)):
        data += chunk
        if len(data) > limit:
            raise _TooMuch
    return bytes(data)


async def _drained(stream: asyncio.StreamReader | None, keep: int) -> bytes:
    """The first ``keep`` bytes of ``stream``; the rest is read and dropped until it ends."""
    data = bytearray()
    while stream is not None and (chunk := await stream.read(CHUNK)):
        data += chunk[: max(0, keep - len(data))]
    return bytes(data)


async def _stop(proc: asyncio.subprocess.Process) -> None:
    """Kill the CLI and everything it started (its own process group), and reap it: within
    ``REAP_WAIT`` seconds, so that a slow child watcher never holds the search (killed is killed)."""
    if proc.returncode is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (OSError, AttributeError):  # gone already, or no process groups (Windows)
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(REAP_WAIT):
                await proc.wait()


async def _execute(argv: list[str], seconds: float) -> tuple[int, bytes, bytes]:
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,  # its own group: a kill reaches whatever it started too
        )
    except OSError as exc:
        raise ProviderNotConfigured(NAME, f"cannot run {argv[0]!r} ({exc.strerror or exc})") from exc
    errors = asyncio.ensure_future(_drained(proc.stderr, MAX_STDERR))
    try:
        async with asyncio.timeout(seconds):
            out = await _capped(proc.stdout, MAX_OUTPUT)
            err = await errors
            await proc.wait()
    except TimeoutError:
        await _stop(proc)
        raise CliTimeout(NAME, f"no answer within {seconds:g} s; the CLI was stopped") from None
    except _TooMuch:
        await _stop(proc)
        raise ParseError(NAME, f"the CLI wrote more than {MAX_OUTPUT} bytes; it was stopped") from None
    except BaseException:  # cancelled by the caller's deadline: never leave the CLI running
        await _stop(proc)
        raise
    finally:
        if not errors.done():
            errors.cancel()
            await asyncio.wait({errors}, timeout=REAP_WAIT)
    return proc.returncode or 0, out, err


async def run(call: ProviderCall) -> ProviderOutput:
    options = call.options
    if not isinstance(options, GeminiCliOptions):
        raise ProviderError(NAME, "called without its [providers.gemini-cli] options (the engine gives them)")
    if not shutil.which(options.command):
        raise ProviderNotConfigured(NAME, configured(options)[1])
    argv = command(call.query, call.max_results, options)
    # The CLI's own limit, within what is left of the search's deadline
    code, out, err = await _execute(argv, min(options.timeout, call.deadline))
    stdout, stderr = out.decode("utf-8", "replace"), err.decode("utf-8", "replace")
    if code != 0:
        said = _first_line(stderr) or _first_line(stdout)
        if _LOGIN.search(stderr) or _LOGIN.search(stdout):
            raise AuthError(NAME, f"the CLI is not logged in ({said}): run `gemini` once to log in")
        raise ProviderError(NAME, f"the CLI exited with status {code}: {said or 'no message'}")
    results, answer = parse_output(stdout)
    links = await resolve_redirects(  # what is left of the call's budget, not all of it again
        (r.url for r in results), call.settings,
        fetcher=call.fetcher, cache=call.redirects, clock=call.clock, seconds=call.left(),
    )  # fmt: skip
    results = [r.model_copy(update={"url": links.get(r.url, r.url)}) for r in results]
    return ProviderOutput(results[: call.max_results], answer)


PROVIDER = Provider(
    name=NAME,
    summary="the gemini CLI's google_web_search, run non-interactively (gemini on PATH, logged in)",
    configured=configured,
    build=no_request(NAME),
    parse=no_parse(NAME),
    max_per_request=20,
    run=run,
    options=GeminiCliOptions,
)
