"""What the offline model keeps without the head (the keyword fallback of memory/model/quick_extract.py),
and the clauses it cuts (memory/model/clauses.py): whole, clean, each with its subject; supersede through
the engine by predicate. The head's verdicts are tested in tests/memory/head/."""

from __future__ import annotations

import pytest

from memory.engine import MemoryEngine
from memory.model.clauses import clauses, split_sentences, with_fragments
from memory.model.quick_extract import MAX_SENTENCE_CHARS, candidates, quick_facts

OWNER = "alice"


def _one(text: str, projects: frozenset[str] = frozenset()):
    facts = quick_facts(text, projects)
    assert len(facts) == 1, f"{text!r} gave {[f.content for f in facts]}"
    return facts[0]


@pytest.mark.parametrize(
    ("text", "content", "predicate"),
    [
        ("My name is Alice.", "My name is Alice", "name"),
        ("Btw, I live in Munich now", "I live in Munich now", "lives_in"),
        ("I moved to Paris", "I moved to Paris", "lives_in"),
        ("I work at Google.", "I work at Google", "works_at"),
        ("I'm allergic to peanuts.", "I'm allergic to peanuts", None),
        ("我叫小明", "我叫小明", "name"),
        ("对了，我住在杭州。", "我住在杭州", "lives_in"),
        ("我在字节工作", "我在字节工作", "works_at"),
        ("我对花生过敏", "我对花生过敏", None),
    ],
)
def test_first_person_statements_are_kept_clean(text: str, content: str, predicate: str | None) -> None:
    fact = _one(text)
    assert (fact.content, fact.predicate) == (content, predicate)
    assert fact.subject == ("user" if predicate else None)


@pytest.mark.parametrize(
    "text",
    [
        "Where do I live?",
        "我住在哪？",
        "我有猫吗",
        "Do you like music",
        "I think you're right",
        "haha I'm so dead lol",
        "My password is hunter2",
        "def f(): return 1",
        "ok",
        "The weather is nice",
        "天气不错",
    ],
)
def test_questions_the_listener_laughs_secrets_code_and_other_subjects_are_not_kept(text: str) -> None:
    assert quick_facts(text) == []


def test_a_chat_apps_text_emoji_is_not_code_but_an_index_is() -> None:
    """WeChat and Feishu write their emoji as a bracketed word ("[捂脸]"): after a Chinese clause it once
    read as an index ("a[i]") and the whole sentence was refused as code (round 38)."""
    from memory.model import quick_extract as quick

    said = "我家闺女这次月考进了四十名[大哭]"
    assert [c.sentence for c in quick.candidates(said)] == [said]
    assert quick.candidates("x = arr[0] 这行报错了") == []
    assert quick.candidates("我这行 print(items[i]) 报错了") == []


@pytest.mark.parametrize(
    "text",
    [
        "Yes, I have booked a room for the 24th.",
        "I'm sorry I'm so late, I had a really bad day.",
        "Kara, I had fun at the movies with you.",
        "好吧，我是下大雨去的",
        "I studied law. I worked in a bank. I moved to Leeds. I like tennis. I have a son.",
    ],
)
def test_a_turn_of_a_conversation_keeps_nothing_without_the_head(text: str) -> None:
    assert quick_facts(text) == []
    assert quick_facts("Remember that " + text)  # unless the person asked for it


def test_too_long_sentence_is_skipped_but_a_shorter_one_is_kept() -> None:
    tail = "x" * (MAX_SENTENCE_CHARS - len("I live in "))
    assert quick_facts("I live in " + tail)
    assert not quick_facts("I live in " + tail + "x")


def test_multi_sentence_message_is_split_and_each_sentence_judged() -> None:
    facts = quick_facts(
        "Hi! My name is Alice. I live in Berlin and build Node.js apps. What's the weather like?"
    )
    assert [f.content for f in facts] == ["My name is Alice", "I live in Berlin", "I build Node.js apps"]


def test_split_keeps_dotted_names_and_numbers_whole() -> None:
    assert split_sentences("I use Node.js 3.5 daily. Done") == ["I use Node.js 3.5 daily.", "Done"]


def test_a_title_before_a_name_ends_no_sentence() -> None:
    """Round 45: "Dr." before a name is not the end of a sentence; "St." may be, so it still splits."""
    assert split_sentences("Our vet is Dr. Shah on Mill Road. She is kind.") == [
        "Our vet is Dr. Shah on Mill Road.",
        "She is kind.",
    ]
    assert split_sentences("I live on Elm St. It is quiet.") == ["I live on Elm St.", "It is quiet."]


def test_repeated_sentence_gives_one_fact() -> None:
    assert len(quick_facts("I like tea. I like tea!")) == 1


def test_remember_requests_are_kept_with_raised_importance() -> None:
    plain = _one("Remember that the car park is on level 3.")
    assert (plain.content, plain.importance) == ("the car park is on level 3", 0.8)
    assert _one("记住，我不吃香菜").content == "我不吃香菜"


def test_known_project_named_in_the_sentence_becomes_the_project() -> None:
    projects = frozenset({"tierclaw", "星链"})
    assert _one("We decided to use Postgres for tierclaw.", projects).project == "tierclaw"
    assert _one("我们决定星链用React", projects).project == "星链"
    assert _one("We decided to use tierclawx.", projects).project == "_global"


async def test_a_later_move_supersedes_the_old_city_through_the_engine(engine: MemoryEngine) -> None:
    old = await engine.write(OWNER, _one("I live in Berlin."))
    new = await engine.write(OWNER, _one("I moved to Paris"))
    assert new.action == "superseded" and new.replaced_id == old.id
    assert [m.content for m in await engine.list(OWNER)] == ["I moved to Paris"]


async def test_chinese_name_supersedes_and_the_same_name_merges(engine: MemoryEngine) -> None:
    first = await engine.write(OWNER, _one("我叫小明"))
    again = await engine.write(OWNER, _one("我叫小明。"))
    assert again.action == "merged" and again.id == first.id
    renamed = await engine.write(OWNER, _one("My name is Ming"))
    assert renamed.action == "superseded" and renamed.replaced_id == first.id


# ------------------------------------------------------------------------------- clauses


@pytest.mark.parametrize(
    ("sentence", "parts"),
    [
        ("I live in Lyon and work as a nurse", ["I live in Lyon", "I work as a nurse"]),
        ("Hi, I live in Lyon and work as a nurse", ["I live in Lyon", "I work as a nurse"]),
        ("我在杭州做后端开发，喜欢用Go", ["我在杭州做后端开发", "我喜欢用Go"]),
        ("对了，我住在上海，喜欢打篮球", ["我住在上海", "我喜欢打篮球"]),
        # A clause after one about someone else stays with it (the subject is theirs, not the speaker's).
        ("My wife works as a nurse and loves hiking", ["My wife works as a nurse and loves hiking"]),
        ("我女儿叫小雨，今年五岁", ["我女儿叫小雨，今年五岁"]),
        ("I have a cat, called Pepper", ["I have a cat, called Pepper"]),
        # No clause begins with a conjunction or a marker.
        ("and I drive a Golf", ["I drive a Golf"]),
        (
            "So, I moved to Paris but my sister still lives in Rome",
            ["I moved to Paris", "my sister still lives in Rome"],
        ),
        ("还有我不吃辣，而且我对芒果过敏", ["我不吃辣", "我对芒果过敏"]),
        # A Chinese piece that opens with a noun names its own topic: it is not given "我" (issue 35).
        ("我不玩游戏，书倒是常看", ["我不玩游戏", "书倒是常看"]),
        # One that opens with a number or measure says more of the clause before.
        ("我不喝咖啡，一点都不行", ["我不喝咖啡，一点都不行"]),
        ("我们家在五楼，没有电梯", ["我们家在五楼，没有电梯"]),
        ("我在上海上班，三月份搬过来的", ["我在上海上班，三月份搬过来的"]),
        # The subject given is the speaker as the clause before named them: "we", "我们".
        ("we moved to Leeds and bought a van", ["we moved to Leeds", "we bought a van"]),
        ("我们住在城东，养了两只猫", ["我们住在城东", "我们养了两只猫"]),
        # "我的…" is the speaker's thing, not the speaker: what follows is about it, not "我用了四年".
        ("我的手机是三星的，用了四年还没坏", ["我的手机是三星的，用了四年还没坏"]),
        # A piece with a person of its own, or one opening with 是, is not the speaker's clause to complete.
        ("我们一个月见一次，一般是我飞过去", ["我们一个月见一次，一般是我飞过去"]),
        ("我说错了，是下周三", ["我说错了，是下周三"]),
        # A reason stays with its clause; a list glued on keeps its "and".
        ("I cycle to work, because parking is a pain", ["I cycle to work, because parking is a pain"]),
        ("I grow beans, peas, and carrots", ["I grow beans, peas, and carrots"]),
        # When or how much of the clause before stays with it; "no" before a noun is not an answer.
        ("I play five-a-side, every other thursday", ["I play five-a-side, every other thursday"]),
        ("I want short replies, no lists", ["I want short replies, no lists"]),
        ("we live on elm street, 4th floor", ["we live on elm street, 4th floor"]),
        # An English piece with "is", "has" or a modal after its first word has its own subject: no "I".
        ("We got married in 2019, deadline is in May", ["We got married in 2019", "deadline is in May"]),
        ("I moved in June, rent has gone up", ["I moved in June", "rent has gone up"]),
        # One with a subject pronoun after its first word is about that thing: it stays with its clause.
        (
            "I paid off the van and trailer we bought in 2022",
            ["I paid off the van and trailer we bought in 2022"],
        ),
        ("No, I live in Leeds", ["I live in Leeds"]),
        # Chinese has no space between words: a space between two Han characters is a pause, as a comma.
        ("我在杭州做后端开发 喜欢用Go", ["我在杭州做后端开发", "我喜欢用Go"]),
        ("我不玩游戏  书倒是常看", ["我不玩游戏", "书倒是常看"]),
        ("我女儿叫小雨 今年五岁", ["我女儿叫小雨 今年五岁"]),
        # A space beside a Latin word is not a pause ("我喜欢 Go 语言").
        ("我喜欢 Go 语言", ["我喜欢 Go 语言"]),
        # Round 45: a piece opening with a preposition, an indefinite pronoun or an -ing word says more of
        # the clause before; it is not given the speaker ("I in March", "I anything by…", "I coming back…").
        ("I joined the gym near work, in March", ["I joined the gym near work, in March"]),
        (
            "I read a lot of fantasy, anything by Robin Hobb",
            ["I read a lot of fantasy, anything by Robin Hobb"],
        ),
        (
            "we fly to Oslo on the 3rd, coming back the 10th",
            ["we fly to Oslo on the 3rd, coming back the 10th"],
        ),
        # "been" after the speaker's clause is "I've been" ("we've been"), not "I been".
        ("I teach piano, been doing it since 2015", ["I teach piano", "I've been doing it since 2015"]),
        # One word alone is no clause: it stays with the clause before, or opens the next one's subject.
        ("I got a new phone, Pixel, last week", ["I got a new phone, Pixel, last week"]),
        ("tom and i are moving to Bath", ["tom and i are moving to Bath"]),
        ("me, Ana and Luis share a flat in Porto", ["me, Ana and Luis share a flat in Porto"]),
        (
            "Our dentist is on Mill Road, Priya and I both see him",
            ["Our dentist is on Mill Road", "Priya and I both see him"],
        ),
    ],
)
def test_clauses_are_whole_clean_and_have_their_subject(sentence: str, parts: list[str]) -> None:
    assert clauses(sentence) == parts


def test_no_kept_fact_begins_with_a_conjunction() -> None:
    for text in ("and I drive a Golf", "but I live in Leeds", "而且我住在成都", "btw and I'm a nurse"):
        assert all(not f.content.lower().startswith(("and", "but", "btw", "而且")) for f in quick_facts(text))


def test_a_list_inside_one_fact_stays_one_fact() -> None:
    assert [f.content for f in quick_facts("I like tea and coffee")] == ["I like tea and coffee"]


def test_candidates_hold_each_clause_then_the_whole_sentence() -> None:
    (only,) = candidates("I live in Lyon and work as a nurse.")
    assert only.texts() == ["I live in Lyon", "I work as a nurse", "I live in Lyon and work as a nurse"]
    assert candidates("What do I do?") == []


def test_dictated_chinese_without_punctuation_is_cut_at_its_spaces() -> None:
    """Voice-to-text gives no punctuation, a space being the speaker's only pause: each clause is cut
    there, whole (no half-word) and clean (no leading or trailing space)."""
    text = "喂你好啊 我叫梁惠芳 今年六十六岁了属鼠的 你叫我芳姐就可以了"
    (sentence,) = split_sentences(text)
    parts = clauses(sentence)
    assert parts == ["喂你好啊", "我叫梁惠芳", "我今年六十六岁了属鼠的", "你叫我芳姐就可以了"]
    # Each clause is one of the pauses as said (the third given its subject "我"), never part of one.
    said = text.split()
    assert all(p in said or p.removeprefix("我") in said for p in parts)


def test_a_statement_before_a_question_is_judged_only_when_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    """Round 19: "we moved to Leeds in May, is there a good swimming club?" — the statement before the
    question word is a candidate when ``QUESTION_HEADS`` is on; a question from its first word or a
    question with no statement before it never is."""
    from memory.model import quick_extract as quick

    said = "We moved to Leeds in May, is there a good swimming club nearby?"
    assert quick.statement_before_question(said) == "We moved to Leeds in May"
    assert quick.statement_before_question("My brother is a vet — how do I ask him for advice?") == (
        "My brother is a vet"
    )
    assert quick.statement_before_question("What do I do, honestly?") is None
    assert quick.statement_before_question("ok, what now?") is None
    assert quick.statement_before_question("I moved to Leeds in May.") is None
    monkeypatch.setattr(quick, "QUESTION_HEADS", False)
    assert quick.candidates(said) == []
    monkeypatch.setattr(quick, "QUESTION_HEADS", True)
    (only,) = quick.candidates(said)
    assert only.sentence == "We moved to Leeds in May"


@pytest.mark.parametrize(
    ("said", "statement"),
    [
        ("我们上个月搬到了苏州，附近有什么好的游泳馆？", "我们上个月搬到了苏州"),
        # the question word stays in place, mid-clause: the first clause that asks ends the statement
        ("我家狗十岁了，是不是该换老年狗粮了，换哪种好？", "我家狗十岁了"),
        ("老婆下个月生日，送她什么好", None),  # no mark, no 吗: the sentence is not a question at all
        ("我們搬到台中了 附近有什麼好吃的？", "我們搬到台中了"),  # Traditional, a space for the comma
        ("你吃饭了吗，要不要一起去？", None),  # a question from the first clause
        ("要不要给猫换减肥猫粮？", None),
        ("好的，那明天见？", None),  # too short to be a statement
    ],
)
def test_a_chinese_statement_before_a_question(
    monkeypatch: pytest.MonkeyPatch, said: str, statement: str | None
) -> None:
    """Round 38: a Chinese question sentence that opens with a statement keeps the statement as a
    candidate (the question words of ``gate.asks`` mark where the question starts); off with
    ``QUESTION_HEADS``, as the shipped head's trainers run the cutter."""
    from memory.model import quick_extract as quick

    assert quick.statement_before_question(said) == statement
    if statement is not None:
        assert [c.sentence for c in quick.candidates(said)] == [statement]
        monkeypatch.setattr(quick, "QUESTION_HEADS", False)
        assert quick.candidates(said) == []


@pytest.mark.parametrize(
    "text",
    [
        "Did three years of night shifts at the bakery.",
        "Was in Porto last week for a wedding",
        "Can't eat shellfish, it makes me ill",
        "Have two sisters and a brother",
        "Am starting a new job on Monday",
        "Should be home by six tonight",
    ],
)
def test_a_statement_whose_subject_was_dropped_is_a_candidate(
    text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An auxiliary first with no subject after it ("Did three years …") is a statement the head decides,
    not a question the rules refuse; so is a contraction ("Can't …"). The trainers' rule (off, with their
    cutter: ``QUESTION_HEADS`` off too) refuses it: the shipped heads were trained with it."""
    from memory.model import quick_extract as quick

    assert [c.sentence for c in candidates(text)] == [text.rstrip(".")]
    monkeypatch.setattr(quick, "SUBJECTLESS_STATEMENTS", False)
    monkeypatch.setattr(quick, "QUESTION_HEADS", False)
    assert candidates(text) == []


@pytest.mark.parametrize(
    "text",
    [
        "Do you know a good plumber",
        "is the pharmacy open on Sundays",
        "did my parcel arrive",
        "Can u set a timer for ten minutes",
        "Have you seen my keys",
        "what a week",
    ],
)
def test_a_question_without_its_mark_is_still_refused(text: str) -> None:
    """A question word first, or an auxiliary followed by its subject (the inversion), asks."""
    assert candidates(text) == []


def test_a_fragment_sentence_stays_with_the_sentence_it_describes() -> None:
    """A sentence of one or two English words ("4-room.", "40 years.") kept alone means nothing: it goes
    on the sentence after it, or, with a number, the one before; a question is never glued, and a laugh
    at the end is not glued onto the statement before it."""
    assert [c.texts() for c in candidates("4-room. bought it from the council in 2009")] == [
        ["4-room, bought it from the council in 2009"]
    ]
    assert [c.texts() for c in candidates("my dad's old wok finally cracked. 40 years.")] == [
        ["my dad's old wok finally cracked, 40 years"]
    ]
    assert [c.texts() for c in candidates("I moved to Leeds. Why?")] == [["I moved to Leeds"]]
    assert [c.texts() for c in candidates("I moved to Leeds in May. lol")] == [["I moved to Leeds in May"]]
    assert with_fragments(["I moved to Leeds.", "lol."]) == ["I moved to Leeds.", "lol"]
    assert [c.texts() for c in candidates("I live in Lyon. I work as a nurse.")] == [
        ["I live in Lyon"],
        ["I work as a nurse"],
    ]
    # Only English: a short Chinese sentence is not glued ("四楼" is too short to be a candidate at all).
    assert with_fragments(["我住在上海。", "四楼。"]) == ["我住在上海。", "四楼。"]


@pytest.mark.parametrize(
    "text",
    [
        "My password is hunter2",
        "my pin is 4821",
        "bank PIN: 4821",
        "the api key is sk-abc",
        "the password is the name of my first dog",  # a copula before anything but a place: cautious
        "随申办的密码是 Chen590314",
        "家里的wifi密码是我的生日",
        "验证码834211",
        "PIN是4471",
        "hunter2 is my password",  # the value before the name
        "sunflower是我的wifi密码",
        "I changed my wifi password to sunflower",
        "我把支付宝密码改成 sunflower 了",
        "my password's still sunflower",
        "wifi password sunflower",  # no place said: cautious
        "our wifi password is on the fridge: sunflower",
        "the wifi password is under the router and it is sunflower",
        "the wifi password's on the router, it's BT-4471x",  # a second sentence glued on
        "my netflix login is dave.smith@example.com / Hunter22!",  # a login is a secret (round 47)
        "sunflower's our wifi password",  # "'s" before a determiner is "is"
        "我的淘宝登录账号是13812345678",
    ],
)
def test_a_sentence_holding_a_secrets_value_is_refused(text: str) -> None:
    from memory.model import quick_extract as quick

    assert quick.holds_secret(text)
    assert quick.candidates(text) == [] and quick.candidates("Remember that " + text) == []


@pytest.mark.parametrize(
    "text",
    [
        "The wifi password is written on the fridge",
        "my student portal password is saved in chrome on my laptop",
        "all my passwords are in bitwarden",
        "家里wifi密码贴在路由器背面",
        "支付宝密码写在红本子最后一页",
        "the router password is printed on the back, next to the serial",
        "银行卡密码记在蓝色本子第3页",
        "I keep my nan's rolling pin on the top shelf",  # not a secret's name at all
        "we never tell anybody yet so keep it secret",
    ],
)
def test_where_a_secret_is_kept_is_a_fact_like_any_other(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Round 40: only a value is refused (``SECRET_WHEREABOUTS``); the memory model is told the same
    (``prompts._SECRET_RULE``). Off, as the shipped head's trainers run the cutter, every sentence naming a
    secret is refused — "pin" and "secret" as any word too."""
    from memory.model import quick_extract as quick

    assert not quick.holds_secret(text)
    assert [c.sentence for c in quick.candidates(text)] == [text]
    monkeypatch.setattr(quick, "SECRET_WHEREABOUTS", False)
    assert quick.holds_secret(text) and quick.candidates(text) == []


@pytest.mark.parametrize(
    ("text", "refused"),
    [
        ("my security answer is fluffy", True),
        ("the answer to my security question is Whiskers", True),
        ("my memorable word for the bank is sunflower", True),
        ("密保问题的答案是小白", True),
        ("my security questions are written in the back of my diary", False),
        ("all my passwords are in 1Password", False),  # a product named with a digit after a place word
        ("the wifi password is saved in the 1Password app", False),
        ("密码都存在1Password里", False),
        ("passwords are in 1Password, the master one is hunter22", True),  # a value elsewhere still refuses
        ("the pin is on the back of the card, 4471", True),
        ("for the door code punch in 4471 then hash", True),  # a number after a place word is a value
        ("the alarm code is on a sticky note with 4471 on it", True),
        ("my password ends in 88X2", True),
        ("我的安全问题答案是小白", True),
        ("my security-question answer is Rover", True),
    ],
)
def test_a_security_answer_is_a_secret_and_a_place_named_with_digits_is_not_a_value(
    text: str, refused: bool
) -> None:
    """A security question's answer opens an account as a password does, so it is refused as a value; a
    password manager named with a digit ("1Password") is where the secrets are, not one of them."""
    from memory.model import quick_extract as quick

    assert quick.holds_secret(text) is refused
    assert (quick.candidates(text) == []) is refused


@pytest.mark.parametrize(
    ("text", "refused"),
    [
        ("my sister's netflix login is in the shared notes app", False),
        ("the council tax login is on Dave's email, not mine", False),
        ("my sister's wifi password is on the fridge", False),
        ("sunflower's our wifi password", True),
        ("the netflix login is on the fridge and it's hunter22", True),
        ("my netflix login's dave.smith@example.com", True),
    ],
)
def test_a_login_is_a_secret_and_a_possessive_is_not_a_copula(text: str, refused: bool) -> None:
    """Round 47: a login opens an account as a password does (``category.SECRET_NAME``); "'s" reads as "is"
    only after the name or a pronoun, or before a determiner — "my sister's netflix login" names whose login
    it is, and says no value."""
    from memory.model import quick_extract as quick

    assert quick.holds_secret(text) is refused
    assert (quick.candidates(text) == []) is refused


@pytest.mark.parametrize(
    ("text", "statement"),
    [
        ("帮我查了下，房贷还剩二十万，要不要提前还？", "帮我查了下，房贷还剩二十万"),
        ("告诉我妈了，她说周六来，要不要订桌？", "告诉我妈了，她说周六来"),
        ("跟我说下周三要加班，我要不要请假？", "跟我说下周三要加班"),
    ],
)
def test_a_statement_that_opens_like_a_request_to_be_told_is_still_kept_before_its_question(
    text: str, statement: str
) -> None:
    """ "帮我查了下", "告诉我妈了", "跟我说下周三" tell; only the question after them is left out."""
    from memory.model import quick_extract as quick

    assert [c.sentence for c in quick.candidates(text)] == [statement]


def test_a_request_to_be_reminded_is_read_as_remind_me_is(monkeypatch: pytest.MonkeyPatch) -> None:
    """Round 40, under ``SUBJECTLESS_STATEMENTS``: "can u remind me <fact>" is not the inversion "can u …?"
    (it was refused as a question; "remind me <fact>" never was), unless what follows asks."""
    from memory.model import quick_extract as quick

    request = "can u remind me kumi's c5 is due in feb at the frankton vet"
    asking = (
        "can you remind me what the boiler code is",
        "could you remind me, when is the MOT due",
        "can you remind me of my netflix login",
    )
    assert [c.sentence for c in quick.candidates(request)] == [request]
    assert all(quick.candidates(text) == [] for text in asking)
    monkeypatch.setattr(quick, "SUBJECTLESS_STATEMENTS", False)  # the shipped head's trainers' rule
    assert quick.candidates(request) == []


def test_a_sentence_asking_only_by_its_first_words_waits_for_the_head() -> None:
    """Round 46: "did my masters in Glasgow" reads like "did my sister ring" to the rule; without a mark it
    hands such sentences ("do" before a noun phrase) to the keeper (``worded_questions``), and one the head
    read as told is refused as a question only by a mark — each clause of it too."""
    from memory.model import quick_extract as quick

    text = "did my masters in Glasgow, finished in 2016. Did the plumber come? is the van booked. did I"
    worded = quick.worded_questions(
        text
    )  # other auxiliaries, and "do" before a pronoun, ask: not handed over
    assert worded == ["did my masters in Glasgow, finished in 2016."]
    assert quick.candidates(text) == []
    told = quick.candidates(text, frozenset(worded[:1]))
    assert [(c.sentence, c.parts) for c in told] == [
        ("did my masters in Glasgow, finished in 2016", ("did my masters in Glasgow, finished in 2016",))
    ]
    assert quick.worded_questions("I did my masters in Glasgow. Did the plumber come?") == []
    assert quick.candidates("did my sister ring?", frozenset(["did my sister ring?"])) == []
