"""The gate's rules (memory/retrieval/gate.py): what a rule can know refuses memory in every mode; without
the embedder short general rules decide the rest; the overview question is recognised."""

from __future__ import annotations

import pytest

from memory.retrieval.gate import (
    asks,
    asks_about_themselves,
    personal_question,
    should_retrieve,
    to_listener,
    topic_question,
)

NOTHING_TO_RECALL = [
    "",
    "  ",
    "ok",
    "hi",
    "Thanks!",
    "thank you so much",
    "Good morning!",
    "好的",
    "谢谢",
    "嗯嗯",
    "早上好",
    "😂😂😂",
    "👍",
    "谢谢[抱拳]",  # a chat app's text emoji: thanks, emoji alone (memory/text/text_emoji.py)
    "[捂脸][捂脸]",
    "thanks[Smile]",
    "ok [ThumbsUp]",
    "/memory",
    "/forget 3",
    "```python\nprint(1)\n```",
    "import os\ndef f():\n    return os.getcwd()\nprint(f())",
]


@pytest.mark.parametrize("text", NOTHING_TO_RECALL)
@pytest.mark.parametrize("learned", [True, False])
def test_what_a_rule_can_know_never_fires(text: str, learned: bool) -> None:
    assert not should_retrieve(text, learned=learned)


@pytest.mark.parametrize(
    "text", ["how was your weekend?", "what's the capital of France?", "我去超市了", "I'm so bored lol"]
)
def test_with_the_head_the_rules_let_everything_else_through(text: str) -> None:
    assert should_retrieve(text, learned=True)


@pytest.mark.parametrize(
    "text",
    [
        "Where do I live?",
        "what's my boss called",
        "my dentist?",
        "Can I eat prawns?",
        "do we have a dog?",
        "我住在哪？",
        "我对什么过敏",
        "我老板叫啥",
        "我能喝牛奶吗",
        "Remember what I told you about the trip?",
        "上次我们聊到哪了",
        "I went to see my sister yesterday and we talked about our mum for hours",
        "我最近工作压力特别大，每天都加班到很晚",
    ],
)
def test_keyword_only_fires_on_the_person_asking_or_telling_about_their_life(text: str) -> None:
    assert should_retrieve(text)


@pytest.mark.parametrize(
    "text",
    [
        "how are you?",
        "what was that?",
        "为啥？",
        "tell me a joke",
        "你叫什么名字？",
        "今天天气不错",
        "哈哈哈太好笑了",
    ],
)
def test_keyword_only_stays_quiet_on_small_talk(text: str) -> None:
    assert not should_retrieve(text)


def test_a_known_project_named_fires_without_the_head() -> None:
    assert should_retrieve("any news on Falcon", frozenset({"Falcon"}))
    assert not should_retrieve("any news on that", frozenset({"Falcon"}))


@pytest.mark.parametrize(
    "text",
    [
        "Where do I live?",
        "my boss?",
        "can I eat nuts",
        "我老板？",
        "我妈生日哪天",
        "tell me my cousin's new address",
        "remind me what the boiler code is",  # what one is reminded of is one's own
        "Tell me who the lake property belongs to.",
        "跟我说说我早餐一般喝什么",
    ],
)
def test_short_questions_about_oneself_are_personal(text: str) -> None:
    assert personal_question(text)


@pytest.mark.parametrize(
    "text",
    [
        "How are you?",
        "Do you like music?",
        "I live in Lyon.",
        "你叫什么名字？",
        "你喜欢我吗",
        "我今天好累",
        "tell me Einstein's birthday",  # the "me" of a request is who is told, not what is asked about
        "show me how to tie a tie",
        "帮我查下明天北京天气",
    ],
)
def test_questions_to_the_listener_and_statements_are_not(text: str) -> None:
    assert not personal_question(text)


@pytest.mark.parametrize(
    "text",
    ["What do you know about me?", "who am I", "tell me about myself", "你记得我什么？", "关于我你知道哪些"],
)
def test_the_overview_question_is_recognised(text: str) -> None:
    assert asks_about_themselves(text)


def test_an_ordinary_question_is_not_the_overview() -> None:
    assert not asks_about_themselves("What do you know about Paris?")


@pytest.mark.parametrize("text", ["What did Caroline research?", "When is Mia's recital?"])
def test_keyword_only_fires_on_a_short_question_about_someone_by_name(text: str) -> None:
    assert should_retrieve(text)


@pytest.mark.parametrize(
    ("text", "listener"),
    [
        ("What are your weaknesses?", True),
        ("Shall we go for a walk?", True),
        ("Why don't we order pizza?", True),
        ("你呢？", True),
        ("Do you remember where I parked?", False),
        ("Where did I park?", False),
    ],
)
def test_a_question_to_the_listener_or_a_suggestion_is_not_about_oneself(text: str, listener: bool) -> None:
    assert to_listener(text) is listener
    if listener:
        assert not personal_question(text)


@pytest.mark.parametrize(
    "text", ["What's the parrot's name?", "where do the car keys go?", "甜甜几年级了？", "狗怕什么？"]
)
def test_keyword_only_fires_on_a_short_question_about_a_thing_or_someone(text: str) -> None:
    assert topic_question(text) and should_retrieve(text)
    assert should_retrieve(text, topics=False) is personal_question(text)


@pytest.mark.parametrize("text", ["What is it?", "那是什么？", "How was your day?", "怎么了？", "Why not?"])
def test_a_question_about_what_was_just_said_or_to_the_listener_is_no_topic(text: str) -> None:
    assert not topic_question(text)


@pytest.mark.parametrize(
    "text",
    [
        "What did I tell you about Mia and the dentist?",
        "what did i say about the boiler and the landlord",
        "Have I mentioned my knee and the physio?",
        "我跟你说过小雨和学校的什么事？",
    ],
)
def test_keyword_only_fires_on_what_the_person_told_before(text: str) -> None:
    # The commonest recall question: asked of the listener, but about what the person said.
    assert should_retrieve(text) and not to_listener(text) and personal_question(text)


# Written for this test: questions typed without their mark in a form a grammar names.
@pytest.mark.parametrize(
    "text",
    [
        "车险续了没",
        "表姐的签证下来了没有啊",
        "寄给外婆的包裹到咗未",
        "老爹的医保卡办好了没得",
        "舅舅喝不喝白酒",
        "外婆的药换没换",
        "明早的会取消伐",
        "我的社保转过来冇",
        "侄女能喝牛奶不",
        "表哥读的是会计还是金融",
        "我舅妈姓么子",
        "外婆生日咋过",
        "我識唔識游水",
        "屋企有冇雪櫃",
        "阿妹而家喺邊",
        "我份糧邊日出",
        "張身份證續咗未",
        "個仔鍾意食咩",
        "whats my landlord called",
        "wheres the spare fob",
        "since when have i had the scooter",
        "my cousin lives where again",
        "the gym membership cancelled or not",
        "I forget which bin goes out tonight",
        "remind me what the boiler code is",
        "tell me my cousin's new address",
        "tell me Corey's work rotation again",  # one's own thing named by whose it is
        "remind me of my locker code",
        "pls tell me about our lease",
        "pull up my operator number for me",  # looked up, not told
        "look up Dad's NHS number",
        "给我说一下我最爱吃的那家肥肠粉",  # asking first to be told, or to have it looked up
        "给我说说我那个键盘的牌子",
        "帮我查下物业费一年交好多",
    ],
)
def test_a_question_typed_without_its_mark_in_a_common_form_asks(text: str) -> None:
    assert asks(text)


@pytest.mark.parametrize(
    "text",
    [
        "我还没",
        "车险已经续好了",
        "表姐没有签证",
        "不错不错",
        "不对不对，是周三",
        "我才不",
        "我家猫不咋掉毛",
        "小区没咋变",
        "他这人咋咋呼呼的",
        "我不",
        "唔該唔該",
        "我唔係本地人",
        "佢仲未到",
        "这个月手头没得钱了",
        "医保卡的事我还没得空去办",
        "我哋住喺旁邊",
        "我在那边等你",
        "一杯奶茶要四十蚊咋",
        "whatever you think",
        "I'm going to the wedding no matter what",
        "keep in mind when the bins go out it's a Tuesday",
        "the big oak by the gate, that's where",
        "however long it takes",
        "whoa",
        "remind me friday to call the plumber",
        "tell me a joke",
        "remind me to ring Jo's mum",
        "pull up the weather",
        "I told mum's friend about it",
        "提醒我明天交电费",  # sets a reminder
        "帮我写个周报",
        "跟我说话的那个人是我表哥",
        "告诉我妈了",  # told my mum
        "帮我查了下",
        "跟我说下周三要加班",
        "tell me it's going to be ok",
        "remind me it's bin day tomorrow",
        "dig up our potatoes this weekend",
    ],
)
def test_a_statement_with_those_words_does_not_ask(text: str) -> None:
    assert not asks(text)
