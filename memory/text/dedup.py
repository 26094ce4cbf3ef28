"""When two memories say the same thing: exact-normalised keys and lexical near-duplicate similarity.

A store that keeps "User likes coffee." and "the user likes coffee" as two rows wastes prompt space and
splits access counts. Exact duplicates are found through ``norm_key`` (an index lookup); near
duplicates through the Dice coefficient of content-word sets. Negations, numbers and names are content
words here on purpose: "likes coffee" and "does not like coffee" must never merge.
"""

from __future__ import annotations

import hashlib
import unicodedata

from memory.text.tokenizer import STOP_WORDS, segment, stem

# Dice similarity at or above which two memories of one owner are merged. Measured on LoCoMo's 2,541
# observations with `python -m bench.dedup_threshold`: pairs merged at 0.6/0.7/0.75/0.8/0.85/0.9 are
# 271/80/37/25/10/5. Below 0.85 related-but-different facts start to qualify ("plans to submit a screenplay"
# vs "submitted a screenplay"); at 0.85 about half of the 10 pairs are restatements and the rest share
# every word with roles swapped ("A supports B" vs "B supports A"), a limit of any bag-of-words test.
# A merge keeps every source reference, so no origin is lost.
NEAR_DUPLICATE_DICE = 0.85

NEGATIONS = frozenset(
    {"not", "no", "nor", "never", "don", "doesn", "didn", "isn", "wasn", "aren", "weren", "won", "wouldn"}
    | {"shouldn", "couldn", "hasn", "haven", "hadn", "不", "没", "没有", "别", "不是", "未", "无", "非"}
)


# Punctuation that only shapes a sentence. Every other non-word character ("#" of C#, "+" of C++, "%",
# "$", emoji) is part of what a fact says.
_SENTENCE_PUNCT = frozenset(",.;:!?'\"()[]{}<>、，。；：！？“”‘’（）《》【】「」…—-_~·`")


def _symbols(text: str) -> set[str]:
    return {ch for ch in text if not ch.isalnum() and not ch.isspace() and ch not in _SENTENCE_PUNCT}


def norm_key(content: str) -> str:
    """Key equal for texts that differ only in case, width, spacing or punctuation.

    Symbols (``+`` of C++, ``#`` of C#, emoji) are kept: they change what a fact says.
    """
    folded = unicodedata.normalize("NFKC", content).casefold()
    kept = "".join(ch for ch in folded if not ch.isspace() and ch not in _SENTENCE_PUNCT)
    return hashlib.blake2b(kept.encode("utf-8"), digest_size=16).hexdigest()


def content_words(content: str) -> frozenset[str]:
    """Stemmed tokens minus stop words, with negations and symbols kept (they change a fact's meaning).

    The tokenizer drops symbols, so "C++" and "C#" would both be "c"; adding each symbol character
    as a word of its own keeps them apart.
    """
    words = {stem(t) for t in segment(content) if t not in STOP_WORDS or t in NEGATIONS}
    words.update(_symbols(unicodedata.normalize("NFKC", content)))
    return frozenset(words)


def dice(a: frozenset[str], b: frozenset[str]) -> float:
    """Dice coefficient of two word sets: 2|A∩B| / (|A|+|B|); 0 when both are empty."""
    if not a and not b:
        return 0.0
    return 2 * len(a & b) / (len(a) + len(b))


def is_near_duplicate(a: frozenset[str], b: frozenset[str], threshold: float = NEAR_DUPLICATE_DICE) -> bool:
    """True when two content-word sets are similar enough to be one memory."""
    # A difference in negation flips the meaning whatever the overlap.
    if (a & NEGATIONS) != (b & NEGATIONS):
        return False
    return dice(a, b) >= threshold
