"""An in-memory lexical accelerator for ``SQLiteStore``: FTS5's ``bm25()`` reproduced with numpy.

SQLite stays the one source of truth. This is a cache derived from it: postings per term (sorted
term list -> a slice of row positions and column-weighted term frequencies), each row's length in
tokens, the row count and the average length, keyed by the store's generation (a random token the
store replaces in every write). It answers only the plain case it reproduces exactly: an OR of
single terms (what ``match_expression`` makes from words), scored as FTS5's ``bm25`` does
(``sqlite/ext/fts5/fts5_aux.c``: the same formula, the same operation order, in doubles), ties in
row order. Anything else (phrases, ``NOT``, a term FTS5 might read as several tokens) goes to FTS5.

The postings come from the FTS table's own content split on whitespace (the stored columns are the
analyzer's terms joined by spaces), checked against FTS5's ``fts5vocab`` row counts for every term:
when FTS5's tokenizer read the text any other way, there is no accelerator and FTS5 answers.
numpy is a dependency of sourcewise; were it missing, FTS5 would answer every query.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import re
import sqlite3
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

__all__ = ["K1", "B", "LexIndex", "available", "build", "load", "plain_terms", "save"]

K1 = 1.2
B = 0.75
FORMAT = 1
STALE_TMP = 600.0  # seconds: a temporary file this old belongs to no save still running
# An OR of quoted single terms, as match_expression writes it: ("a" OR "b" OR "c").
_PLAIN = re.compile(r'\("[^"\s]+"(?: OR "[^"\s]+")*\)')
# A term FTS5's unicode61 tokenizer reads as exactly itself even when the index has never seen it.
_SIMPLE = re.compile(r"[a-z0-9_\uac00-\ud7a3]+")
_BATCH_ROWS = 20_000
log = logging.getLogger("sourcewise")


def available() -> bool:
    try:
        import numpy  # noqa: F401
    except ImportError:
        return False
    return True


def plain_terms(match: str) -> list[str] | None:
    """The terms of a MATCH expression that is a plain OR of quoted single terms, in order
    (a repeated term stays twice: FTS5 counts it as two phrases), else ``None``."""
    if len(match) > 100_000 or not _PLAIN.fullmatch(match):
        return None
    return [t[1:-1] for t in match[1:-1].split(" OR ")]


class LexIndex:
    """Postings in CSR form over row positions (rows in rowid order)."""

    def __init__(
        self,
        generation: str,
        rowids: Any,
        lengths: Any,
        terms: list[str],
        offsets: Any,
        docs: Any,
        freqs: Any,
    ) -> None:
        import numpy as np

        self.generation = generation
        self.rowids = rowids  # int64, ascending
        self.lengths = lengths  # int32 tokens per row, all columns
        self.terms = terms
        self.offsets = offsets  # int64, len(terms) + 1
        self.docs = docs  # int32 row positions, ascending within a term
        self.lookup = {t: i for i, t in enumerate(terms)}
        self.n_rows = len(rowids)
        total = int(lengths.sum(dtype=np.int64))
        self.avgdl = float(total) / float(self.n_rows) if self.n_rows else 0.0
        # Each posting's share of the score before the term's IDF, as fts5_aux.c computes it in
        # doubles: (f * (k1 + 1)) / (f + k1 * (1 - b + b * D / avgdl)), f the column-weighted count.
        if self.n_rows:
            norm = K1 * ((1 - B) + (B * lengths.astype(np.float64)) / self.avgdl)
            f = freqs.astype(np.float64)
            self.tfw = (f * (K1 + 1.0)) / (f + norm[docs])
        else:
            self.tfw = np.zeros(0, dtype=np.float64)
        self._acc = np.zeros(self.n_rows, dtype=np.float64)
        self._offsets = offsets.tolist()

    @property
    def nbytes(self) -> int:
        arrays = (self.rowids, self.lengths, self.offsets, self.docs, self.tfw, self._acc)
        lists = (len(self.terms) + 1) * 36 + sum(len(t) + 50 for t in self.terms) * 2  # rough: str, dict
        return sum(a.nbytes for a in arrays) + lists

    def knows(self, term: str) -> bool:
        """Whether FTS5 reads ``term`` as this one token (so the accelerator can score it)."""
        return term in self.lookup or _SIMPLE.fullmatch(term) is not None

    def top(
        self, terms: Sequence[str], limit: int, keep: Callable[[list[int]], set[int]] | None = None
    ) -> list[tuple[int, float]]:
        """(rowid, -bm25) best first, ties by rowid; ``keep`` filters candidate rowids (a store filter)."""
        import numpy as np

        if not self.n_rows or limit <= 0:
            return []
        acc, offsets, tfw = self._acc, self._offsets, self.tfw
        touched = []
        n_rows = self.n_rows
        for term in terms:
            i = self.lookup.get(term)
            if i is None:
                continue  # no row holds it: FTS5 adds idf * 0 to every row's score
            start, end = offsets[i], offsets[i + 1]
            docs = self.docs[start:end]
            n_hit = end - start
            idf = math.log((n_rows - n_hit + 0.5) / (n_hit + 0.5))
            if idf <= 0.0:
                idf = 1e-6
            acc[docs] += idf * tfw[start:end]
            touched.append(docs)
        if not touched:
            return []
        if len(touched) == 1:
            cand = touched[0]  # a term's rows are distinct and ascending
        else:
            cand = np.concatenate(touched)
            cand.sort()
            distinct = np.empty(len(cand), dtype=bool)
            distinct[0] = True
            np.not_equal(cand[1:], cand[:-1], out=distinct[1:])
            cand = cand[distinct]
        scores = acc[cand]
        acc[cand] = 0.0
        if keep is None and len(cand) > limit:
            # Everything scoring at least the limit-th best score (ties included), then in order.
            kth = np.partition(scores, len(scores) - limit)[len(scores) - limit]
            mask = scores >= kth
            cand, scores = cand[mask], scores[mask]
        order = np.lexsort((cand, -scores))
        if keep is None:
            order = order[:limit]
            return [(int(r), float(s)) for r, s in zip(self.rowids[cand[order]], scores[order], strict=True)]
        out: list[tuple[int, float]] = []
        start, window = 0, max(limit * 4, 64)
        while start < len(order):  # best first, in growing windows, until the filter kept enough
            part = order[start : start + window]
            rowids = [int(r) for r in self.rowids[cand[part]]]
            allowed = keep(rowids)
            for rowid, score in zip(rowids, scores[part], strict=True):
                if rowid in allowed:
                    out.append((rowid, float(score)))
                    if len(out) == limit:
                        return out
            start += window
            window *= 4
        return out


def save(path: Path, generation: str, arrays: dict[str, Any]) -> None:
    """Written to a temporary file and renamed over ``path``: a reader never sees half a file.

    Temporary files a killed process left behind (older than ``STALE_TMP`` seconds) go first."""
    import numpy as np

    _sweep(path)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            np.savez(
                fh,
                format=np.array([FORMAT], dtype=np.int64),
                generation=np.frombuffer(generation.encode(), dtype=np.uint8),
                **arrays,
            )
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _sweep(path: Path) -> None:
    prefix, now = path.name + ".", time.time()
    try:
        for entry in os.scandir(path.parent):
            if entry.name.startswith(prefix) and entry.name.endswith(".tmp"):
                with contextlib.suppress(OSError):
                    if now - entry.stat(follow_symlinks=False).st_mtime > STALE_TMP:
                        os.unlink(entry.path)
    except OSError:
        pass  # a folder that cannot be listed: the save below says what is wrong, if anything


def load(path: Path, generation: str) -> LexIndex | None:
    """The accelerator saved at ``path`` when it is whole and of ``generation``, else ``None``."""
    import numpy as np

    try:
        with np.load(path, allow_pickle=False) as data:
            if int(data["format"][0]) != FORMAT or bytes(data["generation"]).decode() != generation:
                return None
            rowids = data["rowids"].astype(np.int64, copy=False)
            lengths = data["lengths"].astype(np.int32, copy=False)
            blob = bytes(data["terms"]).decode()
            offsets = data["offsets"].astype(np.int64, copy=False)
            docs = data["docs"].astype(np.int32, copy=False)
            freqs = data["freqs"]
    except Exception:  # unreadable, truncated, foreign: rebuilt from SQLite, never the user's problem
        return None
    terms = blob.split("\n") if blob else []
    n = len(rowids)
    sane = (
        len(lengths) == n
        and len(offsets) == len(terms) + 1
        and len(docs) == len(freqs)
        and (not len(offsets) or (int(offsets[0]) == 0 and int(offsets[-1]) == len(docs)))
        and bool(np.all(np.diff(offsets) >= 0))
        and (not len(docs) or (int(docs.min()) >= 0 and int(docs.max()) < n))
        and len(set(terms)) == len(terms)
        and freqs.dtype in (np.float32, np.float64)
    )
    return LexIndex(generation, rowids, lengths, terms, offsets, docs, freqs) if sane else None


def build(
    db: sqlite3.Connection, generation: str, weights: Iterable[float], save_to: Path | None = None
) -> LexIndex | None:
    """The accelerator for the FTS table ``chunks_fts`` as it is now (call inside one read
    transaction so ``generation`` and the rows agree), saved at ``save_to`` when given, or ``None``
    when FTS5 tokenized the stored text other than by whitespace."""
    import numpy as np

    w = [float(x) for x in weights]
    vocab: dict[str, int] = {}
    tids_parts, pos_parts, col_parts, rowid_parts, length_parts = [], [], [], [], []
    weight_codes = np.array(w, dtype=np.float64)
    cur = db.execute("SELECT rowid, title, headings, body FROM chunks_fts ORDER BY rowid")
    base = 0
    while rows := cur.fetchmany(_BATCH_ROWS):
        tokens: list[str] = []
        col_sizes: list[int] = []
        lengths: list[int] = []
        rowids: list[int] = []
        for row in rows:
            rowids.append(row[0])
            n = 0
            for c in range(3):
                toks = (row[c + 1] or "").split()
                tokens.extend(toks)
                col_sizes.append(len(toks))
                n += len(toks)
            lengths.append(n)
        for t in set(tokens).difference(vocab):
            vocab[t] = len(vocab)
        tids_parts.append(np.array(list(map(vocab.__getitem__, tokens)), dtype=np.int32))
        per_col = np.array(col_sizes, dtype=np.int64)
        pos_parts.append(np.repeat(np.arange(base, base + len(rows), dtype=np.int32), lengths))
        col_parts.append(np.repeat(np.tile(np.arange(3, dtype=np.int8), len(rows)), per_col))
        rowid_parts.append(np.array(rowids, dtype=np.int64))
        length_parts.append(np.array(lengths, dtype=np.int32))
        base += len(rows)
    terms_by_id = list(vocab)
    n_terms = len(terms_by_id)
    tids = np.concatenate(tids_parts) if tids_parts else np.zeros(0, np.int32)
    pos = np.concatenate(pos_parts) if pos_parts else np.zeros(0, np.int32)
    cols = np.concatenate(col_parts).astype(np.int64) if col_parts else np.zeros(0, np.int64)
    rowids_arr = np.concatenate(rowid_parts) if rowid_parts else np.zeros(0, np.int64)
    lengths_arr = np.concatenate(length_parts) if length_parts else np.zeros(0, np.int32)
    # Terms sorted as strings; postings sorted by (term, row): tokens are already in row order, so a
    # stable sort on the term's rank keeps each term's rows ascending.
    order_terms = sorted(range(n_terms), key=terms_by_id.__getitem__)
    rank = np.empty(n_terms, dtype=np.int32)
    rank[np.array(order_terms, dtype=np.int64)] = np.arange(n_terms, dtype=np.int32)
    terms = [terms_by_id[i] for i in order_terms]
    # One int64 key per token: term rank, row position, column; sorted, equal (term, row) runs are
    # one posting whose frequency is the sum of its tokens' column weights.
    key = (rank[tids].astype(np.int64) << 34) | (pos.astype(np.int64) << 2) | cols
    del tids, pos, cols
    key.sort()
    counts: Any
    docs: Any
    freqs: Any
    post_terms: Any
    if len(key):
        pair = key >> 2
        new = np.empty(len(key), dtype=bool)
        new[0] = True
        np.not_equal(pair[1:], pair[:-1], out=new[1:])
        starts = np.flatnonzero(new)
        counts = np.diff(np.append(starts, len(key)))
        freqs = np.add.reduceat(weight_codes[key & 3], starts)
        if np.array_equal(freqs.astype(np.float32), freqs):  # sums of 4, 2 and 1: exact in float32
            freqs = freqs.astype(np.float32)
        docs = ((pair[starts]) & ((1 << 32) - 1)).astype(np.int32)
        post_terms = (key[starts] >> 34).astype(np.int64)
        del key, pair, new
    else:
        counts = docs = post_terms = np.zeros(0, np.int64)
        freqs = np.zeros(0, np.float32)
    offsets = np.zeros(n_terms + 1, dtype=np.int64)
    np.cumsum(np.bincount(post_terms, minlength=n_terms), out=offsets[1:])
    # The check: FTS5's own (term, rows holding it, occurrences) for every term.
    occurrences = np.bincount(post_terms, weights=counts, minlength=n_terms)
    mine = {t: (int(offsets[i + 1] - offsets[i]), int(occurrences[i])) for i, t in enumerate(terms)}
    db.execute(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.chunks_fts_vocab USING fts5vocab(main, chunks_fts, row)"
    )
    theirs = {
        str(r[0]): (int(r[1]), int(r[2]))
        for r in db.execute("SELECT term, doc, cnt FROM temp.chunks_fts_vocab")
    }
    if mine != theirs:
        return None
    docs = docs.astype(np.int32, copy=False)
    if save_to is not None:
        arrays = {
            "rowids": rowids_arr,
            "lengths": lengths_arr,
            "offsets": offsets,
            "docs": docs,
            "freqs": freqs,
        }
        terms_blob = np.frombuffer("\n".join(terms).encode(), dtype=np.uint8)
        try:
            save(save_to, generation, {**arrays, "terms": terms_blob})
        except OSError as exc:
            log.debug("kb: cannot save the lexical accelerator at %s: %s", save_to, exc)
    return LexIndex(generation, rowids_arr, lengths_arr, terms, offsets, docs, freqs)
