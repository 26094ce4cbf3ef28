"""The stand-in model's long replies for ``bench.streaming``: about ``tokens`` tokens (as the local OpenAI
server streams them: a word with its leading space, a CJK character), in the Markdown chat models write —
paragraphs, **bold**, `inline code`, a list, a short code block — so that partial Markdown is rendered on
every surface, drawn from a seed (the person's message) so a restarted gateway gets the same reply again.
"""

from __future__ import annotations

import random

from localservers.openai_sse import tokens_of

SENTENCE = (
    "the plan keeps every step small and clear so that nothing is lost when the trip changes at the last "
    "minute and the tickets are checked twice before anyone leaves the house in the morning"
)
WORDS = tuple(SENTENCE.split(" "))
CHINESE = "我们先把行李收拾好然后检查车票最后在中午之前出发路上注意安全"


def reply_for(seed: str, tokens: int = 300) -> str:
    """A reply of about ``tokens`` tokens; Chinese when the seed is (the same seed, the same reply)."""
    rng = random.Random(seed)
    if any("\u4e00" <= ch <= "\u9fff" for ch in seed):
        return _chinese(rng, tokens)
    parts: list[str] = []
    count = 0
    while count < tokens:
        block = _block(rng, len(parts))
        parts.append(block)
        count += len(tokens_of(block)) + 1
    return "\n\n".join(parts)


def _block(rng: random.Random, index: int) -> str:
    """One paragraph, list or code block of the reply."""
    if index % 4 == 1:
        return "\n".join(f"- **step {n}**: {' '.join(rng.choices(WORDS, k=6))}" for n in range(1, 4))
    if index % 4 == 3:
        return "```python\ntickets = check(bags)\nprint(tickets)\n```"
    words = rng.choices(WORDS, k=rng.randint(24, 36))
    words[rng.randrange(len(words))] = f"`{rng.choice(WORDS)}`"
    words[rng.randrange(len(words))] = f"**{rng.choice(WORDS)}**"
    return " ".join(words).capitalize() + "."


def _chinese(rng: random.Random, tokens: int) -> str:
    chars = [rng.choice(CHINESE) for _ in range(tokens)]
    for n in range(60, len(chars), 60):
        chars[n] = "。\n\n"
    return "**计划**：" + "".join(chars) + "。"
