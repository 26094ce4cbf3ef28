"""The learned head (memory/head/): shipped small, loads and answers deterministically, reads the shipped
embedder's vectors, and the fact keeper falls back to the keyword rules without it."""

from __future__ import annotations

from importlib import resources

import numpy as np
import pytest

from memory.engine import MemoryEngine
from memory.head.model import CATEGORIES, HEAD_FILE, VERSION, load_head, read_head
from memory.model.keeper import FactKeeper, head_usable
from memory.model.quick_extract import quick_facts
from memory.vectors.cache import CachedEmbedder
from memory.vectors.embedding import LocalEmbedder

MAX_BYTES = 2 * 1024 * 1024


@pytest.fixture
async def embedder(engine: MemoryEngine):
    """The shipped embedder as the runtime wires it: behind the content-hash cache (``MemoryEmbedder``)."""
    cached = CachedEmbedder(LocalEmbedder(), engine.store.vectors)
    yield cached
    await cached.close()


def test_the_weights_file_is_small_versioned_and_says_what_it_saw() -> None:
    path = resources.files("memory.head").joinpath(HEAD_FILE)
    assert path.is_file() and len(path.read_bytes()) <= MAX_BYTES
    head = load_head()
    assert head.version == VERSION
    sources = head.meta["sources"]
    assert {"written", "persona-en", "persona-zh", "lccc-train", "dailydialog-train"} <= set(sources)
    assert head.keep_w.w2.shape[1] == 2 and head.category_w.w2.shape[1] == len(CATEGORIES)


def test_loading_twice_gives_the_same_answers() -> None:
    path = resources.files("memory.head").joinpath(HEAD_FILE)
    with path.open("rb") as handle, np.load(handle) as data:
        again = read_head(data)
    vectors = np.random.default_rng(0).normal(size=(8, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    head = load_head()
    assert np.array_equal(head.keep_scores(vectors), again.keep_scores(vectors))
    assert head.categories(vectors) == again.categories(vectors)
    assert head.gate(vectors[0]) == again.gate(vectors[0])


async def test_the_head_keeps_life_statements_and_not_chatter(embedder: CachedEmbedder) -> None:
    keeper = FactKeeper(embedder)
    assert head_usable(embedder)
    for text in ("I'm allergic to penicillin", "我女儿叫小雨", "we've got a greyhound called Pickle"):
        assert await keeper.facts(text), text
    for text in ("haha that's hilarious", "好的谢谢", "what's the capital of France?", "I agree with you"):
        assert await keeper.facts(text) == [], text


async def test_same_message_same_facts(embedder: CachedEmbedder) -> None:
    keeper = FactKeeper(embedder)
    text = "I live in Lyon and work as a nurse, and my daughter Mia is seven."
    first = [(f.content, f.category) for f in await keeper.facts(text)]
    assert first == [(f.content, f.category) for f in await keeper.facts(text)]
    assert all(not content.lower().startswith(("and ", "but ")) for content, _ in first)


@pytest.mark.xfail(
    strict=True,
    reason="issue 35 round 2 (branch rules2): the head and the keyword fallback fall short here",
)
async def test_a_compound_message_keeps_each_clause_whole(embedder: CachedEmbedder) -> None:
    facts = await FactKeeper(embedder).facts("I live in Lyon and work as a nurse")
    assert [f.content for f in facts] == ["I live in Lyon", "I work as a nurse"]
    zh = await FactKeeper(embedder).facts("我在杭州做后端开发，喜欢用Go")
    assert [f.content for f in zh] == ["我在杭州做后端开发", "我喜欢用Go"]


async def test_considering_something_is_not_who_one_is(embedder: CachedEmbedder) -> None:
    (fact,) = await FactKeeper(embedder).facts("我在考虑要不要辞职")
    assert fact.category == "decision"


async def test_the_gate_tells_own_questions_from_questions_to_the_listener(embedder: CachedEmbedder) -> None:
    head = load_head()
    own = await embedder.embed_queries(["what's my sister's name again?", "我对什么过敏？"])
    other = await embedder.embed_queries(["what's your favourite colour?", "法国的首都是哪？"])
    assert all(head.asks_own(v) for v in own)
    assert not any(head.asks_own(v) for v in other)


class _Broken:
    model_key = "local:multilingual-e5-small-q4"
    uses_local_cores = True

    async def embed_passages(self, texts):
        raise RuntimeError("engine gone")


async def test_without_the_embedder_or_when_it_fails_the_keyword_rules_answer() -> None:
    text = "I live in Lyon and work as a nurse"
    expected = [(f.content, f.category) for f in quick_facts(text)]
    assert [(f.content, f.category) for f in await FactKeeper(None).facts(text)] == expected
    broken = FactKeeper(_Broken())  # type: ignore[arg-type]
    assert [(f.content, f.category) for f in await broken.facts(text)] == expected


def test_another_vector_space_never_reaches_the_head() -> None:
    class Api:
        model_key = "openai:text-embedding-3-small"

    assert not head_usable(Api())  # type: ignore[arg-type]
    assert not head_usable(None)
