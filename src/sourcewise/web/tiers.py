"""The tier table: the curated sources of ``data/domains.toml`` and the user's ``official`` and
``tiers`` config, indexed by host, with the projects' names and aliases (what a query can name).

``web.tierrules`` reads it to rate a page; ``web.rating`` is the rating callers use. Pure: the
table's sections come in as arguments (``web.domains`` reads the file once and builds the table).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from sourcewise.models import Tier
from sourcewise.text.words import strip_particle, words
from sourcewise.web.projects import candidate_words

__all__ = [
    "BANDS",
    "Entry",
    "SourceTable",
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


def _specs(section: Mapping[str, str]) -> dict[str, tuple[tuple[str, str], ...]]:
    """A section of host specs by host: host -> (path prefix or "", what), in table order."""
    out: dict[str, list[tuple[str, str]]] = {}
    for spec, what in section.items():
        spec_host, _, spec_path = spec.partition("/")
        out.setdefault(spec_host, []).append(("/" + spec_path if spec_path else "", str(what)))
    return {host: tuple(entries) for host, entries in out.items()}


def _by_segment(entries: Iterable[Entry]) -> tuple[list[Entry], dict[str, list[Entry]]]:
    """One host suffix's entries without a path, and those with one by first path segment
    (github.com has hundreds): ``SourceTable.lookup`` reads only the entries a path can fall under."""
    bare: list[Entry] = []
    under: dict[str, list[Entry]] = {}
    for entry in entries:
        if entry.path:
            under.setdefault(entry.path.split("/")[1], []).append(entry)
        else:
            bare.append(entry)
    return bare, under


class SourceTable:
    """The curated table, indexed by host, plus project names and aliases."""

    def __init__(
        self,
        official: Mapping[str, Iterable[str]],
        aliases: Mapping[str, str],
        scored: Mapping[Tier, Mapping[str, int]],
        overrides: Mapping[str, int] | None = None,
        hosts: Mapping[str, Mapping[str, str]] | None = None,
    ) -> None:
        # sections of host specs (host suffix with an optional path prefix -> what it is):
        # ``user_content`` (anyone can publish there) and ``redirects`` (links that only redirect)
        self.user_content: Mapping[str, str] = (hosts or {}).get("user_content", {})
        self.redirects: Mapping[str, str] = (hosts or {}).get("redirects", {})
        self._host_specs = {
            "user_content": _specs(self.user_content),
            "redirects": _specs(self.redirects),
        }
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
        self._by_segment = {suffix: _by_segment(entries) for suffix, entries in self._by_host.items()}
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

    def matching(self, section: str, host: str, path: str) -> tuple[str, str, bool] | None:
        """(the suffix, what it is, whether a path said so) for the first spec of ``section``
        (``user_content`` or ``redirects``) that covers this host and path."""
        specs = self._host_specs[section]
        labels = host.split(".")
        low = path.lower()
        for i in range(len(labels)):
            suffix = ".".join(labels[i:])
            for prefix, what in specs.get(suffix, ()):
                if not prefix or low.startswith(prefix):
                    return suffix, what, bool(prefix)
        return None

    def by_segment(self, suffix: str) -> tuple[Sequence[Entry], Mapping[str, Sequence[Entry]]]:
        """This host suffix's entries without a path, and those with one by first path segment."""
        return self._by_segment.get(suffix, ((), {}))

    def lookup(self, host: str, path: str) -> Entry | None:
        """The most specific entry for host + path: config first, then longest path, then host."""
        path = path.lower().rstrip("/")
        first = path.split("/", 2)[1] if path.startswith("/") else None
        best: tuple[int, int, int] | None = None
        found: Entry | None = None
        labels = host.split(".")
        for i in range(len(labels)):
            suffix = ".".join(labels[i:])
            bare, under = self.by_segment(suffix)
            for entry in (*bare, *under.get(first, ())) if first is not None else bare:
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
