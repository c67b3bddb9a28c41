"""GitHub issue exports as a source: ``github:./issues.json``.

The export is a REST API issues list (or a folder of such pages) or the output of
``gh issue list --json number,title,body,author,assignees,labels,milestone,state,createdAt,
updatedAt,closedAt,url``. It is read on first use and again when a file changes; text search is
SQLite FTS5 in memory (BM25, the title weighted above labels and body). The filters are GitHub's
own (``assignee:``, ``author:``, ``is:open``, ``is:pr``, ``label:``, ``milestone:``, ``updated:``,
``created:``, ``after:``, ``before:``) and seed 003's tracker parameters (``assignee_any``,
``created_by_any``, ``modified_on_after``/``_before``, ``resource_subtype``, ``completed``).

Over the network doors an issue is found only by its readers (``access.readers``, applied inside
the FTS query): the ``readers`` option's names for every issue, else everyone; an issue a REST
export marks ``repository.private`` with no ``readers`` configured is found by nobody there.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import ClassVar

from pydantic import Field

from sourcewise import access
from sourcewise.errors import SourceFormatError, SourceUnavailable
from sourcewise.models import Hit, SourceInfo, SourceQuery, SourceResult
from sourcewise.planning import syntax as _syntax
from sourcewise.sources._files import export_kind, read_capped
from sourcewise.sources._fts import FtsIndex, fts_match
from sourcewise.sources.base import Names, Source, SourceOptions
from sourcewise.sources.tracker.issues import (
    GH_FIELDS,
    Issue,
    IssueFilter,
    build_filter,
    missing_fields,
    parse_export,
)
from sourcewise.text.analyze import analyze
from sourcewise.text.sanitize import strip_controls
from sourcewise.web.rank import cut_snippet

__all__ = ["GitHubOptions", "GitHubSource"]

MAX_TEXT = 4_000  # characters of an issue body carried in a hit
WEIGHTS = (3.0, 2.0, 1.0)  # bm25: title (with the number), labels, body


class GitHubOptions(SourceOptions):
    """``[sources.NAME]`` options of a ``github`` source."""

    me: str | None = Field(default=None, description="your GitHub login, for assignee:me / author:me")
    max_bytes: int = Field(
        default=100_000_000, ge=1, le=2_000_000_000, description="larger export files are refused"
    )
    readers: Names = Field(
        default_factory=list,
        description="who may find the issues over the network doors: the names [access] users carry "
        "(a login, an e-mail), 'group:NAME' for a group, '*' for everyone. Empty: everyone, except "
        "issues a REST export marks private, which nobody finds there until readers are given",
    )


def _files(path: Path, name: str) -> list[Path]:
    if not path.exists():
        raise SourceUnavailable(name, f"{path} does not exist; export with: gh issue list --json {GH_FIELDS}")
    if export_kind(name, path) == "dir":
        found = sorted(p for p in path.glob("*.json") if p.is_file())
        if not found:
            raise SourceUnavailable(name, f"{path} holds no .json export files")
        return found
    return [path]


def _load(files: list[Path], name: str, max_bytes: int) -> tuple[list[Issue], set[str]]:
    issues: dict[str, Issue] = {}
    present: set[str] = set()
    for file in files:
        try:
            raw = read_capped(file, max_bytes)
            if raw is None:
                raise SourceFormatError(name, f"{file.name} is larger than {max_bytes:,} bytes (max_bytes)")
            data = json.loads(raw)
        except OSError as exc:
            raise SourceUnavailable(name, f"{file} cannot be read: {exc.strerror or exc}") from exc
        except (ValueError, RecursionError) as exc:  # JSONDecodeError and bad UTF-8 are ValueErrors
            raise SourceFormatError(name, f"{file.name} is not valid JSON: {str(exc)[:120]}") from exc
        found, fields = parse_export(data, f"{name} ({file.name})")
        present |= fields
        for issue in found:  # pages of one export overlap at their edges: keep the newest copy
            old = issues.get(issue.url)
            if old is None or (issue.updated or datetime.min.replace(tzinfo=UTC)) >= (
                old.updated or datetime.min.replace(tzinfo=UTC)
            ):
                issues[issue.url] = issue
    return list(issues.values()), present


def _readers(issues: list[Issue], configured: tuple[str, ...]) -> dict[int, tuple[str, ...]]:
    """Each issue's readers: the configured ones for every issue; without them, nobody over a door
    for an issue its REST export marks private (it stays the CLI's and the library's)."""
    if configured:
        return dict.fromkeys(range(len(issues)), configured)
    return {i: () for i, x in enumerate(issues) if x.private}


class _Loaded:
    """An export in memory: the issues and an FTS5 index of them with each issue's readers."""

    def __init__(
        self, issues: list[Issue], present: set[str], signature: object, readers: tuple[str, ...]
    ) -> None:
        self.issues = issues
        self.present = present
        self.signature = signature
        self.hidden = 0 if readers else sum(1 for x in issues if x.private)  # private, no readers
        self.lock = threading.Lock()
        self.index = FtsIndex(("title", "labels", "body"), WEIGHTS)
        rows = (
            (i, (" ".join(analyze(f"{x.number} {x.title}")), " ".join(analyze(" ".join(x.labels))),
                 " ".join(analyze(x.body))))
            for i, x in enumerate(issues)
        )  # fmt: skip
        self.index.add(rows, _readers(issues, readers))

    def ranked(self, match: str, exclude: str, principals: Sequence[str] | None) -> list[tuple[int, float]]:
        """``(issue index, score)`` best first, of the issues one of ``principals`` may read (all for
        ``None``); every such issue (score 0) when there is nothing to match."""
        with self.lock:
            excluded = self.index.containing(exclude)
            if match:
                found: Iterable[tuple[int, float]] = self.index.matching(match, principals)
            elif principals is None:
                found = ((i, 0.0) for i in range(len(self.issues)))
            else:
                found = ((i, 0.0) for i in sorted(self.index.visible(principals)))
            return [(i, s) for i, s in found if i not in excluded]

    def visible(self, principals: Sequence[str] | None) -> list[Issue]:
        if principals is None:
            return self.issues
        with self.lock:
            rows = self.index.visible(principals)
        return [x for i, x in enumerate(self.issues) if i in rows]

    def close(self) -> None:
        with self.lock:
            self.index.close()


def hit_from_issue(issue: Issue, score: float, source: str) -> Hit:
    body = strip_controls(issue.body, keep="\n\t")
    return Hit(
        title=strip_controls(f"#{issue.number} {issue.title}"),
        location=issue.url,
        snippet=strip_controls(cut_snippet(issue.body)) if issue.body else "",
        text=body[:MAX_TEXT],
        source=source,
        kind="project_tracker",
        authority="tracker_task",
        score=score,
        author=issue.author,
        timestamp=issue.updated or issue.created,
        meta={
            "number": str(issue.number),
            "state": issue.state,
            "type": "pr" if issue.is_pr else "issue",
            "labels": strip_controls(", ".join(issue.labels)),
            "assignees": ", ".join(issue.assignees),
            "milestone": strip_controls(issue.milestone or ""),
            "created": issue.created.isoformat() if issue.created else "",
            "closed": issue.closed.isoformat() if issue.closed else "",
        },
    )


class GitHubSource(Source):
    """Issues and pull requests from a GitHub export file (or a folder of them)."""

    type = "github"
    kind = "project_tracker"
    authority = "tracker_task"
    syntax = staticmethod(_syntax.project_tracker)
    filters: ClassVar[frozenset[str]] = frozenset(
        {"assignee", "author", "is", "state", "type", "label", "milestone", "updated", "created", "after",
         "before", "text", "assignee_any", "created_by_any", "modified_on_after", "modified_on_before",
         "resource_subtype", "completed"}
    )  # fmt: skip
    Options = GitHubOptions

    _loaded: _Loaded | None = None

    @property
    def github_options(self) -> GitHubOptions:
        opts = self.options
        return opts if isinstance(opts, GitHubOptions) else GitHubOptions(**opts.model_dump())

    def _load_sync(self) -> _Loaded:
        opts = self.github_options
        files = _files(opts.require_path(self.name), self.name)
        try:
            signature = [(str(f), f.stat().st_mtime_ns, f.stat().st_size) for f in files]
        except OSError as exc:
            raise SourceUnavailable(self.name, f"cannot read the export: {exc.strerror or exc}") from exc
        if self._loaded is not None and self._loaded.signature == signature:
            return self._loaded
        issues, present = _load(files, self.name, opts.max_bytes)
        loaded = _Loaded(issues, present, signature, access.named(opts.readers))
        if self._loaded is not None:
            self._loaded.close()
        self._loaded = loaded
        return loaded

    async def issues(self) -> list[Issue]:
        """Every issue and pull request in the export (re-read when a file changed) that the door's
        user may read (``access.readers``; all of them without one)."""
        loaded = await self.run(self._load_sync)
        return list(await self.run(loaded.visible, access.readers()))

    async def search(self, query: SourceQuery, *, limit: int | None = None) -> SourceResult:
        parsed, warnings = self.parse(query)
        negated = [n for n in parsed.negations if n.partition(":")[0].lower() != "label"]
        mine = [(k, v) for k, v in parsed.filters if k in self.filters]  # the rest: warned by parse
        keep, text, more = build_filter(mine, dict(query.params), me=self.github_options.me, name=self.name)
        keep.not_labels = [
            n.partition(":")[2] for n in parsed.negations if n.partition(":")[0].lower() == "label"
        ]
        warnings += more
        loaded = await self.run(self._load_sync)
        if loaded.issues:
            warnings += [
                f"{self.name}: the export has no field for {f}, so it matches nothing; "
                f"export with: gh issue list --json {GH_FIELDS}"
                for f in missing_fields(parsed.filters, loaded.present)
            ]
        if text is None:  # no planner text: the query's own words, ``text:`` values included
            match = fts_match([*parsed.terms, *parsed.values("text")], parsed.phrases)
        else:
            match = fts_match([text])
        # the door's user: only the issues they may read, a condition of the FTS query itself
        ranked = await self.run(loaded.ranked, match, " ".join(negated), access.readers())
        hits = [
            hit_from_issue(loaded.issues[i], score, self.name)
            for i, score in self._ordered(ranked, loaded.issues, keep, bool(match))
        ]
        return self.result(query, hits[: min(limit or self.options.limit, 200)], warnings)

    @staticmethod
    def _ordered(
        ranked: list[tuple[int, float]],
        issues: list[Issue],
        keep: IssueFilter,
        matched: bool,
    ) -> list[tuple[int, float]]:
        out = [(i, s) for i, s in ranked if keep(issues[i])]
        if not matched:  # a filter-only query lists the most recently updated first
            out.sort(key=lambda p: issues[p[0]].updated or datetime.min.replace(tzinfo=UTC), reverse=True)
        return out

    async def info(self) -> SourceInfo:
        base = await super().info()
        if not base.ready:
            return base
        try:
            loaded = await self.run(self._load_sync)
        except (SourceUnavailable, SourceFormatError) as exc:
            return base.model_copy(update={"ready": False, "detail": exc.detail})
        principals = access.readers()  # a door's user: counts of the issues they may read only
        issues = await self.run(loaded.visible, principals)
        prs = sum(1 for x in issues if x.is_pr)
        opened = sum(1 for x in issues if x.state == "open")
        dates = [x.updated for x in issues if x.updated]
        detail = f"{len(issues) - prs} issues, {prs} pull requests, {opened} open"
        if loaded.hidden and principals is None:
            detail += f"; {loaded.hidden} from private repositories hidden over the doors (set readers)"
        return base.model_copy(
            update={"items": len(issues), "updated": max(dates) if dates else None, "detail": detail}
        )

    async def aclose(self) -> None:
        if self._loaded is not None:
            self._loaded.close()
            self._loaded = None
