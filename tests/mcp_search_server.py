"""A small MCP search server for tests: run as a script it speaks stdio; ``app`` serves HTTP."""

from __future__ import annotations

import asyncio
import json

from mcp.server.mcpserver import MCPServer

app = MCPServer("test-search")
PAGES = [
    {
        "title": "Server Components - React",
        "url": "https://react.dev/reference/rsc/server-components",
        "description": "RSC reference",
    },
    {
        "title": "RSC RFC",
        "url": "https://github.com/reactjs/rfcs/blob/main/text/0188-server-components.md",
        "description": "The RFC",
    },
    {
        "title": "Understanding RSC",
        "url": "https://dev.to/someone/understanding-rsc",
        "description": "A post",
    },
]


@app.tool()
def search(query: str, count: int = 10) -> list[dict[str, str]]:
    """Structured results, as list of objects."""
    return [{**page, "title": f"{page['title']} ({query})"} for page in PAGES][:count]


@app.tool()
def text_search(q: str) -> str:
    """Results as labelled text blocks, the way several search servers answer."""
    return "\n\n".join(
        f"Title: {p['title']}\nURL: {p['url']}\nDescription: {p['description']}" for p in PAGES
    )


@app.tool()
def json_text_search(q: str) -> str:
    """Results as JSON inside a text block, under web.results (Brave's shape)."""
    return json.dumps(
        {
            "web": {
                "results": [
                    {"title": p["title"], "url": p["url"], "description": p["description"]} for p in PAGES
                ]
            }
        }
    )


@app.tool()
def prose(q: str) -> str:
    """No results at all: just words."""
    return "I could not find anything."


#: What Gemini answers through an agent when asked to search (seed 000's first-priority call): prose
#: with [n] markers, a markdown link in the text and a Sources block, one link an unresolved
#: grounding redirect.
GEMINI_PROSE = """React Server Components render on the server and send no JavaScript to the client [1].
They can read data directly, and the RFC explains the design [2]. A tutorial is on
[DEV Community](https://dev.to/someone/understanding-rsc).

Sources:
[1] Server Components - React (https://react.dev/reference/rsc/server-components)
[2] RFC 0188 (https://github.com/reactjs/rfcs/blob/main/text/0188-server-components.md)
[3] vercel.com (https://vertexaisearch.cloud.google.com/grounding-api-redirect/AUZIYQtest)
"""


@app.tool()
def gemini_prose(q: str) -> str:
    """A Gemini agent's prose answer with markdown links and a Sources block."""
    return GEMINI_PROSE


@app.tool()
async def slow_failing(q: str, seconds: float = 1.0) -> str:
    """A tool whose backend answers slowly, then fails (a budget test's provider)."""
    await asyncio.sleep(seconds)
    raise ValueError("backend down after a long wait")


@app.tool()
def failing(q: str) -> str:
    """A tool whose backend is down."""
    raise ValueError("backend down")


if __name__ == "__main__":
    import sys

    print("search server started", file=sys.stderr, flush=True)  # counted by the tests (its log)
    app.run("stdio")
