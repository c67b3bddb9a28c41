"""The tier table: the curated sources of ``data/domains.toml`` and the user's ``official`` and
``tiers`` config, indexed by host, with the projects' names and aliases (what a query can name).

``web.tierrules`` reads it to rate a page; ``web.rating`` is the rating callers use.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from sourcewise.models import Tier
from sourcewise.text.words import strip_particle, words
from sourcewise.web.projects import candidate_words

__all__ = [
    "BANDS",
    "SourceTable",
    "builtin_table",
    "default_table",
    "projects_in",
    "redirects",
    "table_for",
    "user_content",
    "wanted_projects",
]

BANDS: dict[int, tuple[int, int]] = {1: (90, 100), 2: (70, 89), 3: (50, 69), 4: (30, 49)}


@dataclass(frozen=True)
class Entry:
    host: str
    path: str  # lower-case path prefix without trailing slash, "" for the whole host
    tier: Tier
    score: int
    project: str | None = None
    source: str = "table"


def _split_entry(spec: str) -> tuple[str, str]:
    host, _, path = spec.strip().lower().partition("/")
    host = host.removeprefix("www.")
    return host, ("/" + path.rstrip("/")) if path else ""


class SourceTable:
    """The curated table, indexed by host, plus project names and aliases."""

    def __init__(
        self,
        official: Mapping[str, Iterable[str]],
        aliases: Mapping[str, str],
        scored: Mapping[Tier, Mapping[str, int]],
        overrides: Mapping[str, int] | None = None,
    ) -> None:
        self._by_host: dict[str, list[Entry]] = {}
        self.names: dict[str, str] = {}  # project name or alias -> project
        for project, specs in official.items():
            name = project.lower()
            self.names[name] = name
            for spec in specs:
                self._add(Entry(*_split_entry(spec), tier=1, score=90, project=name))
        # other names of projects the table lists name them; of other projects ("zmq" for
        # zeromq), they name a project the rules find the sites of (``wanted_projects``)
        self.other_names: dict[str, str] = {}
        for alias, project in aliases.items():
            listed = project.lower() in self.names
            (self.names if listed else self.other_names)[alias.lower()] = project.lower()
        for tier, table in scored.items():
            low, high = BANDS[tier]
            for spec, score in table.items():
                self._add(Entry(*_split_entry(spec), tier=tier, score=max(low, min(high, score))))
        for spec, level in (overrides or {}).items():
            host, path = _split_entry(spec)
            mid = sum(BANDS[level]) // 2
            self._add(Entry(host, path, tier=level, score=mid, source="config"))  # type: ignore[arg-type]
        self.projects = frozenset(self.names.values())
        # "org" or "org/repo" on github.com -> the project it is an official repository of
        self.github: dict[str, str] = {}
        for entry in self._by_host.get("github.com", ()):
            if entry.tier == 1 and entry.project and entry.source == "table" and entry.path.count("/") <= 2:
                self.github.setdefault(entry.path[1:], entry.project)
        self._max_words = max((len(n.split()) for n in self.names), default=1)
        # the first words of the names of several words, by number of words
        firsts: dict[int, set[str]] = {}
        for name in self.names:
            parts = name.split()
            if len(parts) > 1:
                firsts.setdefault(len(parts), set()).add(parts[0])
        self._firsts = {size: frozenset(words) for size, words in firsts.items()}

    def _add(self, entry: Entry) -> None:
        self._by_host.setdefault(entry.host, []).append(entry)

    def entries(self, suffix: str) -> Sequence[Entry]:
        """The entries for exactly this host suffix (``react.dev``, ``github.com``), in table order."""
        return self._by_host.get(suffix, ())

    def lookup(self, host: str, path: str) -> Entry | None:
        """The most specific entry for host + path: config first, then longest path, then host."""
        path = path.lower().rstrip("/")
        best: tuple[int, int, int] | None = None
        found: Entry | None = None
        labels = host.split(".")
        for i in range(len(labels)):
            suffix = ".".join(labels[i:])
            for entry in self._by_host.get(suffix, ()):
                if entry.path and not (path == entry.path or path.startswith(entry.path + "/")):
                    continue
                rank = (entry.source == "config", len(entry.path), len(suffix))
                if best is None or rank > best:
                    best, found = rank, entry
        return found

    def project_of(self, host: str) -> str | None:
        """The project whose official site is this host (ignoring paths), if any."""
        labels = host.split(".")
        for i in range(len(labels)):
            for entry in self._by_host.get(".".join(labels[i:]), ()):
                if entry.tier == 1 and entry.project and not entry.path:
                    return entry.project
        return None

    def projects_in(self, query: str) -> dict[str, str]:
        """Projects the query names: project -> the word(s) that named it, in query order."""
        return self.projects_in_words(words(query))

    def projects_in_words(self, toks: Sequence[str]) -> dict[str, str]:
        """``projects_in`` for a query already split by ``text.words``."""
        tokens = [w if w.isascii() else strip_particle(w) for w in toks]  # particles are Hangul
        found: dict[str, str] = {}
        names = self.names
        for size in range(self._max_words, 1, -1):
            firsts = self._firsts.get(size)
            if not firsts or firsts.isdisjoint(tokens):
                continue  # no name of this many words starts with any word here
            for i in range(len(tokens) - size + 1):
                if tokens[i] not in firsts:
                    continue  # no name of this many words starts with this word
                phrase = " ".join(tokens[i : i + size])
                project = names.get(phrase)
                if project and project not in found:
                    found[project] = phrase
        if not names.keys().isdisjoint(tokens):
            for token in tokens:  # names of one word
                project = names.get(token)
                if project and project not in found:
                    found[project] = token
        return found


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
    return SourceTable(merged, data["aliases"], scored, tiers)  # type: ignore[arg-type]


@lru_cache(maxsize=1)
def builtin_table() -> SourceTable:
    return default_table()


@lru_cache(maxsize=8)
def _table_for_key(key: str) -> SourceTable:
    official, tiers = json.loads(key)
    return default_table(official, tiers)


def table_for(official: Mapping[str, Iterable[str]], tiers: Mapping[str, int]) -> SourceTable:
    """The built-in table extended by this config, built once per distinct config."""
    if not official and not tiers:
        return builtin_table()
    return _table_for_key(json.dumps([official, tiers], sort_keys=True))


def projects_in(query: str, table: SourceTable | None = None) -> dict[str, str]:
    """Projects that ``query`` names (public helper for the planner)."""
    return (table or builtin_table()).projects_in(query)


def user_content() -> dict[str, str]:
    """Hosts where anyone can publish -> what is published there."""
    return _builtin()["user_content"]  # type: ignore[return-value]


def redirects() -> dict[str, str]:
    """Hosts (and paths) of links that only redirect elsewhere -> what such a link is."""
    return _builtin()["redirects"]  # type: ignore[return-value]


@lru_cache(maxsize=2)
def _specs(section: str) -> dict[str, tuple[tuple[str, str], ...]]:
    """A ``[section]`` of the table by host: host -> (path prefix or "", what), in table order."""
    out: dict[str, list[tuple[str, str]]] = {}
    for spec, what in _builtin()[section].items():
        spec_host, _, spec_path = spec.partition("/")
        out.setdefault(spec_host, []).append(("/" + spec_path if spec_path else "", str(what)))
    return {host: tuple(entries) for host, entries in out.items()}


def matching(section: str, host: str, path: str) -> tuple[str, str, bool] | None:
    """(the suffix, what it is, whether a path said so) for the first spec of ``[section]`` that
    covers this host and path (a spec is a host suffix with an optional path prefix)."""
    specs = _specs(section)
    labels = host.split(".")
    low = path.lower()
    for i in range(len(labels)):
        suffix = ".".join(labels[i:])
        for prefix, what in specs.get(suffix, ()):
            if not prefix or low.startswith(prefix):
                return suffix, what, bool(prefix)
    return None


def wanted_projects(table: SourceTable, query: str) -> dict[str, str]:
    """Projects the query names: the table's (by name or alias), then every other word that may
    be a project's name (``web.projects.candidate_words``), whatever its case; an alias of a
    project the table does not list stands for that project (``zmq`` for zeromq)."""
    toks = words(query)
    found = table.projects_in_words(toks)
    taken = {part for said in found.values() for part in said.split()}
    for word in candidate_words(toks):
        if word not in table.names and word not in taken:
            found.setdefault(table.other_names.get(word, word), word)
    return found
