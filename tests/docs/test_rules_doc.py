"""docs/RULES.md agrees with the engines, and the client ships an identical copy.

The document is parsed here, independently of ``client.rules``:

- every game has a ``## `` section (found by its ``Name in Parlour: `name`.``
  line) with exactly the required ``### `` subsections, in order;
- the Options section has one ``- `name` (...)`` bullet per option the engine
  declares, no other, and each bullet states the code's range and default;
- every paragraph ``Examples after `new GAME k=v ...`, `m1`, ...: `e1`, `e2`.``
  in a Notation section is checked against the real engine: the ``new``
  command's options are read as the terminal client reads them (a text
  option names a file shown in the document), ``m1``... are played in order,
  then each example must be legal there and already in canonical form.
  ``Also accepted after ...:`` paragraphs list other spellings, which must be
  legal (any form);
- the example position and pieces files parse with the real parsers.

Each check returns a list of problems; the tests at the end feed it broken
copies of the document to prove that a wrong example, option or file fails.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import pytest

import games
from games.morris import format_position, parse_position
from games.tactego import DEFAULT_PIECES, parse_pieces

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "docs" / "RULES.md"
PACKAGED = ROOT / "client" / "rules_text.md"

GAME_HEADINGS = ("Othello", "Nimble", "Ming Mang", "Nine Men's Morris", "Tactego", "Hexapawn")
SUBSECTIONS = ("Setup", "Play", "End of the game", "Options", "Notation")
FILE_SUBSECTIONS = {"morris": "Position files", "tactego": "Pieces files"}
_SHORT_NAME = re.compile(r"^Name in Parlour: `([a-z0-9_]+)`", re.MULTILINE)
_EXAMPLE = re.compile(r"^(Examples|Also accepted) after (.*?):\s(.*)$", re.DOTALL)
_CODE = re.compile(r"`([^`]+)`")
_BULLET = re.compile(r"^- `(\w+)` \(([^)]*)\)")
_FENCED = re.compile(r"^```[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)


# --- parsing the document ---------------------------------------------------------


def split_headings(text: str, marker: str) -> dict[str, str]:
    """Map each heading starting with ``marker`` (``"## "``) to the text under it, outside code blocks."""
    parts: dict[str, list[str]] = {}
    current: list[str] | None = None
    in_code = False
    for line in text.splitlines():
        if line.startswith("```"):
            in_code = not in_code
        if not in_code and line.startswith(marker):
            current = parts.setdefault(line[len(marker):].strip(), [])
            continue
        if current is not None:
            current.append(line)
    return {heading: "\n".join(lines) for heading, lines in parts.items()}


def paragraphs(text: str) -> list[str]:
    """The blank-line separated paragraphs of ``text``, each joined into one line (code blocks kept)."""
    return [" ".join(part.split("\n")) if not part.startswith("```") else part for part in re.split(r"\n\s*\n", text.strip())]


def bullets(text: str) -> list[str]:
    """The ``- `` list items of ``text``, each with its indented continuation lines joined into one line."""
    items: list[list[str]] = []
    open_item = False
    for line in text.splitlines():
        if line.startswith("- "):
            items.append([line])
            open_item = True
        elif open_item and line.startswith("  ") and line.strip():
            items[-1].append(line.strip())
        else:
            open_item = False
    return [" ".join(item) for item in items]


def game_sections(text: str) -> dict[str, tuple[str, str]]:
    """Map each game's short name to (heading, section text)."""
    found = {}
    for heading, body in split_headings(text, "## ").items():
        name = _SHORT_NAME.search(body)
        if name:
            found[name[1]] = (heading, body)
    return found


def file_text(section: str, name: str) -> str | None:
    """The first code block after the paragraph that names ```name``` (``None`` if there is none)."""
    marker = section.find(f"`{name}`")
    while marker >= 0:
        block = _FENCED.search(section, marker)
        if block is not None and "`" + name + "`" in section[marker:block.start()]:
            return block[1]
        marker = section.find(f"`{name}`", marker + 1)
    return None


# --- the checks -------------------------------------------------------------------


def structure_problems(text: str) -> list[str]:
    """Missing games, headings or subsections (and subsections out of order)."""
    problems = []
    headings = [line[3:] for line in text.splitlines() if line.startswith("## ")]
    if tuple(headings) != GAME_HEADINGS:
        problems.append(f"game headings are {headings}, expected {list(GAME_HEADINGS)}")
    sections = game_sections(text)
    if set(sections) != set(games.names()):
        problems.append(f"sections for {sorted(sections)}, games are {sorted(games.names())}")
    for name, (heading, body) in sections.items():
        expected = SUBSECTIONS + ((FILE_SUBSECTIONS[name],) if name in FILE_SUBSECTIONS else ())
        found = tuple(split_headings(body, "### "))
        if found != expected:
            problems.append(f"{heading}: subsections {list(found)}, expected {list(expected)}")
    return problems


def option_problems(text: str) -> list[str]:
    """Options the document and the engine disagree about: names, ranges, defaults."""
    problems = []
    for name, (heading, body) in game_sections(text).items():
        game = games.get(name)
        options_text = split_headings(body, "### ").get("Options", "")
        listed = {}
        for item in bullets(options_text):
            match = _BULLET.match(item)
            if match:
                listed[match[1]] = match[2]
            else:
                problems.append(f"{heading}: option bullet not in the form - `name` (range; default): {item[:60]!r}")
        declared = {option.name for option in game.options}
        for missing in sorted(declared - set(listed)):
            problems.append(f"{heading}: option {missing!r} is not in the Options section")
        for extra in sorted(set(listed) - declared):
            problems.append(f"{heading}: the Options section lists {extra!r}, which the engine does not have")
        for option in game.options:
            if option.name in listed:
                problems.extend(f"{heading}: option {option.name!r}: {p}" for p in _bullet_problems(option, listed[option.name]))
    return problems


def _bullet_problems(option: games.Option, summary: str) -> list[str]:
    """What the ``(...)`` summary of an option's bullet fails to say that the code says."""
    wanted = []
    if option.type in ("int", "list[int]"):
        if option.minimum is not None and option.maximum is not None:
            wanted.append(f"{option.minimum} to {option.maximum}")
        elif option.minimum is not None:
            wanted.append(f"at least {option.minimum}")
    if option.type == "list[int]" and option.max_length is not None:
        wanted.append(f"up to {option.max_length}")
    if option.type == "str" and option.max_length is not None:
        wanted.append(f"at most {option.max_length} characters")
    if option.type == "bool":
        wanted.append("default on" if option.default else "default off")
    else:
        wanted.append("default none" if option.default is None else f"default {option.default}")
    return [f"says {summary!r}, missing {phrase!r}" for phrase in wanted if not re.search(rf"(?<!\w){re.escape(phrase)}(?!\w)", summary)]


def example_problems(text: str) -> list[str]:
    """Notation examples the engine refuses, or examples not in canonical form."""
    problems = []
    for name, (heading, body) in game_sections(text).items():
        notation = split_headings(body, "### ").get("Notation", "")
        checked = 0
        for paragraph in paragraphs(notation):
            match = _EXAMPLE.match(paragraph)
            if match is None:
                continue
            kind, context, examples = match[1], _CODE.findall(match[2]), _CODE.findall(match[3])
            if not context or not examples:
                problems.append(f"{heading}: cannot read the examples paragraph {paragraph[:60]!r}")
                continue
            checked += kind == "Examples"
            try:
                state = _context_state(name, body, context)
            except (ValueError, games.GameError) as exc:
                problems.append(f"{heading}: the position of {paragraph[:60]!r} cannot be set up: {exc}")
                continue
            for example in examples:
                try:
                    played = state.play(example).last_move
                except games.GameError as exc:
                    problems.append(f"{heading}: example {example!r} after {context}: {exc}")
                    continue
                if kind == "Examples" and played != example:
                    problems.append(f"{heading}: example {example!r} is written {played!r} by the game")
        if not checked:
            problems.append(f"{heading}: the Notation section has no 'Examples after `new {name}`: ...' paragraph")
        problems.extend(f"{heading}: {p}" for p in _untested_moves(name, notation))
    return problems


NOT_MOVES = ("x", "pass")
"""Code words a Notation section may use besides moves: the removal mark, and
Othello's pass, which the server plays (a player never types it)."""


def _untested_moves(name: str, notation: str) -> list[str]:
    """Code in the Notation prose that is neither an option, a known word, nor one of the checked examples."""
    tested: set[str] = set()
    prose = []
    for paragraph in paragraphs(notation):
        match = _EXAMPLE.match(paragraph)
        if match is None:
            prose.append(paragraph)
        else:
            tested.update(_CODE.findall(match[3]))
    known = tested | {option.name for option in games.get(name).options} | set(NOT_MOVES)
    return [f"{code!r} in the Notation text is not one of the checked examples" for code in _CODE.findall("\n".join(prose)) if code not in known]


def _context_state(name: str, section: str, context: list[str]) -> games.State:
    """The state after a ``new GAME k=v ...`` command and the moves that follow it.

    Raises:
        ValueError: if the command is not ``new`` of this game, or names a file the section does not show.
        games.GameError: for a bad option or an illegal move.
    """
    words = shlex.split(context[0])
    if words[:2] != ["new", name]:
        raise ValueError(f"{context[0]!r} is not 'new {name} ...'")
    game = games.get(name)
    options: dict[str, Any] = {}
    seed = None
    for word in words[2:]:
        key, _, value = word.partition("=")
        if key == "seed":
            seed = value
        elif game.option(key).type == "str":
            shown = file_text(section, value)
            if shown is None:
                raise ValueError(f"{key}={value}: no file `{value}` is shown in the section")
            options[key] = shown
        else:
            options[key] = game.option(key).parse_text(value)
    state = game.new_state(options, seed=seed)
    for move in context[1:]:
        state = state.play(move)
    return state


def file_problems(text: str) -> list[str]:
    """Example position and pieces files that the real parsers refuse."""
    problems = []
    sections = game_sections(text)
    if "morris" in sections:
        blocks = _FENCED.findall(split_headings(sections["morris"][1], "### ").get("Position files", ""))
        if not blocks:
            problems.append("Nine Men's Morris: the Position files section shows no example file")
        for block in blocks:
            try:
                written = format_position(parse_position(block))
            except games.InvalidOption as exc:
                problems.append(f"Nine Men's Morris: example position file refused: {exc}")
                continue
            if written != block:
                problems.append(f"Nine Men's Morris: the example position is not as Parlour writes it: {written!r}")
    if "tactego" in sections:
        pieces = split_headings(sections["tactego"][1], "### ").get("Pieces files", "")
        blocks = _FENCED.findall(pieces)
        if not blocks:
            problems.append("Tactego: the Pieces files section shows no example file")
        for block in blocks:
            try:
                parse_pieces(block)
            except games.InvalidOption as exc:
                problems.append(f"Tactego: example pieces file refused: {exc}")
        standard = file_text(pieces, "standard.txt")
        if standard is None or parse_pieces(DEFAULT_PIECES) != _parsed_or_none(standard):
            problems.append("Tactego: the file shown as `standard.txt` is not the engine's default set")
    return problems


def _parsed_or_none(text: str) -> list[tuple[str, int]] | None:
    try:
        return parse_pieces(text)
    except games.InvalidOption:
        return None


def all_problems(text: str) -> list[str]:
    """Every disagreement between ``text`` (a rules document) and the engines."""
    return structure_problems(text) + option_problems(text) + example_problems(text) + file_problems(text)


# --- the tests --------------------------------------------------------------------


@pytest.fixture(scope="module")
def document() -> str:
    return RULES.read_text(encoding="utf-8")


def test_the_packaged_copy_is_byte_identical() -> None:
    assert PACKAGED.read_bytes() == RULES.read_bytes(), "run: cp docs/RULES.md client/rules_text.md"


def test_every_game_has_its_section_and_subsections(document: str) -> None:
    assert structure_problems(document) == []


def test_options_match_the_engines(document: str) -> None:
    assert option_problems(document) == []


def test_notation_examples_are_legal_canonical_moves(document: str) -> None:
    assert example_problems(document) == []


def test_example_files_parse(document: str) -> None:
    assert file_problems(document) == []


def test_seed_only_means_a_random_seed(document: str) -> None:
    """Only the games with a random setup talk of a seed; the rules' sources are never called one."""
    sections = game_sections(document)
    for name, (heading, body) in sections.items():
        if not games.get(name).uses_seed:
            assert "seed" not in body.lower(), heading
    outside = document
    for _, body in sections.values():
        outside = outside.replace(body, "")
    assert "seed" not in outside.lower()
    for phrase in ("the seed's", "seeds/", "seed file", "the seed says"):
        assert phrase not in document.lower()


def _broken(document: str, old: str, new: str) -> str:
    assert old in document, old
    return document.replace(old, new, 1)


@pytest.mark.parametrize(
    ("old", "new", "complaint"),
    [
        ("Examples after `new othello`: `d3`", "Examples after `new othello`: `d4`", "d4 is occupied"),
        ("Examples after `new othello`: `d3`", "Examples after `new othello`: `D3`", "is written 'd3'"),
        ("`a3-b2`, `c3-b2`, `a3-a2`", "`a3-b2`, `c3-b2`, `a3-a1`", "a3-a1"),
        ("`d2-d3xa1`, `d2-d3xf6`", "`d2-d3`, `d2-d3xf6`", "forms a mill"),
        ("Examples after `new tactego seed=demo`: `b2-c3`", "Examples after `new tactego seed=demo`: `h2-h3`", "flag"),
        ("Examples after `new nimble board=0,0,1,2,0,2`", "Examples after `new nimble board=0,0,0,2,0,2`", "square 3 is empty"),
        ("- `superko` (on or off; default off)", "- `superko` (on or off; default on)", "missing 'default off'"),
        ("- `size` (3 to 8; default 3)", "- `size` (3 to 9; default 3)", "missing '3 to 8'"),
        ("- `hidden` (on or off; default on)", "- `hiding` (on or off; default on)", "'hidden' is not in the Options"),
        ("- `flying`", "- `flying_fast` (on or off; default off): x\n- `flying`", "does not have"),
        ("2, 0, 1, 0, 2, 2, 0, 0, 2", "2, 0, 1, 0, 2, 2, 0, 0, 3", "must be 0, 1 or 2"),
        ("\n3 2\n2 1\nF 1\n", "\n3 2\n2 1\nF\n", "pieces line 3"),
        ("\n10 1\n9 1\n", "\n10 1\n9 2\n", "standard.txt"),
        ("### Pieces files", "### Pieces", "subsections"),
        ("joined by a dash:\n  `g7-g4`", "joined by a dash:\n  `d2-d3`", "'d2-d3' in the Notation text"),
    ],
)
def test_a_wrong_document_fails(document: str, old: str, new: str, complaint: str) -> None:
    problems = all_problems(_broken(document, old, new))
    assert any(complaint in problem for problem in problems), problems
