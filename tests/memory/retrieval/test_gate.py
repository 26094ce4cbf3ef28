"""memory.retrieval.gate.should_retrieve, one rule family at a time, in Chinese and English (the rules as
they are; docs/architecture.md, "Retrieval", says why each family exists)."""

from __future__ import annotations

import pytest

from memory.retrieval.gate import MIN_CHARS, personal_question, should_retrieve

# ------------------------------------------------------------------------------------------ skipped


@pytest.mark.parametrize("text", ["ok", "好", "嗯嗯", "hi!", " " * 10, "a" * (MIN_CHARS - 1)])
def test_messages_shorter_than_the_minimum_never_fire(text: str) -> None:
    assert not should_retrieve(text)


@pytest.mark.parametrize(
    "text", ["thanks", "Thank you!", "got it.", "continue", "好的", "知道了", "没问题", "收到！", "alright~"]
)
def test_bare_acknowledgements_never_fire(text: str) -> None:
    assert not should_retrieve(text)


@pytest.mark.parametrize(
    "text",
    [
        "```python\ndef f(x):\n    return my_value + x\n```",
        "def load(path):\n    return open(path).read()\nimport os\nreturn my_config",
        "```\n我的配置文件在这里，帮我看看哪里错了\n```",
    ],
)
def test_code_heavy_messages_never_fire(text: str) -> None:
    assert not should_retrieve(text)


@pytest.mark.parametrize(
    "text",
    [
        "How are you doing today?",
        "That sounds good to me.",
        "Nice weather here",
        "哈哈哈太好笑了",
        "你好呀，在吗",
    ],
)
def test_small_talk_does_not_fire(text: str) -> None:
    assert not should_retrieve(text)


# ------------------------------------------------------------------------------------------ Chinese


@pytest.mark.parametrize(
    "text", ["我的猫叫什么来着", "你记得我们说的方案吗", "上次那家店叫什么", "昨天的会议怎么样"]
)
def test_zh_memory_cues_fire(text: str) -> None:
    assert should_retrieve(text)


@pytest.mark.parametrize(
    "text", ["推荐一个我喜欢的电影", "周末的计划定了没", "项目进度如何", "我妈妈的生日快到了"]
)
def test_zh_personal_topics_fire(text: str) -> None:
    assert should_retrieve(text)


def test_zh_first_person_narrative_fires() -> None:
    assert should_retrieve("今天我去公园散步，看到很多人在跳舞，心情很好")


def test_zh_first_person_question_fires_when_long_enough() -> None:
    assert should_retrieve("我应该穿哪件衣服去面试呢")


def test_zh_short_first_person_statement_without_a_cue_does_not_fire() -> None:
    assert not should_retrieve("我饿了想吃饭")


# ------------------------------------------------------------------------------------------ English


@pytest.mark.parametrize(
    "text",
    ["Do you remember what we discussed?", "What did I tell you last week?", "I mentioned it earlier"],
)
def test_en_memory_cues_fire(text: str) -> None:
    assert should_retrieve(text)


@pytest.mark.parametrize(
    "text", ["What is my favourite colour", "Change the settings please", "How is the project"]
)
def test_en_personal_topics_fire(text: str) -> None:
    assert should_retrieve(text)


@pytest.mark.parametrize(
    "text",
    [
        "What did Caroline research?",
        "When was the trip to Lisbon?",
        "Where is my passport?",
        "Is Marco coming?",
    ],
)
def test_en_questions_about_a_name_a_past_event_or_the_users_things_fire(text: str) -> None:
    assert should_retrieve(text)


def test_en_first_person_talk_about_life_fires() -> None:
    assert should_retrieve("I feel nervous about tomorrow")
    assert should_retrieve("I had a fight with my sister")


def test_en_possessive_narrative_fires_when_long_enough() -> None:
    assert should_retrieve("my garden finally has tomatoes growing along the whole fence this summer")
    assert not should_retrieve("my bad, sorry about that")


def test_en_fewer_than_three_words_do_not_fire() -> None:
    assert not should_retrieve("Caroline?")


# ------------------------------------------------------------------------------------------ projects


def test_a_known_project_named_in_any_language_fires() -> None:
    assert should_retrieve("any news on orion", frozenset({"Orion"}))
    assert should_retrieve("星火进展如何", frozenset({"星火"}))
    assert not should_retrieve("any news on orion")


# ------------------------------------------------------------------ a person asking about themselves


@pytest.mark.parametrize(
    "text",
    [
        "What am I allergic to?",
        "Where do I live?",
        "where do I live",
        "What's my sister's name?",
        "Do I have any siblings?",
        "Have I been to Lisbon?",
        "When did I start lifting weights?",
        "Which books have I read?",
        "How old am I?",
    ],
)
def test_en_first_person_questions_fire(text: str) -> None:
    assert should_retrieve(text)


@pytest.mark.parametrize(
    "text",
    [
        "我住在哪？",
        "我住哪",
        "我对什么过敏？",
        "我几点的飞机",
        "我养过哪些宠物",
        "我们约在哪里？",
        "我一共去过几次北京",
    ],
)
def test_zh_first_person_questions_fire_however_short(text: str) -> None:
    assert should_retrieve(text)


@pytest.mark.parametrize(
    "text",
    [
        "What do you know about me?",
        "what do you remember about me",
        "你记得我什么",
        "我跟你说过什么",
        "关于我你知道多少",
        "你了解我吗",
    ],
)
def test_questions_about_what_the_assistant_knows_of_the_user_fire(text: str) -> None:
    assert should_retrieve(text)


@pytest.mark.parametrize(
    "text", ["Remind me what I ordered", "tell me again where I parked", "提醒我一下周末的安排", "提醒我带伞"]
)
def test_imperative_recall_fires(text: str) -> None:
    assert should_retrieve(text)


# Small talk with first-person words: offers, permissions, feelings about the moment, polite forms.
SMALL_TALK = [
    "Can I help you?",
    "May I ask you a question?",
    "Could I have the bill, please?",
    "Shall I call a taxi for you?",
    "I think so.",
    "How are you?",
    "What do you do for fun?",
    "What time is it now?",
    "Nice to meet you!",
    "That's a great idea.",
    "Where is the nearest station?",
    "I'm fine, thanks. And you?",
    "我也是",
    "你呢？",
    "我呢？",
    "哈哈哈我笑死了",
    "你在干嘛呀",
    "今天天气真好",
    "我饿了想吃饭",
    "好的我知道啦",
]


@pytest.mark.parametrize("text", SMALL_TALK)
def test_small_talk_with_first_person_words_stays_quiet(text: str) -> None:
    assert not should_retrieve(text)


# Everyday questions of every form (issue 26), both languages, one family per test.
@pytest.mark.parametrize(
    "text",
    [
        "Can I eat peanuts?",
        "Should I drink coffee after six?",
        "Am I allergic to anything?",
        "Do I smoke?",
        "我能吃海鲜吗？",
        "我是不是对花粉过敏？",
        "我喝咖啡吗",
        "我腰不好吗？",
    ],
)
def test_yes_no_questions_about_oneself_fire(text: str) -> None:
    assert should_retrieve(text)


@pytest.mark.parametrize(
    "text",
    [
        "Who's our plumber?",
        "Do we have a cat?",
        "Are we going anywhere in May?",
        "Is cheese OK for me?",
        "我们的车位号多少？",
        "我们家狗叫什么？",
    ],
)
def test_questions_about_the_household_fire(text: str) -> None:
    assert should_retrieve(text)


@pytest.mark.parametrize(
    "text",
    [
        "Is there anything I should avoid?",
        "Any food I can't have?",
        "Anything I'm supposed to bring?",
        "有什么我该注意的？",
        "有什么药我不能吃？",
    ],
)
def test_anything_i_should_fires(text: str) -> None:
    assert should_retrieve(text)


@pytest.mark.parametrize("text", ["My boss?", "My dentist?", "Our vet?", "我老板？", "我的医生？"])
def test_short_forms_fire(text: str) -> None:
    assert should_retrieve(text)


@pytest.mark.parametrize(
    "text",
    [
        "How old is the cat?",
        "When is the rent due?",
        "Where are the spare keys?",
        "狗怕什么？",
        "车险哪天到期？",
        "护照还有效吗？",
        "王磊是干什么的？",
        "小美现在住在哪？",
    ],
)
def test_questions_about_everyday_things_and_people_fire(text: str) -> None:
    assert should_retrieve(text)


# Small talk that looks like those forms: offers, the listener's things, general knowledge.
EVERYDAY_SMALL_TALK = [
    "说我吗？",
    "熊猫是什么？",
    "今天想去看看海底的金鱼吗",
    "Where is the nearest bank?",
    "How much is the ticket?",
    "Can I ask you something?",
    "Could I take a message?",
    "My?",
    "你多大了？",
    "你是干什么的？",
    "今天天气怎么样？",
    "我呢？",
    "煮鸡蛋要几分钟？",
]


@pytest.mark.parametrize("text", EVERYDAY_SMALL_TALK)
def test_small_talk_in_everyday_forms_stays_quiet(text: str) -> None:
    assert not should_retrieve(text)


@pytest.mark.parametrize(
    "text",
    [
        "Can I eat prawns?",
        "Who's our vet?",
        "My boss?",
        "How old is Mia?",
        "What do I do for a living?",
        "我能吃海鲜吗？",
        "我老板？",
        "狗怕什么？",
        "王磊是干什么的？",
    ],
)
def test_personal_questions_are_recognised(text: str) -> None:
    assert personal_question(text)


@pytest.mark.parametrize(
    "text",
    [
        "How are you?",
        "What's your name, Anna?",
        "I went to Lyon last week.",
        "你多大了？",
        "今天天气怎么样？",
        "我今天很开心",
        "我什么都知道",
        "给我推荐个色号好吗？",
        "你知道我在想什么吗？",
        "我也想去。在哪里？",
        "Well, I was thinking that maybe we could go to the cinema on Friday, and then after that "
        "we could have dinner somewhere nice if you want, what do you think?",
    ],
)
def test_small_talk_statements_and_long_turns_are_not_personal_questions(text: str) -> None:
    assert not personal_question(text)


@pytest.mark.parametrize(
    "text",
    ["你叫什么名字？", "你喜欢音乐吗？", "我该怎么称呼你？", "能帮我个忙吗？", "我也不知道，你觉得呢？"],
)
def test_chinese_questions_to_the_listener_stay_quiet(text: str) -> None:
    assert not should_retrieve(text)


@pytest.mark.parametrize("text", ["你还记得我喜欢什么吗？", "你知道我住哪吗？", "你记得我的生日吗"])
def test_chinese_questions_to_the_listener_about_the_person_still_fire(text: str) -> None:
    assert should_retrieve(text)
