"""The people a Chinese message names: for a question the gate refused that asks after one of the person's
people by name ("翠萍生日", "国栋电话多少", "阿芬还在深圳吗"; issue 35, round 44).

Why: such questions are short and carry no 我, so the learned gate often reads them as about the world, and
the rescue (``RelevanceFloor.rescues``) needs the answer to stand further out than a name alone makes it.
A name the person has told about is the plainest sign a message is about their life — if the name is
really a person's, and really theirs. The first is jieba's part-of-speech model (its HMM tags a word it
does not know as a person's name, ``nr``) and its dictionary: a word the dictionary holds is a common word
or a famous name (乌龟, 米粉, 詹姆斯, which the model also tags ``nr``), not one only this person uses. The
second is the memories themselves: the message gets memory as a question about the person's own life does
only when one of those memories names the same person, read the same way (``names_any``,
``MemoryEngine.recall_named``). English is left to the gate, which reads
capitalised names already.
"""

from __future__ import annotations

from memory.text import tokenizer
from memory.text.script import to_simplified

# jieba's tag for a person's name.
_PERSON = "nr"
# A name is two characters or more: jieba tags single characters nr too (a surname after 老 or 小), and one
# character is found inside too many memories by accident.
MIN_NAME_CHARS = 2


def person_names(text: str) -> tuple[str, ...]:
    """The words of ``text`` (read as Simplified) that jieba tags as a person's name and its dictionary
    does not hold, each once, in order; () for a message without Han characters."""
    if not tokenizer.has_han(text):
        return ()
    jieba = tokenizer.warm_up()
    from jieba import posseg  # loaded with the dictionary by ``tokenizer.warm_up``

    names: dict[str, None] = {}
    for pair in posseg.lcut(to_simplified(text)):
        word, flag = pair.word, pair.flag
        unknown = not jieba.dt.FREQ.get(word)
        if flag == _PERSON and unknown and len(word) >= MIN_NAME_CHARS and tokenizer.has_han(word):
            names.setdefault(word, None)
    return tuple(names)


def names_any(content: str, names: tuple[str, ...]) -> bool:
    """Whether ``content`` names one of ``names`` as a person too: a name ``person_names`` finds in it holds
    one of them, or is held by one ("孙翠萍" and "翠萍"). A word jieba's model tags a name in a short
    question but not in a memory is seldom one (a dialect word: "巴适", "莫得")."""
    if not names:
        return False
    found = person_names(content)
    return any(name in other or other in name for name in names for other in found)
