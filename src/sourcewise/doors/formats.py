"""The text forms of results and answers, the same in every door (CLI ``--format``, MCP, HTTP), and
which of them each CLI command can write.

A module of its own, importing nothing, so that the CLI can list the choices without loading the
renderers (``--help`` starts fast)."""

from __future__ import annotations

from typing import Literal, get_args

__all__ = ["FORMATS", "FORMS", "SUFFIXES", "Format"]

Format = Literal["quick", "deep", "progressive", "json"]
FORMATS: tuple[str, ...] = get_args(Format)

# What ``-o FILE``'s ending asks for; any other ending keeps the command's ``--format`` (the text).
SUFFIXES: dict[str, str] = {".json": "json", ".jsonl": "jsonl", ".ndjson": "jsonl"}

# The forms each command writes: results also one JSON hit per line; an answer and a retrieval are
# one whole object each, which has no line-per-item form.
FORMS: dict[str, tuple[str, ...]] = {
    "search": (*FORMATS, "jsonl"),
    "search-sources": (*FORMATS, "jsonl"),
    "ask": FORMATS,
    "retrieve": ("text", "json"),
}
