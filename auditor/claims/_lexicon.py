"""Word lists and token helpers the rule-based claim extractor shares (stdlib only).

Kept apart from the algorithms (:mod:`auditor.claims._split`, :mod:`auditor.claims._screen`) so the
lists can be read and tuned in one place. All lists are lower case.
"""

from __future__ import annotations

import re


def word_set(text: str) -> frozenset[str]:
    """A word list written as one space-separated string."""
    return frozenset(text.split())


WORD = re.compile(r"[A-Za-z][A-Za-z'\u2019-]*|\d[\d,.:/%]*")

# Abbreviations after which a period never ends a sentence (titles, "e.g.", "vs.").
NEVER_END = word_set(
    "dr mr mrs ms prof st sr jr sen rep gov gen col lt capt det sgt rev hon mt ft no nos fig figs vol "
    "pp approx cf vs v dept est e.g i.e viz al ex op ed eds pt ch sec art"
)
# Abbreviations that end a sentence only when a typical sentence opener follows ("... in the U.S. The").
MAYBE_END = word_set(
    "etc inc ltd co corp llc plc bros jan feb mar apr jun jul aug sep sept oct nov dec "
    "a.m p.m u.s u.k u.n e.u u.s.a d.c ph.d b.a m.a"
)
STARTERS = word_set(
    "the this that these those it its he she they we i you there here his her their our my your "
    "a an in on at for if so but and as however also after before when while although meanwhile "
    "then thus therefore additionally furthermore moreover overall finally"
)

AUX = word_set(
    "is are was were be been has have had will would can could shall should may might must does do "
    "did isn't aren't wasn't weren't hasn't haven't hadn't won't wouldn't can't cannot couldn't doesn't "
    "don't didn't shouldn't i'm it's he's she's they're we're you're there's that's here's "
    "'s 're 'm 've 'd 'll"
)
_BASE_VERBS = (
    "offer include provide serve take allow say state report show find make give cost charge require "
    "support contain list mention describe claim argue suggest accept reject feature use need want plan "
    "agree add remain become seem appear lead win lose die kill announce ship arrive deliver refund "
    "close open start begin run operate own live work receive pay earn increase decrease rise fall help "
    "believe know hold keep face call tell ask visit sell buy hit score play meet lack cover apply expire "
    "last occur happen mean refer depend vary note recommend tend see get go come cause affect reduce "
    "improve prevent treat protect result grow bring put set send spend build leave move turn stay "
    "check tap press hold release select choose place combine cook bake boil simmer heat preheat remove "
    "serve stir mix pour cut slide switch confirm enter scroll follow prick submerge reach join sign "
    "launch release create develop produce publish propose sue halt cut allege deny admit confirm "
    "approve block ban arrest charge injure die attend enjoy host celebrate cost weigh measure total"
)
_IRREGULAR = (
    "said told found made gave given took taken won lost held kept paid sold bought went gone came got "
    "gotten saw seen knew known began begun ran led fell fallen rose risen met left built sent spent "
    "brought thought became grew grown put set hit cut shut struck stood understood wrote written "
    "drove driven ate eaten fought caught taught sought"
)
IRREGULAR = word_set(_IRREGULAR)
BASE_VERBS = word_set(_BASE_VERBS)
VERB_FORMS = frozenset([w for b in BASE_VERBS for w in (b, b + "s", b + "es")]) | IRREGULAR | AUX
NOT_VERB_ED = word_set("red bed hundred need seed feed speed shed sled wed fed bred")

SUBJECT_START = word_set(
    "it he she they we i you there this these those the a an his her its their our my your "
    "some many most all both each one two three several customers users"
)

STOP = word_set(
    """a an the and or but nor so yet for of to in on at by with from into onto about above below over
    under between through during before after as than then that this these those there here which who
    whom whose what when where why how if whether because while although though also just only very
    too quite rather really even still again ever never not no yes any some all each every both either
    neither such own same other another more most less least much many few lot lots i me my mine we us
    our ours you your yours he him his she her hers it its they them their theirs one ones is are was
    were be been being am has have had having do does did doing will would can could shall should may
    might must i'm it's that's there's here's you're they're we're don't doesn't didn't can't cannot
    isn't aren't wasn't weren't won't wouldn't couldn't shouldn't let get got make made go going well
    okay ok oh up out off now like way something anything everything nothing someone anyone"""
)
# Words that carry no checkable content on their own.
VAGUE = word_set(
    """right correct true wrong false thing things stuff case cases situation situations depend depends
    depending vary varies varied different various important good great nice helpful question questions
    information info detail details answer answers help sure possible possibly likely unlikely hope
    think believe seem seems seemed appear appears know certain uncertain perhaps maybe probably point
    matter matters issue generally usually often sometimes typically circumstances factors depends
    interesting clear unclear fine bit kind sort sense idea thanks thank welcome glad happy sorry
    please see"""
)


def words(text: str) -> list[str]:
    """Lower-cased word and number tokens of ``text`` (curly apostrophes made straight)."""
    if text.isascii():  # lower-casing ASCII first changes no token's span: one pass for the text
        return [w.strip("'-") for w in WORD.findall(text.lower())]
    return [w.replace("\u2019", "'").lower().strip("'-") for w in WORD.findall(text)]


def is_verb(word: str) -> bool:
    """True for a word that is (very likely) a finite or base verb form."""
    return word in VERB_FORMS or (word.endswith("ed") and len(word) > 4 and word not in NOT_VERB_ED)


def is_finite(word: str) -> bool:
    """True for a verb form that can head a clause with its own subject ("was", "offers", "said")."""
    if word in AUX or word in IRREGULAR:
        return True
    return (word in VERB_FORMS and word.endswith("s")) or (
        word.endswith("ed") and len(word) > 4 and word not in NOT_VERB_ED
    )


def has_verb(text: str) -> bool:
    return any(is_verb(w) for w in words(text))


def content_words(text: str) -> list[str]:
    """Words that could be checked against evidence: numbers and non-function, non-vague words."""
    out = []
    for w in words(text):
        if not w:
            continue
        if w[0].isdigit() or (len(w) >= 3 and w not in STOP and w not in VAGUE):
            out.append(w)
    return out


def stem(word: str) -> str:
    """A crude stem for overlap tests (plural and past endings off)."""
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word
