"""The web page at ``/`` of ``sourcewise serve``: ask a question, read the cited answer.

Server-rendered HTML: a plain form (``GET /?q=...``) that works without JavaScript; ``/page.js``
only marks the page busy while an answer is on its way. Everything from outside (the question,
titles, snippets, locations, reports) is escaped; only http(s) locations become links; a strict
Content-Security-Policy allows scripts from this server only. The page stands behind the same
key and guards as the API (a browser sends the key as the password of HTTP Basic auth).
"""

from __future__ import annotations

import re
from html import escape
from typing import Annotated
from urllib.parse import urlencode, urlsplit

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, Response

from sourcewise.doors.errors import classify
from sourcewise.doors.service import Service
from sourcewise.errors import SourcewiseError
from sourcewise.models import Answer, RankedHit, SourceInfo, SourceReport
from sourcewise.sources.api import asource_info

__all__ = ["MAX_QUESTION", "router"]

MAX_QUESTION = 2000
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; form-action 'self'; "
    "base-uri 'none'; frame-ancestors 'none'"
)
_MARKER = re.compile(r"\[([0-9]{1,3})\]")
STATUS = {"ok": "answered", "empty": "empty", "timeout": "slow (timed out)", "rate_limited": "rate limited",
          "unavailable": "unavailable", "failed": "failed"}  # fmt: skip

STYLE = """
body{font:16px/1.5 system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem;color:#111}
input[type=search]{width:70%;font-size:1rem;padding:.4rem}button{font-size:1rem;padding:.4rem .9rem}
.answer{white-space:pre-wrap;border-left:4px solid #246;padding:.2rem 1rem;background:#f6f8fa}
.muted{color:#555}.error{color:#a00}table{border-collapse:collapse}td,th{padding:.2rem .6rem;text-align:left}
a:focus,button:focus,input:focus{outline:3px solid #f90}
"""
SCRIPT = """
document.addEventListener("DOMContentLoaded", function () {
  var form = document.getElementById("ask");
  if (!form) return;
  form.addEventListener("submit", function () {
    var button = form.querySelector("button");
    button.disabled = true;
    document.getElementById("busy").textContent = "Asking every source\\u2026";
  });
});
"""

router = APIRouter(include_in_schema=False)


def _link(location: str, text: str) -> str:
    """An anchor for an http(s) location; any other location (a file, a message) as plain text."""
    if urlsplit(location).scheme in ("http", "https"):
        return f'<a href="{escape(location)}" rel="noopener noreferrer">{escape(text)}</a>'
    return f"<code>{escape(text)}</code>"


def _answer_text(answer: Answer) -> str:
    count = len(answer.sources)

    def marker(m: re.Match[str]) -> str:
        n = int(m.group(1))
        return f'<a href="#source-{n}">[{n}]</a>' if 1 <= n <= count else m.group(0)

    return _MARKER.sub(marker, escape(answer.text))


def _source(n: int, ranked: RankedHit) -> str:
    hit = ranked.hit  # a file's location holds its lines (path#L10-L24)
    trust = f"tier {hit.tier}" if hit.tier else hit.authority.replace("_", " ")
    return (
        f'<li id="source-{n}">{escape(hit.title or hit.location)} - {_link(hit.location, hit.location)}'
        f' <span class="muted">({escape(hit.source)}, {escape(trust)}, '
        f"relevance {ranked.relevance:.2f})</span></li>"
    )


def _report(r: SourceReport) -> str:
    why = f" - {escape(r.error)}" if r.error else ""
    return (
        f"<tr><td>{escape(r.source)}</td><td>{escape(STATUS.get(r.status, r.status))}</td>"
        f"<td>{r.hits}</td><td>{r.elapsed_ms:.0f} ms{why}</td></tr>"
    )


def _readings(answer: Answer) -> str:
    links = [
        f'<li><a href="/?{escape(urlencode({"q": answer.question, "reading": r.label}))}">'
        f"{escape(r.label)}</a> ({r.hits} results)</li>"
        for r in answer.readings
    ]
    return f"<p>{escape(answer.clarification or '')}</p><ol>{''.join(links)}</ol>"


def _answer(answer: Answer) -> str:
    parts = []
    if answer.clarification:
        choice = f"<h2>Which did you mean?</h2>{_readings(answer)}"
        parts.append(f'<section aria-label="readings">{choice}</section>')
    if answer.answered and answer.text:
        parts.append(f'<h2>Answer</h2><div class="answer" id="answer">{_answer_text(answer)}</div>')
    elif not answer.clarification:
        parts.append('<p id="answer" class="muted">Nothing found answers this question.</p>')
    if answer.sources:
        items = "".join(_source(n, s) for n, s in enumerate(answer.sources, 1))
        parts.append(f'<h2>Sources</h2><ol id="sources">{items}</ol>')
    rows = "".join(_report(r) for r in answer.reports)
    parts.append(
        '<h2>What each source did</h2><table id="reports"><tr><th>source</th><th>status</th>'
        f"<th>results</th><th>time</th></tr>{rows}</table>"
    )
    parts += [f'<p class="muted">warning: {escape(w)}</p>' for w in answer.warnings]
    return "".join(parts)


def _status(infos: list[SourceInfo]) -> str:
    rows = "".join(
        f"<li>{escape(i.name)} ({escape(i.kind.replace('_', ' '))}): "
        f"{'ready' if i.ready else 'not ready'}{escape(' - ' + i.detail if i.detail else '')}</li>"
        for i in infos
    )
    return f'<details id="index-status"><summary>Sources and index status</summary><ul>{rows}</ul></details>'


def page(question: str, body: str, status: str) -> str:
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        f"<title>sourcewise</title><style>{STYLE}</style>"
        '<script src="/page.js" defer></script></head><body><main>'
        '<h1>sourcewise</h1><form id="ask" method="get" action="/" role="search">'
        '<label for="q">Question</label> '
        f'<input type="search" id="q" name="q" value="{escape(question)}" maxlength="{MAX_QUESTION}" '
        'required autofocus> <button type="submit">Ask</button></form>'
        f'<p id="busy" role="status" aria-live="polite"></p>{body}{status}</main></body></html>'
    )


def _html(text: str, status: int = 200) -> HTMLResponse:
    headers = {"content-security-policy": CSP, "x-content-type-options": "nosniff",
               "referrer-policy": "no-referrer"}  # fmt: skip
    return HTMLResponse(text, status_code=status, headers=headers)


@router.get("/", response_class=HTMLResponse)
async def home(
    request: Request,
    q: Annotated[str, Query(max_length=MAX_QUESTION)] = "",
    reading: Annotated[str | None, Query(max_length=200)] = None,
) -> HTMLResponse:
    service: Service = request.app.state.service
    # with [access] sections, only the key's own sources (and, for kb, no counts: see its info)
    infos = await asource_info(service.door_sources(None), session=service.session)
    status, body = 200, ""
    if q.strip():
        try:
            answer = await service.ask(q, reading=reading or None)
            body = _answer(answer)
        except SourcewiseError as exc:
            failure = classify(exc)
            status = failure.status
            said = f"{escape(failure.kind)}: {escape(failure.message)}"
            body = f'<p class="error" id="error" role="alert">{said}</p>'
    return _html(page(q, body, _status(infos)), status)


@router.get("/page.js")
async def script() -> Response:
    return Response(SCRIPT, media_type="text/javascript", headers={"x-content-type-options": "nosniff"})
