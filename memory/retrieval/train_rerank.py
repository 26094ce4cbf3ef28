"""Train the re-ranker (``rerank.py``) on question → persona-line pairs (``rerank_pairs.py``).

    python -m memory.retrieval.train_rerank [--data ../shared/data] [--cache /tmp/x.npz] [--out PATH]

Each mined pair is one softmax over candidates: the line that answers the question, the speaker's other
persona lines (hard negatives, one person's facts), and lines of other speakers of the same language up to
``CANDIDATES`` (the rest of a person's memories). Features are computed as retrieval computes them: the
keyword match share with idf over the candidates, a reciprocal-rank fusion of that keyword ranking with the
cosine ranking (``ranking.RRF_K``, ``ranking.DENSE_WEIGHT``); the model sees the fused top ``rerank.TOP``.
Adam on seeded minibatches, fixed iterations, seeded start: the same data gives the same weights. Speakers
in ``VALIDATION_SHARE`` are held out (split by persona) and the top-1 of cosine, fusion and the model on
them are written into the weights' metadata.
"""

from __future__ import annotations

import argparse
import hashlib
import random
import sys
from pathlib import Path

import numpy as np

from memory.head.embedding import embed
from memory.head.train import evaluation_texts
from memory.model import clauses, quick_extract
from memory.retrieval import ranking, rerank
from memory.retrieval.rerank_pairs import SEED, Pair, exchanges, matched_pairs
from memory.retrieval.rerank_written import WRITTEN_FILE, is_written, written_pairs
from memory.text import tokenizer

VERSION = "2026.12-14r"
CANDIDATES = 20
# How many fused hits each training list holds: what retrieval hands the re-ranker at run time (its
# ``k``, memory.topK's default 7; 2026.11-2 was trained on lists of 5: bench/README.md, issue 35, "rank13").
TOP = 7
# How much of the average question's direction the features' cosines lose (``rerank.centred``; 0: none).
CENTRE_WEIGHT = 0.5
RANK = 0
L2 = 1e-3
ITERATIONS = 300
LEARNING_RATE = 0.01
BATCH = 1024
VALIDATION_SHARE = 0.1
# Copies of each written pair in the training lists (``rerank_written.py``): 3 puts the 469 written
# questions level with the ~800 mined ones (bench/README.md, issue 35, "rank13").
WRITTEN_REPEAT = 3


def _fused_share(cosines: np.ndarray, matches: np.ndarray) -> np.ndarray:
    """Reciprocal-rank fusion of the keyword (match) and cosine rankings, as ``ranking.fuse_ranks``."""
    fused = np.zeros(len(cosines), dtype=np.float32)
    by_text = [i for i in np.argsort(-matches, kind="stable") if matches[i] > 0]
    for position, i in enumerate(by_text, start=1):
        fused[i] += 1.0 / (ranking.RRF_K + position)
    for position, i in enumerate(np.argsort(-cosines, kind="stable"), start=1):
        fused[i] += ranking.DENSE_WEIGHT / (ranking.RRF_K + position)
    return fused


def _match_shares(question: str, lines: list[str], words: dict[str, set[str]]) -> np.ndarray:
    terms = tokenizer.query_terms(question)
    df = {t: sum(1 for line in lines if t in words[line]) for t in terms}
    match = ranking.match_scorer(ranking.term_weights(df, len(lines)), None, None)
    return np.array([match(words[line]) for line in lines], dtype=np.float32)


def candidate_sets(pairs: list[Pair]) -> list[list[str]]:
    """Each pair's candidates, the answering line first (seeded filler from other speakers' lines; a
    written pair's candidates are its person's memories alone, 17–24 of them)."""
    by_lang: dict[str, list[str]] = {}
    for pair in pairs:
        if not is_written(pair):  # filler: the mined persona lines alone
            by_lang.setdefault(pair.lang, []).extend((pair.line, *pair.negatives))
    pools = {lang: sorted(set(lines)) for lang, lines in by_lang.items()}
    rng = random.Random(f"{SEED}-filler")
    out: list[list[str]] = []
    for pair in pairs:
        own = [pair.line, *pair.negatives]
        filler: list[str] = []
        while len(own) + len(filler) < CANDIDATES and not is_written(pair):
            line = pools[pair.lang][rng.randrange(len(pools[pair.lang]))]
            if line not in own and line not in filler:
                filler.append(line)
        out.append(own + filler)
    return out


def centres(pairs: list[Pair], query_vectors: np.ndarray, fit: np.ndarray) -> np.ndarray:
    """(languages, dim): the mean query vector of the trained-on questions of each language, English first
    (``rerank.centred``: the average question whose direction is taken off the cosines)."""
    langs = np.array([p.lang for p in pairs])
    return np.stack([query_vectors[fit & (langs == lang)].mean(axis=0) for lang in ("en", "zh")]).astype(
        np.float32
    )


def tensors(
    pairs: list[Pair],
    sets: list[list[str]],
    query_vectors: np.ndarray,
    line_vector: dict[str, np.ndarray],
    top_n: int = TOP,
    centring: tuple[np.ndarray, float] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(memories (n, top_n, dim), features (n, top_n, F), fusion baseline (n, top_n), kept (n,)): each
    pair's ``top_n`` best candidates by fusion — what retrieval hands the re-ranker —, the answer moved to
    candidate 0; ``kept`` is False where the answer is not among them (the pair is then left out).
    ``centring``: (centres, weight) for the features' cosines, as ``rerank.centred`` at run time."""
    words = {line: set(tokenizer.index_text(line).split()) for s in sets for line in s}
    memories, features, fused_all, kept = [], [], [], []
    for pair, lines, q in zip(pairs, sets, query_vectors, strict=True):
        m = np.stack([line_vector[line] for line in lines]).astype(np.float32)
        cosines = m @ q
        matches = _match_shares(pair.question, lines, words)
        fused = _fused_share(cosines, matches)
        top = np.argsort(-fused, kind="stable")[:top_n]
        kept.append(0 in top)
        order = [0, *[int(i) for i in top if i != 0]][:top_n]
        seen = cosines if centring is None else rerank.centred(cosines, m, q, *centring)
        f = rerank.candidate_features(seen[top], matches[top], fused[top])
        position = {int(i): j for j, i in enumerate(top)}
        rows = [position.get(i, 0) for i in order]
        memories.append(m[order])
        features.append(f[rows])
        fused_all.append(fused[order])
    return np.stack(memories), np.stack(features), np.stack(fused_all), np.array(kept)


def _scores(params: dict[str, np.ndarray], q: np.ndarray, m: np.ndarray, f: np.ndarray) -> np.ndarray:
    bilinear = np.einsum("nr,ncr->nc", q @ params["u"].T, m @ params["v"].T)
    return f @ params["w"] + np.einsum("nd,ncd->nc", q * params["d"], m) + bilinear


def _gradients(
    params: dict[str, np.ndarray], q: np.ndarray, m: np.ndarray, f: np.ndarray, l2: float
) -> tuple[float, dict[str, np.ndarray]]:
    """Mean softmax cross-entropy (answer = candidate 0) plus L2, and its gradients."""
    s = _scores(params, q, m, f)
    s = s - s.max(axis=1, keepdims=True)
    p = np.exp(s)
    p /= p.sum(axis=1, keepdims=True)
    loss = float(-np.log(p[:, 0] + 1e-12).mean())
    g = p
    g[:, 0] -= 1.0
    g /= len(q)
    weighted_m = np.einsum("nc,ncd->nd", g, m)  # Σ_c g m
    a = q @ params["u"].T
    b = m @ params["v"].T
    grads = {
        "w": np.einsum("nc,ncf->f", g, f),
        "d": (q * weighted_m).sum(axis=0),
        "u": np.einsum("nc,ncr->nr", g, b).T @ q,
        "v": a.T @ weighted_m,
    }
    for key in ("d", "u", "v"):
        loss += l2 * float((params[key] ** 2).sum())
        grads[key] = grads[key] + 2 * l2 * params[key]
    return loss, grads


def train(
    q: np.ndarray, m: np.ndarray, f: np.ndarray, rank: int = RANK, l2: float = L2, diagonal: bool = True
) -> dict[str, np.ndarray]:
    """Adam over minibatches in a seeded order; fixed iteration count (``rank`` 0: no bilinear term;
    ``diagonal`` False: no diagonal term, the features alone)."""
    rng = np.random.default_rng(SEED)
    dim = q.shape[1]
    params: dict[str, np.ndarray] = {
        "w": np.zeros(f.shape[2], dtype=np.float32),
        "d": np.zeros(dim, dtype=np.float32),
        "u": (rng.standard_normal((rank, dim)) * 0.01).astype(np.float32),
        "v": (rng.standard_normal((rank, dim)) * 0.01).astype(np.float32),
    }
    first: dict[str, np.ndarray] = {k: np.zeros_like(v) for k, v in params.items()}
    second: dict[str, np.ndarray] = {k: np.zeros_like(v) for k, v in params.items()}
    for step in range(1, ITERATIONS + 1):
        batch = rng.choice(len(q), size=min(BATCH, len(q)), replace=False)
        loss, grads = _gradients(params, q[batch], m[batch], f[batch], l2)
        for key, grad in grads.items():
            if key == "d" and not diagonal:
                continue
            first[key] = 0.9 * first[key] + 0.1 * grad
            second[key] = 0.999 * second[key] + 0.001 * grad**2
            corrected = first[key] / (1 - 0.9**step)
            params[key] = params[key] - LEARNING_RATE * corrected / (
                np.sqrt(second[key] / (1 - 0.999**step)) + 1e-8
            )
        if step % 50 == 0:
            print(f"step {step}: loss {loss:.4f}", file=sys.stderr)
    return {k: np.asarray(v, dtype=np.float32) for k, v in params.items()}


def top1(scores: np.ndarray) -> float:
    """Share of rows whose candidate 0 (the answer) scores highest (ties count against it)."""
    if not len(scores):
        return 0.0
    return float(((scores[:, 0:1] > scores[:, 1:]).all(axis=1)).mean())


def held_out(pair: Pair) -> bool:
    """The validation split, by speaker (the same persona never on both sides)."""
    digest = hashlib.sha1(f"{SEED}\0{pair.persona_key}".encode()).digest()
    return digest[0] < 256 * VALIDATION_SHARE


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="../shared/data", help="the shared data root")
    parser.add_argument("--cache", default=None, help="an .npz cache of e5 vectors (outside the repo)")
    parser.add_argument("--out", default=str(Path(__file__).with_name(rerank.WEIGHTS_FILE)))
    parser.add_argument("--rank", type=int, default=RANK, help="rank of the bilinear term (0: none)")
    parser.add_argument("--l2", type=float, default=L2)
    parser.add_argument("--no-diagonal", action="store_true", help="no diagonal term: the features alone")
    parser.add_argument("--top", type=int, default=TOP, help="fused hits per training list")
    parser.add_argument("--centre", type=float, default=CENTRE_WEIGHT, help="centring weight (0: none)")
    parser.add_argument("--written", default=str(WRITTEN_FILE), help="written pairs (rerank_written.py)")
    parser.add_argument("--no-written", action="store_true", help="the persona-mined pairs alone")
    parser.add_argument("--no-persona", action="store_true", help="the written pairs alone")
    parser.add_argument(
        "--written-repeat", type=int, default=WRITTEN_REPEAT, help="copies of each written pair"
    )
    parser.add_argument(
        "--question-heads",
        action="store_true",
        help="mine answers with the runtime's cutter (quick_extract.QUESTION_HEADS, rounds 19 and 38); off: "
        "the cutter rerank.npz was trained with",
    )
    parser.add_argument(
        "--subjectless",
        action="store_true",
        help="mine answers with the runtime's question rule (round 25: "
        "quick_extract.SUBJECTLESS_STATEMENTS); off: the rule rerank.npz was trained with",
    )
    parser.add_argument(
        "--secret-whereabouts",
        action="store_true",
        help="mine answers with the runtime's secret rule (round 40: quick_extract.SECRET_WHEREABOUTS); "
        "off: the rule rerank.npz was trained with",
    )
    parser.add_argument(
        "--whole-continuations",
        action="store_true",
        help="mine answers with the runtime's clause subjects (round 48: clauses.WHOLE_CONTINUATIONS); off: "
        "the cutter rerank.npz was trained with",
    )
    return parser.parse_args(argv)


def _pairs(
    args: argparse.Namespace, root: Path, repo: Path, cache: Path | None
) -> tuple[list[Pair], dict[str, int], dict[str, dict[str, float]]]:
    """The training pairs (mined, then the written ones ``--written-repeat`` times), the count of each
    source (written pairs once) and the mining report."""
    excluded = evaluation_texts(root, repo)
    pairs: list[Pair] = []
    report: dict[str, dict[str, float]] = {}
    if not args.no_persona:
        found = exchanges(root, excluded)
        pairs, report = matched_pairs(found, lambda texts: embed(texts, "passage", cache))
    written = [] if args.no_written else written_pairs(Path(args.written), excluded)
    by_source: dict[str, int] = {}
    for pair in pairs + written:
        by_source[pair.source] = by_source.get(pair.source, 0) + 1
    return pairs + written * max(args.written_repeat, 1), by_source, report


def _figures(
    model: rerank.Reranker,
    pairs: list[Pair],
    validation: np.ndarray,
    tensors_: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
) -> dict[str, float]:
    """Held-out top-1 of the cosine, the fusion and the model, all and by source (written, mined).
    ``tensors_``: (query vectors, memories, features, fused) of every pair."""
    query_vectors, memories, features, fused = (t[validation] for t in tensors_)
    learned = np.stack(
        [model.scores(q, m, f) for q, m, f in zip(query_vectors, memories, features, strict=True)]
    )
    figures: dict[str, float] = {
        "validation_pairs": int(validation.sum()),
        "top1_cosine": top1(features[:, :, 1]),
        "top1_fused": top1(fused),
        "top1_model": top1(learned),
    }
    written = np.array([is_written(p) for p in pairs])[validation]
    for name, part in (("written", written), ("mined", ~written)):
        figures[f"{name}_pairs"] = int(part.sum())
        figures[f"{name}_top1_fused"] = top1(fused[part])
        figures[f"{name}_top1_model"] = top1(learned[part]) if part.any() else 0.0
    return figures


def main(argv: list[str] | None = None) -> int:
    args = _arguments(argv)
    quick_extract.QUESTION_HEADS = bool(args.question_heads)  # the cutter the pairs are mined with
    quick_extract.SUBJECTLESS_STATEMENTS = bool(args.subjectless)  # and its question rule
    quick_extract.SECRET_WHEREABOUTS = bool(args.secret_whereabouts)  # and its secret rule
    clauses.WHOLE_CONTINUATIONS = bool(args.whole_continuations)  # and the clauses' subjects (round 48)
    root, repo = Path(args.data), Path(__file__).resolve().parents[2]
    cache = Path(args.cache) if args.cache else None
    pairs, by_source, report = _pairs(args, root, repo, cache)
    sets = candidate_sets(pairs)
    lines = sorted({line for s in sets for line in s})
    line_vector = dict(zip(lines, embed(lines, "passage", cache), strict=True))
    query_vectors = embed([p.question for p in pairs], "query", cache)
    outside = ~np.array([held_out(p) for p in pairs])
    average = centres(pairs, query_vectors, outside)
    centring = (average, args.centre) if args.centre else None
    memories, features, fused, kept = tensors(pairs, sets, query_vectors, line_vector, args.top, centring)
    fit = outside & kept
    params = train(query_vectors[fit], memories[fit], features[fit], args.rank, args.l2, not args.no_diagonal)
    model = rerank.Reranker(params["w"], params["d"], params["u"], params["v"], {}, average, args.centre)
    figures = _figures(model, pairs, ~outside & kept, (query_vectors, memories, features, fused))
    meta = {
        "version": VERSION,
        "features": list(rerank.FEATURES),
        "rank": args.rank,
        "l2": args.l2,
        "diagonal": not args.no_diagonal,
        "candidates": CANDIDATES,
        "top": args.top,
        "centre_weight": args.centre,
        "training_pairs": int(fit.sum()),
        "answer_not_in_fused_top": int((~kept).sum()),
        "pairs_by_source": by_source,
        "matching": report,
        "validation": figures,
        "written_repeat": 0 if args.no_written else args.written_repeat,
        "data": "XPersona en/zh valid+test, Synthetic-Persona-Chat valid+test, rerank_written.json "
        "(DATA_CARD_RERANK.md)",
    }
    rerank.Reranker(params["w"], params["d"], params["u"], params["v"], meta, average, args.centre).save(
        args.out
    )
    print(meta)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
