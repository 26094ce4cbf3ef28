"""``OpenAIEmbedder``: vectors from any OpenAI-compatible ``/embeddings`` API (OpenAI, a self-hosted
server) through the openai SDK; every answer is validated and normalised."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import openai

from memory.model.openai_model import describe_openai_error
from memory.vectors.protocol import (
    API_MAX_CHARS,
    NO_KEY_PLACEHOLDER,
    EmbeddingError,
    EmbeddingSettings,
    check_positive_int,
    check_texts,
    unit_rows,
)

log = logging.getLogger("tierclaw.memory")


class OpenAIEmbedder:
    """``POST /embeddings`` on an OpenAI-compatible endpoint through ``openai.AsyncOpenAI``.

    Queries and passages are embedded the same way (OpenAI models take no prefix). Inputs go out in
    requests of at most ``batch_size`` texts, one request at a time. ``encoding_format`` is left to the
    SDK, which asks for base64 and decodes it itself (a server that answers plain float lists anyway is
    accepted too). ``dimensions`` is sent only when configured.

    Every answer is checked: one vector per input (matched by ``index``), all the same length, equal to
    ``dimensions`` when configured, or else to the length learned from the first answer (``dim``), finite
    and non-zero. Rows are re-normalised. Any SDK error, timeout, non-JSON body or failed check is an
    ``EmbeddingError``.

    An empty text is sent as a single space: OpenAI rejects "" with a 400 that would fail the whole batch.
    Texts over the model's input limit (8192 tokens for OpenAI) are not truncated; the server's 400
    becomes an ``EmbeddingError``.
    """

    uses_local_cores: bool = False  # a network call: the query is embedded while the database works

    def __init__(self, settings: EmbeddingSettings) -> None:
        if not settings.model:
            raise ValueError("the openai embedding provider needs a model (e.g. text-embedding-3-small)")
        check_positive_int("batch_size", settings.batch_size)
        if settings.dimensions is not None:
            check_positive_int("dimensions", settings.dimensions)
        if not settings.timeout_seconds > 0:
            raise ValueError(f"embedding timeout_seconds must be positive, not {settings.timeout_seconds!r}")
        if isinstance(settings.max_retries, bool) or not isinstance(settings.max_retries, int):
            raise ValueError(f"embedding max_retries must be an integer, not {settings.max_retries!r}")
        if settings.max_retries < 0:
            raise ValueError(f"embedding max_retries must not be negative, not {settings.max_retries!r}")
        self.model = settings.model
        self.dimensions = settings.dimensions
        self.batch_size = settings.batch_size
        self.dim: int | None = settings.dimensions
        self.model_key = f"openai:{settings.model}" + (
            f"@{settings.dimensions}" if settings.dimensions is not None else ""
        )
        self._closed = False
        try:
            self._client = openai.AsyncOpenAI(
                base_url=settings.base_url,
                api_key=settings.api_key or NO_KEY_PLACEHOLDER,
                timeout=settings.timeout_seconds,
                max_retries=settings.max_retries,
            )
        except openai.OpenAIError as exc:  # e.g. a malformed base_url
            raise ValueError(f"cannot build the embedding client: {describe_openai_error(exc)}") from None

    async def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Search queries → ``(n, dim)`` float32 unit rows."""
        return await self._embed(texts, "queries")

    async def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        """Stored texts → ``(n, dim)`` float32 unit rows (same request as queries)."""
        return await self._embed(texts, "passages")

    async def close(self) -> None:
        """Close the HTTP client; later embed calls raise ``EmbeddingError``."""
        if not self._closed:
            self._closed = True
            await self._client.close()

    @property
    def client_closed(self) -> bool:
        """Whether the HTTP client has released its connections (true after ``close``)."""
        return self._client.is_closed()

    async def _embed(self, texts: Sequence[str], kind: str) -> np.ndarray:
        # An API refuses the whole batch for one text over its token limit (8,192 for OpenAI's models);
        # a memory is a fact, so its first API_MAX_CHARS characters say what it is about.
        items = [text[:API_MAX_CHARS] if text else " " for text in check_texts(texts)]
        if self._closed:
            raise EmbeddingError(f"embedder {self.model_key} is closed")
        if not items:
            return np.zeros((0, self.dim or 0), dtype=np.float32)
        parts = [
            await self._request(items[start : start + self.batch_size], kind)
            for start in range(0, len(items), self.batch_size)
        ]
        return np.concatenate(parts)

    async def _request(self, batch: list[str], kind: str) -> np.ndarray:
        """One ``embeddings.create`` call for ``batch``, validated; ``EmbeddingError`` on any failure."""
        started = time.monotonic()

        def fail(reason: str) -> EmbeddingError:
            # DEBUG: the engine and the backfill log a failure streak once; one line per request would
            # flood the log while an API is down.
            log.debug(
                "[memory] embedder %s failed after %.2fs (%d %s): %s",
                self.model_key,
                time.monotonic() - started,
                len(batch),
                kind,
                reason,
            )
            return EmbeddingError(f"embedder {self.model_key} failed: {reason}")

        options: dict[str, Any] = {"model": self.model, "input": batch}
        if self.dimensions is not None:
            options["dimensions"] = self.dimensions
        try:
            response = await self._client.embeddings.create(**options)
        except openai.OpenAIError as exc:
            raise fail(describe_openai_error(exc)) from None
        except (ValueError, TypeError, AttributeError):
            # From the SDK's parsing of a 200 answer: a body that is not JSON, "No embedding data
            # received", bad base64, or (AttributeError) a non-JSON content type handed to its base64
            # decoder as a plain str.
            raise fail("response is not a usable embeddings answer") from None
        vectors = self._vectors(response, len(batch), fail)
        log.debug(
            "[memory] embedder %s: %d %s in %.3fs",
            self.model_key,
            len(batch),
            kind,
            time.monotonic() - started,
        )
        return vectors

    def _vectors(self, response: Any, count: int, fail: Any) -> np.ndarray:
        """The ``(count, dim)`` unit float32 rows of an embeddings answer, or ``fail(reason)``."""
        data = getattr(response, "data", None)
        if not isinstance(data, list):
            raise fail("response has no embedding list")
        if len(data) != count:
            raise fail(f"expected {count} vectors, got {len(data)}")
        rows: list[Any] = [None] * count
        for item in data:
            index = getattr(item, "index", None)
            if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < count:
                raise fail(f"vector index {index!r} out of range")
            if rows[index] is not None:
                raise fail(f"vector index {index} given twice")
            rows[index] = getattr(item, "embedding", None)
        try:
            arrays = [np.asarray(row, dtype=np.float64) for row in rows]
        except (TypeError, ValueError):
            raise fail("a vector is not a list of numbers") from None
        widths = {a.shape[0] if a.ndim == 1 else -1 for a in arrays}
        if len(widths) != 1 or -1 in widths or 0 in widths:
            raise fail(f"vectors are not all one non-empty length (got {sorted(widths)})")
        (width,) = widths
        expected = self.dimensions if self.dimensions is not None else self.dim
        if expected is not None and width != expected:
            raise fail(f"expected {expected}-dimensional vectors, got {width}")
        vectors = unit_rows(np.stack(arrays), count, width, fail)
        if self.dim is None:
            self.dim = width
        return vectors
