"""The text forms of results and answers, the same in every door (CLI ``--format``, MCP, HTTP).

A module of its own, importing nothing, so that the CLI can list the choices without loading the
renderers (``--help`` starts fast)."""

from __future__ import annotations

from typing import Literal, get_args

__all__ = ["FORMATS", "Format"]

Format = Literal["quick", "deep", "progressive", "json"]
FORMATS: tuple[str, ...] = get_args(Format)
