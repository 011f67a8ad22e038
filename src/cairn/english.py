"""English word forms that a stemmer cannot join, made one before stemming.

Snowball's English stemmer joins ``hiking`` and ``hike`` by cutting endings; it cannot join
``went`` and ``go``, ``children`` and ``child``, ``colour`` and ``color``, which differ inside
the word, or ``appt`` and ``appointment``, which clips it. :func:`base_form` makes such a word the
form the stemmer expects, for the index and for queries alike, so a note that says "we went to
Lisbon" is found by "when did we go to Lisbon", and "dentist appt" by "dentist appointment".
"""

from __future__ import annotations

import re

__all__ = ["VERSION", "base_form", "other_forms"]

# Part of the index schema version: a changed list changes the terms an index holds.
VERSION = "us-spelling/1+irregular/1+clipped/2"

# Irregular verbs and nouns: each line is the base form, then the forms that go back to it.
# Left out are forms that are mostly another word: left (the side), shot, bit, lay (of lie),
# rose, born, bound, ground, wound, lit, sat (the SAT), led (an LED), drew (a name), spat,
# leaves and lives (the verbs). Forms a stopword covers (was, did, had, done) need nothing.
_IRREGULAR_TEXT = """
    arise arose arisen
    awake awoke awoken
    beat beaten
    become became
    begin began begun
    bend bent
    bite bitten
    bleed bled
    blow blew blown
    break broke broken
    breed bred
    bring brought
    build built
    burn burnt
    buy bought
    catch caught
    choose chose chosen
    cling clung
    come came
    creep crept
    deal dealt
    dig dug
    draw drawn
    dream dreamt
    drink drank drunk
    drive drove driven
    eat ate eaten
    fall fell fallen
    feed fed
    feel felt
    fight fought
    find found
    flee fled
    fly flew flown
    forbid forbade forbidden
    forget forgot forgotten
    forgive forgave forgiven
    freeze froze frozen
    get got gotten
    give gave given
    go went gone
    grow grew grown
    hang hung
    hear heard
    hide hid hidden
    hold held
    keep kept
    kneel knelt
    know knew known
    lay laid
    lean leant
    leap leapt
    learn learnt
    lend lent
    lose lost
    make made
    mean meant
    meet met
    mistake mistook mistaken
    overcome overcame
    pay paid
    prove proven
    rebuild rebuilt
    ride rode ridden
    ring rang rung
    rise risen
    run ran
    say said
    see saw seen
    seek sought
    sell sold
    send sent
    shake shook shaken
    shine shone
    show shown
    shrink shrank shrunk
    sing sang sung
    sink sank sunk
    sleep slept
    slide slid
    smell smelt
    speak spoke spoken
    speed sped
    spell spelt
    spend spent
    spill spilt
    spin spun
    stand stood
    steal stole stolen
    stick stuck
    sting stung
    stink stank stunk
    strike struck stricken
    swear swore sworn
    sweep swept
    swim swam swum
    swing swung
    take took taken
    teach taught
    tear tore torn
    tell told
    think thought
    throw threw thrown
    understand understood
    undertake undertook undertaken
    wake woke woken
    wear wore worn
    weave wove woven
    weep wept
    win won
    withdraw withdrew withdrawn
    write wrote written

    child children
    foot feet
    goose geese
    tooth teeth
    mouse mice
    man men
    woman women
    wife wives
    knife knives
    wolf wolves
    half halves
    shelf shelves
    thief thieves
    calf calves
"""
# Clipped forms that notes and queries use for a longer word: each line is the word, then its
# clippings. Left out are clippings that stand for several words (doc: doctor or document; app,
# temp, min, sec, hr, auth, req, dir, ad, vet), are mostly another word (gym, ref), or would meet
# another word through its stem (prod: production stems as product does; spec: specification as
# specific).
_CLIPPED_TEXT = """
    account acct accts
    address addr
    administrator admin admins
    amount amt
    appointment appt appts
    approximately approx
    average avg
    birthday bday bdays
    building bldg bldgs
    configuration config configs
    conversation convo convos
    database db dbs
    department dept depts
    development dev
    environment env envs
    examination exam exams
    government govt
    influenza flu
    information info
    introduction intro intros
    laboratory lab labs
    management mgmt
    manager mgr mgrs
    mathematics math maths
    medication meds
    meeting mtg mtgs
    message msg msgs
    package pkg pkgs
    performance perf
    permission perms
    photograph photo photos
    picture pic pics
    preference prefs
    prescription rx
    quantity qty
    refrigerator fridge fridges
    repository repo repos
    schedule sched
    tomorrow tmrw tmr
    university uni unis
"""
_BASE_FORMS = {
    form: words[0]
    for text in (_IRREGULAR_TEXT, _CLIPPED_TEXT)
    for words in map(str.split, text.splitlines())
    for form in words[1:]
}

# British spellings are made American before stemming, in the index and in queries alike, so that
# colour and color, organise and organize, analyse, centre, catalogue and their forms meet. Each
# rule needs letters before its ending, which keeps four, hour, tour, raise, noise, rise, vogue
# and rogue as they are; a word it changes needlessly (promise -> promize) changes on both sides.
_BRITISH_RE = re.compile(
    r"([a-z]{2,})our(|s|ed|ing|ite|ites|er|ers|able|ably|ful|less|hood|hoods|ist|ists|y)"
    r"|([a-z]{3,})([iy])s(e|ed|es|ing|er|ers|ation|ations)"
    r"|([a-z]{2,})tre(|s)"
    r"|([a-z]{2,})tred"
    r"|([a-z]{3,})ogue(|s)"
)
# Words no rule above can take without taking others too (Snowball already joins enrol/enroll).
_BRITISH_WORDS = {
    "grey": "gray",
    "greys": "grays",
    "greyish": "grayish",
    "programme": "program",
    "programmes": "programs",
    "aluminium": "aluminum",
    "defence": "defense",
    "defences": "defenses",
    "offence": "offense",
    "offences": "offenses",
    "licence": "license",
    "licences": "licenses",
    "pretence": "pretense",
    "plough": "plow",
    "jewellery": "jewelry",
    "manoeuvre": "maneuver",
    "manoeuvres": "maneuvers",
    "anaemia": "anemia",
    "anaemic": "anemic",
    "paediatric": "pediatric",
    "paediatrics": "pediatrics",
    "paediatrician": "pediatrician",
    "orthopaedic": "orthopedic",
    "oestrogen": "estrogen",
    "haemoglobin": "hemoglobin",
    "leukaemia": "leukemia",
    "skilful": "skillful",
}


def _american(word: str) -> str:
    """The American spelling of a lower-case British one (``colours`` -> ``colors``); other words
    come back as given."""
    if spelled := _BRITISH_WORDS.get(word):
        return spelled
    found = _BRITISH_RE.fullmatch(word)
    if found is None:
        return word
    stem_our, end_our, stem_is, vowel, end_is, stem_tre, end_tre, stem_tred, stem_ogue, end_ogue = (
        found.groups()
    )
    if stem_our:
        return f"{stem_our}or{end_our}"
    if stem_is:
        return f"{stem_is}{vowel}z{end_is}"
    if stem_tre:
        return f"{stem_tre}ter{end_tre}"
    if stem_tred:
        return f"{stem_tred}tered"
    return f"{stem_ogue}og{end_ogue}"


def base_form(word: str) -> str:
    """The form of a lower-case English word that a stemmer joins with its others: the base of
    an irregular verb or noun (``went`` -> ``go``, ``teeth`` -> ``tooth``), the word a clipped form
    stands for (``appts`` -> ``appointment``), the American spelling of a British one
    (``colours`` -> ``colors``); any other word as given."""
    if base := _BASE_FORMS.get(word):
        return base
    return _american(word)


def other_forms() -> dict[str, list[str]]:
    """Each word that :func:`base_form` makes others into from a list, with those others, which
    share no stem with it (``tooth``: ``teeth``; ``appointment``: ``appt``, ``appts``; ``gray``:
    ``grey``). The spellings its rules make share one, but for ``-tre`` (``centre``, ``center``)."""
    forms: dict[str, list[str]] = {}
    for form, word in (_BASE_FORMS | _BRITISH_WORDS).items():
        forms.setdefault(word, []).append(form)
    return forms
