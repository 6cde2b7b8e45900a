"""Player names: what is allowed, and when two names are the same person.

A name is 1 to 24 characters, printable, with no leading, trailing or doubled
spaces and no whitespace other than the plain space, so no one can pass for
someone else by look-alike spacing or control characters. Nor may it hold a
character that shows nothing: Unicode's Default_Ignorable_Code_Point (the
grapheme joiner U+034F, variation selectors, Hangul fillers, Mongolian free
variation selectors, U+17B4 ...; the property comes from the ``regex``
package's Unicode tables) or one of the blank-looking symbols in
:data:`BLANK_CHARACTERS` (UTS #39 leaves both out of identifiers). Two names
that are equal after NFKC normalisation and case folding are the same name.
"""

from __future__ import annotations

import re
import unicodedata

import regex

from protocol.messages import MAX_NAME_CHARS

__all__ = ["BLANK_CHARACTERS", "NameError_", "check_name", "name_key", "is_reserved", "invisible"]

_RESERVED = re.compile(r"computer(?: ?\d+)?")
"""Name keys kept for the server's computer seats ("Computer 4")."""
_IGNORABLE = regex.compile(r"\p{Default_Ignorable_Code_Point}")
BLANK_CHARACTERS = frozenset("\u2800\U0001d159")
"""Characters that draw as blank space but are neither spaces nor default-ignorable: the braille blank
U+2800 and the musical null notehead U+1D159."""


class NameError_(ValueError):
    """A name that is not allowed; the message says why."""


def check_name(name: str, max_chars: int = MAX_NAME_CHARS) -> str:
    """Return ``name`` if it is allowed (at most ``max_chars`` characters).

    Raises:
        NameError_: empty, too long, control, format or invisible characters, or odd spacing.
    """
    if not name:
        raise NameError_("a name cannot be empty")
    if len(name) > max_chars:
        raise NameError_(f"a name has at most {max_chars} characters, not {len(name)}")
    for char in name:
        if char != " " and (char.isspace() or unicodedata.category(char)[0] in "CZ"):
            raise NameError_(f"a name cannot contain the character U+{ord(char):04X} ({unicodedata.name(char, 'unnamed')})")
        if invisible(char):
            raise NameError_(f"a name cannot contain the invisible character U+{ord(char):04X} ({unicodedata.name(char, 'unnamed')})")
    if name != name.strip() or "  " in name:
        raise NameError_("a name cannot start or end with a space or hold two spaces in a row")
    if is_reserved(name):
        raise NameError_(f"the name {name!r} is kept for the server's computer players")
    return name


def invisible(char: str) -> bool:
    """Whether the one character ``char`` shows nothing: Default_Ignorable_Code_Point or in :data:`BLANK_CHARACTERS`."""
    return char in BLANK_CHARACTERS or _IGNORABLE.match(char) is not None


def is_reserved(name: str) -> bool:
    """Whether ``name`` is a computer seat's name ("Computer 4"), which no player may take."""
    return _RESERVED.fullmatch(name_key(name)) is not None


def name_key(name: str) -> str:
    """The form two names are compared in: NFKC-normalised and case-folded.

    A name already in that form is returned itself, not a copy, so a map
    keyed by name keys holds no second string for it.
    """
    key = unicodedata.normalize("NFKC", name).casefold()
    return name if key == name else key
