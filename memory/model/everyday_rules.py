"""The offline rules for everyday life: first-person statements about people, pets, health, work, home and
possessions, education, dates, routines and plans, in English (``everyday_zh.py`` holds the Chinese forms,
``everyday_around.py`` statements about named people, pets and household things, ``quick_rules.py`` the
older tables: names, where one lives and works, tastes, tools, decisions, events).

Each rule is a *form* of first-person statement, not an example sentence: "my/our <something> <verb> …",
"<name> is my <relation>", "I <verb of having, doing or being> … <a word of an everyday class>",
"I … every <day>", "I want to …". A form alone keeps nothing: the sentence must also name an everyday
class (``memory/text/category.py``), which is also what files it in a category that does not fade. The
rules see the normalised sentence of ``quick_extract.py`` (lower case, fillers and leading time words
removed, not a question, not about the assistant).
"""

from __future__ import annotations

import re

from memory.model.everyday_match import PLAN, class_of, class_or_when, match_for, whole
from memory.model.everyday_zh import EVERYDAY_ZH
from memory.model.quick_rules import Match, Rules
from memory.text.category import everyday_class


def _verb_class(m: re.Match[str]) -> Match | None:
    """ "I <verb> …": the object's class, else the class the verb itself says ("I drive a Lada")."""
    found = everyday_class(m.group("rest"))
    verb = m.group("verb")
    return match_for(found or _VERB_CLASS.get(verb) or _VERB_CLASS.get(verb.split()[-1]))


_VERB_CLASS = {
    "drive": "home",
    "ride": "home",
    "own": "home",
    "teach": "work",
    "work": "work",
    "worked": "work",
    "volunteer": "work",
    "coach": "work",
    "study": "education",
    "studied": "education",
    "majored": "education",
    "graduated": "education",
    "attend": "education",
    "suffer": "health",
    "diagnosed": "health",
    "report to": "work",
    "take": None,
    "speak": "education",
    "earn": "work",
    "support": "tastes",
    "moved": "home",
    "pay": "home",
    "manage": "work",
    "failed": "education",
    "rent": "home",
    "commute": "work",
    "trained": "work",
    "qualified": "work",
    "retrained": "work",
    "dropped out": "education",
}

_NOT_HABITS = (
    r"think|thought|feel|felt|guess|mean|meant|know|knew|said|say|told|tell|asked|ask|wonder|hope|wish|"
    r"miss|missed|am|was|were|had|did|used|just|can't|cannot|can|could|should|would|will|won't|need|"
    r"see|saw|remember|forgot|forget|bet|suppose|agree|love|like|hate|want"
)
# The speaker as subject, also before a contraction ("i've got", "i'd like", "we've been").
_I = r"^(?:i|we|[a-z]+ and i)(?: |(?='))"
_EN_ADVERB = r"(?:also |still |now |currently |usually |normally |always |often |sometimes |really |)"
_BE_A_STATE = (
    r"married|divorced|engaged|widowed|separated|single|retired|self-employed|unemployed|pregnant|"
    r"type \w+ diabetic|"
    r"diabetic|asthmatic|epileptic|anaemic|anemic|celiac|coeliac|colou?r-?blind|deaf|blind|"
    r"left-handed|right-handed|vegetarian|vegan|pescatarian|short-sighted|near-sighted|long-sighted|"
    r"[\w-]+ intolerant|allergic to .+|in (?:my )?(?:first|second|third|fourth|final|last) year\b.*|"
    r"in (?:year|grade) \w+.*|on (?:a |the )?[\w -]+ diet\b.*|on (?:[\w-]+ ){0,3}(?:medication|medicine|"
    r"meds|pills|tablets|thinners|blockers|inhibitors|antidepressants|antibiotics|steroids|statins|insulin|"
    r"the pill|hrt)\b.*"
)
_NAMED_DATE = (
    r"\d|\b(?:mon|tues|wednes|thurs|fri|satur|sun)day\b|\bnext \w+|\btomorrow\b|\bin (?:january|february|"
    r"march|april|may|june|july|august|september|october|november|december)\b"
    r"|\bin \w+ (?:days|weeks|months)\b"
)

EVERYDAY_EN: Rules = [
    # "My best friend Marco is a firefighter", "Our wedding anniversary is …", "My boss is called Linda".
    (
        re.compile(
            r"^(?:my|our) (?P<noun>[\w'-]+(?: [\w'-]+){0,3}?) (?:is|are|was|were|has|have|had|lives|lived|"
            r"live|go|work|study|play|like|love|visit|come|speak|attend|take|"
            r"works|worked|studies|studied|teaches|likes|loves|hates|enjoys|goes|plays|turns|turned|takes|"
            r"drives|owns|runs|speaks|can|can't|cannot|doesn't|does|don't|will|just|recently|also|still|"
            r"always|never|usually|named|called|comes|came|moved|graduated|started|retired|passed|died|"
            r"sleeps|eats|needs|gets|got|belongs|stays|sits|starts|falls|weighs|expires|renews|meets|[a-z]{3,}s)\b"
            r"(?! (?:about to|going to|gonna|so|being|acting|driving me|dying|dead|broken|on fire)\b)"
        ),
        class_or_when("noun"),
    ),
    # "Leo is my son", "Pepper is our cat", "Linda is my boss".
    (re.compile(r"^[\w' .-]{1,30}? (?:is|are|was) (?:my|our) (?P<rest>.+)$"), class_of("rest")),
    # Where things are kept: "The spare key is under the flower pot", "I keep my passport in …".
    (
        re.compile(
            r"^(?:the|my|our) (?P<noun>[\w'-]+(?: [\w'-]+){0,3}?) (?:is|are) (?:always |usually |normally |"
            r"kept |stored |hidden |hanging |parked )*(?:in|inside|under|underneath|behind|on|next to|beside|"
            r"above|below|at|by) "
        ),
        class_of("noun"),
    ),
    (
        re.compile(
            rf"{_I}(?:always |usually |normally )?(?:keep|store|hide|put|leave|park) "
            r"(?:my|our|the) (?P<rest>.+) (?:in|inside|under|behind|on|next to|beside|at|by) "
        ),
        class_of("rest", "home"),
    ),
    # Being: "I'm a paramedic", "I'm married", "I'm gluten intolerant", "I'm on a low-salt diet".
    (
        re.compile(r"^i(?:'m| am|'ve been| have been| was) (?:also |now |still )?(?:a|an|the) (?P<rest>.+)$"),
        class_of("rest"),
    ),
    (
        re.compile(rf"^i(?:'m| am) (?:also |now |still |very |severely |mildly )?(?P<rest>{_BE_A_STATE})$"),
        class_of("rest", "health"),
    ),
    (
        re.compile(r"^i(?:'m| am) (?:taking|doing|attending|enrolled in|signed up for) (?P<rest>.+)$"),
        class_of("rest"),
    ),
    # Having, doing, owning: "I have type 1 diabetes", "I drive a blue Golf", "I teach maths",
    # "I studied biology at Leeds", "I take metformin".
    (
        re.compile(
            rf"{_I}{_EN_ADVERB}(?P<verb>have|has|'ve got|have got|own|drive|ride|take|teach|study|"
            r"studied|majored|do|did|'ve worked|have worked|'ve lived|have lived|'ve had|have had|"
            r"'ve studied|graduated|work|worked|keep|play|practi[sc]e|attend|speak|volunteer|coach|"
            r"manage|look after|care for|walk|feed|support|hold|wear|use|suffer|was diagnosed|"
            r"'ve been diagnosed|have been diagnosed|got diagnosed|live|lived|finished|completed|earned|"
            r"report to|got|speak|earn|pay|rent|moved|get|see|visit|passed|failed|commute|trained|"
            r"qualified|retrained|dropped out|"
            r"had(?= .*(?:\b(?:19|20)\d\d\b|"
            r"when i was|as a (?:kid|child|teenager))))\b(?P<rest>.*)$"
        ),
        _verb_class,
    ),
    # Times and days: "I play the cello on Sundays", "we go swimming every Tuesday".
    (
        re.compile(
            rf"{_I}{_EN_ADVERB}(?!(?:{_NOT_HABITS})\b)[a-z']+ .*\b(?:every|each|daily|weekly|"
            r"monthly|twice|once|times a|on (?:mon|tues|wednes|thurs|fri|satur|sun)days|weekends?|weekdays|"
            r"mornings|evenings|nights|at \d{1,2}(?::\d\d)? ?(?:am|pm|o'clock)|at \d{1,2}:\d\d|at lunchtime|"
            r"at bedtime|(?:breakfast|lunch|dinner|tea|bed|work|school) at \d|"
            r"(?:before|after) (?:breakfast|lunch|dinner|work|school|bed)|(?:around|about|by) "
            r"(?:\d|half past|quarter (?:past|to))|at half \w+)\b"
        ),
        whole("routines"),
    ),
    (
        re.compile(
            r"^(?:every|each|on) (?:day|morning|evening|night|week|weekend|month|"
            r"(?:mon|tues|wednes|thurs|fri|satur|sun)days?)(?: (?:morning|afternoon|evening|night)s?)?,? "
            r"(?:i|we) "
        ),
        whole("routines"),
    ),
    # Plans and goals: "I want to learn Japanese", "I'm saving up for a house".
    (
        re.compile(
            rf"{_I}(?:really |also |still |eventually |)(?:(?:want|would like|'d like|would love|'d love|"
            r"hope|wish|intend|aim|plan|am planning|'m planning|are planning|'re planning|am hoping|"
            r"'m hoping|am aiming|'m aiming|am determined|'m determined|am trying|'m trying|try) to |"
            r"(?:am|'m|are|'re) saving (?:up )?for |"
            r"dream of |(?:am|'m|are|'re) thinking (?:of|about) (?=\w+ing\b)|"
            r"(?:am|'m|are|'re) (?:planning|organi[sz]ing|arranging) (?!to\b))"
            r"(?!know|ask|say|tell|talk|check|see|understand|be honest|thank|go to bed|sleep|have a look|"
            r"hear|chat|stop|continue|add|make sure|point|clarify|mention|share|explain)\w"
        ),
        lambda _m: PLAN,
    ),
    # Appointments: "I'm seeing the dentist next Tuesday", "I'm flying to Rome on the 3rd".
    (
        re.compile(
            r"^(?:i|we)(?:'m|'re| am| are) (?:seeing|meeting|visiting|flying|travell?ing|going|having|"
            r"getting|starting|moving|getting married|leaving|off to|heading to|heading off to)\b"
            r"(?P<rest>.*)$"
        ),
        lambda m: PLAN if re.search(_NAMED_DATE, m.group("rest")) else None,
    ),
    # Tastes the older table misses: "Jazz is my favourite music", "I'm not a fan of horror films".
    (re.compile(r"^.{2,40} (?:is|are) (?:my|our) (?:all-time )?(?:favou?rite|fave)\b"), whole("tastes")),
    (
        re.compile(
            r"^i(?:'m| am) (?:not |not really |really |such |)(?:a |an )?(?:big |huge |massive |)"
            r"(?:[\w-]+ )?(?:fan|lover|enthusiast|addict)\b"
            r"|^i(?:'m| am) (?:not |really |very much |definitely |)(?:a|an) (?:morning|night|early|evening|"
            r"people|cat|dog|tea|coffee|beach|city|outdoors|indoors|summer|winter) person\b"
            r"|^i(?:'m| am) (?:a|an) (?:big|keen|avid|huge|massive|passionate|fussy|picky|light|heavy|early|"
            r"late|slow|fast|nervous|confident) \w+(?:er|or|ist)\b"
            r"|^i(?:'m| am) not (?:really )?(?:into|fond of|keen on)"
            r"|^i(?:'m| am) (?:really |very |)(?:crazy about|obsessed with|passionate about|interested in|"
            r"keen on)\b"
        ),
        whole("tastes"),
    ),
    # Treatment waited for or recovered from: "I'm waiting for a knee operation".
    (
        re.compile(
            r"^i(?:'m| am) (?:waiting for|on the waiting list for|due to have|recovering from|"
            r"being treated for|having treatment for) (?P<rest>.+)$"
        ),
        class_of("rest", "health"),
    ),
    # Joining a workplace: "I started at the post office in 2020", "I joined Acme last May".
    (re.compile(r"^i (?:started|joined|began) (?:at|with) \w"), lambda _m: match_for("work")),
    # Studying for something: "I'm revising for my nursing exams", "I'm training for a marathon".
    (
        re.compile(r"^i(?:'m| am) (?:revising|studying|preparing|cramming|training) for (?P<rest>.+)$"),
        class_of("rest", "education"),
    ),
    # What the body does not take: "I can't have dairy", "I can't digest onions".
    (
        re.compile(
            r"^i (?:can't|cannot|can not|don't|do not) (?:have|eat|drink|tolerate|digest|take) (?P<rest>.+)$"
        ),
        class_of("rest", "health"),
    ),
    # How one takes things, what one finds tiring or pleasant: "I take my coffee with oat milk",
    # "I find crowded trains stressful".
    (
        re.compile(
            r"^i (?:take|have|drink|like) my [\w-]+ (?:black|white|strong|weak|with|without|no|rare|"
            r"medium|well)\b"
        ),
        lambda _m: match_for("tastes"),
    ),
    (
        re.compile(
            r"^i find (?!it\b|this\b|that\b|you\b)[\w' -]{3,40} (?:exhausting|tiring|boring|relaxing|"
            r"stressful|annoying|calming|overwhelming|fun|hard|difficult|easy|draining|soothing)$"
        ),
        lambda _m: match_for("tastes"),
    ),
    # Work without the word "job": "At work we use Trello", "I've been at the clinic for three years",
    # "I bike to work", "Before teaching I was a chef".
    (
        re.compile(
            r"^at work,? (?:i|we) |^i(?:'ve| have) been (?:at|with) [\w' -]{2,40} (?:for|since) \w+"
            r"|^i (?:\w+ ){1,2}to work\b|^(?:before|after|until) [\w' -]{2,30}?,? i (?:was|worked)\b"
        ),
        lambda _m: match_for("work"),
    ),
]

EVERYDAY_RULES: Rules = EVERYDAY_EN + EVERYDAY_ZH
