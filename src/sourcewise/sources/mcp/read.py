"""The one way sourcewise fills an MCP tool's arguments and reads its answer.

Both the ``mcp`` web provider and ``mcp`` sources use it:

- ``fill_arguments``: the configured mapping (tool argument -> value) with ``{query}``, ``{limit}``
  (``{max_results}`` for the provider), ``{after}``, ``{before}``, ``{from}``, ``{in}`` and
  ``{query_sql}`` (the query with ``'`` doubled, for an SQL string) filled in. A value that is
  only a number placeholder is sent as a number; a value whose filter placeholders have nothing
  to fill (no date in the question) is left out; other JSON values (a list of sources, a flag)
  are sent as written, strings inside them filled too.
- ``read_records``: a tool's answer as records (title, location, text, author, timestamp ...).
  Structured content or JSON text is read through a ``ResultShape``: where the list of items is
  (``items``, a path such as ``results[].hits``) and which field holds what (a path, or a
  template such as ``memory://{name}``). Unset, common shapes are read: a list, or one under
  ``results``, ``items``, ``data``, ``web.results`` ..., with the usual field names. Text blocks of
  ``Title:`` / ``URL:`` lines and prose answers with links are read too.

Everything read from the server is outside input: control characters are stripped, texts are
capped, at most ``MAX_ITEMS`` items are read, and an answer of the wrong shape is a ``ParseError``.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from sourcewise.errors import ParseError
from sourcewise.text.words import printable
from sourcewise.web.prose import read_prose

__all__ = [
    "MAX_ITEMS",
    "MAX_TEXT",
    "PLACEHOLDERS",
    "Record",
    "Records",
    "ResultShape",
    "fill_arguments",
    "placeholders",
    "read_records",
]

MAX_TEXT = 2_000_000  # characters of one text block of an answer
MAX_ITEMS = 500  # items read from one answer
MAX_FIELD = {"title": 500, "location": 2_048, "author": 200, "text": 20_000, "snippet": 1_000}
PLACEHOLDERS = ("query_sql", "query", "limit", "max_results", "after", "before", "from", "in")
NUMBERS = frozenset({"limit", "max_results"})
FILTERS = frozenset({"after", "before", "from", "in"})
ArgValue = str | int | float | bool | list[str]

_LIST_KEYS = ("results", "items", "data", "organic_results", "organic", "result", "hits", "documents",
              "messages", "matches", "issues", "files", "entities", "records", "rows")  # fmt: skip
DEFAULTS: dict[str, tuple[str, ...]] = {
    "location": ("url", "link", "href", "uri", "permalink", "html_url", "webUrl", "webViewLink", "location"),
    "title": ("title", "name", "subject", "key", "summary"),
    "snippet": ("snippet", "description", "summary", "excerpt"),
    "text": ("text", "content", "body", "snippet", "description", "message", "observations", "summary"),
    "author": ("author", "user", "username", "from", "sender", "creator", "owner", "assignee"),
    "timestamp": ("timestamp", "ts", "date", "updated_at", "created_at", "modifiedTime", "createdTime",
                  "updated", "created", "time"),
    "id": ("id", "key", "number", "name"),
}  # fmt: skip
_LABELS = {
    "title": "title",
    "url": "location",
    "link": "location",
    "description": "snippet",
    "snippet": "snippet",
}
Record = dict[str, str]
"""One item read: title, location, snippet, text, author, timestamp (ISO), and any extra field
the shape names (tier, authority, kind ...), each a cleaned string ("" when absent)."""


class ResultShape(BaseModel):
    """How to read a tool's answer: a path to the list of items and where each field is."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    format: Literal["json", "csv"] = Field(
        default="json", description="csv: the tool answers CSV text with a header row (one item a row)"
    )
    items: str | None = Field(
        default=None, description="path to the list, e.g. results[].hits; default: common shapes"
    )
    title: str | None = None
    location: str | None = Field(default=None, description="a path, or a template such as memory://{name}")
    snippet: str | None = None
    text: str | None = None
    author: str | None = None
    timestamp: str | None = None
    extra: dict[str, str] = Field(default_factory=dict, description="more fields to keep: name -> path")


class Records(BaseModel):
    """The records of one answer and, when the tool gave one, an answer in words beside them."""

    items: list[Record]
    answer: str | None = None


# -- arguments ---------------------------------------------------------------------------------
def placeholders(mapping: Mapping[str, ArgValue]) -> set[str]:
    """The placeholders a mapping uses (``query``, ``limit`` ...)."""
    found: set[str] = set()
    for value in mapping.values():
        for text in value if isinstance(value, list) else [value]:
            if isinstance(text, str):
                found |= {p for p in PLACEHOLDERS if "{" + p + "}" in text}
    return found


def _fill(text: str, values: Mapping[str, str | int]) -> str:
    for name in PLACEHOLDERS:
        text = text.replace("{" + name + "}", str(values.get(name, "")))
    return text


def _silent(text: str, values: Mapping[str, str | int]) -> bool:
    """``text`` only says filters, and the question gave none of them."""
    used = placeholders({"": text})
    return bool(used) and used <= FILTERS and all(values.get(p, "") == "" for p in used)


def fill_arguments(mapping: Mapping[str, ArgValue], values: Mapping[str, str | int]) -> dict[str, Any]:
    """The tool's arguments from ``mapping`` with ``values`` filled in (see the module's doc)."""
    out: dict[str, Any] = {}
    for name, template in mapping.items():
        if isinstance(template, list):
            out[name] = [_fill(t, values) for t in template if not _silent(t, values)]
            continue
        if not isinstance(template, str):
            out[name] = template
            continue
        if _silent(template, values):
            continue  # nothing to say for this field (no date, no author in the question)
        alone = template.strip()
        key = alone[1:-1] if alone.startswith("{") and alone.endswith("}") else None
        if key in NUMBERS and key in values:
            out[name] = values[key]
        else:
            out[name] = _fill(template, values)
    return out


# -- reading -------------------------------------------------------------------------------------
def _path(value: Any, path: str) -> list[Any]:
    """The values at ``path`` (``a.b``, ``a[].b``: every element of ``a``), flattened."""
    current = [value]
    for part in path.split("."):
        each = part.endswith("[]")
        key = part[:-2] if each else part
        step: list[Any] = []
        for node in current:
            inner = node.get(key) if isinstance(node, dict) and key else node
            if each:
                step.extend(inner if isinstance(inner, list) else [])
            elif inner is not None:
                step.append(inner)
        current = step
    return current


def _items(value: Any, shape: ResultShape, who: str) -> list[Any] | None:
    """The list of items in an answer: at ``shape.items``, else a common shape one or two deep."""
    if shape.items:
        found = _path(value, shape.items)
        if found and all(isinstance(f, list) for f in found):  # "results[].hits": one list each
            return [item for f in found for item in f]
        return found if found or _path_exists(value, shape.items) else None
    if isinstance(value, list):
        return value
    if not isinstance(value, dict):
        return None
    for key in (*_LIST_KEYS, "web"):
        inner = value.get(key)
        if isinstance(inner, list):
            return inner
        if isinstance(inner, dict) and isinstance(inner.get("results"), list):
            return list(inner["results"])
    return None


def _path_exists(value: Any, path: str) -> bool:
    head = path.split(".")[0].removesuffix("[]")
    return isinstance(value, dict) and head in value


def _text(value: Any) -> str:
    """A field's value as text: strings kept, numbers written, lists of strings joined, an
    object's name (``{"name": ...}``, ``login``, ``display_name``) taken."""
    if isinstance(value, bool) or value is None:
        return ""
    if isinstance(value, str | int | float):
        return str(value)
    if isinstance(value, list):
        return "\n".join(t for t in (_text(v) for v in value[:100]) if t)
    if isinstance(value, dict):
        for key in ("name", "display_name", "real_name", "login", "email", "title", "text"):
            if isinstance(value.get(key), str):
                return str(value[key])
    return ""


def _template(item: Mapping[str, Any], template: str) -> str:
    out = template
    for key, value in item.items():
        if isinstance(key, str) and "{" + key + "}" in out:
            out = out.replace("{" + key + "}", _text(value))
    return "" if "{" in out and "}" in out else out  # a field the item does not have


def _field(item: Mapping[str, Any], spec: str | None, defaults: Sequence[str]) -> str:
    if spec is not None:
        if "{" in spec:
            return _template(item, spec)
        return next((t for t in (_text(v) for v in _path(item, spec)) if t), "")
    lowered = {k.lower(): v for k, v in item.items() if isinstance(k, str)}  # CSV headers: Text, UserName
    for key in defaults:
        found = _text(lowered.get(key.lower()))
        if found:
            return found
    return ""


def _when(raw: str) -> str:
    """A timestamp as ISO 8601 (UTC when it has no zone), from ISO text or epoch seconds or
    milliseconds (Slack's ``1737000000.000200``); "" when it is neither."""
    raw = raw.strip()
    try:
        number = float(raw)
    except ValueError:
        try:
            when = datetime.fromisoformat(raw.replace("Z", "+00:00"))
        except ValueError:
            return ""
        return (when if when.tzinfo else when.replace(tzinfo=UTC)).isoformat()
    if number != number or abs(number) > 1e14:  # NaN, or beyond any calendar
        return ""
    seconds = number / 1000 if abs(number) > 1e11 else number
    try:
        return datetime.fromtimestamp(seconds, UTC).isoformat()
    except (OverflowError, OSError, ValueError):
        return ""


def _clean(name: str, text: str) -> str:
    cap = MAX_FIELD.get(name, 200)
    return printable(text[: cap * 2], one_line=name not in ("text", "snippet")).strip()[:cap]


def _record(item: Any, shape: ResultShape, who: str) -> Record:
    if not isinstance(item, dict):
        raise ParseError(who, f"a result is not an object but {type(item).__name__}")
    record: Record = {}
    for name in ("title", "location", "snippet", "text", "author", "timestamp"):
        record[name] = _clean(name, _field(item, getattr(shape, name), DEFAULTS[name]))
    record["timestamp"] = _when(record["timestamp"]) if record["timestamp"] else ""
    record["id"] = _clean("id", _field(item, None, DEFAULTS["id"]))
    for name, spec in shape.extra.items():
        record[name] = _clean(name, _field(item, spec, ()))
    return record


def _labelled(text: str) -> list[Record]:
    """``Title: ...`` / ``URL: ...`` / ``Description: ...`` blocks, one field per line."""
    records: list[dict[str, str]] = []
    for line in text.splitlines():
        label, sep, value = line.partition(":")
        name = _LABELS.get(label.strip().lower()) if sep else None
        if name is None:
            continue
        if not records or name in records[-1]:
            records.append({})
        records[-1][name] = value.strip()
    return [_record(r, ResultShape(), "") for r in records if r.get("location")][:MAX_ITEMS]


def _answer_beside(value: Any) -> str | None:
    if isinstance(value, dict):
        for key in ("answer", "summary"):
            said = value.get(key)
            if isinstance(said, str) and said.strip() and not isinstance(value.get("results"), str):
                return printable(said.strip()[:MAX_TEXT])
    return None


def _from_value(value: Any, shape: ResultShape, who: str) -> Records | None:
    items = _items(value, shape, who)
    if items is None:
        return None
    return Records(items=[_record(i, shape, who) for i in items[:MAX_ITEMS]], answer=_answer_beside(value))


def _csv(texts: Sequence[str], shape: ResultShape, who: str) -> Records:
    """CSV text blocks with a header row: one item per row (e.g. a Slack server's messages)."""
    rows: list[dict[str, Any]] = []
    for text in texts:
        if len(text) > MAX_TEXT:
            raise ParseError(who, f"the tool's answer is longer than {MAX_TEXT} characters")
        try:
            rows += [
                dict(r) for r, _ in zip(csv.DictReader(io.StringIO(text)), range(MAX_ITEMS), strict=False)
            ]
        except csv.Error as exc:
            raise ParseError(who, f"the tool's answer is not CSV ({exc})") from exc
    if not rows and not any(t.strip() for t in texts):
        raise ParseError(who, "the tool's answer holds no CSV rows")
    return Records(items=[_record(r, shape, who) for r in rows[:MAX_ITEMS]])


def read_records(structured: Any, texts: Sequence[str], shape: ResultShape, who: str) -> Records:
    """Records from a tool's structured content or its text blocks (see the module's doc);
    ``ParseError`` naming ``who`` when none of it holds a list of results or links."""
    if structured is not None and (found := _from_value(structured, shape, who)) is not None:
        return found
    if shape.format == "csv":
        return _csv(texts, shape, who)
    prose: list[str] = []
    for text in texts:
        if len(text) > MAX_TEXT:
            raise ParseError(who, f"the tool's answer is longer than {MAX_TEXT} characters")
        try:
            value = json.loads(text)
        except ValueError:
            labelled = _labelled(text)
            if labelled:
                return Records(items=labelled)
            prose.append(text)
            continue
        if (found := _from_value(value, shape, who)) is not None:
            return found
    # links in words: an agent answering in prose
    read = read_prose("\n\n".join(prose), who)
    if read.results:
        items = [{"title": r.title, "location": r.url, "snippet": r.snippet} for r in read.results]
        return Records(items=[_record(i, ResultShape(), who) for i in items], answer=read.answer or None)
    raise ParseError(who, "the tool's answer holds no list of results and no links to sources")
