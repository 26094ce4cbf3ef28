"""Text → tokens for the full-text index and for queries, correct for Chinese and English.

SQLite's ``unicode61`` tokenizer treats a run of Han characters as one token, so Chinese recall on raw
text is zero. We therefore segment with jieba (search mode, which also emits the shorter words inside
long ones), stem English words (Snowball), and store the space-joined tokens in the FTS column; FTS5's
``unicode61`` tokenizer then only splits on those spaces. Because the index holds exactly the tokens
this module makes, a term's document frequency can be read from the index's vocabulary table.

A Han word jieba does not know is indexed and searched with its pairs of characters too
(``search_words``): jieba's HMM cuts an unknown name or word whole, and differently as the sentence
around it changes ("我老伴儿邢桂琴" → ``邢桂琴``, "桂琴多大岁数了" → ``桂琴``), so a question that names it in
part, or in full where the memory names it in part, would share no term with it. A word jieba knows is
already cut into the known words inside it by search mode. Changing this changes what is indexed: a home
indexed before is re-indexed when it is opened (``memory/search_refold.py``; ``with_pairs``).

Query terms come from the same words minus stop words, and every term is emitted as a quoted
FTS5 string, so no user text is ever interpreted as FTS syntax (``OR``, ``NEAR(``, ``*``, ``-``...).
"""

from __future__ import annotations

import logging
import re
import threading
import unicodedata
from functools import lru_cache
from importlib import resources
from typing import Any

import snowballstemmer

from memory.text import script
from memory.text.script import to_simplified

# A query longer than this is cut before segmentation: a 1 MB paste must not cost seconds of jieba on
# the reply path, and its first few thousand characters say what it is about.
MAX_QUERY_CHARS = 2000
# More terms than this make an OR query slow and unfocused; the first ones are kept.
MAX_QUERY_TERMS = 24

# Runs of letters/digits/Han, the same units FTS5's unicode61 tokenizer keeps ("_" and "-" split).
_WORD_RUN = re.compile(r"[^\W_]+", re.UNICODE)
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_HAN_WORD = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]{3,}")  # paired when unknown
_init_lock = threading.Lock()
_jieba: Any = None  # the jieba module once its dictionary is loaded


def warm_up() -> Any:
    """Import jieba and load its dictionary (~0.3 s + ~0.7 s) and part-of-speech table (~0.3 s,
    ``names.person_names``) once; returns the module. Blocking: call it off the event loop
    (``warm_up_in_background``, ``asyncio.to_thread``) where a wait matters."""
    global _jieba
    with _init_lock:
        if _jieba is None:
            import jieba

            jieba.setLogLevel(logging.WARNING)
            jieba.initialize()
            import jieba.posseg

            script.warm_up()
            _jieba = jieba
    return _jieba


def warm_up_in_background() -> None:
    """Start ``warm_up`` in a daemon thread and return at once: a process that starts does not wait
    for the dictionary, and the first ``segment`` waits only for what is left of the load."""
    if _jieba is None:
        threading.Thread(target=warm_up, name="jieba-warm-up", daemon=True).start()


def _load_words(name: str) -> frozenset[str]:
    text = resources.files("memory.text").joinpath(name).read_text(encoding="utf-8")
    return frozenset(
        line.strip().lower() for line in text.splitlines() if line.strip() and not line.startswith("#")
    )


STOP_WORDS: frozenset[str] = _load_words("stopwords_en.txt") | _load_words("stopwords_zh.txt")


_stemmer = snowballstemmer.stemmer("english")


def _clean(text: str) -> str:
    # NFKC folds full-width Latin/digits to ASCII; control characters (NUL included) are never content;
    # Traditional Chinese is indexed and searched as Simplified (``script.py``): each finds the other.
    text = to_simplified(unicodedata.normalize("NFKC", text))
    return "".join(ch if ch.isprintable() else " " for ch in text)


@lru_cache(maxsize=65536)
def stem(token: str) -> str:
    """English stem of a lower-case ASCII word; any other token is returned unchanged."""
    if token.isascii() and token.isalpha() and len(token) > 3:
        return _stemmer.stemWord(token)
    return token


def segment(text: str) -> list[str]:
    """Lower-cased word tokens of ``text`` (jieba search mode), unstemmed; punctuation and emoji dropped."""
    return list(_segmented(text))


@lru_cache(maxsize=4096)
def _segmented(text: str) -> tuple[str, ...]:
    """``segment``, cached: jieba costs about a millisecond per message, and the reply path segments the
    user's words for the gate's query terms, the ranking's phrase tokens and the conversation tier."""
    jieba = warm_up()
    out: list[str] = []
    for tok in jieba.lcut_for_search(_clean(text).lower()):
        out.extend(_WORD_RUN.findall(tok))
    return tuple(out)


def search_words(text: str) -> list[str]:
    """The words of ``text`` as searched: ``segment``'s, then the pairs of characters of each Han word of
    three or more characters that jieba's dictionary lacks (the module docstring says why). The pairs come
    after all the words, so two words side by side stay side by side (``ranking``'s phrase bonus reads
    ``query_tokens``, which has no pairs) and a query cut at ``MAX_QUERY_TERMS`` loses pairs first."""
    words = segment(text)
    return words + unknown_pairs(words)


def unknown_pairs(words: list[str]) -> list[str]:
    """The pairs of characters of the unknown Han words among ``words``, each once and none that is
    already one of them ("哈哈哈哈" gives 哈哈 once)."""
    jieba = warm_up()
    have = set(words)
    pairs: dict[str, None] = {}
    for word in dict.fromkeys(words):
        if _HAN_WORD.fullmatch(word) and not jieba.dt.FREQ.get(word):
            pairs.update((word[i : i + 2], None) for i in range(len(word) - 1) if word[i : i + 2] not in have)
    return list(pairs)


def with_pairs(search_text: str) -> str:
    """A search text stored before the pairs (its words as ``index_text`` made them then) with the pairs
    of its unknown words added, as ``index_text`` would add them: what a home indexed before is given
    (``memory/search_refold.py``) without reading its rows' sources again."""
    words = search_text.split()
    pairs = unknown_pairs(words)
    return " ".join([*words, *pairs]) if pairs else search_text


@lru_cache(maxsize=4096)
def index_text(text: str) -> str:
    """The string stored in the FTS column for ``text``: its stemmed tokens joined by single spaces.

    Cached: a memory written again (a merge, an import run twice) is not stemmed again."""
    return " ".join(stem(t) for t in search_words(text))


def has_han(text: str) -> bool:
    """True when ``text`` contains at least one Chinese character."""
    return _HAN.search(text) is not None


_LATIN = re.compile(r"[A-Za-z]")


def is_mostly_chinese(text: str) -> bool:
    """Whether ``text`` has at least as many Han characters as Latin letters, and some Han."""
    han = len(_HAN.findall(text))
    return han > 0 and han >= len(_LATIN.findall(text))


@lru_cache(maxsize=4096)
def query_tokens(text: str) -> tuple[str, ...]:
    """Every stemmed token of a query in order (stop words kept), for phrase-proximity scoring."""
    return tuple(stem(t) for t in segment(text[:MAX_QUERY_CHARS]))


@lru_cache(maxsize=4096)
def query_terms(text: str, max_terms: int = MAX_QUERY_TERMS) -> tuple[str, ...]:
    """Distinct stemmed content-word terms of a query, in order of appearance, stop words removed."""
    seen: dict[str, None] = {}
    for tok in search_words(text[:MAX_QUERY_CHARS]):
        if tok in STOP_WORDS:
            continue
        # A lone Latin letter or digit is noise ("s" of "it's", "2" of a list number).
        if len(tok) == 1 and tok.isascii():
            continue
        seen.setdefault(stem(tok), None)
        if len(seen) >= max_terms:
            break
    return tuple(seen)


def quote_term(term: str) -> str:
    """One FTS5 string literal: double quotes inside are doubled, so the term can never be syntax."""
    return '"' + term.replace('"', '""') + '"'


def match_expression(terms: tuple[str, ...] | list[str]) -> str:
    """An FTS5 MATCH expression that ORs the quoted terms; empty string when there is nothing to match."""
    return " OR ".join(quote_term(t) for t in terms)
