"""Two plug-ins written only here, exactly as docs/adding-a-source.md and docs/adding-a-provider.md
describe: nothing under src/ names them. ``tests/test_plugins.py`` registers them through entry
points and uses them through every path a built-in takes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import pytest
from pydantic import AliasChoices, Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from sourcewise.errors import SourceFormatError
from sourcewise.models import Hit, RawResult, SourceQuery, SourceResult
from sourcewise.planning.syntax import QueryParts
from sourcewise.registry import forget_plugins
from sourcewise.sources import Source, SourceOptions
from sourcewise.web.providers.base import (
    HttpRequest,
    HttpResponse,
    Provider,
    check_status,
    json_body,
    results_from,
)


def install_plugins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, entry_points: str) -> None:
    """Plug-ins installed as a package's entry points would be: a dist-info on ``sys.path``
    (``entry_points``: the text of its ``entry_points.txt``), discovered anew. The caller calls
    ``forget_plugins()`` after the test, so that later tests discover without them."""
    info = tmp_path / "site" / "sourcewise_test_plugins-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: sourcewise-test-plugins\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(entry_points)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    forget_plugins()  # a package installed while the process runs


# -- a source of a kind the core has never heard of ---------------------------------------------


class RecipeOptions(SourceOptions):
    """``[sources.NAME]`` of a recipe box: ``path`` (a JSON list of recipes) and a cuisine."""

    cuisine: str | None = Field(default=None, description="only recipes of this cuisine")


def recipe_syntax(parts: QueryParts) -> list[dict[str, object]]:
    """The recipe box's own syntax: words, ``~word`` to leave out, ``cook=NAME``, ``since=DATE``."""
    c = parts.constraints
    filters = [f"cook={a.lower()}" for a in c.authors]
    filters += [f"since={c.after.isoformat()}"] if c.after else []
    words = [*parts.phrases, *parts.terms]
    return [{"mode": "keyword", "query": " ".join([*words, *(f"~{n}" for n in parts.negations), *filters])}]


class RecipeSource(Source):
    """A recipe box: a JSON file of ``{"title", "cook", "cuisine", "text"}`` objects."""

    type = "recipes"
    kind = "recipe_box"
    authority = "recipe_card"
    authority_levels: ClassVar[dict[str, int]] = {"fact": 1, "document": 1, "exploration": 1}
    filters: ClassVar[frozenset[str]] = frozenset({"cook", "since"})
    Options = RecipeOptions
    syntax = staticmethod(recipe_syntax)

    async def search(self, query: SourceQuery, *, limit: int | None = None) -> SourceResult:
        assert isinstance(self.options, RecipeOptions)
        path = self.options.require_path(self.name)
        try:
            recipes: Any = json.loads(path.read_text("utf-8"))
        except (OSError, ValueError) as exc:
            raise SourceFormatError(self.name, f"cannot read {path}: {exc}") from exc
        tokens = query.query.split()
        cooks = {t.split("=", 1)[1] for t in tokens if t.startswith("cook=")}
        left_out = {t[1:].lower() for t in tokens if t.startswith("~")}
        words = [t.lower() for t in tokens if "=" not in t and not t.startswith("~")]
        hits = []
        for i, recipe in enumerate(recipes):
            text = f"{recipe['title']} {recipe['text']}".lower()
            if self.options.cuisine and recipe["cuisine"] != self.options.cuisine:
                continue
            if (cooks and recipe["cook"] not in cooks) or any(w in text for w in left_out):
                continue
            matched = sum(w in text for w in words)
            if matched:
                hits.append(
                    Hit(
                        title=recipe["title"],
                        location=f"{path}#{i}",
                        snippet=recipe["text"][:200],
                        text=recipe["text"],
                        source=self.name,
                        kind=self.kind,
                        authority=self.authority,
                        score=matched / max(1, len(words)),
                        author=recipe["cook"],
                    )
                )
        hits.sort(key=lambda h: -h.score)
        return self.result(query, hits[: limit or self.options.limit], [])


# -- a web search provider with its own key option ------------------------------------------------


class AcmeOptions(BaseSettings):
    """``[providers.acme]``: the key (or ``ACME_API_KEY``) and the endpoint."""

    model_config = SettingsConfigDict(env_prefix="ACME_", extra="forbid", frozen=True)

    api_key: SecretStr | None = Field(default=None, validation_alias=AliasChoices("api_key", "ACME_API_KEY"))
    url: str = "https://api.acme.example/v1/search"


def acme_configured(options: AcmeOptions) -> tuple[bool, str]:
    if options.api_key is not None:
        return True, "API key set"
    return False, "no key: set ACME_API_KEY (or `api_key` under [providers.acme] in the config file)"


def acme_build(query: str, max_results: int, options: AcmeOptions) -> HttpRequest:
    key = options.api_key.get_secret_value() if options.api_key else ""
    return HttpRequest(
        "GET", options.url, params={"q": query, "n": max_results}, headers={"Authorization": f"Bearer {key}"}
    )


def acme_parse(response: HttpResponse) -> list[RawResult]:
    check_status("acme", response)
    body = json_body("acme", response)
    return results_from("acme", body.get("hits") if isinstance(body, dict) else None, snippet="summary")


PROVIDER = Provider(
    name="acme",
    summary="Acme Search API (a test plug-in)",
    configured=acme_configured,
    build=acme_build,
    parse=acme_parse,
    options=AcmeOptions,
)
