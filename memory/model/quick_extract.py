"""What the offline model keeps of a user message: the clauses that state a fact of the person's life.

The memory model is the real extractor; this is the whole of the offline model (``offline_model.py``) and
what the offline stand-in promises (``gateway/offline_chat.py``), so the two can never disagree. Per
sentence (``clauses.py`` cuts it and gives each clause its subject):

1. what a rule can know is refused first: questions ("?", "吗"), code, secrets, greetings alone, sentences
   too short or too long to be one fact;
2. with the shipped embedder, the learned head (``memory/head/``) decides: each clause and the sentence
   are embedded as passages, the message (or, ``SENTENCE_TELL``, the sentence) as a query
   (``said_in``); a clause is kept when the head keeps it, weighed with what it was said in; when two
   or more clauses are kept, each is a fact, otherwise the whole sentence is one when the head keeps
   it ("I like tea and coffee"), or else the one kept clause (a complaint before it, say, is left
   out). The head also files each fact in its category (``memory/text/category.py`` has the guide);
3. without it (``--embedding none``, an OpenAI embedder, an embedder that failed), short general rules:
   a first-person statement that is not about the listener or a laugh, filed by ``category.fallback``,
   in a message that is not a turn of a conversation (``conversational``: a reply, words to the
   listener, an apology or thanks, more than four sentences).

"Remember that …" is always kept. A fact's ``content`` is the clean clause as the user wrote it
(``fact_fields.fact_of`` gives it its importance, project and, for a single-valued attribute, a predicate).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from memory.model.clauses import clauses, clean, split_sentences, with_fragments
from memory.model.fact_fields import fact_of
from memory.records import Fact
from memory.retrieval.gate import asks
from memory.text.category import SECRET_NAME, fallback_category
from memory.text.dedup import norm_key

__all__ = [
    "MAX_SENTENCE_CHARS",
    "MIN_MEANINGFUL_CHARS",
    "Candidate",
    "decide",
    "fallback_facts",
    "quick_facts",
    "split_sentences",
    "worded_questions",
]

# Sentences longer than this are narratives or pastes, not one fact.
MAX_SENTENCE_CHARS = 200
# Fewer letters/digits than this say nothing lasting ("ok"); three Han characters can ("我吃素").
MIN_MEANINGFUL_CHARS = 4
MIN_MEANINGFUL_HAN = 3

_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
# Code: braces, operators, a call or an ASCII index ("a[i]"; not a chat app's text emoji after Chinese,
# "寻不到了[捂脸]", which WeChat and Feishu write in brackets), a keyword or prompt first, an assignment,
# a tag.
_CODE = re.compile(
    r"[{}]|=>|==|!=|:=|->|\w\(\)|[A-Za-z0-9_]\[[A-Za-z0-9_]*\]"
    r"|^\s*(?:def|class|import|from|return|func|var|let|const|select|sudo|pip|npm|git)\s"
    r"|^\s*[$#>]\s|\w=\w|^\s*[\w.]+\s*=\s*\S|</?\w+>"
)
# A secret named. Before round 40 any sentence naming one was refused (``_SECRET``, the shipped head's and
# re-ranker's cutter). Since then (``SECRET_WHEREABOUTS``; bench/README "Issue 35, round 40") only a sentence
# holding its value is (``holds_secret``): where a secret is kept is a fact like any other — "the wifi
# password is on the fridge", "密码写在蓝本子最后一页", filed ``credential`` — as the memory model is told
# (``prompts._SECRET_RULE``). Its trainers turn it off unless given --secret-whereabouts, so the commands in
# the shipped arrays' metadata still rebuild them bit for bit.
SECRET_WHEREABOUTS = True
_SECRET = re.compile(
    r"\b(?:password|passwd|passcode|pin|api[ _-]?key|token|secret|private key)s?\b"
    r"|密码|口令|密钥|令牌|验证码",
    re.I,
)
# What says a sentence holds a secret's value (``holds_secret``), cautious on purpose — a value is never kept:
# an ASCII token of four or more with a digit ("hunter2", "4471"); after the name a colon, "=", a dash, "to",
# 改成/设成, 是/为 in its clause, or a copula before anything but a place ("is hunter2", "'s still sunflower";
# not "is on the fridge"); before it a copula ("hunter2 is my password", "是我的密码"). "'s" is "is"
# after the name or a pronoun, or before a determiner; not a possessive ("on Kedar's email"; round 47).
_VALUE_TOKEN = re.compile(r"(?<![\w!@#$%^&*+.-])(?=[\w!@#$%^&*+.-]{4,})[A-Za-z!@#$%^&*_+.-]*\d", re.A)
_PLACE = (
    r"(?:all\s+|both\s+|still\s+|now\s+|also\s+|just\s+)?(?:on|in|at|under|underneath|behind|inside|next|by|"
    r"beside|with|above|below|near|written|saved|stored|kept|taped|stuck|printed|hidden|noted|jotted)\b"
)
_VALUE_AFTER = re.compile(
    rf"[:：=＝]|\s[-–—]+\s|(?<!next )\bto\b|改成|换成|设成|设为|改为|换为|^[^，。,.;；!！?？]{{0,8}}?[是为]"
    rf"|(?:\b(?:is|was|are|were)|(?:^|\b(?:it|that|this|which))['’]s)\s+(?!{_PLACE})",
    re.I,
)
_DETERMINER = r"(?:my|our|the|his|her|their|your)\s+"
_VALUE_BEFORE = re.compile(
    rf"(?:\b(?:is|was|are)\s+(?:{_DETERMINER})?|['’]s\s+{_DETERMINER})(?:[\w-]+\s+){{0,3}}$|是[^，。！？,.!?\s]{{0,8}}$",
    re.I,
)
# Where it is kept, after the name: a sentence naming a secret is kept only when it says so.
_WHEREABOUTS = re.compile(rf"\b{_PLACE}|[在到里]|上面|下面|背面|后面|底下|夹层", re.I)
# A product named with a digit right after a place word is where secrets are kept, not one of them ("all my
# passwords are in 1Password", "密码都存在1Password里"); a number there still is one ("ends in 2024", "type in
# 4471").
_AT_PLACE = re.compile(rf"(?:\b{_PLACE}\s+(?:(?:my|our|the|a|an|his|her|their)\s+)?|[在到]\s*)$", re.I)
_PRODUCT = re.compile(r"\d+[A-Za-z]{3,}(?![A-Za-z0-9])")

# A sentence opening with a question word asks. Since round 25 (DATA_CARD) one opening with an auxiliary asks
# only when a subject follows it (the inversion: "do you …", "is the shop …"); without one, and in a
# contraction, it is a statement whose subject was dropped ("Did three years of night shifts", "Was in Porto
# last week", "Can't eat shellfish"), which the head, or the fallback's first-person rule, decides as any
# statement. The shipped head and re-ranker were trained before it: their trainers turn it off unless given
# --subjectless, so the commands in their metadata still rebuild them bit for bit.
SUBJECTLESS_STATEMENTS = True
_EN_QUESTION_WORDS = r"what|who|whom|whose|where|when|why|how|which"
_EN_AUXILIARIES = r"do|does|did|is|are|was|were|am|can|could|would|should|will|shall|may|have|has"
_EN_SUBJECTS = (
    r"i|you|u|ye|we|they|he|she|it|there|this|that|these|those|one|my|your|ur|our|their|his|her|its|the|a|an|"
    r"any|some|anyone|anybody|anything|someone|somebody|something|everyone|everybody|everything"
)
_EN_QUESTION = re.compile(rf"^(?:{_EN_QUESTION_WORDS}\b|(?:{_EN_AUXILIARIES})\s+(?:{_EN_SUBJECTS})\b)", re.I)
_EN_QUESTION_ANY_AUXILIARY = re.compile(rf"^(?:{_EN_QUESTION_WORDS}|{_EN_AUXILIARIES})\b", re.I)  # before
# Round 46: "do" asks before a pronoun ("did I …"); before a noun phrase it may ask or be the verb itself.
_EN_DO_NOUN_FIRST = re.compile(r"^(?:do|does|did)\s+(?:my|our|the|a|an|his|her|their|this|that|some)\b", re.I)
# Since round 40, under the same switch: a request to be reminded ("can u remind me kumi's c5 is due in feb")
# is read as "remind me …" is, not as a question — unless what follows asks ("can you remind me what the
# boiler code is", "… of my netflix login", "… about the MOT").
_EN_REMIND_REQUEST = re.compile(
    rf"^(?:can|could|would|will)\s+(?:you|u|ye)\s+(?:please\s+|pls\s+|plz\s+)?remind me\b"
    rf"(?![\s,]*(?:{_EN_QUESTION_WORDS}|if|whether|of|about)\b)",
    re.I,
)


def _asks_from_first_word(text: str) -> bool:
    """An English sentence that asks from its first words (``SUBJECTLESS_STATEMENTS`` says which rule)."""
    if not SUBJECTLESS_STATEMENTS:
        return bool(_EN_QUESTION_ANY_AUXILIARY.match(text))
    return bool(_EN_QUESTION.match(text)) and not _EN_REMIND_REQUEST.match(text)


_ZH_QUESTION = re.compile(r"[吗么][~～。.!！\s]*$")
_EN_REMEMBER = re.compile(
    r"^(?:please\s+)?(?:remember|don't forget|note|keep in mind)\b(?:\s+that)?[\s,:;-]*", re.I
)
_ZH_REMEMBER = re.compile(r"^(?:请|你要|要)?(?:帮我)?(?:记住|记一下|记下|记着|别忘了)(?:一下)?[\s,，:：、]*")

# --- the keyword fallback: short, general ---------------------------------------------------------------
_FIRST_PERSON = re.compile(r"^(?:i|i'm|im|i've|i'd|my|we|we're|our)\b|^(?:我|咱)", re.I)
_LISTENER = re.compile(r"\b(?:you|your|you're)\b|你|您", re.I)
_LAUGHTER = re.compile(r"\b(?:lol|lmao|haha\w*|hehe\w*)\b|哈哈|呵呵|笑死", re.I)
# What a first-person clause says of the conversation, not of a life: opinions, hedges, wishes of the
# moment, what one will do now ("I think so", "I'll check", "我觉得…", "我也是").
_CHATTER = re.compile(
    r"^(?:i|i'm|im|we)\s+(?:think|guess|mean|know|hope|suppose|believe|feel|wonder|agree|see|understand|"
    r"will|'ll|would|could|can|must|should|need|just|am sure|'m sure|am afraid|'m afraid|am not sure)\b"
    r"|^(?:i'll|i'd|we'll|we'd)\b|^我(?:们)?(?:觉得|想|知道|也|就|会|能|要|去|说|看|猜|以为|还以为|不知道)"
    # what was said, not what is so ("we talked about the weather", "I told him", "我们聊了…")
    r"|^(?:i|we)\s+(?:talked|chatted|discussed|said|asked|told|mentioned)\b|^我们?(?:聊|谈|说|问)了",
    re.I,
)

# What makes a whole message a turn of a conversation rather than something told to an assistant: it
# answers ("yes, …", "好吧…"), speaks to the listener in a statement, apologises, thanks or asks a
# favour, or runs on for more than ``CONVERSATION_SENTENCES`` sentences (a role play's narration, a
# pasted story).
_REPLY = re.compile(
    r"^\s*(?:yes|yeah|yep|no|nope|nah|well|sure|oh|of course|really|ok|okay|right|sorry|i see|good|"
    r"great|fine|all right)\b|^\s*(?:好吧|好的|嗯|哦|是的|对(?!了)|没错|不是|当然|真的|哈哈|呵呵)",
    re.I,
)
_COURTESY = re.compile(
    r"\b(?:sorry|afraid|glad|apologi[sz]e|please|thanks?)\b|对不起|不好意思|谢谢|请问|麻烦", re.I
)
CONVERSATION_SENTENCES = 4
# Round 12 (``said_in``): weigh each clause with its own sentence's "tells about one's life" instead of the
# whole message's. Built and measured, off: with thresholds chosen on training lines read the same way it
# keeps fewer dev tells than the whole message (memory/head/DATA_CARD.md "Round 12, keep"); with the
# shipped thresholds it keeps many more, and DailyDialog false keeps go from 0.022 to 0.158.
SENTENCE_TELL = False


@dataclass(frozen=True, slots=True)
class Candidate:
    """One sentence of a message: its clean clauses, the whole sentence, and whether the user asked for it
    to be remembered."""

    sentence: str
    parts: tuple[str, ...]
    remembered: bool

    def texts(self) -> list[str]:
        """What the head judges: the clauses, then the whole sentence when it has several."""
        return [*self.parts, self.sentence] if len(self.parts) > 1 else list(self.parts)


def holds_secret(sentence: str) -> bool:
    """Whether a rule refuses ``sentence`` as a secret: it names one (``category.SECRET_NAME``) and does not
    plainly say only where it is kept — a sign of a value anywhere (``_VALUE_*``) or no place after the name
    refuses it. With ``SECRET_WHEREABOUTS`` off, any sentence naming one (the trainers' old rule)."""
    if not SECRET_WHEREABOUTS:
        return bool(_SECRET.search(sentence))
    name = SECRET_NAME.search(sentence)
    if name is None:
        return False
    before, after = sentence[: name.start()], sentence[name.end() :]
    if _value_token(sentence) or _VALUE_BEFORE.search(before) or _VALUE_AFTER.search(after):
        return True
    return not _WHEREABOUTS.search(after)


def _value_token(sentence: str) -> bool:
    """Whether ``sentence`` holds a token that may be a secret's value (``_VALUE_TOKEN``), other than a
    product's name where it is kept (``_AT_PLACE``, ``_PRODUCT``)."""
    return any(
        not (_PRODUCT.match(sentence, m.start()) and _AT_PLACE.search(sentence[: m.start()]))
        for m in _VALUE_TOKEN.finditer(sentence)
    )


def _meaningful(text: str) -> bool:
    least = MIN_MEANINGFUL_HAN if _HAN.search(text) else MIN_MEANINGFUL_CHARS
    return sum(ch.isalnum() for ch in text) >= least


def _is_marked_question(text: str) -> bool:
    """A question by its mark alone: "?" or 吗/么 at the end, whatever its first words."""
    stripped = text.strip()
    return stripped.endswith(("?", "？")) or bool(_ZH_QUESTION.search(stripped))


def _is_question(text: str) -> bool:  # by its mark or its first words
    return _is_marked_question(text) or _asks_from_first_word(text.strip())


# Round 19 (issue 35): an English sentence that ends in a question but opens with a statement, cut from the
# question by a comma, semicolon or dash ("we moved to Leeds in May, is there a good swimming club?"): the
# statement before the question is judged like any sentence, the question is not. On since stop 55 (DATA_CARD,
# "Round 19, in passing"). The shipped head and re-ranker were trained before it: their trainers turn it off
# unless given --question-heads, so the commands in their metadata still rebuild them bit for bit.
# Round 38: the same for a Chinese sentence ("汤圆又胖了，现在14斤，要不要给它换猫粮？"): the clauses
# before the first one the question rule reads as asking (``gate.asks``) are the statement. Round 48: also an
# English sentence that opens with a question or request and goes on, after a comma, with a statement
# (``statement_after_question``).
QUESTION_HEADS = True
_QUESTION_TURN = re.compile(r"\s*(?:[,;]|\s[\u2014\u2013-])\s+")
_EN_QUESTION_TURN = re.compile(rf"(?:{_EN_QUESTION_WORDS}|{_EN_AUXILIARIES}|any)\b", re.I)
_ZH_QUESTION_TURN = re.compile(r"\s*[，,；;]\s*|\s+")


def statement_before_question(sentence: str) -> str | None:
    """The statement that opens a question sentence, or None (not a question, a question from its first
    word or first clause, no statement before the question)."""
    body = sentence.strip()
    if _HAN.search(body):
        return _zh_statement_before_question(body)
    if not body.endswith("?") or _asks_from_first_word(body):
        return None
    for turn in _QUESTION_TURN.finditer(body):
        if _EN_QUESTION_TURN.match(body, turn.end()):
            head = body[: turn.start()].strip()
            return head if _meaningful(head) else None
    return None


def statement_after_question(sentence: str) -> str | None:
    """What an English sentence says after a question or request it opens with, cut off by a comma, semicolon
    or dash, when it ends without a question mark ("can you add up the bills, Bord Gáis was 312 for Oct"): the
    head judges it like any statement (round 48). None otherwise; "did my degree in Carlow, …" is
    ``worded_questions``' to read."""
    body = sentence.strip()
    if _HAN.search(body) or body.endswith("?") or _EN_DO_NOUN_FIRST.match(body):
        return None
    if not _asks_from_first_word(body):
        return None
    turn = _QUESTION_TURN.search(body)
    tail = body[turn.end() :].strip() if turn else ""
    return tail if _meaningful(tail) else None


def _zh_statement_before_question(body: str) -> str | None:
    """A Chinese question sentence's clauses before the first clause that asks: a question word or form
    anywhere in it (``gate.asks``), not only at the end, since a Chinese question keeps its word in
    place ("术前要饿多久"); None when the first clause already asks."""
    if not _is_question(body):
        return None
    turns = list(_ZH_QUESTION_TURN.finditer(body))
    starts = [0, *(turn.end() for turn in turns)]
    ends = [*(turn.start() for turn in turns), len(body)]
    for start, end in zip(starts, ends, strict=True):
        piece = body[start:end]
        if piece and (asks(piece) or _is_question(piece)):
            head = body[:start].rstrip(" ，,；;")
            return head if start and _meaningful(head) else None
    return None


def _statements(text: str) -> Iterator[tuple[str, str]]:
    """Each sentence of a message that a rule does not refuse outright (too long, code, a secret's value),
    as (what it says once a question after it and "remember that" are cut off, as typed)."""
    for sentence in with_fragments(split_sentences(text)):
        if len(sentence) > MAX_SENTENCE_CHARS or _CODE.search(sentence) or holds_secret(sentence):
            continue
        body = sentence.strip()
        if QUESTION_HEADS:
            body = statement_before_question(body) or statement_after_question(body) or body
        yield _ZH_REMEMBER.sub("", _EN_REMEMBER.sub("", body, count=1), count=1), body


def worded_questions(text: str) -> list[str]:
    """The sentences of ``text`` the rule reads as asking only from a "do" before a noun phrase, with no
    mark (``_EN_DO_NOUN_FIRST``); the keeper lets the head's gate read each (round 46,
    ``verdict.reads_as_told``) and gives those told to ``candidates``."""
    stated = [s for s, _ in _statements(text) if _EN_DO_NOUN_FIRST.match(s.strip())]
    return [s for s in stated if not _is_marked_question(s) and _asks_from_first_word(s.strip())]


def candidates(text: str, told: frozenset[str] = frozenset()) -> list[Candidate]:
    """The sentences of a message that might state a fact, after what a rule can refuse. ``told``: of
    ``worded_questions``, those the head read as statements; they, and their clauses, are refused as
    questions only by a mark."""
    out: list[Candidate] = []
    for stated, body in _statements(text):
        asks = _is_marked_question if stated in told else _is_question
        parts = tuple(p for p in clauses(stated) if _meaningful(p) and not asks(p))
        if not parts or asks(stated):
            continue
        whole = parts[0] if len(parts) == 1 else clean(stated).rstrip(" .。!！~～")
        out.append(Candidate(whole, parts, stated != body))
    return out


def conversational(text: str) -> bool:
    """Keyword-only: the whole message reads as a turn of a conversation (see ``_REPLY``)."""
    sentences = split_sentences(text)
    # A question to the listener ("what can you do?") does not make the statements beside it a reply.
    to_listener = any(_LISTENER.search(s) for s in sentences if not _is_question(s))
    if _REPLY.search(text) or to_listener or _COURTESY.search(text):
        return True
    return len(sentences) > CONVERSATION_SENTENCES


def fallback_facts(
    text: str, found: Sequence[Candidate], known_projects: frozenset[str] = frozenset()
) -> list[Fact]:
    """The keyword fallback's facts of ``text`` (its ``candidates``): none of a conversational message
    but what the person asked to be remembered."""
    if conversational(text):
        found = [c for c in found if c.remembered]
    return decide(found, None, known_projects)


def _fallback_keeps(text: str) -> bool:
    """Keyword-only: a first-person statement that is not about the listener and not a laugh."""
    if not _FIRST_PERSON.match(text) or _LISTENER.search(text) or _LAUGHTER.search(text):
        return False
    return not _CHATTER.search(text)


def decide(
    found: Sequence[Candidate],
    verdicts: Sequence[tuple[bool, str]] | None,
    known_projects: frozenset[str] = frozenset(),
) -> list[Fact]:
    """The facts kept of ``found``. ``verdicts``: (keep, category) of every text of ``Candidate.texts``
    in order, from the head; ``None`` for the keyword fallback."""
    facts: list[Fact] = []
    seen: set[str] = set()
    position = 0
    for candidate in found:
        texts = candidate.texts()
        if verdicts is None:
            judged = [(_fallback_keeps(t), fallback_category(t)) for t in texts]
        else:
            judged = list(verdicts[position : position + len(texts)])
        position += len(texts)
        if candidate.remembered:
            judged = [(True, category) for _, category in judged]
        parts = [(t, c) for t, (keep, c) in zip(candidate.parts, judged, strict=False) if keep]
        whole_keep, whole_category = judged[-1]
        if len(parts) >= 2 or (parts and not whole_keep):
            chosen = parts
        elif whole_keep:
            chosen = [(candidate.sentence, whole_category)]
        else:
            chosen = []
        for content, category in chosen:
            key = norm_key(content)
            if key not in seen:
                seen.add(key)
                facts.append(fact_of(content, category, candidate.remembered, known_projects))
    return facts


def quick_facts(text: str, known_projects: frozenset[str] = frozenset()) -> list[Fact]:
    """The keyword fallback's facts (no embedder): what ``kept_facts`` gives when the head cannot run."""
    return fallback_facts(text, candidates(text), known_projects)


def said_in(found: Sequence[Candidate], text: str, sentences: bool | None = None) -> list[str]:
    """The text each candidate's clauses are weighed with (``Head.fact_verdicts``): the whole message, or
    with ``SENTENCE_TELL`` (round 12) or a head that weighs both (round 13, ``Head.reads_sentences``;
    ``sentences`` says which when given) its own sentence as cut and cleaned — the message itself when the
    message is that one sentence as typed, so the vector retrieval already computed is the one used."""
    if not (SENTENCE_TELL or reads_sentences() if sentences is None else sentences):
        return [text] * len(found)
    return [text if len(found) == 1 and c.sentence == text.strip() else c.sentence for c in found]


def reads_sentences() -> bool:
    """The shipped head weighs each clause's own sentence beside the whole message (round 13)."""
    from memory.head.model import load_head

    return load_head().reads_sentences


def reads_latent() -> bool:
    """The shipped head weighs the message's latent terms (round 36: ``FactKeeper.message_latents``)."""
    from memory.head.model import load_head

    return load_head().reads_latent


def head_verdicts(
    found: Sequence[Candidate],
    passages: np.ndarray,
    sentences: np.ndarray,
    message: np.ndarray | None = None,
    *,
    said: Sequence[str],
    latents: Mapping[str, tuple[np.ndarray, np.ndarray]] | None = None,
) -> list[tuple[bool, str]]:
    """(keep, category) of each text of ``found`` from its passage vector (rows in ``texts`` order) and
    one query vector per candidate, of what ``said_in`` says it was said in (``Head.fact_verdicts``: the
    clause and that text are weighed together). As shipped that is the whole message; round 12's
    ``SENTENCE_TELL`` (off) makes it the candidate's own sentence — a fact said beside a question to the
    assistant or a mood in the next sentence was refused because the whole message did not read as a
    statement about one's life (``bench.everyday_misses``: most tells lost on the newest dev sets).
    ``message`` (round 13, a head that ``reads_sentences``; the shipped one does not): the whole
    message's query vector, weighed beside each sentence's. ``said``: ``said_in``'s text of each candidate,
    whose character n-grams the combined score reads — the text of its query vector, as the n-gram term was
    fitted on whole training messages (until stop 67 it read the candidate's own sentence) — and which the
    clause's ``spread`` is measured in (round 9's terms; zero in the shipped head). ``latents`` (round 36,
    a head that ``reads_latent``): each ``said`` text's latent terms, read beside the n-grams."""
    from memory.head.model import load_head

    head = load_head()
    texts = [t for candidate in found for t in candidate.texts()]
    rows = [i for i, candidate in enumerate(found) for _ in candidate.texts()]
    around = [said[i] for i in rows]
    queries = np.atleast_2d(sentences)[rows]
    if message is not None:
        verdicts = head.fact_verdicts(passages, texts, np.atleast_2d(message), around, queries, latents)
    else:
        verdicts = head.fact_verdicts(passages, texts, queries, around, latents=latents)
    return list(zip(verdicts, head.categories(passages), strict=True))
