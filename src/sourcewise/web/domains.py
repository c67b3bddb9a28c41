"""The built-in tier table: the package's ``data/domains.toml``, read once, extended by the user's
``official`` and ``tiers`` config. The one place the table is loaded; ``web.tiers`` (pure) builds it.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Iterable, Mapping
from functools import lru_cache
from importlib import resources

from sourcewise.models import Tier
from sourcewise.web.tiers import SourceTable

__all__ = ["builtin_table", "default_table", "table_for"]


@lru_cache(maxsize=1)
def _builtin() -> dict[str, dict[str, object]]:
    text = resources.files("sourcewise").joinpath("data/domains.toml").read_text("utf-8")
    return tomllib.loads(text)


def default_table(
    official: Mapping[str, Iterable[str]] | None = None, tiers: Mapping[str, int] | None = None
) -> SourceTable:
    """The built-in table, extended by the user's ``official`` and ``tiers`` config."""
    data = _builtin()
    merged: dict[str, list[str]] = {k: list(v) for k, v in data["official"].items()}  # type: ignore[call-overload]
    for project, specs in (official or {}).items():
        merged.setdefault(project.lower(), []).extend(specs)
    scored: dict[Tier, Mapping[str, int]] = {
        2: data["semi_official"],  # type: ignore[dict-item]
        3: data["community"],  # type: ignore[dict-item]
        4: data["blogs"],  # type: ignore[dict-item]
    }
    hosts = {"user_content": data["user_content"], "redirects": data["redirects"]}
    return SourceTable(merged, data["aliases"], scored, tiers, hosts)  # type: ignore[arg-type]


_NO_CONFIG = json.dumps([{}, {}])


@lru_cache(maxsize=8)
def _table_for_key(key: str) -> SourceTable:
    """The one memo of built tables, keyed by the config that extends the built-in one."""
    official, tiers = json.loads(key)
    return default_table(official, tiers)


def builtin_table() -> SourceTable:
    """The built-in table with no user config."""
    return _table_for_key(_NO_CONFIG)


def table_for(official: Mapping[str, Iterable[str]], tiers: Mapping[str, int]) -> SourceTable:
    """The built-in table extended by this config, built once per distinct config."""
    if not official and not tiers:
        return builtin_table()
    return _table_for_key(json.dumps([official, tiers], sort_keys=True))

