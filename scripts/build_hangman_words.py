#!/usr/bin/env python3
"""Build the Hangman word list shipped in ``envs/data/`` (used by ``TextHangman-v0``).

Output: ``envs/data/hangman_words.txt``, one lowercase ``a-z`` word per line, sorted by length and
then alphabetically, no header: the ``--per-length`` (default 300) most frequent common English
words of each length from ``MIN_LENGTH`` to ``MAX_LENGTH`` letters.

Sources, both installed from PyPI at the versions pinned in
``scripts/requirements-wordlists.txt`` (shared with ``scripts/build_wordle_lists.py``; nothing is
downloaded at library run time and neither package is a dependency of ``trl-env``):

* ``english-words`` (MIT): its ``web2`` list (Webster's Second International, public domain).
  Only lowercase entries are used (capitalised ones are proper nouns).
* ``wordfreq`` (code Apache-2.0, data CC-BY-SA 4.0): English word frequencies (``large`` list),
  used to rank the words.

Rules: a word is a candidate when it is a lowercase ``a-z`` ``web2`` entry known to wordfreq,
``web2`` has no capitalised entry of the same spelling (which would hint at a name, like
``Brazil``), it is not an ``-s`` plural of another ``web2`` word (``cats``), and it is not in
``EXCLUDED`` (names, brands, contractions, slang that slipped through) or ``BLOCKED`` (profanity
and sensitive words, ROT13-encoded so the source does not spell them out). Candidates are ranked
by frequency (ties alphabetical) and the first ``--per-length`` of each length are kept.

The output depends only on the pinned package versions (everything is sorted): rerunning gives a
byte-identical file.

Usage (from the repository root)::

    pip install -r scripts/requirements-wordlists.txt
    python scripts/build_hangman_words.py          # rewrite envs/data/hangman_words.txt
    python scripts/build_hangman_words.py --check  # exit 1 if the committed file is stale
"""

from __future__ import annotations

import argparse
import codecs
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUTPUT = ROOT / "envs" / "data" / "hangman_words.txt"
REQUIREMENTS_REL = "scripts/requirements-wordlists.txt"
REQUIREMENTS = ROOT / REQUIREMENTS_REL

MIN_LENGTH = 4
MAX_LENGTH = 10

# Names, places, brands, contractions and slang that web2 lists in lowercase.
EXCLUDED = {
    "barcelona",
    "brazil",
    "china",
    "dont",
    "dude",
    "smith",
    "trump",
    "twitter",
    "yeah",
    "york",
}
# Profanity and sensitive words (ROT13).
BLOCKED = set(
    codecs.decode(
        """
    qnza uryy ovgpu frkhny fhvpvqr greebevfg greebevfz znevwhnan
""",
        "rot13",
    ).split()
)


def pinned_versions() -> dict[str, str]:
    """Return ``{package: version}`` from the ``name==version`` lines of the requirements file."""
    pins = {}
    for line in REQUIREMENTS.read_text().splitlines():
        name, sep, ver = line.split("#")[0].strip().partition("==")
        if sep:
            pins[name.strip()] = ver.strip()
    return pins


def build(per_length: int) -> list[str]:
    """Return the word list, sorted by (length, word)."""
    from english_words import get_english_words_set
    from wordfreq import get_frequency_dict

    freqs = get_frequency_dict("en", wordlist="large")
    web2 = {w for w in get_english_words_set(["web2"]) if w.isascii() and w.isalpha()}
    lower = {w for w in web2 if w.islower()}
    capitalised = {w.lower() for w in web2 if not w.islower()}

    def candidate(w: str) -> bool:
        plural = w.endswith("s") and not w.endswith("ss") and w[:-1] in lower
        return (
            MIN_LENGTH <= len(w) <= MAX_LENGTH
            and w in freqs
            and w not in capitalised
            and not plural
            and w not in EXCLUDED
            and w not in BLOCKED
        )

    chosen: list[str] = []
    for length in range(MIN_LENGTH, MAX_LENGTH + 1):
        ranked = sorted(
            (w for w in lower if len(w) == length and candidate(w)), key=lambda w: (-freqs[w], w)
        )
        if len(ranked) < per_length:
            raise SystemExit(f"only {len(ranked)} words of length {length}; lower --per-length")
        chosen += ranked[:per_length]
    return sorted(chosen, key=lambda w: (len(w), w))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="verify the file is up to date")
    parser.add_argument("--per-length", type=int, default=300, help="words of each length")
    args = parser.parse_args(argv)

    for package, pinned in pinned_versions().items():
        try:
            installed = version(package)
        except PackageNotFoundError:
            installed = "not installed"
        if installed != pinned:
            print(
                f"{package}: need {pinned} ({installed}); run: pip install -r {REQUIREMENTS_REL}",
                file=sys.stderr,
            )
            return 2
    words = build(args.per_length)
    text = "".join(f"{w}\n" for w in words)
    print(f"words: {len(words)} ({MIN_LENGTH}-{MAX_LENGTH} letters, {args.per_length} per length)")
    if args.check:
        if not OUTPUT.exists() or OUTPUT.read_text() != text:
            print(f"stale: {OUTPUT.relative_to(ROOT)}", file=sys.stderr)
            return 1
        return 0
    OUTPUT.write_text(text)
    print(f"wrote {OUTPUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
