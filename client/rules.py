"""The rules of the games, as the terminal client shows them (``rules GAME``).

The text is ``docs/RULES.md``; the package carries a byte-identical copy,
``client/rules_text.md``, so an installed client has it without a checkout.
Each game is one ``## `` section of that Markdown file, which names the
game's short name on a line ``Name in Parlour: `othello`.``.
"""

from __future__ import annotations

import re
from importlib import resources

__all__ = ["RULES_RESOURCE", "RulesNotFound", "game_rules", "rules_text", "section_names"]

RULES_RESOURCE = "rules_text.md"
"""The file name of the packaged copy of ``docs/RULES.md`` inside the ``client`` package."""

_SHORT_NAME = re.compile(r"^Name in Parlour: `([a-z0-9_]+)`", re.MULTILINE)
_FENCE = "```"


class RulesNotFound(LookupError):
    """No rules section for the game asked for, or no rules text at all.

    The message says what was asked and lists the games that have rules.
    """


def rules_text() -> str:
    """Return the whole rules document (Markdown), read from the package.

    Raises:
        RulesNotFound: if the packaged copy is missing or unreadable (a broken install).
    """
    try:
        return resources.files("client").joinpath(RULES_RESOURCE).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RulesNotFound(f"the rules text is missing from this installation ({exc})") from None


def _sections(text: str) -> list[str]:
    """Split the document at its ``## `` headings (outside code blocks); each section keeps its heading."""
    sections: list[list[str]] = []
    in_code = False
    for line in text.splitlines():
        if line.startswith(_FENCE):
            in_code = not in_code
        if line.startswith("## ") and not in_code:
            sections.append([])
        if sections:
            sections[-1].append(line)
    return ["\n".join(lines).rstrip() for lines in sections]


def _key(text: str) -> str:
    """``text`` lower-cased with everything but letters and digits removed ("Ming Mang" -> "mingmang")."""
    return "".join(char for char in text.lower() if char.isalnum())


def section_names(text: str) -> list[str]:
    """Return the short names of the games that have a section in ``text``, in document order."""
    names = []
    for section in _sections(text):
        found = _SHORT_NAME.search(section)
        if found:
            names.append(found[1])
    return names


def game_rules(name: str, text: str | None = None) -> str:
    """Return the section of the rules for one game, heading included.

    Args:
        name: the game's short name (``"morris"``) or its title as in the
            heading (``"Nine Men's Morris"``, ``"ming mang"``); case, spaces
            and punctuation are ignored.
        text: the rules document; the packaged copy when ``None``.

    Raises:
        RulesNotFound: if no section matches ``name``; the message lists the games.
    """
    document = rules_text() if text is None else text
    wanted = _key(name)
    for section in _sections(document):
        heading = section.splitlines()[0].removeprefix("## ")
        found = _SHORT_NAME.search(section)
        if wanted and (wanted == _key(heading) or (found is not None and wanted == found[1])):
            return section
    known = ", ".join(section_names(document)) or "none"
    raise RulesNotFound(f"no rules for a game called {name!r}; games: {known}")
