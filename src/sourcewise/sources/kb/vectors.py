"""A knowledge base's embeddings: computed for the chunks that miss one (batch by batch, resumable),
and compared with a query's, in this process (a matrix read once per index run) or by the store's
own vector index (PostgreSQL's pgvector: ``Viewer.nearest``)."""

from __future__ import annotations

import logging
from typing import Any

from sourcewise.sources.kb.embed import Embedder, embedder
from sourcewise.sources.kb.index import Progress
from sourcewise.sources.kb.query import StoreFilter, Viewer
from sourcewise.sources.kb.rows import Store
from sourcewise.sources.kb.search import Key

__all__ = ["EMBED_BATCH", "Vectors"]

log = logging.getLogger("sourcewise")
EMBED_BATCH = 256


class Vectors:
    """The embeddings of ``store``."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._matrix: tuple[Any, Any] | None = None

    def forget(self) -> None:
        """The store's vectors changed: the matrix is read again when next needed."""
        self._matrix = None

    def indexed(self) -> bool:
        """The store compares vectors in its own index (pgvector), not in this process."""
        return not self.store.vector_search.startswith("compared in this process")

    def any(self) -> bool:
        return bool(self.store.vector_count() if self.indexed() else self._vectors()[0].size)

    def embed_missing(self, progress: Progress | None = None) -> int:
        if progress is not None:
            progress("model", 0, None)
        model = embedder()
        if model is None:
            return 0
        _, chunks, _ = self.store.stats()
        total = max(0, chunks - self.store.vector_count())
        done = 0
        # Batch by batch, each stored in its own transaction: a killed run keeps what was embedded
        # and the next one starts where it stopped.
        while part := self.store.missing_vectors(EMBED_BATCH):
            vecs = model.encode([text for _, text in part])
            self.store.put_vectors([(h, v.tobytes()) for (h, _), v in zip(part, vecs, strict=True)])
            done += len(part)
            if progress is not None:
                progress("embed", done, max(total, done))
            log.info("kb: %d chunks embedded", done)
            if len(part) < EMBED_BATCH:
                break
        self.forget()
        return done

    def _vectors(self) -> tuple[Any, Any]:
        """(embed hashes, flat float32 vectors), read once and kept until the next index run."""
        import numpy as np

        if self._matrix is None:
            hashes, blobs = self.store.vectors()
            self._matrix = (np.array(hashes), np.frombuffer(b"".join(blobs), dtype=np.float32))
        return self._matrix

    def nearest(
        self, view: Viewer, model: Embedder, text: str, where: StoreFilter, limit: int
    ) -> list[tuple[Key, float]]:
        import numpy as np

        if not text.strip():
            return []
        query = model.encode([text])[0]
        near = view.nearest(query.astype(np.float32).tobytes(), where, limit)  # the store's index
        if near is not None:
            return near
        hashes, flat = self._vectors()
        if not len(hashes):
            return []
        scores = flat.reshape(len(hashes), -1) @ query
        # The nearest texts, then the chunks holding them that the filter keeps (with a filter,
        # many more texts: the filter may leave few of the nearest).
        wanted = limit if where.empty() else max(20 * limit, 2000)
        top = np.argsort(-scores)[:wanted]
        found = view.by_hashes([str(hashes[i]) for i in top], where, 4 * len(top))
        out = [(key, float(scores[i])) for i in top for key in found.get(str(hashes[i]), [])]
        return out[:limit]
