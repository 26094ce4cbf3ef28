"""A small deterministic embedder for the reindex tests (a unit vector from the SHA-256 of the text) that
counts what it embeds, so "never re-embeds what is done" is checked by counting texts, not by timing; and
memories made of distinct words to embed."""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from memory.engine import MemoryEngine
from memory.records import Fact
from memory.vectors.index import blob_to_vector
from memory.vectors.reindex import EmbeddingError

if TYPE_CHECKING:
    pass

DIM = 16
# Distinct words per memory, so that the engine's near-duplicate merge never folds two of them together.
WORDS = [
    "apple",
    "banana",
    "cherry",
    "dragon",
    "eagle",
    "falcon",
    "garlic",
    "harbor",
    "island",
    "jungle",
    "kettle",
    "lemon",
    "mango",
    "nectar",
    "olive",
    "pepper",
    "quartz",
    "raven",
    "salmon",
    "tiger",
    "umbrella",
    "violet",
    "walnut",
    "xylophone",
    "yogurt",
    "zebra",
    "anchor",
    "bridge",
    "canyon",
    "desert",
    "ember",
    "forest",
    "glacier",
    "hollow",
    "ivory",
    "jasper",
    "kayak",
    "lantern",
    "meadow",
    "nickel",
    "orchid",
]


def hash_vector(text: str, dim: int = DIM) -> np.ndarray:
    raw = np.frombuffer(hashlib.sha256(text.encode()).digest()[:dim], dtype=np.uint8).astype(np.float32)
    vec = raw - 127.5
    return (vec / np.linalg.norm(vec)).astype(np.float32)


class HashEmbedder:
    """Deterministic embedder: ``hash_vector`` per text; records every text it embedded.

    ``fail_calls``: 1-based call numbers that raise EmbeddingError; ``down``: every call fails while True;
    ``before``: awaited with the texts at the start of each call (to edit rows or interrupt mid-batch).
    """

    uses_local_cores = False

    def __init__(
        self,
        model_key: str = "test:hash@16",
        *,
        fail_calls: Sequence[int] = (),
        before: Callable[[int, list[str]], Awaitable[None]] | None = None,
    ) -> None:
        self.model_key = model_key
        self.dim: int | None = DIM
        self.calls = 0
        self.texts: list[str] = []
        self.fail_calls = set(fail_calls)
        self.down = False
        self.before = before
        self.closed = False

    async def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        texts = list(texts)
        if self.before is not None:
            await self.before(self.calls, texts)
        if self.down or self.calls in self.fail_calls:
            raise EmbeddingError(f"embedder {self.model_key} failed: service unavailable")
        self.texts += texts
        return np.stack([hash_vector(t) for t in texts])

    async def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return np.stack([hash_vector(t) for t in texts])

    async def embed_query(self, text: str) -> np.ndarray:
        return hash_vector(text)

    async def close(self) -> None:
        self.closed = True


def content(i: int) -> str:
    return f"{WORDS[i % len(WORDS)]} {WORDS[(i * 7 + 3) % len(WORDS)]} note number {i}"


async def add(engine: MemoryEngine, owner: str, start: int, count: int) -> list[int]:
    results = await engine.write_many(owner, [Fact(content=content(i)) for i in range(start, start + count)])
    assert all(r.action == "inserted" for r in results)
    return [r.id for r in results]


async def vectors(engine: MemoryEngine) -> dict[int, tuple[str, str | None, np.ndarray | None]]:
    """id -> (content, embedding_model, vector) for every row, archived ones included."""
    rows = await engine.store.db.read("SELECT id, content, embedding_model, embedding FROM memories")
    return {i: (c, m, blob_to_vector(b) if b is not None else None) for i, c, m, b in rows}
