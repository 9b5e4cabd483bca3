#!/usr/bin/env python3
"""Build the Wordle word lists shipped in ``envs/data/`` (used by ``TextWordle-v0``).

Outputs (one lowercase a-z five-letter word per line, sorted, no header):

* ``envs/data/wordle_answers.txt``: the ``--answers`` (default 2315) most frequent answer-grade
  words: common English words; no proper nouns, abbreviations, contractions, offensive words or
  ``s``-plurals of four-letter words (``cats``), as in the NYT answer list.
* ``envs/data/wordle_allowed.txt``: every word accepted as a guess; a superset of the answers.

Sources, installed from PyPI at the versions pinned in ``scripts/requirements-wordlists.txt``.
They are build-time inputs only: not dependencies of ``trl-env``, and nothing is downloaded when
the library runs.

* ``english-words`` (MIT): its ``web2`` list (Webster's Second International, public domain, the
  BSD ``/usr/share/dict/web2``). Only all-lowercase entries are used (capitalised ones are proper
  nouns). The packaged copy lacks some everyday words (``box``, ``proud``) and holds some
  lowercased names and modern tokens (``singh``, ``covid``), hence the curated sets below.
* ``wordfreq`` (code Apache-2.0, data CC-BY-SA 4.0): English word frequencies (``large`` list),
  used to rank answers and to attest inflected forms.

Rules:

* Lexicon = lowercase ``web2`` entries + ``EXTRA`` (common words the packaged ``web2`` lacks).
* Allowed = five-letter lexicon words, plus five-letter inflections (``-s``, ``-es``, ``-ies``,
  ``-ves``, ``-d``, ``-ed``, ``-ied``) of a lexicon word with Zipf frequency >= ``BASE_MIN_ZIPF``
  that wordfreq attests with Zipf >= ``INFLECTED_MIN_ZIPF``; minus ``NON_WORDS`` and ``BLOCKED``.
* Answers = allowed five-letter lexicon words known to wordfreq, minus ``NOT_ANSWERS`` (names,
  places, brands, foreign, technical or British-only words found by reading the ranked list)
  and ``s``-plurals of four-letter lexicon words; ranked by frequency (ties alphabetical), the
  first ``--answers`` kept.

``BLOCKED`` (slurs, vulgar and sexual words) is ROT13-encoded so the source does not spell it out.
Output depends only on the pinned package versions (everything is sorted), so rebuilding gives
byte-identical files.

Usage (from the repository root)::

    pip install -r scripts/requirements-wordlists.txt
    python scripts/build_wordle_lists.py          # rewrite envs/data/wordle_*.txt
    python scripts/build_wordle_lists.py --check  # exit 1 if the committed files are stale
"""

from __future__ import annotations

import argparse
import codecs
import math
import re
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REQUIREMENTS = "scripts/requirements-wordlists.txt"
ANSWERS_FILE = ROOT / "envs" / "data" / "wordle_answers.txt"
ALLOWED_FILE = ROOT / "envs" / "data" / "wordle_allowed.txt"
MUST_BE_ANSWERS = {"about", "apple", "crane", "heart", "house", "light", "slate", "water"}

BASE_MIN_ZIPF = 2.0
INFLECTED_MIN_ZIPF = 1.0
FIVE = re.compile(r"[a-z]{5}")
# (suffix pattern, replacement) mapping an inflected word to its base, e.g. "cried" -> "cry".
INFLECTIONS = [
    (r"([^sy]|[aeiou]y)s$", r"\1"),  # cats, plays (not "-ss"; "dutys": see "-ies")
    (r"(s|x|z|ch|sh|o)es$", r"\1"),  # boxes, buses, heroes
    (r"([^aeiou])ies$", r"\1y"),  # flies
    (r"ves$", "f"),  # wolves
    (r"ves$", "fe"),  # wives
    (r"ed$", "e"),  # moved
    (r"([^e])ed$", r"\1"),  # asked
    (r"([^aeiou])ied$", r"\1y"),  # cried
]


def word_set(text: str) -> frozenset[str]:
    """Return the whitespace-separated words of ``text``."""
    return frozenset(text.split())


# Common words missing from the packaged web2 (any length: also bases for inflections).
EXTRA = word_set("""
    beep began biker blog blond boson box cafe carb caulk combo condo cuter decor deli disco donut
    dryer email emoji epoxy euro expo fauna fax fewer fibre fjord gamer hang heard heist hijab hype
    inbox indie intro latte litre loner macho mafia meme metre metro mini modem nacho nerd newer
    nicer ninja odder pasta pesto pixel prom promo proud ramen rarer rehab retro ruder safer salsa
    saner surer sushi synth taco titan using vegan vibe wider woken women
""")
# Not words (contractions, prefixes, abbreviations): neither allowed nor answers.
NON_WORDS = word_set("""
    admin arent didnt hydro inter quasi wasnt youve
""")
# Allowed as guesses, never answers: names, places, brands, foreign, technical, British-only.
NOT_ANSWERS = word_set("""
    abbas acker actin acton alamo alban albee albus algal alkyl allan altho alway amide amine amman
    anima anion anker ansar areal ariel arjun arles arras ascii astor bafta banco banda barra barry
    barth basso basta begum benjy benny benzo berne betis betty bilbo billy blair blake blanc bobby
    boden bodhi bogan bolus booby bosch bowie boyer brant breck brent brett brock bucky buffy bundy
    burgh burke bursa busby butyl cabot cajun campo camus carte caryl chaka chang cheng chevy chico
    chien chile china ching chowk cisco clark claro clary cleve clift cline clint clive coker colin
    comer conte corky corse costa cotta covid crain criss crore cuddy culpa curie cutty cyrus damme
    darby davis debby degas delft demos derry dewan dhoni dicky diddy didst dimer dixie dixit dobby
    doggo donna dover drago droit ducal dunne duper durst dutch ecole emmet ender erika ethel ethyl
    evert faust fibre fitch footy forme fossa frist frith ganga ganja garth gault gauss gemma genet
    ghazi gilly ginny glans glebe glial gluck goran graff griff groot gundy gutta gyrus hafiz hakim
    hamel hamza hanna harry hasan hasta havel hazen henny henry herne hight hogan holla homer honda
    hondo horst hough hoyle humic huron hurst hymen infra ingle irene islay jager japan jenna jenny
    jerez jerry jihad jimmy joshi josie julio karst kashi keita kelly kerry knick kodak kraft krone
    laine laker lamia laney larry laura laver layne lazar leger levin lewis liang liber ligne lindo
    linea linky lisle litre livre locum logie lohan lordy lough luger lysis macao machi mafia malik
    mamma mammy manny manus marco marge maria maris masha massa masse mater matti mavis mensa merch
    merle metre meuse miler milla mille minot mirza missy mitra molly monte morin moron morse motte
    mould mungo myron nancy nandi nawab nazir neath nicky nitty nizam norma nubia odeon oliva orang
    ortho pablo paddy pally palma panto panty paolo pappy param pardo parma passe patel pater payed
    peasy pedro peele peggy penta peres perry peter petit phage pilar playa polis ponce poppa porta
    porto posey prima prion prius proto punta punto purdy pygmy pyrex quant rabat ralph rance randy
    razer reddy redox redux reese reina rhine riley rishi rogan roger rohan roper roque rowan rufus
    ryder sabra sacra sahib salle sally salma sammy satan sault savin savoy sayer scala scape scrim
    scrip selah sence senna septa serra seton sexed sheng shree shure silva singh sissy slade sloan
    smith smoot smyth snape snead snell sonny speer spina spiro spitz spunk stade steen stein stine
    stipe strom sturt sucre sulla surah surat swiss synch tabor takin tambo tammy tania taxon terry
    testa tetra thorp tibet tikka tilly timon timor tommy tonga torah trier trine trump tubal tulsi
    tutti twain unsee using vardy varna varus vidya ville vinny wahoo wally walsh washy waugh weber
    welsh wigan willy woody xenia yahoo zaman zorro
""")
# Offensive: neither allowed nor answers. ROT13-encoded.
BLOCKED_ROT13 = """
    anmvf arteb cbeab cevpx chffl chorf chovp cnxvf cravf cvzcf dhrre fcrez fcvpx fdhnj fnzob frzra
    fxnax fyhgf gjngf gjvax gubat gvggl hevar ihyin jrapu juber obare obbgl obbof ohgpu ovgpu ovzob
    pbbaf phagf puvax qlxrf qnexl qvpxf qvyqb rarzn shpxf srpny srprf tbbxf tlcfl ubaxl ubeal ubzbf
    xenhg xvaxl xvxrf ylapu ynovn znzzl
"""
BLOCKED = word_set(codecs.decode(BLOCKED_ROT13, "rot13"))


def pinned_versions() -> dict[str, str]:
    """Return ``{package: version}`` from the ``name==version`` lines of the requirements file."""
    pins = {}
    for line in (ROOT / REQUIREMENTS).read_text().splitlines():
        name, sep, ver = line.split("#")[0].partition("==")
        if sep:
            pins[name.strip()] = ver.strip()
    return pins


def build(n_answers: int) -> tuple[list[str], list[str]]:
    """Return ``(answers, allowed)``, both sorted."""
    from english_words import get_english_words_set
    from wordfreq import get_frequency_dict

    freqs = get_frequency_dict("en", wordlist="large")

    def zipf(word: str) -> float:
        return round(9 + math.log10(freqs[word]), 2) if word in freqs else 0.0

    web2 = get_english_words_set(["web2"])
    lexicon = {w for w in web2 if w.isascii() and w.isalpha() and w.islower()} | EXTRA
    words = {w for w in lexicon if FIVE.fullmatch(w)}
    for cand in freqs:
        if FIVE.fullmatch(cand) and zipf(cand) >= INFLECTED_MIN_ZIPF:
            bases = (re.subn(pat, rep, cand) for pat, rep in INFLECTIONS)
            if any(n and b in lexicon and zipf(b) >= BASE_MIN_ZIPF for b, n in bases):
                words.add(cand)
    allowed = sorted(words - NON_WORDS - BLOCKED)

    def answer_grade(w: str) -> bool:
        plural = w.endswith("s") and not w.endswith("ss") and w[:-1] in lexicon
        return w in lexicon and w in freqs and w not in NOT_ANSWERS and not plural

    ranked = sorted((w for w in allowed if answer_grade(w)), key=lambda w: (-freqs[w], w))
    return sorted(ranked[:n_answers]), allowed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--check", action="store_true", help="exit 1 if the files are stale")
    parser.add_argument("--answers", type=int, default=2315, help="answer list size")
    args = parser.parse_args(argv)

    for package, pinned in pinned_versions().items():
        try:
            installed = version(package)
        except PackageNotFoundError:
            installed = "not installed"
        if installed != pinned:
            print(f"{package}=={pinned} needed, found {installed}: pip install -r {REQUIREMENTS}")
            return 2
    answers, allowed = build(args.answers)
    assert MUST_BE_ANSWERS <= set(answers) <= set(allowed)
    print(f"answers: {len(answers)}  allowed: {len(allowed)}")
    texts = {
        path: "".join(f"{w}\n" for w in words).encode()
        for path, words in ((ANSWERS_FILE, answers), (ALLOWED_FILE, allowed))
    }
    if args.check:
        stale = [p for p, text in texts.items() if not p.exists() or p.read_bytes() != text]
        for path in stale:
            print(f"stale: {path.relative_to(ROOT)}")
        return 1 if stale else 0
    for path, text in texts.items():
        path.write_bytes(text)
        print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
