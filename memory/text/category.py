"""Which everyday class a statement is about, and the category it is filed in: one classifier for every
way a memory is written without a category (the offline rules in ``memory/model/quick_extract.py``, the
memory model's output when it gives none, ``tierclaw memory add``, ``/remember``, the memory page).

Why it exists: a fact said once ("My dog is called Biscuit", "我女儿叫小雨", "I'm allergic to penicillin")
must not fade (docs/architecture.md, "Tiers": identity, config and credential never decay; the table is
``memory/retrieval/decay.py``). The classes and where they are filed:

* people, pets, health (conditions, allergies, medication, diet), work (job, employer, boss), home and
  possessions (car, phone, where things are kept), education, dates (birthdays, anniversaries) →
  ``identity``;
* tastes (likes, dislikes, favourites) and routines (what is done on which days, at which times) →
  ``config`` (the original design files stated preferences there);
* plans, goals and appointments → ``decision`` (what the person has set out to do; fades slowly, never
  below 30 %).

A class is read from words (English whole words, Chinese substrings), not from the sentence's form:
the rules that decide *whether* a sentence states a fact live in ``memory/model/``. Pure functions.
"""

from __future__ import annotations

import re
from functools import lru_cache

from memory.retrieval.decay import DEFAULT_CATEGORY

IDENTITY, CONFIG, DECISION, TEMP, CREDENTIAL = "identity", "config", "decision", "temp", "credential"

# Class → the category it is filed in (never a fading one).
CLASS_CATEGORY: dict[str, str] = {
    "appointments": DECISION,
    "plans": DECISION,
    "dates": IDENTITY,
    "people": IDENTITY,
    "pets": IDENTITY,
    "health": IDENTITY,
    "work": IDENTITY,
    "education": IDENTITY,
    "home": IDENTITY,
    "tastes": CONFIG,
    "routines": CONFIG,
}

# English words per class (whole words, lower case; a trailing "s" is allowed for nouns). Checked in
# this order: the first class with a word in the text wins ("my son's birthday" is a date).
_EN_WORDS: dict[str, str] = {
    "appointments": r"appointments?|check-?ups?|consultations?|interviews?|exams?|surgery|operation|"
    r"reservations?|booked|booking|flights?",
    "dates": r"birthdays?|anniversary|anniversaries|born|wedding|name ?day",
    "people": r"wife|husband|partner|spouse|boyfriend|girlfriend|fianc[ée]e?|son|sons|daughters?|child|"
    r"children|kids?|babies|baby|toddler|mum|mom|mother|mothers?-in-law|father|fathers?-in-law|dad|"
    r"parents?|brothers?|sisters?|siblings?|twins?|grand(?:ma|pa|mother|father|parents?|son|daughter|"
    r"kids?|children)s?|aunts?|aunties|auntie|aunty|lodgers?|uncles?|cousins?|nephews?|nieces?|in-laws|step(?:son|daughter|mother|"
    r"father|mum|mom|dad)s?|friends?|best friend|neighbou?rs?|roommates?|flatmates?|housemates?|"
    r"godson|goddaughter|godmother|godfather|godchild|godchildren|godparents?|granddad|grandad|gran|nan|"
    r"nana|family|married|divorced|engaged|widowed|mother of|"
    r"father of",
    "pets": r"pets?|dogs?|puppy|puppies|cats?|kittens?|kitty|parrots?|budgies?|birds?|hamsters?|"
    r"rabbits?|bunny|bunnies|goldfish|fish|aquarium|turtles?|tortoises?|horses?|pony|ponies|"
    r"guinea pigs?|lizards?|snakes?|gecko|ferrets?|chickens?|labrador|retriever|terrier|poodle|"
    r"spaniel|collie|beagle|dachshund|corgi|husky|tabby|vets?|veterinary|jabs?|boosters?|vaccinations?|fleas?|"
    r"worming|kennels?|dog sitter|cat sitter|groomer|cat food|dog food|litter tray|neutered|spayed",
    "health": r"allerg(?:y|ies|ic)|intoleran(?:t|ce)|asthma(?:tic)?|diabet(?:es|ic)|blood pressure|"
    r"hypertension|migraines?|eczema|arthritis|epilep(?:sy|tic)|adhd|autis(?:m|tic)|anxiety|"
    r"depression|insomnia|coeliac|celiac|gluten|lactose|cholesterol|thyroid|heart condition|"
    r"medications?|medicines?|meds|pills?|tablets?|inhaler|insulin|prescription|vitamins?|"
    r"supplements?|antibiotics?|physio(?:therapy)?|therapy|condition|disease|disorder|syndrome|vegetarian|vegan|pescatarian|halal|kosher|"
    r"diet|keto|sugar-free|dairy|peanuts?|nuts|shellfish|seafood|pregnant|glasses|contact lenses|pain|"
    r"aches?|injur(?:y|ies|ed)|bad back|bad knees?|knees?|hips?|joints?|spine|thinners|blockers|"
    r"antidepressants|steroids|pacemaker|stent|heart murmur|caffeine|alcohol|"
    r"blood type|blood group|deficiency|anaemia|anemia|iron|scan|dentist|"
    r"optician|gp|doctor|hygienist|physio|"
    r"hearing aid|wheelchair|\w+(?:itis|osis|emia|aemia|pathy|algia)|\w+(?:statin|pril|olol|azole|"
    r"cillin|mycin|formin|prazole|sartan|oxetine|pam|lam)",
    "work": r"job|jobs|work|works|worked|working|employer|company|firm|boss|manager|supervisor|"
    r"team lead|colleagues?|co-?workers?|clients?|customers?|office|shifts?|salary|career|profession|"
    r"occupation|business|startup|employed|self-employed|freelanc\w*|retired|nurse|teacher|"
    r"engineer|developer|paramedic|firefighter|accountant|lawyer|electrician|plumber|carpenter|"
    r"mechanic|cashier|waiter|waitress|barista|chef|cook|baker|farmer|pilot|driver|cleaner|"
    r"receptionist|secretary|pharmacist|surgeon|midwife|police|officer|soldier|librarian|"
    r"consultant|designer|architect|programmer|analyst|tutor|coach|professor|lecturer|journalist|"
    r"translator|hairdresser|butcher|builder|salesman|saleswoman|teach|teaches|taught|tester|bank|"
    r"department|union rep|rep|team|assistant|instructor|hr|appraisal|payslip|earn|earns|commute",
    "education": r"stud(?:y|ies|ied|ying)|degree|bachelor'?s|master'?s|masters|phd|doctorate|diploma|"
    r"major(?:ed)?|minor(?:ed)?|graduat(?:e|ed|ion)|university|uni|college|school|high school|"
    r"course|courses|classes|class|lessons?|semester|thesis|dissertation|alumni|alma mater|"
    r"apprenticeship|certificate|certified|exam|gap year|a-levels?|gcses?|primary|secondary|nursery|"
    r"driving test|driving licen[cs]e|year (?:one|two|three|four|five|six|seven|\d+)",
    "home": r"car|cars|van|truck|suv|motorbike|motorcycle|scooter|bike|bicycle|e-bike|drive|drives|"
    r"house|flat|apartment|home|garage|garden|balcony|room|bedroom|kitchen|cellar|basement|attic|"
    r"phone|iphone|android|laptop|computer|pc|mac|macbook|tablet|ipad|watch|keys?|passport|wallet|"
    r"documents?|drawer|cupboard|wardrobe|closet|shelf|shelves|cabinet|safe|fridge|desk|piano|"
    r"guitar|violin|cello|drums|flute|saxophone|camera|boat|tesla|toyota|honda|volkswagen|vw|golf|"
    r"bmw|audi|mercedes|ford|kia|hyundai|nissan|renault|peugeot|fiat|volvo|mazda|subaru|skoda|"
    r"lives?|lived|living|moved|rent|mortgage|landlord|neighbou?rhood|street|address|insurance|boiler|"
    r"mot|bins?|fuse box|wifi|router|tax return|council tax|bills?|plants?|washing machine|dishwasher|"
    r"tv|television|kindle|e-reader|smartwatch|fitbit|headphones|airpods|console|playstation|xbox|fridge-freezer|freezer|oven|stopcock|thermostat",
}
_ZH_WORDS: dict[str, str] = {
    "appointments": "预约|挂号|复查|复诊|面试|考试|体检|约了|看牙|看医生|航班|机票|订了",
    "dates": "生日|纪念日|出生|结婚|婚礼",
    "people": "老婆|老公|妻子|丈夫|爱人|媳妇|男朋友|女朋友|男友|女友|对象|未婚|儿子|女儿|闺女|孩子|小孩|"
    "宝宝|娃|妈妈|妈|母亲|爸爸|爸|父亲|父母|爸妈|哥哥|哥|姐姐|姐|弟弟|弟|妹妹|妹|兄弟|姐妹|爷爷|奶奶|"
    "外公|外婆|姥姥|姥爷|孙子|孙女|外孙|叔叔|阿姨|舅舅|舅妈|姑姑|姑妈|婶婶|表哥|表姐|表弟|表妹|堂哥|堂姐|"
    "堂弟|堂妹|侄子|侄女|外甥|公公|婆婆|岳父|岳母|丈母娘|继父|继母|后妈|后爸|小姑子|大姑子|小叔子|妯娌|朋友|闺蜜|哥们|邻居|室友|家人|老伴|亲戚|发小|老大|老二|"
    "老三",
    "pets": "宠物|狗|猫|鹦鹉|鸟|仓鼠|兔|金鱼|鱼缸|乌龟|龟|马匹|养马|柯基|泰迪|哈士奇|金毛|拉布拉多|柴犬|布偶|"
    "英短|橘猫|疫苗|绝育|驱虫|狂犬|猫粮|狗粮|寄养",
    "health": "过敏|不耐受|哮喘|糖尿病|血糖|高血压|血压|心脏|偏头痛|头疼|胃病|胃炎|痛风|颈椎|腰椎|失眠|"
    "抑郁|焦虑|近视|散光|色盲|药|胰岛素|手术|素食|吃素|忌口|清真|减肥|戒糖|乳糖|麸质|海鲜|"
    "花生|怀孕|病|症|炎|腰|胃|膝盖|关节|牙|眼睛|皮肤|颈|背疼|头疼|血脂|血型|贫血|维生素|钙片|鱼油|助听器|眼镜|假牙|牙套|胆固醇|控糖|甜食|体重|拉肚子",
    "work": "[\u4e00-\u9fff]{1,3}师(?![傅兄姐弟妹])|插画|自由职业|合同|夜班|白班|倒班|"
    "助教|助理|工作|上班|公司|单位|老板|领导|上司|经理|主管|同事|客户|工资|职业|岗位|加班|办公|行业|"
    "职位|入职|辞职|退休|创业|护士|医生|老师|教师|工程师|程序员|会计|律师|设计师|司机|厨师|销售|"
    "教书|是做.{1,6}的|校长|主任|教导处|月薪|年薪|薪水|工号|员工号|外企|国企|央企|人事|培训机构|摄影师|"
    "出差",
    "education": "大学|学院|毕业|专业|学位|硕士|博士|本科|研究生|学历|读书|上学|学校|课|高中|初中|"
    "小学|考研|留学|大一|大二|大三|大四|高一|高二|高三|学的是|学习|正在学|在学|考过|考上|考取|驾照|证书|"
    "资格证|幼儿园|大班|中班|小班|年级|六级|四级|雅思|托福|普通话|高考|书法",
    "home": "车|房子|房|家里|公寓|小区|手机|电脑|笔记本|平板|手表|钥匙|护照|身份证|证件|钱包|车库|"
    "抽屉|柜|书架|冰箱|桌|钢琴|吉他|小提琴|大提琴|相机|住在|住的|居住|搬家|搬到|搬去|租房|房租|户口本|"
    "kindle|Kindle|耳机|游戏机|房产证|保险箱|物业|水电费|燃气费|两室|三室|一厅|两厅|车险|房贷|洗衣机|空调|热水器|电视|洗碗机|"
    "燃气灶|路由器",
}
_TASTES = re.compile(
    r"\b(?:like|likes|love|loves|enjoy|enjoys|hate|hates|dislike|dislikes|prefer|prefers|favou?rite|"
    r"fave|fan of|into|can't stand|cannot stand|crazy about|obsessed with|allergic)\b"
    r"|喜欢|爱|讨厌|最爱|偏好|偏爱|受不了|感兴趣|迷|粉丝",
    re.I,
)
_ROUTINES = re.compile(
    r"\b(?:every (?:day|morning|evening|night|week|weekend|month|year|monday|tuesday|wednesday|"
    r"thursday|friday|saturday|sunday|other \w+)|on (?:mondays|tuesdays|wednesdays|thursdays|fridays|"
    r"saturdays|sundays|weekends|weekdays)|(?:mondays|tuesdays|wednesdays|thursdays|fridays|saturdays|"
    r"sundays)|at (?:the )?weekends?|daily|weekly|monthly|nightly|once a \w+|twice a \w+|"
    r"\w+ times a (?:day|week|month)|each (?:day|morning|evening|week))\b"
    r"|每天|每日|每晚|每早|每周|每星期|每个?礼拜|每个?月|每年|每逢|周末|工作日|平时|周[一二三四五六日天]|"
    r"星期[一二三四五六日天]|礼拜[一二三四五六日天]",
    re.I,
)
_PLANS = re.compile(
    r"\b(?:want to|wants to|would like to|'d like to|hope to|hoping to|plan to|planning to|plans to|"
    r"intend to|going to|aim to|aiming to|dream|dreams|goal|goals|resolution|ambition|saving up|"
    r"someday|some day|one day|next year|next month|bucket list)\b"
    r"|打算|计划|准备|想要|目标|梦想|希望|愿望|明年|以后想|将来",
    re.I,
)
# A goal named as such is a plan whatever it is about ("My goal is to buy a house").
_GOALS = re.compile(r"\b(?:goals?|dreams?|ambitions?|resolutions?|bucket list)\b|目标|梦想|愿望", re.I)
_TEMP = re.compile(
    r"\b(?:today|tonight|right now|at the moment|this (?:morning|afternoon|evening)|for now)\b"
    r"|今天|今晚|今早|今儿|此刻|这会儿|刚才|一会儿",
    re.I,
)
_SECRET = re.compile(r"\b(?:password|passcode|pin code|api key|token|secret)s?\b|密码|口令|密钥", re.I)


@lru_cache(maxsize=1)
def _word_patterns() -> tuple[tuple[str, re.Pattern[str], re.Pattern[str]], ...]:
    """The class word patterns, compiled once (English as whole words, Chinese as substrings)."""
    out = []
    for name, words in _EN_WORDS.items():
        zh = _ZH_WORDS.get(name, "(?!)")
        # A plural ending is allowed after any word ("passports", "cupboards").
        out.append((name, re.compile(rf"\b(?:{words})s?\b", re.I), re.compile(zh)))
    return tuple(out)


def everyday_class(text: str) -> str | None:
    """The everyday class a statement is about ("people", "pets", "health", …), or None.

    Things (people, pets, health, dates, appointments, work, education, home) come before manners
    (tastes, routines, plans): "I walk my dog every morning" is about a pet, and so never fades either
    way; "I love my job" is about work. A goal named as such is a plan first."""
    if _GOALS.search(text):
        return "plans"
    for name, english, chinese in _word_patterns():
        if english.search(text) or chinese.search(text):
            return name
    if _TASTES.search(text):
        return "tastes"
    if _ROUTINES.search(text):
        return "routines"
    if _PLANS.search(text):
        return "plans"
    return None


def durable_category(text: str) -> str | None:
    """The never- or slowly-fading category of an everyday statement, or None when it names no class."""
    found = everyday_class(text)
    return CLASS_CATEGORY[found] if found else None


def category_for(text: str) -> str:
    """The category of a memory written without one (``memory add``, ``/remember``, the memory page, a
    model fact without a valid category): a secret's whereabouts → credential; an everyday class → its
    category; something only about today → temp; anything else → the default (``event``)."""
    if _SECRET.search(text):
        return CREDENTIAL
    found = durable_category(text)
    if found:
        return found
    if _TEMP.search(text):
        return TEMP
    return DEFAULT_CATEGORY


def refine_category(rule_category: str, text: str) -> str:
    """The category a rule gave, lifted to the class's category when the rule only said ``event``
    ("I have a dog" reads as an event to the rules; a pet is kept for good)."""
    if rule_category != DEFAULT_CATEGORY:
        return rule_category
    return durable_category(text) or rule_category
