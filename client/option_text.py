"""Game options as people read them: each option's label and its value in words.

The options' schema is the server's ``welcome.games[].options`` (PROTOCOL.md
§6), read into :class:`games.base.Option` values by :func:`game_options`
(this client's own definitions where it knows the game: they carry text
lengths too). Every text that comes from the server goes through
:func:`client.sanitize.printable`.

>>> from games.base import Option
>>> flying = Option("flying", "bool", False, "a player down to three may fly")
>>> value_text(flying, True), value_text(None, [3, 4, 5]), value_text(None, {"length": 900, "sha256": "ab"})
('yes', '3,4,5', '<900 chars>')
>>> options_text([flying, Option("mill_protection", "bool", False)], {"flying": True, "mill_protection": True})
'Flying: yes, Mill protection: yes'
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

import games
from games.base import Option

from .sanitize import printable

__all__ = ["game_options", "schema", "option_label", "value_text", "options_text", "MOST_VALUE_CHARS"]

MOST_VALUE_CHARS = 20
"""A value longer than this many characters is cut with ``...`` (a text option shows its length instead)."""

_TYPES = ("int", "bool", "str", "list[int]")


def game_options(described: Mapping[str, Any]) -> list[Option]:
    """The options of a game as the server's ``welcome.games`` describes it, as :class:`Option` values.

    Where this client knows the game, its own options are used (they carry text
    lengths too); otherwise they are built from the descriptor, its ``label``
    included. Descriptors that are not maps, or of an unknown type, are left out.
    """
    try:
        return list(games.get(str(described.get("name"))).options)
    except games.GameError:
        pass
    options = []
    for entry in described.get("options") or []:
        if isinstance(entry, dict) and isinstance(entry.get("name"), str) and entry.get("type") in _TYPES:
            label = entry.get("label") if isinstance(entry.get("label"), str) else ""
            options.append(Option(entry["name"], entry["type"], entry.get("default"), str(entry.get("doc") or ""),
                                  entry.get("min"), entry.get("max"), label=label))
    return options


def schema(game: str, described_games: Iterable[Any] | None = None) -> list[Option]:
    """The options of ``game``: from the server's ``welcome.games`` when given and listed there, else this client's own (``[]``: unknown)."""
    for entry in described_games or ():
        if isinstance(entry, dict) and entry.get("name") == game:
            return game_options(entry)
    return game_options({"name": game})


def option_label(option: Option | None, name: str) -> str:
    """The words a person reads for the option ``name``: its label, or the name made readable when the schema lacks it (sanitised)."""
    if option is not None:
        return printable(option.title)
    return printable(name.replace("_", " ").capitalize())


def value_text(option: Option | None, value: Any) -> str:
    """An option's value in words (sanitised): ``yes``/``no`` for a switch, ``3,4,5`` for a list, ``<900 chars>`` for a summarized text."""
    if isinstance(value, bool) or (option is not None and option.type == "bool" and value in (0, 1)):
        return "yes" if value else "no"
    if isinstance(value, dict) and isinstance(value.get("length"), int):
        return f"<{value['length']} chars>"
    if isinstance(value, str) and option is not None and option.type == "str" and len(value) > MOST_VALUE_CHARS:
        return f"<{len(value)} chars>"
    text = ",".join(map(str, value)) if isinstance(value, list) else str(value)
    return printable(text if len(text) <= MOST_VALUE_CHARS else text[: MOST_VALUE_CHARS - 3] + "...")


def options_text(schema_options: Sequence[Option], values: Mapping[str, Any], *, hide_defaults: bool = True) -> str:
    """``Flying: yes, Size: 6``: each option set in ``values``, by label, in the order ``values`` gives them.

    Args:
        schema_options: the game's options (see :func:`schema`); a value whose
            option is not among them is still shown, by its name made readable.
        values: the options as the server sent them (``None`` values are left out).
        hide_defaults: leave out a value equal to its option's default.
    """
    by_name = {option.name: option for option in schema_options}
    words = []
    for name, value in values.items():
        option = by_name.get(str(name))
        if value is None or (hide_defaults and option is not None and value == option.default and type(value) is type(option.default)):
            continue
        words.append(f"{option_label(option, str(name))}: {value_text(option, value)}")
    return ", ".join(words)
