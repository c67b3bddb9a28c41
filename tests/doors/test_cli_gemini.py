"""`sourcewise search --provider gemini` and `sourcewise providers` as a user runs them."""

from __future__ import annotations

import json
from pathlib import Path

from test_cli import run
from test_gemini import MODEL, REAL, serve, weather_body

from servers import LocalServer


def test_search_with_gemini_prints_the_cited_answer_and_rated_sources(
    server: LocalServer, tmp_path: Path
) -> None:
    serve(server, weather_body())
    env = {
        "GEMINI_API_KEY": "gm-secret-123",
        "SOURCEWISE_GEMINI_URL": f"{server.url}/models",
        "SOURCEWISE_GEMINI_MODEL": MODEL,
        "SOURCEWISE_GEMINI_REDIRECT_HOSTS": "127.0.0.1",
        "SOURCEWISE_ALLOW_HOSTS": "127.0.0.1",
    }
    out = run(["search", "weather in San Francisco", "--provider", "gemini"], tmp_path, **env)
    assert out.returncode == 0, out.stderr
    assert "69°F.[1]" in out.stdout
    assert f"[2] weather.gov ({REAL[1]})" in out.stdout
    assert "## References" in out.stdout  # seed 000's quick layout, the grounded answer leading it
    assert "gm-secret-123" not in out.stdout + out.stderr


def test_providers_lists_every_provider_with_what_it_needs(tmp_path: Path) -> None:
    out = run(["providers", "--json"], tmp_path, PATH="/nonexistent")
    assert out.returncode == 0, out.stderr
    rows = [r["name"] for r in json.loads(out.stdout)]
    assert rows[0] == "gemini"
    assert {"gemini", "gemini-cli", "mcp", "ddgs", "duckduckgo_instant"} <= set(rows)
    text = run(["providers"], tmp_path, PATH="/nonexistent").stdout
    assert "GEMINI_API_KEY" in text
    assert "SOURCEWISE_MCP_COMMAND" in text
    assert "PATH" in text
