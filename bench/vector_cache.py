"""The ``--vector-cache FILE.npz`` the embedding benchmarks share: passage vectors kept between runs.

A first ``--embedding local`` run embeds thousands of texts (minutes on a small machine); later runs read
the vectors from the file and put them into the engine's ``embedding_cache`` table, as a gateway restart
would find them, so only what changed is embedded again. File layout: ``model`` (the embedder's model
key), ``keys`` (SHA-256 of each text, as memory/embedding_cache.py keys it) and ``vectors`` (float32 rows).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np

from memory.clock import to_db, utcnow
from memory.engine import MemoryEngine
from memory.vectors.cache import PASSAGE_SUFFIX, vector_to_blob


def load_vector_cache(path: Path, model_key: str) -> dict[str, np.ndarray]:
    """Text hash → passage vector from an earlier run's .npz; empty (with a note) if absent or foreign."""
    if not path.exists():
        return {}
    try:
        with np.load(path, allow_pickle=False) as stored:
            model = str(stored["model"])
            keys = stored["keys"].tolist()
            vectors = stored["vectors"].astype(np.float32, copy=False)
    except (OSError, ValueError, KeyError) as exc:
        print(f"vector cache {path} unreadable ({exc}); embedding without it", file=sys.stderr)
        return {}
    if model != model_key:
        print(f"vector cache {path} holds {model} vectors, not {model_key}; ignored", file=sys.stderr)
        return {}
    return dict(zip(keys, vectors, strict=True))


def save_vector_cache(path: Path, model_key: str, vectors: dict[str, np.ndarray]) -> None:
    """Write text hash → vector as .npz, atomically (a half-written file is never left behind)."""
    keys = sorted(vectors)
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("wb") as fh:
        np.savez(
            fh, model=np.array(model_key), keys=np.array(keys), vectors=np.stack([vectors[k] for k in keys])
        )
    os.replace(tmp, path)


async def prefill_cache(engine: MemoryEngine, model_key: str, vectors: dict[str, np.ndarray]) -> None:
    """Rows of the engine's ``embedding_cache`` (memory/embedding_cache.py's format), as an earlier run of
    the gateway would have left them: SHA-256 of the text, ``<model_key>|passage``, dim, float32 LE blob."""
    rows = [(k, int(v.shape[0]), vector_to_blob(v)) for k, v in vectors.items()]
    await engine.store.vectors.cache(model_key + PASSAGE_SUFFIX, rows, [], to_db(utcnow()))
