"""The query side of the knowledge base's store: filters on files, analyzed queries, and a ``View``
(one searcher of the tantivy index) that ranks with BM25, filters and reads chunks back."""

from __future__ import annotations

import struct
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol, cast

import tantivy

__all__ = [
    "HEADINGS_SEP", "WEIGHTS", "LexQuery", "Row", "StoreFilter", "View", "Viewer", "day_number", "pack",
    "unpack",
]  # fmt: skip

WEIGHTS = {"title": 4.0, "headings": 2.0, "body": 1.0}
HEADINGS_SEP = "\x1f"  # a control character: never in a cleaned heading, a separator to the analyzer


class Row(NamedTuple):
    """A stored chunk with its file, as search reads it back (a tuple: made for every hit of every
    query, where a frozen dataclass cost several times as much to build)."""

    key: tuple[int, int]
    path: str
    title: str
    doc_date: str
    heading_path: tuple[str, ...]
    text: str
    start_line: int
    end_line: int
    embed_hash: str
    dated: bool = True  # the date is the document's own (front matter), not its file's mtime
    plain: bool = False  # no snippet of the text needs cleaning (``snippet.plain``, at indexing)


@dataclass
class StoreFilter:
    """Conditions on the file a chunk comes from; each list is OR-ed, the lists AND-ed."""

    paths: list[str] = field(default_factory=list)  # glob (``*``, ``?``) or a part of the path
    not_paths: list[str] = field(default_factory=list)
    exts: list[str] = field(default_factory=list)
    not_exts: list[str] = field(default_factory=list)
    titles: list[str] = field(default_factory=list)  # substring, case-insensitive
    not_titles: list[str] = field(default_factory=list)
    after: str | None = None  # ISO date, inclusive
    before: str | None = None  # ISO date, exclusive
    # the principals of the user asking (``access.readers``): only files one of them may read;
    # None: no per-document restriction (the owner's own use)
    readers: tuple[str, ...] | None = None

    def empty(self) -> bool:
        return not (self.paths or self.not_paths or self.exts or self.not_exts or self.titles
                    or self.not_titles or self.after or self.before or self.readers is not None)  # fmt: skip

    def clauses(self, schema: tantivy.Schema) -> list[tuple[tantivy.Occur, tantivy.Query]]:
        """The filter as required and excluded clauses of a boolean query (none: no filter)."""
        out: list[tuple[tantivy.Occur, tantivy.Query]] = []
        if self.empty():  # most queries: nothing to build
            return out

        def any_of(name: str, queries: list[tantivy.Query], negate: bool) -> None:
            if queries:
                either = tantivy.Query.boolean_query([(tantivy.Occur.Should, q) for q in queries])
                out.append((tantivy.Occur.MustNot if negate else tantivy.Occur.Must, either))

        for values, negate in ((self.paths, False), (self.not_paths, True)):
            any_of(
                "path_lc",
                [tantivy.Query.regex_query(schema, "path_lc", _glob_regex(v)) for v in values],
                negate,
            )
        for values, negate in ((self.exts, False), (self.not_exts, True)):
            exts = [e.lower().lstrip(".") for e in values]
            any_of("ext", [tantivy.Query.term_query(schema, "ext", e) for e in exts], negate)
        for values, negate in ((self.titles, False), (self.not_titles, True)):
            regexes = [".*" + _escape(v.lower()) + ".*" for v in values]
            any_of("title_lc", [tantivy.Query.regex_query(schema, "title_lc", r) for r in regexes], negate)
        if self.after or self.before:
            low = day_number(self.after) if self.after else None
            high = day_number(self.before) if self.before else None
            days = tantivy.Query.range_query(
                schema, "day", tantivy.FieldType.Integer, low, high, include_upper=high is None
            )
            out.append((tantivy.Occur.Must, days))
        if self.readers is not None:  # an empty list keeps nothing, as it should
            should = tantivy.Occur.Should
            mine = [(should, tantivy.Query.term_query(schema, "readers", r)) for r in self.readers]
            out.append((tantivy.Occur.Must, tantivy.Query.boolean_query(mine)))
        return out


@dataclass
class LexQuery:
    """Analyzed terms: any of ``terms`` (each weighted by ``weights``, 1 when absent), every phrase
    (or every term of a ``required`` group), none of ``excluded``."""

    terms: list[str] = field(default_factory=list)
    weights: dict[str, float] = field(default_factory=dict)
    phrases: list[list[str]] = field(default_factory=list)
    required: list[str] = field(default_factory=list)
    excluded: list[str] = field(default_factory=list)

    def empty(self) -> bool:
        return not (self.terms or self.phrases or self.required)


_REGEX_META = set("\\.+*?()|[]{}^$#&-~")


def _escape(value: str) -> str:
    return "".join("\\" + c if c in _REGEX_META else c for c in value)


def _glob_regex(value: str) -> str:
    """A ``path:`` value as a regex over the lower-cased path: a glob or a part of the path."""
    body = "".join(".*" if c == "*" else "." if c == "?" else _escape(c) for c in value.lower())
    return ".*" + body + ".*"


def day_number(iso: str) -> int:
    return int(iso.replace("-", ""))


# A record's numbers, in binary (no text to parse back): the chunk's first and last lines, the
# lengths of its date, embed hash, path, title and headings (in characters), its flags: dated (1),
# plain (2; a record written before it had none: its snippets are cleaned).
_HEAD = struct.Struct("<7IB")


def pack(
    path: str,
    title: str,
    doc_date: str,
    dated: bool,
    headings: str,
    text: str,
    lines: tuple[int, int],
    embed_hash: str,
    plain: bool = False,
) -> bytes:
    """A chunk's stored record, what ``unpack`` reads back: its numbers (``_HEAD``), then its date,
    hash, path, title, headings and body, so no text needs a separator of its own."""
    flags = dated | plain << 1
    head = _HEAD.pack(*lines, len(doc_date), len(embed_hash), len(path), len(title), len(headings), flags)
    return head + (doc_date + embed_hash + path + title + headings + text).encode()


def unpack(record: bytes, key: tuple[int, int]) -> Row:
    """The ``Row`` of a record ``pack`` made."""
    start, end, a, b, c, d, e, flags = _HEAD.unpack_from(record)
    s = record[_HEAD.size :].decode()
    b += a
    c += b
    d += c
    e += d
    # ``tuple.__new__`` with the values in field order: what ``Row(...)`` does, without its
    # function in Python (a fifth of the time: every hit of every query reads one)
    return _new_row(Row, (
        key, s[b:c], s[c:d], s[:a], tuple(s[d:e].split(HEADINGS_SEP)) if e > d else (), s[e:],
        start, end, s[a:b], flags & 1 == 1, flags & 2 == 2,
    ))  # fmt: skip


_new_row = tuple.__new__


class Viewer(Protocol):
    """What search needs from one view of a store (the embedded ``View``, PostgreSQL's ``PgView``)."""

    def lexical(self, q: LexQuery, where: StoreFilter, limit: int) -> list[tuple[tuple[int, int], float]]: ...
    def by_hashes(
        self, hashes: Sequence[str], where: StoreFilter, limit: int
    ) -> dict[str, list[tuple[int, int]]]: ...
    def nearest(
        self, vector: bytes, where: StoreFilter, limit: int
    ) -> list[tuple[tuple[int, int], float]] | None: ...
    def files(self, keys: Sequence[tuple[int, int]]) -> list[Hashable]: ...
    def embedded_chars(self, keys: Sequence[tuple[int, int]]) -> list[int]: ...
    def rows(self, keys: Sequence[tuple[int, int]]) -> dict[tuple[int, int], Row]: ...
    def texts(self, hashes: Sequence[str]) -> list[tuple[str, str]]: ...
    def after(self, path: str, line: int, limit: int) -> Row | None: ...


def embedded(title: str, headings: Sequence[str], text: str) -> str:
    """The text a chunk's embedding reads: its title, headings and body (what its ``embed_hash``
    is of, at indexing)."""
    return "\n".join([title, *headings, text])


class View:
    """One searcher: ranks, filters and reads chunks of the index as it was when the view was made."""

    def __init__(self, searcher: tantivy.Searcher, schema: tantivy.Schema) -> None:
        self.searcher = searcher
        self.schema = schema
        # The addresses the engine returned, by key: the hits' columns and documents are read with
        # them (making an address again cost more than reading a column).
        self._addresses: dict[tuple[int, int], tantivy.DocAddress] = {}

    def _addressed(self, keys: Iterable[tuple[int, int]]) -> list[tantivy.DocAddress]:
        got = self._addresses.get
        return [got(k) or tantivy.DocAddress(*k) for k in keys]

    def _field_terms(
        self, terms: Iterable[str], weights: Mapping[str, float] | None = None
    ) -> list[tantivy.Query]:
        got = (weights or {}).get
        return [
            tantivy.Query.boost_query(
                tantivy.Query.term_query(self.schema, name, t, "freq"), weight * got(t, 1.0)
            )
            for t in terms
            for name, weight in WEIGHTS.items()
        ]

    def _phrase(self, words: list[str]) -> tantivy.Query:
        if len(words) == 1:
            return tantivy.Query.boolean_query([(tantivy.Occur.Should, q) for q in self._field_terms(words)])
        phrase: list[str | tuple[int, str]] = list(words)
        per_field = [tantivy.Query.phrase_query(self.schema, name, phrase) for name in WEIGHTS]
        return tantivy.Query.boolean_query([(tantivy.Occur.Should, q) for q in per_field])

    def lexical(self, q: LexQuery, where: StoreFilter, limit: int) -> list[tuple[tuple[int, int], float]]:
        """(chunk key, BM25 score) best first."""
        if q.empty():
            return []
        should, must = tantivy.Occur.Should, tantivy.Occur.Must
        clauses: list[tuple[tantivy.Occur, tantivy.Query]] = [
            (should, x) for x in self._field_terms(q.terms, q.weights)
        ]
        clauses += [(must, self._phrase(p)) for p in q.phrases]
        clauses += [(must, self._phrase([t])) for t in q.required]
        clauses += [(tantivy.Occur.MustNot, x) for x in self._field_terms(q.excluded)]
        filters = where.clauses(self.schema)
        if filters:  # the filter decides which chunks, the terms alone how they rank
            ranked = tantivy.Query.boolean_query(clauses)
            constant = [(o, tantivy.Query.const_score_query(x, 0.0)) for o, x in filters]
            query = tantivy.Query.boolean_query([(must, ranked), *constant])
        else:
            query = tantivy.Query.boolean_query(clauses)
        hits = self.searcher.search(query, limit, count=False).hits
        keys = [(a.segment_ord, a.doc) for _, a in hits]
        self._addresses.update(zip(keys, [a for _, a in hits], strict=True))
        return list(zip(keys, [score for score, _ in hits], strict=True))

    def by_hashes(
        self, hashes: Sequence[str], where: StoreFilter, limit: int
    ) -> dict[str, list[tuple[int, int]]]:
        """embed hash -> the keys of the chunks with it that the filter keeps."""
        query = tantivy.Query.term_set_query(self.schema, "hash", list(hashes))
        filters = where.clauses(self.schema)
        if filters:
            query = tantivy.Query.boolean_query([(tantivy.Occur.Must, query), *filters])
        out: dict[str, list[tuple[int, int]]] = {}
        for _, a in self.searcher.search(query, limit, count=False).hits:
            out.setdefault(self._row(a).embed_hash, []).append((a.segment_ord, a.doc))
        return out

    def _row(self, address: tantivy.DocAddress) -> Row:
        record: Any = self.searcher.doc(address).get_first("row")  # bytes: every chunk's, by ``Writer``
        return unpack(record, (address.segment_ord, address.doc))

    def nearest(self, vector: bytes, where: StoreFilter, limit: int) -> None:
        """The embedded store has no vector index: the knowledge base compares in its process."""
        return None

    def files(self, keys: Sequence[tuple[int, int]]) -> list[Hashable]:
        """A value per key, the same for the chunks of one file (from a column: no document read)."""
        return list(self.searcher.fast_field_values("file", self._addressed(keys)))

    def embedded_chars(self, keys: Sequence[tuple[int, int]]) -> list[int]:
        """Per key, the length of the text its chunk's embedding read (a column written at
        indexing: no document read)."""
        # every chunk has one (``Writer``): an int each
        return cast(list[int], self.searcher.fast_field_values("embedded", self._addressed(keys)))

    def rows(self, keys: Sequence[tuple[int, int]]) -> dict[tuple[int, int], Row]:
        unique = list(dict.fromkeys(keys))
        return dict(zip(unique, map(self._row, self._addressed(unique)), strict=True))

    def after(self, path: str, line: int, limit: int) -> Row | None:
        """The chunk of ``path`` that starts first after ``line`` (of the file's first ``limit``
        chunks, all of them when ``limit`` is the chunks a file may have): where a hit's text goes on."""
        query = tantivy.Query.term_query(self.schema, "path", path)
        rows = (self._row(a) for _, a in self.searcher.search(query, limit, count=False).hits)
        return min((r for r in rows if r.start_line > line), key=lambda r: r.start_line, default=None)

    def texts(self, hashes: Sequence[str]) -> list[tuple[str, str]]:
        """(embed hash, the text its embedding reads: title, headings, body) for each hash found."""
        out: dict[str, str] = {}
        for start in range(0, len(hashes), 1024):
            part = list(hashes[start : start + 1024])
            query = tantivy.Query.term_set_query(self.schema, "hash", part)
            for _, a in self.searcher.search(query, 4 * len(part), count=False).hits:
                row = self._row(a)
                out.setdefault(row.embed_hash, embedded(row.title, row.heading_path, row.text))
        return list(out.items())
