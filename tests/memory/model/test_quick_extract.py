"""Quick rule-based extraction: which sentences become facts, with what category, and how they supersede."""

from __future__ import annotations

import pytest

from memory.engine import MemoryEngine
from memory.model.quick_extract import (
    IMPORTANCE,
    MAX_SENTENCE_CHARS,
    PREFERENCES_TOPIC,
    quick_fact,
    quick_facts,
    split_clauses,
    split_sentences,
    without_filler,
)

OWNER = "alice"


def _one(text: str, projects: frozenset[str] = frozenset()):
    facts = quick_facts(text, projects)
    assert len(facts) == 1, f"{text!r} gave {[f.content for f in facts]}"
    return facts[0]


# (sentence, category, topic, predicate)
POSITIVES = [
    ("I prefer Go for backend services.", "config", PREFERENCES_TOPIC, None),
    ("My name is Alice", "identity", "_general", "name"),
    ("my name's Bob.", "identity", "_general", "name"),
    ("Call me Al", "identity", "_general", "name"),
    ("You can call me Al.", "identity", "_general", "name"),
    ("I live in Berlin.", "identity", "_general", "lives_in"),
    ("Btw, I live in Munich now", "identity", "_general", "lives_in"),
    ("I moved to Paris", "identity", "_general", "lives_in"),
    ("I work at Google.", "identity", "_general", "works_at"),
    ("I'm a backend engineer.", "identity", "_general", "occupation"),
    ("I'm from Canada", "identity", "_general", "from"),
    ("I was born on May 3, 1990", "identity", "_general", "birthday"),
    ("I'm allergic to peanuts.", "identity", "_general", None),
    ("My favourite color is blue", "config", PREFERENCES_TOPIC, "favourite:color"),
    ("My favorite editor is Vim.", "config", PREFERENCES_TOPIC, "favourite:editor"),
    ("I use Neovim with tmux", "config", "_general", None),
    ("I like green tea", "config", PREFERENCES_TOPIC, None),
    ("I love hiking in the Alps!", "config", PREFERENCES_TOPIC, None),
    ("I hate Mondays", "config", PREFERENCES_TOPIC, None),
    ("I always write tests first.", "config", PREFERENCES_TOPIC, None),
    ("I never use tabs", "config", PREFERENCES_TOPIC, None),
    ("Please always reply in Chinese", "config", PREFERENCES_TOPIC, "reply_language"),
    ("We decided to use Postgres for storage.", "decision", "_general", None),
    ("I went to Tokyo last month.", "event", "_general", None),
    ("I have two cats", "identity", "_general", None),
    ("My sister is a doctor.", "identity", "_general", None),
    ("I like tea today", "temp", "_general", None),
    ("I work from home", "identity", "_general", None),
    ("我叫小明", "identity", "_general", "name"),
    ("叫我小明就好", "identity", "_general", "name"),
    ("我住在杭州。", "identity", "_general", "lives_in"),
    ("我现在住在杭州", "identity", "_general", "lives_in"),
    ("我搬到了上海", "identity", "_general", "lives_in"),
    ("我在字节工作", "identity", "_general", "works_at"),
    ("我的生日是5月3日", "identity", "_general", "birthday"),
    ("我是后端工程师", "identity", "_general", "occupation"),
    ("我是北京人", "identity", "_general", "from"),
    ("我对花生过敏", "identity", "_general", None),
    ("我喜欢喝咖啡", "config", PREFERENCES_TOPIC, None),
    ("我不吃辣", "config", PREFERENCES_TOPIC, None),
    ("我最喜欢的颜色是蓝色", "config", PREFERENCES_TOPIC, "favourite:颜色"),
    ("我用vim写代码", "config", "_general", None),
    ("请用中文回复我", "config", PREFERENCES_TOPIC, "reply_language"),
    ("我们决定用Go写后端", "decision", "_general", None),
    ("我昨天去了医院", "event", "_general", None),
    ("我有两只猫", "identity", "_general", None),
    ("我今天不吃辣", "temp", "_general", None),
]


@pytest.mark.parametrize(("text", "category", "topic", "predicate"), POSITIVES)
def test_positive_sentences(text: str, category: str, topic: str, predicate: str | None) -> None:
    fact = _one(text)
    assert (fact.category, fact.topic, fact.predicate) == (category, topic, predicate)
    assert fact.importance == IMPORTANCE[category]
    assert fact.subject == ("user" if predicate else None)
    assert fact.project == "_global"
    assert fact.tier == 2
    assert fact.content == text.strip()  # the sentence as said, never rewritten


NEGATIVES = [
    # questions
    "What is my name?",
    "Do you remember where I live",
    "Where do I work",
    "你记得我叫什么吗",
    "我喜欢什么",
    "我住在哪里？",
    "I live in Berlin?",
    # greetings and acknowledgements
    "Hello!",
    "Hi there",
    "你好",
    "谢谢",
    "ok",
    "好的",
    # about the assistant, or to it
    "You are great",
    "你真聪明",
    "I love you",
    "I think you're wrong",
    "我喜欢你",
    # chit-chat that states nothing lasting
    "I like it",
    "I see",
    "I don't know",
    "我知道了",
    "我觉得还行",
    "I have a question",
    # a mood or a moment, said about today: chit-chat, not kept
    "I'm tired today",
    "今天我很累",
    "I'm in a meeting right now",
    "My question is about Python",
    "I'm going to ask something",
    "I'm not a doctor",
    "remember when we went to Rome",
    # look-alikes
    "我住院了",
    "我叫了外卖",
    "我在努力工作",
    "我在家工作",
    "我还没决定",
    "I'd like a coffee",
    # code and secrets
    "x = foo()",
    "def foo(): return 1",
    "```python\nI like = 1\n```",
    "My password is hunter2",
    "我的密码是123456",
    # too short
    "I am",
    "我是",
]


@pytest.mark.parametrize("text", NEGATIVES)
def test_negative_sentences(text: str) -> None:
    assert quick_facts(text) == []


def test_too_long_sentence_is_skipped_but_a_shorter_one_is_kept() -> None:
    tail = "x" * (MAX_SENTENCE_CHARS - len("I live in "))
    assert quick_fact("I live in " + tail) is not None
    assert quick_fact("I live in " + tail + "x") is None


def test_multi_sentence_message_is_split_and_each_sentence_judged() -> None:
    text = "Hi! My name is Alice. I live in Berlin and build Node.js apps. What's the weather like?"
    facts = quick_facts(text)
    assert [f.content for f in facts] == ["My name is Alice.", "I live in Berlin and build Node.js apps."]
    assert [f.predicate for f in facts] == ["name", "lives_in"]


def test_chinese_message_is_split_on_chinese_punctuation() -> None:
    facts = quick_facts("我叫小明，今年25岁。我喜欢喝咖啡！你觉得呢？我住在杭州；我在字节工作\n好的")
    assert [f.content for f in facts] == [
        "我叫小明，今年25岁。",
        "我喜欢喝咖啡！",
        "我住在杭州",
        "我在字节工作",
    ]


def test_split_keeps_dotted_names_and_numbers_whole() -> None:
    assert split_sentences("I use Node.js 3.5 daily. Done") == ["I use Node.js 3.5 daily.", "Done"]


def test_repeated_sentence_gives_one_fact() -> None:
    assert len(quick_facts("I like tea. I like tea!")) == 1


def test_remember_requests_are_kept_with_raised_importance() -> None:
    plain = _one("Remember that I park on level 3.")
    assert (plain.category, plain.importance) == ("event", 0.8)
    zh = _one("记住，我不吃香菜")
    assert (zh.category, zh.topic) == ("config", PREFERENCES_TOPIC)
    identity = _one("Please remember my name is Alice")
    assert (identity.category, identity.predicate, identity.importance) == ("identity", "name", 1.0)


def test_known_project_named_in_the_sentence_becomes_the_project() -> None:
    projects = frozenset({"tierclaw", "stellarlink", "星链"})
    assert _one("We decided to use Postgres for tierclaw.", projects).project == "tierclaw"
    assert _one("我们决定星链用React", projects).project == "星链"
    assert _one("We decided to use Postgres.", projects).project == "_global"
    # a project name inside another word is not a mention
    assert _one("We decided to use tierclawx.", projects).project == "_global"


def test_identity_beats_a_time_word_but_another_fact_about_today_becomes_temp() -> None:
    assert _one("I moved to Paris today.").category == "identity"
    assert _one("I have a dentist appointment today").category == "temp"
    assert _one("我今天不吃辣").category == "temp"


async def test_a_later_move_supersedes_the_old_city_through_the_engine(engine: MemoryEngine) -> None:
    old = await engine.write(OWNER, _one("I live in Berlin."))
    new = await engine.write(OWNER, _one("I moved to Paris"))
    assert new.action == "superseded" and new.replaced_id == old.id
    live = [m.content for m in await engine.list(OWNER)]
    assert live == ["I moved to Paris"]
    archived = await engine.get(OWNER, old.id)
    assert archived is not None and archived.is_archived and archived.superseded_by == new.id


async def test_chinese_name_supersedes_and_the_same_name_merges(engine: MemoryEngine) -> None:
    first = await engine.write(OWNER, _one("我叫小明"))
    again = await engine.write(OWNER, _one("我叫小明。"))
    assert again.action == "merged" and again.id == first.id
    renamed = await engine.write(OWNER, _one("My name is Ming"))
    assert renamed.action == "superseded" and renamed.replaced_id == first.id


async def test_two_different_likes_do_not_supersede_each_other(engine: MemoryEngine) -> None:
    for fact in quick_facts("I like tea. I like hiking."):
        await engine.write(OWNER, fact)
    assert sorted(m.content for m in await engine.list(OWNER)) == ["I like hiking.", "I like tea."]


def test_birthday_needs_a_date() -> None:
    assert _one("My birthday is May 3rd").predicate == "birthday"
    assert _one("我的生日是五月三号").predicate == "birthday"
    for text in ("My birthday is tomorrow", "我的生日是下个月"):
        assert _one(text).predicate is None


# ------------------------------------------------------------------------------- compound sentences


@pytest.mark.parametrize(
    ("text", "facts"),
    [
        ("我在杭州做后端开发，喜欢用Go", [("我在杭州做后端开发", "identity"), ("我喜欢用Go", "config")]),
        (
            "我住在上海，在字节工作，喜欢打篮球",
            [("我住在上海", "identity"), ("我在字节工作", "identity"), ("我喜欢打篮球", "config")],
        ),
        ("我叫小王；我养了一只猫", [("我叫小王", "identity"), ("我养了一只猫", "identity")]),
        (
            "I live in Lyon and work as a nurse",
            [("I live in Lyon", "identity"), ("I work as a nurse", "identity")],
        ),
        ("I love hiking and I hate running", [("I love hiking", "config"), ("I hate running", "config")]),
        ("My name is Alice, I am a nurse", [("My name is Alice", "identity"), ("I am a nurse", "identity")]),
        (
            "I moved to Paris but my sister still lives in Rome",
            [("I moved to Paris", "identity"), ("my sister still lives in Rome", "identity")],
        ),
        # A greeting or filler first is not part of any fact (a new user's first message).
        (
            "Hi, I live in Lyon and work as a nurse",
            [("I live in Lyon", "identity"), ("I work as a nurse", "identity")],
        ),
        ("对了，我住在上海，喜欢打篮球", [("我住在上海", "identity"), ("我喜欢打篮球", "config")]),
    ],
)
def test_a_compound_sentence_gives_one_fact_per_clause(text: str, facts: list[tuple[str, str]]) -> None:
    assert [(f.content, f.category) for f in quick_facts(text)] == facts


@pytest.mark.parametrize(
    "text", ["I like tea and coffee", "I live in Berlin, Germany", "I bought apples, pears and milk"]
)
def test_a_list_inside_one_fact_is_not_split(text: str) -> None:
    assert [f.content for f in quick_facts(text)] == [text]


def test_a_clause_that_continues_the_subject_gets_it_and_keeps_its_predicate() -> None:
    lives, works = quick_facts("I live in Lyon and work at the Hospital")
    assert (lives.subject, lives.predicate) == ("user", "lives_in")
    assert (works.content, works.predicate) == ("I work at the Hospital", "works_at")


def test_a_greeting_before_one_statement_stays_as_said() -> None:
    assert [f.content for f in quick_facts("Hi, I live in Lyon")] == ["Hi, I live in Lyon"]
    assert (
        without_filler("Hey there. OK so I'm allergic to peanuts")
        == "Hey there. OK so I'm allergic to peanuts"
    )
    assert without_filler("OK so I'm allergic to peanuts") == "I'm allergic to peanuts"
    assert without_filler("嗯，我养了一只猫") == "我养了一只猫"


def test_a_filler_before_something_else_leaves_the_sentence_as_it_is() -> None:
    assert without_filler("Well, Tom lives in Rome") == "Well, Tom lives in Rome"
    assert without_filler("His name is Tom") == "His name is Tom"  # "hi" is not a word of "his"


def test_split_clauses_leaves_sentences_that_do_not_start_in_the_first_person() -> None:
    assert split_clauses("Tom and I went to the zoo") == ["Tom and I went to the zoo"]
    assert split_clauses("我在杭州做后端开发，喜欢用Go") == ["我在杭州做后端开发", "我喜欢用Go"]
