"""The forms added for the everyday benchmark's misses, each in English and Chinese with sentences of
our own: statements about a named person or pet, a name's dates, household things and when they are due
(memory/model/everyday_around.py), and the first-person forms of time, learning, work, tastes and plans
(memory/model/everyday_rules.py). Each is kept where it does not fade; passing remarks of the same shape
are not."""

from __future__ import annotations

import pytest

from memory.model.quick_extract import quick_facts
from memory.retrieval.decay import MEDIUM_DECAY

FADING = MEDIUM_DECAY | {"temp", "debug"}

# (form, statement): every statement must be kept, whole, in a category that does not fade.
KEPT = [
    # A name's dates and belongings.
    ("name's date", "Oscar's birthday is 4 March"),
    ("name's date", "Nora's school concert is on 12 December"),
    ("name's date", "阿明的生日是九月九号"),
    ("name's date", "小林的婚礼定在十月一号"),
    # A named person or pet and a lasting attribute.
    ("name is a kind", "Rolo is a spaniel"),
    ("name's age", "Milo is nine years old"),
    ("name's fear", "Rolo is afraid of thunder"),
    ("name's weight", "Milo weighs 6 kilos"),
    ("name's diet", "Rolo only eats dry food"),
    ("name's school", "Nora goes to Hillside Primary"),
    ("name's routine", "Nora has swimming on Thursdays at 6"),
    ("name is a kind", "球球是一只泰迪"),
    ("name's age", "球球今年五岁了"),
    ("name's fear", "球球怕洗澡"),
    ("name's weight", "球球体重八斤"),
    ("name's school", "阿明在读小学三年级"),
    ("name's routine", "阿明周三下午上围棋课"),
    ("name's vet", "球球上个月打了疫苗"),
    ("came home", "球球是前年领养的"),
    # Household things: where they are kept, when they are due.
    ("the thing and a date", "The home insurance renews in August"),
    ("the thing and where", "The stopcock is in the cupboard under the sink"),
    ("the pet and where", "The rabbit sleeps in the hutch by the shed"),
    ("day of the household", "Recycling day is Thursday"),
    ("thing and frequency", "燃气费每个月自动扣"),
    ("thing and when bought", "洗衣机是前年买的"),
    ("stored away", "夏天的凉席收在衣柜顶上"),
    ("stored away", "社保卡锁在书房的抽屉里"),
    ("our home is", "我们家是三室两厅"),
    # Health said by what the body does not take.
    ("makes me ill", "Garlic makes me sick"),
    ("holding back", "我在戒糖"),
    # First-person forms of time, learning, work, tastes and plans.
    ("routine by a meal", "I stretch before breakfast"),
    ("routine by the clock", "I go jogging around half past six"),
    ("my thing meets", "My choir meets on the second Monday of the month"),
    ("learning", "我正在学西班牙语"),
    ("exam passed", "我日语考过了N2"),
    ("time of life", "我读研的时候在上海待了三年"),
    ("year and event", "我2012年高中毕业"),
    ("how I take it", "I take my coffee with oat milk"),
    ("I find", "I find crowded trains stressful"),
    ("at work", "At work we use Jira for tickets"),
    ("years at a place", "I've been at the council for nine years"),
    ("to work", "I walk to work most days"),
    ("before that", "Before teaching I was a chef"),
    ("I earn", "I earn around 30 thousand a year"),
    ("trying to", "I'm trying to drink less coffee"),
    ("thinking of", "I'm thinking of retraining as a nurse"),
    ("planning", "I'm planning a surprise trip for our anniversary"),
    ("with someone", "Anna and I plan to visit Lisbon in spring"),
    ("future lead", "下周三下午我要去复查"),
    ("holiday", "我们五一要回老家"),
    ("wish with a time", "我想明年考驾照"),
    ("saving", "我们在攒钱买车"),
    ("my goal", "我明年的目标是跑完半马"),
    ("can't have", "I can't have caffeine after noon"),
    ("doesn't agree with me", "Spicy food doesn't agree with me"),
    ("a kind of person", "I'm not a morning person"),
    ("the people and a date", "The kids break up for summer on 20 July"),
    ("'d love to", "I'd love to visit Japan one day"),
    ("failed", "I failed my first driving test"),
    ("half past by another name", "I start work at half eight"),
    ("tastes by degree", "我不太喜欢吃辣"),
    ("languages spoken", "我会说粤语"),
    ("people and a month", "孩子们七月初放暑假"),
    ("studying for", "我在考教师资格证"),
    ("waiting for treatment", "I'm waiting for a cataract operation"),
    ("revising for", "I'm revising for my pharmacy exams"),
    ("rent from", "We rent from a private landlord"),
    ("a keen -er", "I'm a keen cyclist"),
    ("meal at a time", "We have tea at 5 on weekdays"),
    ("next year lead", "Next year we want to buy a caravan"),
    ("gives me an ache", "Red wine gives me a headache"),
    ("step-parent", "我后妈是个退休的会计"),
    ("name and degree", "年糕特别喜欢晒太阳"),
    ("hearing aid", "我戴隐形眼镜"),
    ("food and body", "海鲜吃多了我就过敏"),
    ("caring", "我在照顾我奶奶"),
    ("after work", "我下班后去游泳"),
    ("wish with a time first", "我今年想学会做饭"),
    ("a new taste", "我最近迷上了钓鱼"),
    ("rather", "我宁可坐火车也不坐飞机"),
    ("an age and then", "我十八岁就出来工作了"),
    ("a job in 师", "我是一名营养师"),
    ("type n diabetic", "I'm type 1 diabetic"),
    ("trained as", "I trained as a midwife"),
    ("dropped out", "I dropped out of university"),
    ("off to in a month", "We're off to Portugal in October"),
    ("how one commutes", "I commute by bus"),
    ("getting to work", "我骑电动车上班"),
    ("where one studied", "我在南京大学读的书"),
    ("a fear", "我害怕打针"),
    ("saving for", "我们在为买房存钱"),
    ("we and a year", "我们2019年搬到了成都"),
]


@pytest.mark.parametrize(("form", "text"), KEPT)
def test_a_new_form_is_kept_where_it_does_not_fade(form: str, text: str) -> None:
    facts = quick_facts(text)
    assert [f.content for f in facts] == [text], form
    assert facts[0].category not in FADING, (form, facts[0].category)


@pytest.mark.parametrize(
    "text",
    [
        # Same shapes, said in passing or about the world, not about the speaker's life.
        *("Einstein was born in 1879.", "Sarah's car is broken.", "The train is late again."),
        *("The coffee is cold.", "Dinner is ready.", "The shop is closed.", "I find it funny."),
        *("I had a great time.", "Tom is so annoying.", "Paris is the capital of France."),
        *("The kids went crazy.", "The film starts at 8.", "Chocolate makes me happy."),
        *("书放在桌上", "又是周一，唉", "天气真好", "火车晚点了", "我想睡觉", "我在开会", "咖啡凉了"),
    ],
)
def test_a_passing_remark_of_the_same_shape_is_not_kept(text: str) -> None:
    assert quick_facts(text) == []
