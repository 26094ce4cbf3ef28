"""The people a Chinese message names (``memory/text/names.py``, issue 35 round 44): a word jieba's
part-of-speech model tags as a person's name and its dictionary does not hold."""

from __future__ import annotations

from memory.text.names import names_any, person_names


def test_a_name_the_dictionary_does_not_hold_is_a_person_named() -> None:
    assert person_names("翠萍多大了") == ("翠萍",)
    assert person_names("国栋电话多少") == ("国栋",)
    assert person_names("阿芬現在還在深圳嗎") == ("阿芬",)  # Traditional, read as Simplified


def test_common_words_and_famous_names_the_dictionary_holds_are_not() -> None:
    # jieba's model tags these nr too; its dictionary knows them, so they are nobody's own people
    assert person_names("乌龟冬天要不要开加热棒") == ()  # 乌龟 tagged nr
    assert person_names("詹姆斯今年还打球吗") == ()
    assert person_names("周杰伦新歌好听吗") == ()
    assert person_names("今晚游泳不") == ()


def test_a_message_without_han_characters_names_nobody_here() -> None:
    assert person_names("how old is Manaia now?") == ()
    assert person_names("") == ()


def test_a_memory_names_them_when_it_reads_as_naming_them_too() -> None:
    assert names_any("我老伴兒叫孫翠萍", ("翠萍",))  # Traditional; the full name holds the one asked after
    assert names_any("大儿子国栋在大连开出租", ("国栋",))
    assert not names_any("我老伴儿叫秀英", ("翠萍",))
    assert not names_any("我老伴儿叫翠萍", ())
    # a dialect word the model tags a name in a short line is not one in the memory that holds it
    assert person_names("那个馆子巴适") == ("巴适",)
    assert not names_any("周末在农家乐耍了一天，巴适惨了", ("巴适",))
