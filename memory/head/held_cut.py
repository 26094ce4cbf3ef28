"""A head's combined cut chosen again on held-out chit-chat lines, as the keeper reads them (issue 35,
round 50).

    python -m memory.head.held_cut --head IN.npz --out OUT.npz [--data ../shared/data]
        (--like HEAD.npz | --rate en=0.04,zh=0.03) [--skip 1000] [--lines 2000]

Why: the trainer chooses each language's combined cut (``Combined.threshold``) so that at most
``train.TELL_FALSE_RATE`` of the training chit-chat lines pass, each read out of fold. Round 49's seed
control (DATA_CARD "Round 49") showed that rate does not carry to lines no member saw: the same commands
with another ``--seed`` passed twice as many held-out lines (DailyDialog 0.042 → 0.064), so two trainings
kept different numbers of tells at different false-keep rates and could not be compared. Here the cut is
moved until the keeper itself (``FactKeeper.facts``: candidates, the head's verdicts, the rules) keeps
something of ``rate`` of held-out lines: every head then sits at the same false-keep rate, and a training
is better only if it keeps more tells there.

The lines: the held-out half of each corpus (``corpus.chitchat_split``, dialogues no training reads), its
distinct lines from ``--skip`` on — after the first 500 ``bench.everyday --corpora`` measures and the first
1,000 a reader judged (``told_lines``) — so no measure reads a line a cut was chosen on. ``--like HEAD``:
each language's rate is the share HEAD's own cut passes on those lines (the operating point of the head
shipped before). Only ``combined``'s threshold column changes; ``meta.held_cut`` says how.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from memory.head.corpus import CHAT_CORPORA, distinct_lines
from memory.head.model import LANGUAGES
from memory.head.outputs import save_head
from memory.head.swap import head_file

if TYPE_CHECKING:
    from memory.model.keeper import FactKeeper

SKIP = 1000  # the held-out lines a reader judged (``told_lines``) and bench.everyday measures come first
TOLERANCE = 1e-3  # how near the smallest passing shift the bisection ends (log-odds units)
SPAN = 4.0  # the shifts searched: the cut ± SPAN

PassShare = Callable[[float], Awaitable[float]]
Arrays = dict[str, np.ndarray]


def held_lines(root: Path, lang: str, skip: int = SKIP, lines: int = 2000) -> list[str]:
    """The distinct held-out lines of ``lang``'s corpus from ``skip`` on, at most ``lines``."""
    corpus = next(name for name, of in CHAT_CORPORA if of == lang)
    return distinct_lines(root, corpus, held_out=True)[skip : skip + lines]


def shifted(arrays: Arrays, lang: str, shift: float) -> Arrays:
    """``arrays`` with ``lang``'s combined cut moved by ``shift`` (higher: fewer clauses kept)."""
    combined = np.asarray(arrays["combined"], dtype=np.float64).reshape(len(LANGUAGES), 4).copy()
    combined[LANGUAGES.index(lang), 3] += shift
    return {**arrays, "combined": combined.astype(np.asarray(arrays["combined"]).dtype)}


async def smallest_shift(
    share_at: PassShare, rate: float, span: float = SPAN, tol: float = TOLERANCE
) -> float:
    """The smallest shift in [-span, span] at which ``share_at(shift)`` is at most ``rate``, by bisection:
    the share of lines kept never rises as the cut rises. ``span`` when even that keeps more."""
    low, high = -span, span
    if await share_at(low) <= rate:
        return low
    if await share_at(high) > rate:
        return high
    while high - low > tol:
        middle = (low + high) / 2
        if await share_at(middle) <= rate:
            high = middle
        else:
            low = middle
    return high


async def kept_share(head: Path, lines: list[str], keeper: FactKeeper) -> float:
    """The share of ``lines`` the keeper keeps anything of while ``head`` is the head file."""
    with head_file(head):
        kept = [bool(await keeper.facts(text)) for text in lines]
    return sum(kept) / max(len(lines), 1)


async def choose(
    arrays: Arrays, lines: dict[str, list[str]], rates: dict[str, float], like: Path | None
) -> tuple[Arrays, dict[str, dict[str, float]]]:
    """Each language's cut moved to its rate (``like``'s share on the same lines where given); the new
    arrays and, per language, the rate, the shift and the shares before and after."""
    from memory.engine import MemoryEngine
    from memory.model.keeper import FactKeeper
    from memory.vectors.cache import build_cached_embedder
    from memory.vectors.embedding import EmbeddingSettings

    report: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as workspace:
        engine = await MemoryEngine.open(Path(workspace) / "memory.db")
        embedder = build_cached_embedder(EmbeddingSettings(provider="local"), engine.store.vectors)
        keeper = FactKeeper(embedder)
        trial = Path(workspace) / "trial.npz"
        try:
            for lang, texts in lines.items():
                rate = await kept_share(like, texts, keeper) if like else rates[lang]
                base = arrays

                async def share_at(
                    shift: float, lang: str = lang, texts: list[str] = texts, base: Arrays = base
                ) -> float:
                    save_head(str(trial), shifted(base, lang, shift))
                    return await kept_share(trial, texts, keeper)

                before = await share_at(0.0)
                shift = await smallest_shift(share_at, rate)
                after = await share_at(shift)
                arrays = shifted(base, lang, shift)
                report[lang] = {
                    "lines": len(texts),
                    "rate": rate,
                    "shift": shift,
                    "before": before,
                    "after": after,
                }
        finally:
            if embedder is not None:
                await embedder.close()
            await engine.close()
    return arrays, report


def parse_rates(text: str) -> dict[str, float]:
    """``en=0.04,zh=0.03`` → {"en": 0.04, "zh": 0.03}; a language not in ``LANGUAGES`` or a rate outside
    (0, 1) is refused."""
    rates: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        lang, _, value = part.partition("=")
        if lang not in LANGUAGES or not 0.0 < float(value or "nan") < 1.0:
            raise argparse.ArgumentTypeError(f"not a language=rate between 0 and 1: {part!r}")
        rates[lang] = float(value)
    return rates


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point: writes ``--out`` and prints the report as JSON."""
    parser = argparse.ArgumentParser(
        prog="python -m memory.head.held_cut", description=(__doc__ or "").split("\n")[0]
    )
    parser.add_argument("--head", required=True, help="the head file whose cuts are moved")
    parser.add_argument("--out", required=True, help="where the head with the new cuts is written")
    parser.add_argument("--data", default="../shared/data", help="the shared data folder (chat corpora)")
    choice = parser.add_mutually_exclusive_group(required=True)
    choice.add_argument("--like", help="a head file: take its shares of the same lines as the rates")
    choice.add_argument("--rate", type=parse_rates, help="share of lines kept: en=0.04,zh=0.03")
    parser.add_argument("--skip", type=int, default=SKIP, help="held-out lines left out first")
    parser.add_argument("--lines", type=int, default=2000, help="held-out lines read per corpus")
    args = parser.parse_args(argv)
    for given in (args.head, args.like):
        if given and not Path(given).is_file():
            parser.error(f"no head file at {given}")
    with np.load(args.head) as data:
        arrays = {k: data[k] for k in data.files}
    if "combined" not in arrays:
        parser.error(f"{args.head} has no combined score (a head before round 6): no cut to move")
    root = Path(args.data)
    if not (root / "chat").is_dir():
        parser.error(f"no chat corpora under {root} (the shared data folder)")
    langs = list(args.rate) if args.rate else list(LANGUAGES)
    lines = {lang: held_lines(root, lang, args.skip, args.lines) for lang in langs}
    like = Path(args.like) if args.like else None
    arrays, report = asyncio.run(choose(arrays, lines, args.rate or {}, like))
    meta = json.loads(str(arrays["meta"]))
    meta["held_cut"] = {"like": args.like, "skip": args.skip, "per_language": report}
    arrays["meta"] = np.array(json.dumps(meta, sort_keys=True))
    save_head(args.out, arrays)
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
