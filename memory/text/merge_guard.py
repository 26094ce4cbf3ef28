"""The lexical veto on semantic dedup: may two memories an embedding finds near-identical be merged?

Why it exists: a sentence embedding averages meaning over all tokens, so the few tokens that make two
otherwise identical sentences different facts barely move the vector. When only a number, a date, a
name, a negation or who-did-what-to-whom changes, e5-small still scores the pair 0.98-0.997, inside the
band of real restatements; no cosine threshold alone keeps them apart. The costs are lopsided: a wrong
merge loses a fact for good (the engine keeps one row's text), while a missed merge only costs a
duplicate row. So ``guard_allows_merge`` compares exactly those tokens and vetoes on any disagreement,
and the engine merges only when the cosine is high (``writes.SEMANTIC_DUP_COSINE``) *and* the guard
allows it.

The rules were checked on hand-labelled LoCoMo and MADial (zh/en) memory pairs and on minimal contrast
and restatement probes with ``python -m bench.dedup_threshold --embedding local`` (numbers in the dedup
section of bench/README.md).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from memory.text.dedup import NEGATIONS
from memory.text.script import to_simplified
from memory.text.tokenizer import STOP_WORDS, warm_up

_WORD = re.compile(r"[A-Za-z\u00c0-\u024f]+(?:['’][A-Za-z]+)*")  # Latin words; Han text is handled apart
_DIGITS = re.compile(r"(?<![0-9A-Za-z.])\d+(?:[.,:]\d+)*(?:st|nd|rd|th|s)?(?![0-9A-Za-z])")
# A token that mixes letters and digits is an identifier ("Paul14", "B12", "COVID-19", "v2"): a name,
# not noise, and two different ones are two different things.
_IDENTIFIER = re.compile(r"(?<![A-Za-z0-9_])(?=[A-Za-z0-9_-]*[A-Za-z])(?=[A-Za-z0-9_-]*[0-9])[A-Za-z0-9_-]+")
# …but a number with its ordinal or unit ("1st", "1990s", "5pm", "10km") is a number of rule 1.
_NUMBER_WITH_UNIT = re.compile(
    r"\d+(?:st|nd|rd|th|s|am|pm|k|km|kg|g|m|cm|mm|h|hrs?|min|mins|ml|l|gb|mb|tb|x)"
)
_SENTENCE_START = re.compile(r"(?:^|[.!?。！？])\s*$")
_EN_CARDINALS = [
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
    "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty",
]  # fmt: skip
_EN_NUMBERS = {w: str(i) for i, w in enumerate(_EN_CARDINALS)} | {
    "thirty": "30", "forty": "40", "fifty": "50", "sixty": "60", "seventy": "70", "eighty": "80",
    "ninety": "90", "hundred": "100", "hundreds": "100", "thousand": "1000", "thousands": "1000",
    "million": "1000000", "millions": "1000000", "dozen": "12", "dozens": "12", "twice": "2",
    "first": "1", "third": "3", "fourth": "4", "fifth": "5", "sixth": "6", "seventh": "7", "eighth": "8",
    "ninth": "9", "tenth": "10", "half": "0.5",
}  # fmt: skip
_ZH_DIGITS = {"〇": 0, "零": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7}
_ZH_DIGITS |= {"八": 8, "九": 9}
_ZH_UNITS = {"十": 10, "百": 100, "千": 1000, "万": 10_000, "亿": 100_000_000}
# A Chinese numeral counts only before a classifier/unit or after 第: "一直", "一起", "十分" (very) are not
# numbers. A lone 一 before a classifier is the article ("一个", "一辆") and is not counted either.
_ZH_CLASSIFIERS = (
    "个位名次岁年月日号天周点米元块只本辆张件条双对套首幅场届秒斤里层级"
    "门节倍口部台枚颗朵棵盒瓶杯碗册页篇项支把头匹座所家间克吨期遍趟分"
)
_ZH_NUMBER = re.compile(
    rf"(第?)([〇零一二两三四五六七八九十百千万亿]+)(?=[{_ZH_CLASSIFIERS}])|第([〇零一二两三四五六七八九十百千万亿]+)"
)
_MONTHS = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
]
# "may", "march" and "august" are also ordinary words: only capitalised forms are months.
_MONTHS_CAPITAL_ONLY = {"may", "march", "august"}
_MONTH_ABBR = {"Jan", "Feb", "Mar", "Apr", "Jun", "Jul", "Aug", "Sep", "Sept", "Oct", "Nov", "Dec"}
_WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
_TIME_WORDS = {
    "yesterday", "today", "tonight", "tomorrow", "weekend", "weekends", "morning", "afternoon", "evening",
    "week", "weeks", "month", "months", "year", "years", "decade", "daily", "weekly", "monthly", "yearly",
    "annual", "spring", "summer", "autumn", "winter", "christmas", "thanksgiving", "halloween", "easter",
    "birthday", "anniversary", "ago", "holiday", "holidays", "vacation",
}  # fmt: skip
_TIME_DIRECTIONS = {"last", "next", "this", "past", "previous", "coming", "upcoming"}
_ZH_TIMES = re.compile(
    "今天|昨天|明天|前天|后天|今晚|昨晚|明晚|今早|上周|下周|本周|这周|上星期|下星期|周末|上个月|下个月|这个月|"
    "本月|去年|今年|明年|前年|早上|上午|中午|下午|傍晚|晚上|凌晨|春天|夏天|秋天|冬天|寒假|暑假|春节|元旦|中秋|"
    "国庆|圣诞|新年|端午|万圣|生日|周年|星期[一二三四五六日天]|礼拜[一二三四五六日天]|周[一二三四五六日]"
)
# Kinship and role words name *who* a fact is about as much as a proper name does.
_PEOPLE = {
    "mother": "mom mum mother mommy 妈妈 母亲 妈",
    "father": "dad father daddy 爸爸 父亲 爸",
    "parents": "parents 父母 爸妈",
    "grandmother": "grandma grandmother granny 奶奶 外婆 姥姥",
    "grandfather": "grandpa grandfather 爷爷 外公 姥爷",
    "grandparents": "grandparents 祖父母",
    "brother": "brother brothers 哥哥 弟弟 堂哥 堂弟 表哥 表弟",
    "sister": "sister sisters 姐姐 妹妹 堂姐 堂妹 表姐 表妹",
    "uncle": "uncle 舅舅 叔叔 伯伯 姑父 姨父",
    "aunt": "aunt 阿姨 姑姑 舅妈 婶婶 姨妈",
    "cousin": "cousin cousins",
    "child": "son daughter kid kids child children 儿子 女儿 孩子",
    "spouse": "wife husband partner boyfriend girlfriend 妻子 丈夫 老婆 老公 男朋友 女朋友",
    "teacher": "teacher teachers coach 老师 教练",
    "classmate": "classmate classmates 同学",
    "neighbor": "neighbor neighbors neighbour 邻居",
}  # fmt: skip
_PEOPLE_WORDS = {w: canon for canon, words in _PEOPLE.items() for w in words.split()}
_ZH_PEOPLE = re.compile(
    "|".join(sorted((w for w in _PEOPLE_WORDS if not w.isascii()), key=len, reverse=True))
)
_EN_NEGATIONS = {"not", "no", "never", "nor", "none", "nothing", "nobody", "neither", "cannot", "without"}
_ZH_NEGATIONS = {w for w in NEGATIONS if not w.isascii()} | {
    "未能", "无法", "不能", "不会", "没能", "不再", "不想", "不要", "从不", "从没", "从未", "并不",
    "并没有", "不肯", "不敢", "不用", "不必", "不让", "不愿", "不愿意", "毫无", "绝不", "决不", "尚未",
    "还没", "还没有", "不曾", "没法", "不可", "不该", "不应该", "不许", "未曾", "不太", "不怎么",
}  # fmt: skip
# jieba keeps a negation fused with its verb as one word (不吃, 没去, 从来不): a word that starts with a
# negation character is a negation, unless it is one of these common words that only start with one.
_ZH_NEGATION_PREFIXES = ("不", "没", "未", "别", "从不", "从来不", "从没", "从未")
_ZH_NOT_NEGATIONS = {
    "不错", "不好意思", "不仅", "不仅如此", "不久", "不断", "不过", "不少", "不同", "不然", "不如", "不管",
    "不止", "不时", "不禁", "不由得", "不知不觉", "不客气", "不得不", "别人", "别的", "别墅", "别处",
    "未来", "没关系", "没事", "不一会儿", "不光", "不但",
}  # fmt: skip
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
_TITLE = re.compile(r"《([^》]+)》")


def _zh_number(run: str) -> str:
    """The value of a Chinese numeral ("一百" → "100", "二十三" → "23"); the run itself if it is odd."""
    total, section, digit = 0, 0, None
    for ch in run:
        if ch in _ZH_DIGITS:
            if digit is not None:  # "一二" / "五六" are ranges or lists, not one number
                return run
            digit = _ZH_DIGITS[ch]
        elif ch in ("万", "亿"):
            total += (section + (digit or 0)) * _ZH_UNITS[ch]
            section, digit = 0, None
        else:
            section += (1 if digit is None else digit) * _ZH_UNITS[ch]
            digit = None
    return str(total + section + (digit or 0))


@dataclass(frozen=True)
class Anchors:
    """What a guard compares: the parts of a text that an embedding barely sees but that change the fact."""

    numbers: frozenset[str]
    times: frozenset[str]
    names: tuple[str, ...]  # capitalised words, lower-cased, in order of first appearance
    people: frozenset[str]
    titles: frozenset[str]
    negations: int
    words: frozenset[str]  # every lower-cased word, to tell whether a name occurs in the other text


@lru_cache(maxsize=65536)
def anchors(text: str) -> Anchors:
    """Numbers, dates/times, names, kinship words, 《titles》 and the negation count of ``text``."""
    text = unicodedata.normalize("NFKC", text)
    numbers: set[str] = set()
    for m in _DIGITS.finditer(text):
        raw = re.sub(r"(st|nd|rd|th|s)$", "", m.group()).replace(",", "")
        try:
            numbers.add(f"{float(raw):g}" if ":" not in raw else raw)
        except ValueError:
            numbers.add(raw)
    for m in _ZH_NUMBER.finditer(text):
        ordinal, run = (m.group(1), m.group(2)) if m.group(2) else ("第", m.group(3))
        if run == "一" and not ordinal:
            continue
        if run in ("十", "万") and text[m.end() : m.end() + 1] == "分":  # 十分 / 万分 = "very"
            continue
        numbers.add(_zh_number(run))
    times = {t for t in _ZH_TIMES.findall(text)}
    names: list[str] = []
    people = {_PEOPLE_WORDS[w] for w in _ZH_PEOPLE.findall(text)}
    negations = 0
    words: set[str] = set()
    tokens = list(_WORD.finditer(text))
    for i, m in enumerate(tokens):
        tok = re.sub(r"['’]s?$", "", m.group())
        low = tok.lower()
        words.add(low)
        prev = tokens[i - 1].group().lower() if i else ""
        if low in _EN_NUMBERS:
            numbers.add(_EN_NUMBERS[low])
        if low in _EN_NEGATIONS or low.endswith(("n't", "n’t")):
            negations += 1
        if low in _PEOPLE_WORDS:
            people.add(_PEOPLE_WORDS[low])
        is_month = low in _MONTHS and (tok[0].isupper() or low not in _MONTHS_CAPITAL_ONLY)
        time = None
        if is_month or tok in _MONTH_ABBR or low.rstrip("s") in _WEEKDAYS:
            time = low[:3]  # "Sept" = "September" = "sep", "Sundays" = "sun"
        elif low in _TIME_WORDS:
            time = low.rstrip("s") if low.endswith(("weeks", "months", "years", "weekends")) else low
        if time:
            times.add(time)
            if prev in _TIME_DIRECTIONS:  # "next week" ≠ "last week"
                times.add(f"{prev} {time}")
            continue
        if tok[0].isupper() and tok != "I" and low not in _PEOPLE_WORDS:
            sentence_start = _SENTENCE_START.search(text[: m.start()]) is not None
            if (not sentence_start or low not in STOP_WORDS) and low not in names:
                names.append(low)
    if _HAN.search(text):
        negations += sum(1 for t in warm_up().lcut(text) if _is_zh_negation(t))
    return Anchors(
        numbers=frozenset(numbers),
        times=frozenset(times),
        names=tuple(names),
        people=frozenset(people),
        titles=frozenset(_TITLE.findall(text)),
        negations=negations,
        words=frozenset(words),
    )


@lru_cache(maxsize=65536)
def identifiers(text: str) -> frozenset[str]:
    """The letters-and-digits tokens of ``text``, lower-cased, without numbers that carry a unit."""
    found = (m.group().lower().strip("-_") for m in _IDENTIFIER.finditer(text))
    return frozenset(t for t in found if not _NUMBER_WITH_UNIT.fullmatch(t))


def _is_zh_negation(word: str) -> bool:
    """A negation word of jieba's segmentation, also when fused with its verb (不吃, 没去)."""
    if word in _ZH_NEGATIONS:
        return True
    return word.startswith(_ZH_NEGATION_PREFIXES) and word not in _ZH_NOT_NEGATIONS


def guard_allows_merge(a: str, b: str) -> bool:
    """False when two similar-looking memories may state different facts; True when merging is safe so far.

    Sentence embeddings average meaning over tokens, so the few tokens that make two otherwise identical
    sentences different facts barely move the vector. Measured with e5-small (CONTRAST_PROBES in
    bench/dedup_threshold.py): "went to an LGBTQ support group on 7 May 2023" vs "... on 2 June 2023"
    0.992, "Sam appreciates Evan's support" vs "Evan appreciates Sam's support" 0.997, 2023年5月7日 vs
    2023年6月2日 0.996, 妈妈 vs 爸爸 0.985, 两只猫 vs 三只猫 0.981, "last Saturday" vs "last Sunday" 0.989,
    while real restatements score 0.975-0.993. No cosine threshold separates these, so this guard looks
    only at those tokens and never merges when they disagree:

    1. Numbers: the sets of numbers must be equal: digits ("7", "2,000" = "2000", "7th" = "7") and number
       words ("seven", "first", "dozen"; Chinese numerals before a classifier or after 第: "两只", "第六名",
       "一百米" = 100; a lone 一 before a classifier is the article and is ignored, as are 十分/万分 "very").
    2. Dates and times: the sets must be equal: month names (May/March/August only when capitalised),
       weekdays, day words (today, yesterday, tonight, weekend, morning…), units and their direction
       ("week", "next week" ≠ "last week"), seasons, holidays, birthday; Chinese 今天/上周/周末/去年/星期五…
    3. Names: every capitalised word of one text (not "I", not a sentence-initial stop word) must occur,
       in any case, in the other; a sentence-initial "Painting" is matched by "painting".
    4. Roles: the names the two texts share must appear in the same order ("Sam thanks Evan" vs "Evan
       thanks Sam" is blocked; so is the harmless "A met B" / "B met A": a missed merge only costs a row).
    5. People: kinship and role words (mom/妈妈, grandpa/爷爷, teacher/老师, classmate/同学…, folded to one
       word per relation) must be the same set.
    6. Titles: 《书名》 must be the same set.
    7. Negation: the number of negations must be equal (not/no/never/n't/without…; 不/没/没有/未能/无法…
       counted on jieba's precise segmentation, so idioms such as 迫不及待 are not negations).
    8. Identifiers: tokens that mix letters and digits ("Paul14", "B12", "COVID-19") must be the same set:
       "My colleague Paul14 likes jazz" and "… Paul15 …" are two people (the digits of an identifier are
       not a number of rule 1, and its letters alone would pass rule 3).

    Precision first: every rule errs towards blocking (a blocked restatement only costs a duplicate row).
    It cannot see a different object or activity named by an ordinary noun ("essay competition" vs "drawing
    competition", 0.985 in Chinese) nor Chinese-script names and places (北京 vs 上海): the cosine threshold
    has to keep those apart.
    """
    a, b = to_simplified(a), to_simplified(b)  # 女兒 and 女儿 are one relation (``script.py``)
    fa, fb = anchors(a), anchors(b)
    if (fa.numbers, fa.times, fa.people, fa.titles, fa.negations, identifiers(a)) != (
        fb.numbers,
        fb.times,
        fb.people,
        fb.titles,
        fb.negations,
        identifiers(b),
    ):
        return False
    if any(n not in fb.words for n in fa.names) or any(n not in fa.words for n in fb.names):
        return False
    shared = set(fa.names) & set(fb.names)
    return [n for n in fa.names if n in shared] == [n for n in fb.names if n in shared]
