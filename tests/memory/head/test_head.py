"""The learned head (memory/head/): shipped small, loads and answers deterministically, reads the shipped
embedder's vectors, and the fact keeper falls back to the keyword rules without it."""

from __future__ import annotations

from dataclasses import dataclass, fields
from importlib import resources

import numpy as np
import pytest

from memory.engine import MemoryEngine
from memory.head import model
from memory.head.model import CATEGORIES, HEAD_FILE, VERSION, Head, load_head, read_head
from memory.model.keeper import FactKeeper, head_usable
from memory.model.quick_extract import candidates, quick_facts
from memory.vectors.cache import CachedEmbedder
from memory.vectors.embedding import LocalEmbedder

MAX_BYTES = 2_000_000  # issue 35: "a small file (≤ 2 MB)" — compressed (`outputs.save_head`)


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
    assert head.keep_w.w2.shape[-1] == 2 and head.category_w.w2.shape[-1] == len(CATEGORIES)


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


# Known misses of the shipped head (strict, so a head that keeps them again says so). Round 5 (2026.12-5)
# lost "我女儿叫小雨" and "My manager is Karen"; round 6 (2026.12-6: cross-fitted ensembles, one combined
# clause-and-message score) keeps "My manager is Karen" and loses "I use Neovim." (its message reads as
# telling too weakly: combined 0.13 against 0.76). Single sentences still flip between seeds (54 of ~1,600
# dev verdicts between seeds 35 and 36, against 116 with round 5's selection). Round 7 (2026.12-7: casual
# chat-register training data) keeps "我女儿叫小雨" again. Round 18 (2026.12-18g: English's own gate and its
# combined row) keeps "I use Neovim." again.


@pytest.mark.parametrize(
    "text",
    [
        "I'm allergic to penicillin",
        "我女儿叫小雨",
        "we've got a greyhound called Pickle",
    ],
)
async def test_the_head_keeps_life_statements(embedder: CachedEmbedder, text: str) -> None:
    assert head_usable(embedder)
    assert await FactKeeper(embedder).facts(text), text


async def test_the_head_keeps_no_chatter(embedder: CachedEmbedder) -> None:
    keeper = FactKeeper(embedder)
    for text in ("haha that's hilarious", "好的谢谢", "what's the capital of France?", "I agree with you"):
        assert await keeper.facts(text) == [], text


async def test_same_message_same_facts(embedder: CachedEmbedder) -> None:
    keeper = FactKeeper(embedder)
    text = "I live in Lyon and work as a nurse, and my daughter Mia is seven."
    first = [(f.content, f.category) for f in await keeper.facts(text)]
    assert first == [(f.content, f.category) for f in await keeper.facts(text)]
    assert all(not content.lower().startswith(("and ", "but ")) for content, _ in first)


async def test_a_compound_message_keeps_each_clause_whole(embedder: CachedEmbedder) -> None:
    facts = await FactKeeper(embedder).facts("I live in Lyon and work as a nurse")
    assert [f.content for f in facts] == ["I live in Lyon", "I work as a nurse"]
    zh = await FactKeeper(embedder).facts("我在杭州做后端开发，喜欢用Go")
    assert [f.content for f in zh] == ["我在杭州做后端开发", "我喜欢用Go"]


@pytest.mark.parametrize(
    "text",
    [
        "My manager is Karen",  # a relation named
        "my boss is called Karen",
        "I use Neovim.",  # a tool one uses (lost by round 6's head; kept again by 2026.12-18g)
        "我在杭州做后端开发",  # where and what one works
        "my dentist is Dr Hale",
        "我一般用Figma做设计",
    ],
)
async def test_a_relation_named_a_tool_used_and_where_one_works_are_kept(
    embedder: CachedEmbedder, text: str
) -> None:
    assert await FactKeeper(embedder).facts(text), text


async def test_considering_something_is_not_who_one_is(embedder: CachedEmbedder) -> None:
    (fact,) = await FactKeeper(embedder).facts("我在考虑要不要辞职")
    assert fact.category == "decision"


async def test_the_gate_tells_own_questions_from_questions_to_the_listener(embedder: CachedEmbedder) -> None:
    head = load_head()
    own = ["what's my sister's name again?", "我对什么过敏？"]
    other = ["what's your favourite colour?", "法国的首都是哪？"]
    own_vectors, other_vectors = await embedder.embed_queries(own), await embedder.embed_queries(other)
    assert all(head.asks_own(v, t) for v, t in zip(own_vectors, own, strict=True))
    assert not any(head.asks_own(v, t) for v, t in zip(other_vectors, other, strict=True))


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


async def test_a_fact_is_kept_without_the_text_emoji_beside_it(embedder: CachedEmbedder) -> None:
    """WeChat and Feishu write their emoji as codes in the text (memory/text/text_emoji.py): the fact is
    judged and kept as if the code were not there, by the head and by the keyword rules alike — an
    English code is no longer read as code's index, which lost the whole sentence."""
    for keeper in (FactKeeper(embedder), FactKeeper(None)):
        for plain in ("我家的狗叫旺财，今年三岁了", "I live in Lyon and work as a nurse"):
            expected = [(f.content, f.category) for f in await keeper.facts(plain)]
            assert expected, plain
            with_emoji = plain + ("[Smile]" if plain.isascii() else "[捂脸]")
            assert [(f.content, f.category) for f in await keeper.facts(with_emoji)] == expected


async def test_where_a_secret_is_kept_is_kept_as_a_credential_and_its_value_never(
    embedder: CachedEmbedder,
) -> None:
    """Round 40 (``quick_extract.holds_secret``): the head keeps where a password is, filed ``credential``
    as a memory written by hand is (``head/filing.py``); a sentence with the value is refused before it."""
    whereabouts = (
        "I wrote the wifi password on a sticky note under the router",
        "我把wifi密码贴在路由器背面了",
    )
    for keeper in (FactKeeper(embedder), FactKeeper(None)):
        for text in whereabouts:
            facts = await keeper.facts(text)
            assert facts and all(f.category == "credential" for f in facts), (text, facts)
        for text in ("Remember that my bank PIN is 4821", "记住：我的支付宝密码是 abc12345"):
            assert await keeper.facts(text) == []


def test_another_vector_space_never_reaches_the_head() -> None:
    class Api:
        model_key = "openai:text-embedding-3-small"

    assert not head_usable(Api())  # type: ignore[arg-type]
    assert not head_usable(None)


async def test_a_memory_written_by_hand_is_filed_as_extraction_files_it(embedder: CachedEmbedder) -> None:
    from memory.head.filing import file_category
    from memory.text.category import category_for

    text = "my daughter's birthday is 3 May"
    (vector,) = await embedder.embed_passages([text])
    assert await file_category(text, embedder) == load_head().categories(vector)[0]
    assert await file_category(text, None) == category_for(text)  # no embedder: the keyword rule
    assert await file_category("the wifi password is on the fridge", embedder) == "credential"


@dataclass(frozen=True, slots=True)
class _Listening(Head):
    """The shipped head, noting the texts its n-gram term reads (a list: the dataclass is frozen)."""

    heard: list[str] | None = None

    def message_grams(self, lang: str, message: str) -> float:
        assert self.heard is not None
        self.heard.append(message)
        return Head.message_grams(self, lang, message)


async def test_the_n_gram_term_reads_the_whole_message_it_was_fitted_on(
    embedder: CachedEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Chinese n-gram term was fitted on whole training messages; a clause of a message of several
    sentences is weighed with the whole message's n-grams, as with its query vector (``said_in``)."""
    text = "周末一般在家躺着。我家猫叫团子，三岁了"
    assert len({c.sentence for c in candidates(text)} - {text}) >= 1  # its clauses' sentences are not it
    shipped = load_head()
    heard: list[str] = []
    listening = _Listening(**{f.name: getattr(shipped, f.name) for f in fields(Head)}, heard=heard)
    monkeypatch.setattr(model, "load_head", lambda: listening)
    await FactKeeper(embedder).facts(text)
    assert heard and set(heard) == {text}


async def test_a_statement_that_opens_like_a_question_is_read_by_the_gate(embedder: CachedEmbedder) -> None:
    """Round 46: a sentence the rule reads as asking only from its first words is kept when the head's gate
    reads it as telling (``verdict.reads_as_told``), and stays a question when it reads it as asking."""
    keeper = FactKeeper(embedder)
    for text in ("did my apprenticeship at a garage in Derby", "did my masters in Glasgow, finished in 2016"):
        assert [f.content for f in await keeper.facts(text)] == [text]
    for text in ("did my sister ring", "did the plumber come today", "does my insurance cover flood damage"):
        assert await keeper.facts(text) == [], text
    assert await FactKeeper(None).facts("did my apprenticeship at a garage in Derby") == []
