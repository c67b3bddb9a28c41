"""GitHub issue exports read into one shape, and the tracker filters over them. Pure: no I/O.

Two export shapes are read: the REST API's list of issues (``GET /repos/O/R/issues``, one page or
a search's ``{"items": [...]}``) and ``gh issue list --json number,title,body,author,assignees,
labels,milestone,state,createdAt,updatedAt,closedAt,url``. Anything else is a ``SourceFormatError``
that names the item and the field, never a ``TypeError`` from deep inside.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from sourcewise.errors import InvalidOption, SourceFormatError
from sourcewise.planning.dates import parse_date
from sourcewise.web.urls import is_http_url

__all__ = [
    "GH_FIELDS", "Issue", "IssueFilter", "build_filter", "date_range", "missing_fields", "parse_export"
]  # fmt: skip

GH_FIELDS = "number,title,body,author,assignees,labels,milestone,state,createdAt,updatedAt,closedAt,url"
MAX_BODY = 100_000  # characters of an issue body kept; longer bodies are cut


class Issue(BaseModel):
    """One issue or pull request, whichever export it came from."""

    model_config = ConfigDict(frozen=True)

    number: int
    title: str
    body: str = ""
    author: str | None = None
    assignees: tuple[str, ...] = ()
    labels: tuple[str, ...] = ()
    milestone: str | None = None
    state: str = Field(description="open or closed")
    is_pr: bool = False
    created: datetime | None = None
    updated: datetime | None = None
    closed: datetime | None = None
    url: str
    private: bool = Field(default=False, description="the REST export says its repository is private")


class _Raw(BaseModel):
    model_config = ConfigDict(extra="ignore")


class _Login(_Raw):
    login: str


class _Label(_Raw):
    name: str


class _Milestone(_Raw):
    title: str


def _none_to_list(value: object) -> object:
    return [] if value is None else value


class _Common(_Raw):
    number: int
    title: str
    body: str | None = None
    assignees: list[_Login] = Field(default_factory=list)
    labels: list[_Label | str] = Field(default_factory=list)
    milestone: _Milestone | None = None
    state: str

    _lists = field_validator("assignees", "labels", mode="before")(_none_to_list)


class _Repository(_Raw):
    private: bool = False


class _Rest(_Common):
    # GitHub's issue object carries ``repository`` (with ``private``) in the lists across
    # repositories (GET /issues, /user/issues, /orgs/ORG/issues); a repository's own list leaves it out.
    repository: _Repository | None = None
    user: _Login | None = None
    assignee: _Login | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    closed_at: datetime | None = None
    html_url: str
    pull_request: dict[str, Any] | None = None


class _Gh(_Common):
    author: _Login | None = None
    createdAt: datetime | None = None
    updatedAt: datetime | None = None
    closedAt: datetime | None = None
    url: str


# Which normalised fields an item carries, by the export field that holds them.
_PRESENT = {
    "user": "author", "author": "author", "assignees": "assignees", "assignee": "assignees",
    "labels": "labels", "milestone": "milestone", "state": "state", "updated_at": "updated",
    "updatedAt": "updated", "created_at": "created", "createdAt": "created", "body": "body",
}  # fmt: skip


def _url(value: str, where: str, source: str) -> str:
    if not is_http_url(value):
        raise SourceFormatError(source, f"{where}: url {value[:80]!r} is not an http(s) URL")
    parts = urlsplit(value)
    host = parts.netloc.rpartition("@")[2]  # user info is never kept, printed or cited
    return urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))


def _utc(value: datetime | None) -> datetime | None:
    if value is None:
        return None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _state(raw: str, where: str, source: str) -> str:
    state = raw.lower()
    if state == "merged":
        return "closed"
    if state not in ("open", "closed"):
        raise SourceFormatError(source, f"{where}: state {raw[:40]!r} is neither open nor closed")
    return state


def _one(item: object, index: int, source: str) -> tuple[Issue, set[str]]:
    where = f"item {index}"
    if not isinstance(item, dict):
        raise SourceFormatError(source, f"{where} is a {type(item).__name__}, not an issue object")
    rest = any(k in item for k in ("html_url", "user", "created_at"))
    if not rest and not any(k in item for k in ("url", "author", "createdAt")):
        raise SourceFormatError(
            source,
            f"{where} is neither a REST API issue (html_url, user, created_at ...) nor a gh issue "
            f"(url, author, createdAt ...); export with: gh issue list --json {GH_FIELDS}",
        )
    try:
        raw: _Rest | _Gh = _Rest.model_validate(item) if rest else _Gh.model_validate(item)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"]) or "value"
        number = item.get("number")
        label = f"{where} (#{number})" if isinstance(number, int) else where
        raise SourceFormatError(source, f"{label}: field {loc!r}: {err['msg']}") from exc
    labels = tuple(lab if isinstance(lab, str) else lab.name for lab in raw.labels)
    assignees = [a.login for a in raw.assignees]
    common: dict[str, Any] = {
        "number": raw.number,
        "title": raw.title,
        "body": (raw.body or "")[:MAX_BODY],
        "labels": labels,
        "milestone": raw.milestone.title if raw.milestone else None,
        "state": _state(raw.state, where, source),
    }
    if isinstance(raw, _Rest):
        if raw.assignee and raw.assignee.login not in assignees:
            assignees.append(raw.assignee.login)
        url = _url(raw.html_url, where, source)
        issue = Issue(
            **common, author=raw.user.login if raw.user else None, assignees=tuple(assignees),
            is_pr=raw.pull_request is not None or "/pull/" in url, created=_utc(raw.created_at),
            updated=_utc(raw.updated_at), closed=_utc(raw.closed_at), url=url,
            private=raw.repository is not None and raw.repository.private,
        )  # fmt: skip
    else:
        url = _url(raw.url, where, source)
        issue = Issue(
            **common, author=raw.author.login if raw.author else None, assignees=tuple(assignees),
            is_pr="/pull/" in url, created=_utc(raw.createdAt), updated=_utc(raw.updatedAt),
            closed=_utc(raw.closedAt), url=url,
        )  # fmt: skip
    return issue, {_PRESENT[k] for k in item if k in _PRESENT}


def parse_export(data: object, source: str) -> tuple[list[Issue], set[str]]:
    """Issues from decoded export JSON, and the fields the export carries (``author``, ``labels`` ...)."""
    if isinstance(data, dict) and isinstance(data.get("items"), list):
        data = data["items"]  # the search API's envelope
    if not isinstance(data, list):
        raise SourceFormatError(
            source,
            f"expected a JSON list of issues (REST API or gh issue list --json {GH_FIELDS}), "
            f"got a JSON {type(data).__name__}",
        )
    issues: list[Issue] = []
    present: set[str] = set()
    for index, item in enumerate(data):
        issue, fields = _one(item, index, source)
        issues.append(issue)
        present |= fields
    return issues, present


@dataclass
class IssueFilter:
    """Which issues a query keeps. Lists are any-of; each ``labels`` group must match (GitHub's rule)."""

    assignees: list[str] = field(default_factory=list)
    authors: list[str] = field(default_factory=list)
    state: str | None = None
    kinds: set[str] = field(default_factory=set)
    labels: list[list[str]] = field(default_factory=list)
    not_labels: list[str] = field(default_factory=list)
    milestones: list[str] = field(default_factory=list)
    has_milestone: bool | None = None
    updated: list[tuple[datetime | None, datetime | None]] = field(default_factory=list)
    created: list[tuple[datetime | None, datetime | None]] = field(default_factory=list)

    def __call__(self, issue: Issue) -> bool:
        return (
            _any(self.assignees, issue.assignees)
            and _any(self.authors, [issue.author] if issue.author else [])
            and (self.state is None or issue.state == self.state)
            and (not self.kinds or ("pr" if issue.is_pr else "issue") in self.kinds)
            and all(_any(group, issue.labels) for group in self.labels)
            and not (self.not_labels and _any(self.not_labels, issue.labels))
            and _any(self.milestones, [issue.milestone] if issue.milestone else [])
            and (self.has_milestone is None or (issue.milestone is not None) == self.has_milestone)
            and all(_within(issue.updated, lo, hi) for lo, hi in self.updated)
            and all(_within(issue.created, lo, hi) for lo, hi in self.created)
        )


def _any(wanted: list[str], have: Iterable[str]) -> bool:
    if not wanted:
        return True
    folded = {h.casefold() for h in have}
    return any(w.casefold() in folded for w in wanted)


def _within(when: datetime | None, lo: datetime | None, hi: datetime | None) -> bool:
    if when is None:
        return False  # an issue with no date cannot be shown to fall in a range
    return (lo is None or when >= lo) and (hi is None or when < hi)


SEED_KEYS = frozenset(
    {"text", "assignee_any", "created_by_any", "modified_on_after", "modified_on_before",
     "resource_subtype", "completed"}
)  # fmt: skip
NEEDS = {"assignee": "assignees", "author": "author", "label": "labels", "milestone": "milestone",
         "updated": "updated", "created": "created"}  # fmt: skip
_KIND = {"issue": "issue", "issues": "issue", "task": "issue", "default_task": "issue", "pr": "pr",
         "pull_request": "pr", "pull-request": "pr", "pullrequest": "pr"}  # fmt: skip
_BOOL = {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}


def _day(text: str) -> datetime:
    text = text.strip()
    if len(text) > 10 and text[10] in "T ":
        text = text[:10]  # a timestamp counts from the start of its day
    d = parse_date(text)
    return datetime(d.year, d.month, d.day, tzinfo=UTC)


def date_range(value: str) -> tuple[datetime | None, datetime | None]:
    """GitHub's date qualifiers as a half-open UTC range: ``D``, ``>D``, ``>=D``, ``<D``, ``<=D``, ``A..B``.

    ``InvalidOption`` when a date is not ``YYYY-MM-DD``."""
    one = timedelta(days=1)
    if ".." in value:
        a, _, b = value.partition("..")
        lo = _day(a) if a.strip() not in ("", "*") else None
        hi = _day(b) + one if b.strip() not in ("", "*") else None
        return lo, hi
    if value.startswith(">="):
        return _day(value[2:]), None
    if value.startswith(">"):
        return _day(value[1:]) + one, None
    if value.startswith("<="):
        return None, _day(value[2:]) + one
    if value.startswith("<"):
        return None, _day(value[1:])
    day = _day(value)
    return day, day + one


def _people(value: str, me: str | None, key: str, warnings: list[str], name: str) -> list[str]:
    out: list[str] = []
    for who in (v.strip().lstrip("@") for v in value.split(",")):
        if who.lower() == "me":
            if me is None:
                warnings.append(f"{name}: {key}:me needs the `me` option (your GitHub login); ignored")
                continue
            who = me
        if who:
            out.append(who)
    return out


def _apply(f: IssueFilter, key: str, value: str, me: str | None, name: str, warnings: list[str]) -> None:
    low = value.strip().lower()
    if key in ("assignee", "assignee_any"):
        f.assignees.extend(_people(value, me, key, warnings, name))
    elif key in ("author", "created_by_any"):
        f.authors.extend(_people(value, me, key, warnings, name))
    elif key in ("is", "state") and low in ("open", "closed"):
        f.state = low
    elif key in ("is", "type") and low in _KIND:
        f.kinds.add(_KIND[low])
    elif key == "label":
        f.labels.append([v.strip() for v in value.split(",") if v.strip()])
    elif key == "milestone":
        f.milestones.append(value.strip())
    elif key == "resource_subtype" and low in ("milestone", *_KIND):
        if low == "milestone":
            f.has_milestone = True
        else:
            f.kinds.add(_KIND[low])
    elif key == "completed" and low in _BOOL:
        f.state = "closed" if _BOOL[low] else "open"
    elif key in ("updated", "created"):
        (f.updated if key == "updated" else f.created).append(date_range(value))
    elif key in ("after", "modified_on_after"):
        f.updated.append((_day(value), None))
    elif key in ("before", "modified_on_before"):
        f.updated.append((None, _day(value)))
    else:
        warnings.append(f"{name}: {key}:{value} is not a value this source understands; ignored")


def build_filter(
    filters: list[tuple[str, str]], params: dict[str, str | bool | list[str]], *, me: str | None, name: str
) -> tuple[IssueFilter, str | None, list[str]]:
    """The filter from the query's ``key:value`` pairs and the planner's params (which win for
    seed 003's keys), the params' ``text`` if given, and a warning for each value not understood."""
    warnings: list[str] = []
    pairs = [(k, v) for k, v in filters if not (k in SEED_KEYS and k in params)]
    for key, raw in params.items():
        if key not in SEED_KEYS:
            warnings.append(f"{name}: parameter {key!r} is not supported by github sources; ignored")
            continue
        value = ",".join(raw) if isinstance(raw, list) else str(raw).lower() if isinstance(raw, bool) else raw
        pairs.append((key, value))
    f = IssueFilter()
    text: str | None = str(params["text"]) if "text" in params else None
    for key, value in pairs:
        if key == "text":
            continue  # the caller reads ``text:`` words from the query with its plain terms
        try:
            _apply(f, key, value, me, name, warnings)
        except InvalidOption as exc:
            warnings.append(f"{name}: {key}:{value}: {exc}; ignored")
    return f, text, warnings


def missing_fields(filters: list[tuple[str, str]], present: set[str]) -> list[str]:
    """The filters that need a field the export does not carry (so they can match nothing)."""
    return [f"{k}:{v}" for k, v in filters if k in NEEDS and NEEDS[k] not in present]
