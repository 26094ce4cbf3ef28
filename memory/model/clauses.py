"""Sentences and clauses of a user message, each whole and clean: what the offline model can keep.

A message holds sentences; a sentence may hold several statements ("I live in Lyon and work as a nurse",
"我在杭州做后端开发，喜欢用Go"). ``clauses`` cuts a sentence at commas, semicolons, "and"/"but" and a space
between two Han characters (written Chinese has none between words: it is a pause), and
gives each clause its subject: one that starts without a subject after a clause whose subject is the
speaker gets it as that clause named them ("I work as a nurse", "我喜欢用Go", "we bought a van"); one that
starts without a subject after a clause about someone else stays glued to it ("My wife is a nurse and loves
hiking", "我女儿叫小雨，今年五岁").
An English piece that only says more of the clause before — where, when, what else ("…, in January",
"…, anything by Jo Nesbø", "…, leaving dec 22"), or one word alone — stays with it; words before "and I…"
are part of that clause's subject ("Glen and I both go", "me, Chisom and Kunmi have…"). A title ("Dr.")
ends no sentence.
A Chinese piece that opens with a noun names its own topic ("我不炒股，钱都存定期" → "钱都存定期",
not "我钱都存定期"); one that opens with a number or measure goes on the clause before
("我不能喝酒，一喝就起疹子").
Leading conjunctions and discourse markers ("and", "btw", "对了") are dropped: a kept memory never begins
"and I drive…". Which clause is worth keeping is not decided here (``memory/model/quick_extract.py``).
Pure functions, no I/O.
"""

from __future__ import annotations

import re
from functools import lru_cache

# After Chinese/full-width terminators and ;!? always; after "." only before a space or the end, so that
# "Node.js", "3.5" and "e.g" stay whole.
_SPLIT = re.compile(r"(?<=[。！!？?；;])|\n|(?<=\.)(?=\s|$)")
_FENCE = re.compile(r"```.*?(?:```|$)", re.S)
# Where a sentence may hold several statements (captured, so a glued clause keeps its separator). Written
# Chinese puts no space between words, so a space between two Han characters is a pause the writer made —
# the only one in text dictated by voice-to-text without punctuation ("喂你好啊 我叫梁惠芳 今年六十六岁了").
_HAN_CLASS = "\u3400-\u4dbf\u4e00-\u9fff"
_BREAK = re.compile(
    r"(\s*[，,；;]\s*|\s+(?:and|but|and also|and then|so)\s+(?=\S)"
    rf"|(?<=[{_HAN_CLASS}])\s+(?=[{_HAN_CLASS}]))",
    re.I,
)
# Words that open a sentence or clause without saying anything: conjunctions and discourse markers.
_EN_LEAD = re.compile(
    r"^(?:(?:and|but|so|also|plus|oh|ah|ok|okay|well|anyway|btw|by the way|fyi|just so you know|"
    r"actually|honestly|hey|hi|hello|then|and then|and also|"
    # "no"/"yes" answer only before a pause or the speaker ("no, I…"); "no essays" keeps its "no".
    r"(?:yeah|yes|no)(?=\s*[,:;.!-]|\s*$|\s+(?:i|i'm|im|my|we)\b))\b[\s,:;.!-]*)+",
    re.I,
)
_ZH_LEAD = re.compile(
    r"^(?:(?:而且|并且|还有|另外|然后|但是|不过|所以|对了|顺便说一下|顺便|其实|那个|嗯|哦|啊|跟你说)[\s,，:：、]*)+"
)
# A clause that names its own subject (a pronoun, a determiner, a name) keeps it as it is.
_EN_OWN_SUBJECT = re.compile(
    r"^(?:i|i'm|i've|i'd|i'll|im|ive|my|we|we're|we've|our|he|she|they|it|it's|this|that|there|the|a|an|"
    r"his|her|their|you|your|[A-Z]\w*)\b"
)
_ZH_OWN_SUBJECT = re.compile(r"^(?:我|咱|他|她|它|你|您|这|那|大家|[A-Za-z])")
# The speaker alone as subject: only then is "I"/"我" what a following clause leaves out.
_EN_SPEAKER = re.compile(r"^(?:i|i'm|i've|i'd|i'll|im|ive|we|we're|we've)\b", re.I)
# A piece that opens with a number, an ordinal or a quantifier ("first tuesday of the month", "3 months
# now", "every other week") says when or how much of the clause before: it stays with it.
_EN_MEASURE = re.compile(
    r"^(?:\d\w*|first|second|third|last|next|every|each|all|both|about|around|like|no|only|just|once|twice)\b",
    re.I,
)
# A piece whose second word is a form of "be" or "have" or a modal has a subject of its own: its first word
# ("anniversary is in May"); one whose second word is a subject pronoun opens with what that clause is about
# ("exhaust i fitted in 2024"). Neither is the speaker's clause to complete with "I".
_EN_VERB_NEXT = re.compile(
    r"^\S+\s+(?:is|isn't|are|aren't|was|wasn't|were|weren't|has|hasn't|have|had|will|won't|would|can|"
    r"can't|could|should|must|does|doesn't|did|didn't)\b",
    re.I,
)
_EN_PRONOUN_NEXT = re.compile(r"^\S+\s+(?:i|i'm|im|i've|we|we're|he|she|they|you)\b", re.I)
# A continuation describing what the clause before named ("a cat, called Pepper"), or a subordinate
# clause that gives its reason or condition ("…, because there's less fat"): it stays with it.
_CONTINUES = re.compile(
    r"^(?:called|named|who|which|whose|aged|because|cause|since|as|if|unless|until|though|although|when)\b",
    re.I,
)
# A piece that opens with a preposition, an indefinite pronoun or a word in -ing says where, when or what
# more of the clause before ("…, in January", "…, anything by Jo Nesbø", "…, leaving dec 22"): closed
# classes of English words, not a clause for the speaker to be put before ("I in January").
_EN_ATTACHED = re.compile(
    r"^(?:in|on|at|for|from|with|without|by|to|into|onto|near|after|before|during|till|til|over|under|"
    r"through|across|via|per|off|out|up|down|inside|outside|behind|beside|between|among|against|toward|"
    r"towards|around|of|than|except|including|especially|particularly|anything|anyone|anybody|something|"
    r"someone|somebody|nothing|nobody|everything|everyone|everybody|none|"
    r"(?!(?:bring|swing|sting|cling|fling|sling|string|spring|thing|wring)\b)[a-z]{2,}ing)\b",
    re.I,
)
# Round 48 (``WHOLE_CONTINUATIONS``): a piece opening with a number in words ("..., nine years there in
# January", "..., one every morning") or with "not" (a contrast: "..., not five o'clock") also stays with the
# clause before; and only a clause whose subject is the speaker gives the speaker to a subjectless piece after
# it ("I'm doing a course, it's Thursday nights, finishes in June" keeps "it's Thursday nights, finishes in
# June" whole, not "I finishes in June"). The shipped head and re-ranker were trained before it: their
# trainers turn it off unless given --whole-continuations, so the commands in their metadata still rebuild
# them.
WHOLE_CONTINUATIONS = True
_EN_WORDS_GO_ON = re.compile(
    r"^(?:not|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty|fifty|"
    r"sixty|seventy|eighty|ninety|hundred|half|several|a few|a couple)\b",
    re.I,
)
_HAN = re.compile(f"[{_HAN_CLASS}]")
# A person named in a Chinese piece: it has a subject or a person of its own, not the speaker left out.
_ZH_PERSON = re.compile("[我你您侬他她]")
_NOUN_TAGS = ("n", "nr", "ns", "nt", "nz", "ng")


# A title before a name ends in a full stop that ends no sentence ("our doctor is Dr. Nwosu"). "St." and
# "Jr." are left out: they end sentences too ("I live on Elm St.").
_TITLE = re.compile(r"(?:^|\s)(?:Dr|Mr|Mrs|Ms|Mx|Prof)\.$")


def split_sentences(text: str) -> list[str]:
    """The message's sentences (fenced code removed), trimmed, separators and empty pieces dropped; a piece
    ending in a title ("Dr.") goes on with the next one."""
    out: list[str] = []
    for piece in _SPLIT.split(_FENCE.sub("\n", text)):
        sentence = piece.strip().rstrip(";；").strip()
        if sentence and out and _TITLE.search(out[-1]):
            out[-1] = out[-1] + " " + sentence
        elif sentence:
            out.append(sentence)
    return out


# An English sentence of this many words or fewer with no question or exclamation mark ("4-room.", "Oppo.",
# "40 years.") is a fragment: it says more of a sentence beside it, and kept alone it means nothing.
FRAGMENT_WORDS = 2
_DIGIT = re.compile(r"\d")


def with_fragments(sentences: list[str]) -> list[str]:
    """``sentences`` with each English fragment (``FRAGMENT_WORDS``) glued to the sentence after it ("4-room.
    bought from hdb direct" → "4-room, bought from hdb direct"), or, when it holds a number, to the one before
    it ("the wok cracked. 40 years."), so the clause cut (``clauses``) keeps it with what it describes. A
    question is never glued; a fragment with nothing after it ("lol.") stays as it was, on its own."""
    out: list[str] = []
    pending = ""
    for sentence in sentences:
        fragment = _fragment(sentence)
        if fragment and _DIGIT.search(sentence) and out and not pending and not _asks(out[-1]):
            out[-1] = out[-1].rstrip(" .") + ", " + sentence.rstrip(" .")
        elif fragment:
            pending = (pending + ", " if pending else "") + sentence.rstrip(" .")
        elif pending and not _asks(sentence):
            out.append(pending + ", " + sentence)
            pending = ""
        else:
            out += [pending, sentence] if pending else [sentence]
            pending = ""
    return out + ([pending] if pending else [])


def _fragment(sentence: str) -> bool:
    return not _HAN.search(sentence) and not _asks(sentence) and len(sentence.split()) <= FRAGMENT_WORDS


def _asks(sentence: str) -> bool:
    return sentence.rstrip().endswith(("?", "？", "!", "！"))


def clean(clause: str) -> str:
    """The clause without leading conjunctions or markers, and without trailing punctuation."""
    text = clause.strip()
    previous = None
    while previous != text:
        previous = text
        text = _EN_LEAD.sub("", text).strip()
        text = _ZH_LEAD.sub("", text).strip()
    return text.rstrip(" ,，、;；:：-.。!！~～").strip()


@lru_cache(maxsize=2048)
def _zh_speaker_subject(text: str) -> bool:
    """Whether a Chinese clause's subject is the speaker ("我在杭州…") rather than something of theirs
    ("我女儿叫…", "我妈生日…"): 我/我们 not followed by a noun (jieba's part-of-speech tags)."""
    if not text.startswith(("我", "咱")):
        return False
    import jieba.posseg  # loaded only where Chinese clauses are cut

    words = [(w.word, w.flag) for w in jieba.posseg.cut(text[:12])]
    if not words or words[0][0] not in ("我", "我们", "咱", "咱们"):
        return False
    if len(words) > 1 and words[1][0] in ("家", "的"):  # "我们家在三楼", "我的手机…": theirs is the subject
        return False
    return len(words) < 2 or not words[1][1].startswith(_NOUN_TAGS) or words[1][0] in ("家里",)


def _speaker(clause: str) -> str | None:
    """The speaker as the clause names them — "I"/"我", or "we"/"我们"/"咱们" — when the clause's subject is
    the speaker, else None: what a following clause that leaves its subject out is given."""
    if _HAN.search(clause[:2]):
        return (
            next(p for p in ("我们", "咱们", "咱", "我") if clause.startswith(p))
            if _zh_speaker_subject(clause)
            else None
        )
    found = _EN_SPEAKER.match(clause)
    return None if found is None else ("we" if found[0].lower().startswith("we") else "I")


def _continues_as_clause(piece: str, chinese: bool) -> bool:
    """Whether a subjectless piece after the speaker's clause is a clause of its own (it then gets the
    subject): not a description of what was just named ("called Pepper"), not one word of a list ("tea
    and coffee"), not one that names the speaker itself ("叫我晓雯就行"), not a Chinese piece that opens
    with a number or a measure ("一点都不行", "一喝就…", "三月份": it says more of the clause before), not
    one with a person of its own ("一般是我飞过去", "侬看好伐") or opening with 是 ("是搬宝安"), not an
    English one whose first word has a verb or a subject after it ("deadline is in May", "exhaust i
    fitted")."""
    if chinese:
        return (
            not _ZH_PERSON.search(piece)
            and not piece.startswith("是")
            and not _zh_opening(piece).startswith("m")
        )
    return (
        not _CONTINUES.match(piece)
        and not _EN_MEASURE.match(piece)
        and not _EN_ATTACHED.match(piece)
        and not _EN_VERB_NEXT.match(piece)
        and not _EN_PRONOUN_NEXT.match(piece)
        and not (WHOLE_CONTINUATIONS and _EN_WORDS_GO_ON.match(piece))
        and len(piece.split()) >= 2
    )


@lru_cache(maxsize=2048)
def _zh_opening(piece: str) -> str:
    """The part of speech of a Chinese piece's first word (jieba's tags: "n…" a noun, "m" a number or
    measure, "eng" a Latin word), "" when it has none."""
    import jieba.posseg  # loaded only where Chinese clauses are cut

    words = [w.flag for w in jieba.posseg.cut(piece[:8])]
    return words[0] if words else ""


def _names_its_topic(piece: str, chinese: bool) -> bool:
    """A Chinese piece that opens with a noun or a Latin word names its own subject or topic ("钱都存定期",
    "老婆是老师", "CBA每场都看"), and an English one whose first word is followed by "is", "has" or a modal
    ("anniversary is 2nd Feb"): a clause as it stands, without the speaker put before it."""
    if chinese:
        return _zh_opening(piece).startswith(("n", "eng"))
    return bool(_EN_VERB_NEXT.match(piece))


def _given(subject: str, chinese: bool, piece: str) -> str:
    """The subject put before a piece: the speaker as the clause before named them, in the piece's
    language ("we" after "we moved…", "我们" after "我们住…"; "I"/"我" across languages), with "have"
    before "been" ("I've been doing it 6 yrs", not "I been…")."""
    if chinese:
        return subject if _HAN.search(subject) else "我"
    english = subject if not _HAN.search(subject) else "I"
    return english + ("'ve " if piece.lower().startswith("been ") else " ")


def _speaker_goes_on(chinese: bool, *, topic: bool) -> bool:
    """Whether the speaker named before a clause (one with a subject of its own that is not the speaker,
    or, ``topic``, one that names its topic) is still who a subjectless piece after it is about. Round 48
    (``WHOLE_CONTINUATIONS``): no after a subject of its own ("it's Thursday nights, finishes in June");
    after a topic, no in English ("gluten is a hard no, even a crumb…") but yes in Chinese, whose pieces
    drop the speaker after one ("我72年的 属鼠 今年五十四了")."""
    return not WHOLE_CONTINUATIONS or (chinese and topic)


def _lone_word(piece: str) -> bool:
    """An English piece of one word ("Glen", "EveryDollar"): alone it is no clause."""
    return not _HAN.search(piece) and len(piece.split()) == 1


def _opens_subject(rest: list[tuple[str, str, str]], n: int) -> bool:
    """Whether piece ``n`` of ``rest`` (separator, piece, as said) is a lone English word that opens the
    subject of a clause after it: "and" then a clause with a subject of its own ("Glen and I both go to
    her", "mum and I…"), or a comma or "and" then another such word ("me, Chisom and Kunmi have…")."""
    if n + 1 >= len(rest) or not _lone_word(rest[n][1]):
        return False
    separator, following, _ = rest[n + 1]
    joins = separator.strip().lower()
    if joins == "and" and _EN_OWN_SUBJECT.match(following) and not _lone_word(following):
        return True
    return joins in (",", "and") and _opens_subject(rest, n + 1)


def clauses(sentence: str) -> list[str]:
    """The clauses of one sentence, each clean and with a subject (see the module docstring)."""
    parts = _BREAK.split(sentence.strip())
    # (the separator before it, the piece clean, the piece as said), empty pieces dropped
    said_pieces = zip(["", *parts[1::2]], (clean(p) for p in parts[0::2]), parts[0::2], strict=True)
    rest = [(separator, piece, said) for separator, piece, said in said_pieces if piece]
    out: list[str] = []
    subject: str | None = None
    lead = ""  # a lone word and "and" that open the next clause's subject ("Glen and ")
    for n, (separator, piece, said) in enumerate(rest):
        chinese = bool(_HAN.search(piece[:1]))
        if not chinese and _opens_subject(rest, n):
            lead += piece + rest[n + 1][0]
        elif not out or (
            (_ZH_OWN_SUBJECT if chinese else _EN_OWN_SUBJECT).match(piece) and not _lone_word(piece)
        ):
            out.append(lead + piece)
            lead = ""
            subject = _speaker(piece) or (subject if _speaker_goes_on(chinese, topic=False) else None)
        elif subject is not None and _names_its_topic(piece, chinese):
            out.append(piece)
            subject = subject if _speaker_goes_on(chinese, topic=True) else None
        elif subject is not None and _continues_as_clause(piece, chinese):
            out.append(_given(subject, chinese, piece) + piece)
        else:
            # Glued as said: a list keeps its "and" ("fruit, vegetables, and chicken").
            out[-1] = out[-1] + separator + said.strip().rstrip(" ,，、;；:：-.。!！~～")
    return out
