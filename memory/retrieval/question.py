"""What a message asks, for retrieval: the question inside chatter, and whether it needs several memories.

Pure functions, no I/O. Two families of question are the weakest in the retrieval benchmarks
(``bench.retrieval_quality``'s ``by_kind``, ``bench.conversation_recall``):

* questions that need several memories ("how many times…", "which … have I …", "list my …", "我一共…",
  "哪些…"): one memory rarely answers them, so ``memories_wanted`` asks for more of them, and
  ``budget_memories`` keeps what is injected within a character budget;
* questions buried in chatter (a paragraph about something else, then the question): the words of the
  paragraph outweigh the question's, so ``question_focus`` gives retrieval the question sentence, with the
  sentence before it for context.
"""

from __future__ import annotations

import re

from memory.records import Retrieved
from memory.text.script import to_simplified

# Questions that gather: counts, lists, every/all of something the person has or did.
_EN_SEVERAL = re.compile(
    r"\bhow many\b|\bhow often\b|\bwhat (?:are|were) (?:all )?(?:my|the)\b|"
    r"\bwhich\b.*\b(?:have|did|do)\s+i\b|"
    r"\b(?:list|name) (?:all )?(?:my|the)\b|\ball (?:of )?(?:my|the)\b|\bevery\b|\bwhat kinds? of\b|"
    r"\bwhat (?:activities|events|things|books|places|hobbies|games|pets|instruments)\b",
    re.I,
)
_ZH_SEVERAL = re.compile("一共|总共|几次|多少次|哪些|都有什么|都有哪|都做过|都去过|列出|所有的?|每次|几个")
# How many memories such a question gets, as a multiple of memory.topK.
SEVERAL_FACTOR = 2
# The memory block's budget for its memories' text (characters, about 600 tokens): more memories for a
# gathering question, never an unbounded prompt.
MEMORY_BLOCK_CHARS = 2400

# A sentence ends at a terminator (kept with it) or a line break.
_SENTENCE = re.compile(r"[^.!?。！？\n]+[.!?。！？]*")
_EN_QUESTION_START = re.compile(
    r"^\s*(?:what|when|where|who|whom|whose|which|why|how|do|does|did|is|are|was|were|am|have|has|"
    r"can|could|would|should|will)\b",
    re.I,
)
# Messages shorter than this are one thought: nothing to focus on (MADial's dialogues, 100-200 characters
# of one topic, lost recall when focused at 120).
FOCUS_MIN_CHARS = 200


def memories_wanted(text: str, top_k: int) -> int:
    """How many memories to retrieve for this message: ``top_k``, more for a gathering question."""
    several = _EN_SEVERAL.search(text) or _ZH_SEVERAL.search(to_simplified(text))
    return top_k * SEVERAL_FACTOR if several else top_k


def budget_memories(memories: list[Retrieved], budget: int = MEMORY_BLOCK_CHARS) -> list[Retrieved]:
    """The best memories whose text fits ``budget`` characters (the first one always)."""
    kept: list[Retrieved] = []
    used = 0
    for mem in memories:
        if kept and used + len(mem.content) > budget:
            break
        kept.append(mem)
        used += len(mem.content)
    return kept


def _is_question(sentence: str) -> bool:
    stripped = sentence.strip()
    return stripped.endswith(("?", "？")) or bool(_EN_QUESTION_START.match(stripped))


def question_focus(text: str) -> str:
    """The part of a long message retrieval should search for: the question it ends with and the sentence
    before it; the whole text when it is short or does not end with a question."""
    if len(text) < FOCUS_MIN_CHARS:
        return text
    sentences = [s.strip() for s in _SENTENCE.findall(text) if s.strip()]
    if len(sentences) < 3 or not _is_question(sentences[-1]):
        return text
    return " ".join(sentences[-2:])
