"""Look-alike names: Unicode's confusable skeletons (UTS #39) and mixed scripts.

UTS #39 maps every character that can be mistaken for another to one
prototype, so two strings are confusable when their *skeletons* (NFD, each
character replaced by its prototype, NFD again) are equal: Cyrillic
``аlice`` and Latin ``alice`` have one skeleton. The data is Unicode's
``confusables.txt`` as the ``confusable_homoglyphs`` package ships it: its
pairs without their direction. So :func:`skeleton` maps each character to one
fixed member of its confusable class (the prototype where the pairs show which
it is) rather than always to Unicode's prototype: the text differs from
Unicode's skeleton, but two strings get equal skeletons exactly when Unicode's
skeletons are equal, which is all a look-alike check needs.
"""

from __future__ import annotations

import functools
import unicodedata

from confusable_homoglyphs import categories, confusables

from ..core.names import name_key

__all__ = ["prepare", "skeleton", "look_alike_keys", "mixed_scripts"]

_ANY_SCRIPT = frozenset({"COMMON", "INHERITED", "Unknown"})
"""Script values that mix with every script (digits, punctuation, combining marks)."""
_SCRIPT_SETS = (
    frozenset({"LATIN", "HAN", "HIRAGANA", "KATAKANA"}),  # Japanese
    frozenset({"LATIN", "HAN", "BOPOMOFO"}),  # Chinese
    frozenset({"LATIN", "HAN", "HANGUL"}),  # Korean
)
"""Scripts that one name may mix (UTS #39's "highly restrictive" level)."""


def prepare() -> None:
    """Build the table of prototypes now (about 0.2 s, once per process) rather than at the first name checked."""
    _prototypes()


def skeleton(text: str) -> str:
    """The confusable skeleton of ``text``: equal for strings that look alike.

    >>> skeleton("\\u0430lice") == skeleton("alice")  # Cyrillic a
    True
    """
    prototypes = _prototypes()
    mapped = "".join(prototypes.get(char, char) for char in unicodedata.normalize("NFD", text))
    return unicodedata.normalize("NFD", mapped)


def look_alike_keys(name: str) -> frozenset[str]:
    """The skeletons under which ``name`` may be read; two names look alike when these sets meet.

    Case folding and the skeleton are taken in both orders, so that case does
    not hide a look-alike whichever comes first: the skeleton of the name as
    written and in capitals (``ALlCE`` and ``ALICE``), of its name key
    (``аlice`` with a Cyrillic a and ``ALICE``), and of the name key of its
    skeleton (``AIice`` with a capital i reads ``Alice``, whose key is ``alice``).
    """
    key = name_key(name)
    written = skeleton(name)
    return frozenset((written, skeleton(name.upper()), skeleton(key), skeleton(name_key(written))))


def mixed_scripts(name: str) -> list[str]:
    """The scripts of ``name`` (title case, sorted) if it mixes scripts no language mixes; else ``[]``.

    Digits, punctuation and the like go with any script; Latin may join Han
    with Hiragana and Katakana, with Bopomofo, or with Hangul.

    >>> mixed_scripts("p\\u0430ypal")
    ['Cyrillic', 'Latin']
    """
    scripts = {categories.alias(char) for char in name} - _ANY_SCRIPT
    if len(scripts) <= 1 or any(scripts <= allowed for allowed in _SCRIPT_SETS):
        return []
    return sorted(script.title() for script in scripts)


@functools.cache
def _prototypes() -> dict[str, str]:
    """Character -> the text of its confusable class, for every character in a class but that text."""
    pairs = _look_alike_pairs()
    chosen = {}
    for members in _classes(pairs):
        # Unicode's prototype: the class's one many-character text if it has one, else the one all others map to.
        prototype = min(members, key=lambda text: (len(text) == 1, -len(pairs.get(text, ())), text))
        chosen.update((member, prototype) for member in members if len(member) == 1)
    spelled = {char: "".join(chosen.get(c, c) for c in prototype) for char, prototype in chosen.items()}
    return {char: text for char, text in spelled.items() if text != char}


def _look_alike_pairs() -> dict[str, set[str]]:
    """Text -> the texts it can be mistaken for, both ways, as the package ships confusables.txt."""
    pairs: dict[str, set[str]] = {}
    for text, partners in confusables.confusables_data.items():
        pairs.setdefault(_visible(text), set()).update(_visible(partner["c"]) for partner in partners)
    return pairs


def _classes(pairs: dict[str, set[str]]) -> list[list[str]]:
    """The confusable classes: the texts linked by ``pairs``, directly or through others (union-find)."""
    parent: dict[str, str] = {}

    def root(text: str) -> str:
        while parent.setdefault(text, text) != text:
            parent[text] = text = parent[parent[text]]
        return text

    for text, partners in pairs.items():
        for partner in partners:
            parent[root(partner)] = root(text)
    classes: dict[str, list[str]] = {}
    for text in parent:
        classes.setdefault(root(text), []).append(text)
    return list(classes.values())


def _visible(text: str) -> str:
    """``text`` without the direction marks that confusables.txt's comments put around right-to-left characters."""
    return text.replace("\u200e", "").replace("\u200f", "") or text
