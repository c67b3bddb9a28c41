"""A small chat MCP server for the ``mcp`` source tests: Slack-like messages searched in Slack's own
syntax (``in:#eng from:sarah after:D before:D is:thread``), each call's arguments appended as a JSON
line to the file in ``CHAT_LOG`` so that a test reads what the source sent.

Run as a script it speaks stdio; ``app`` serves Streamable HTTP. Besides ``search`` (one query
string) and ``search_fields`` (filters as arguments of their own), it has tools that misbehave:
``hang`` never answers, ``crash_once`` kills the server on its first call (a marker file in
``CHAT_LOG``'s folder remembers it), ``garbage`` answers text holding no results, ``hostile``
answers the text the test gives it (huge, control characters, wrong shapes).
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer

app = MCPServer("test-chat")
MESSAGES = [
    {"channel": "engineering", "user": "sarah", "ts": "1736935200.000100", "thread_ts": "1736935200.000100",
     "text": "API migration: we decided to move the billing API to v2 in March"},
    {"channel": "engineering", "user": "tom", "ts": "1736938800.000200", "thread_ts": "1736935200.000100",
     "text": "Agreed on the API migration plan; v1 stays read-only until April"},
    {"channel": "random", "user": "sarah", "ts": "1736942400.000300", "thread_ts": None,
     "text": "lunch? the API migration can wait an hour"},
]  # fmt: skip


def _record(tool: str, arguments: dict[str, Any]) -> None:
    log = os.environ.get("CHAT_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as f:
            f.write(json.dumps({"tool": tool, **arguments}) + "\n")


def _answer(found: list[dict[str, Any]], limit: int) -> dict[str, Any]:
    return {
        "messages": [
            {**m, "permalink": f"https://team.slack.test/archives/{m['channel']}/p{m['ts'].replace('.', '')}"}
            for m in found[:limit]
        ]
    }


def _matches(words: list[str], channel: str, user: str) -> list[dict[str, Any]]:
    out = []
    for m in MESSAGES:
        if channel and m["channel"] != channel.lstrip("#"):
            continue
        if user and m["user"] != user:
            continue
        if all(w.lower().strip('"') in m["text"].lower() for w in words):
            out.append(m)
    return out


@app.tool()
def search(query: str, limit: int = 10) -> dict[str, Any]:
    """Search messages with Slack's modifiers (in:, from:, after:, before:, is:thread)."""
    _record("search", {"query": query, "limit": limit})
    words, channel, user = [], "", ""
    for token in query.split():
        key, sep, value = token.partition(":")
        if sep and key == "in":
            channel = value
        elif sep and key == "from":
            user = value
        elif sep and key in ("after", "before", "is", "has"):
            continue
        else:
            words.append(token)
    return _answer(_matches(words, channel, user), limit)


@app.tool()
def search_fields(
    query: str, channel: str = "", user: str = "", after: str = "", before: str = "", limit: int = 10
) -> dict[str, Any]:
    """Search messages, with the filters as arguments of their own."""
    _record(
        "search_fields",
        {"query": query, "channel": channel, "user": user, "after": after, "before": before, "limit": limit},
    )
    return _answer(_matches(query.split(), channel, user), limit)


@app.tool()
async def hang(query: str, limit: int = 10) -> str:
    """Never answers."""
    _record("hang", {"query": query})
    await asyncio.sleep(3600)
    return "late"


@app.tool()
def crash_once(query: str, limit: int = 10) -> dict[str, Any]:
    """Kills the server on its first call; answers like search afterwards."""
    _record("crash_once", {"query": query})
    marker = Path(os.environ.get("CHAT_LOG", "chat.log")).with_suffix(".crashed")
    if not marker.exists():
        marker.write_text("x", "utf-8")
        os._exit(1)
    return _answer(_matches(query.split()[:1], "", ""), 10)


@app.tool()
def garbage(query: str, limit: int = 10) -> str:
    """Words, no results."""
    return "I am not a search result"


@app.tool()
def hostile(payload: str, repeat: int = 1) -> str:
    """Answers ``payload`` (``repeat`` times): whatever the test wants the server to say."""
    return payload * repeat


if __name__ == "__main__":
    app.run("stdio")
