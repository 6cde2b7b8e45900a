"""Every message example in PROTOCOL.md goes through the real decoder and encoder, so no example can drift.

Examples are found everywhere in the document: every value in a fenced
``json`` block, every message after ``→``/``←`` in the worked session's
transcripts, and every inline code span that starts with ``{"type"``. The
document's convention (stated at its top) is that ``…`` stands for entries
left out; everything else in an example is exact:

- an example of a request (``type`` a request's, or after ``→``) must decode
  with :func:`protocol.messages.parse_request`, and hold no key the request
  does not have;
- an example of a server message must decode with
  :func:`protocol.messages.parse_server_message`, and re-encoded by the
  server's encoder give back exactly the example: the same keys (a field at
  its default is left out, except in the ``TableInfo`` map and the other
  maps whose every key is always sent), the same values and types;
- a shortened example (with ``…``) must hold only keys the message has, each
  with a value of the right type, no field the server leaves out at its
  default, and may leave anything out;
- a bare ``TableInfo`` map (an example without ``type`` holding ``seats`` and
  ``status``) is checked as the server sends it; other bare maps (views, the
  clock map) are free-form and only need to be valid JSON.
"""

from __future__ import annotations

import json
import re
import types
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Union

import msgspec
import pytest

from protocol import messages as m

DOC = Path(__file__).resolve().parents[2] / "PROTOCOL.md"
ELIDED = "\u2026elided\u2026"
"""What an ellipsis in an example becomes: a key (with ``null``) in a map, an element in a list."""

REQUEST_TAGS = {cls.__struct_config__.tag: cls for cls in m.REQUEST_TYPES}
SERVER_TAGS = {cls.__struct_config__.tag: cls for cls in m.SERVER_TYPES}


@dataclass(frozen=True)
class NotJson:
    """Where an example should be but the text is not JSON (even with its ellipses read as elisions)."""

    error: str


@dataclass(frozen=True)
class Example:
    """One example: its value, the line it starts on, and who sends it (``None``: judged by its ``type``)."""

    value: Any
    line: int
    sender: Literal["client", "server"] | None

    def __str__(self) -> str:
        return f"PROTOCOL.md line {self.line}"


# --- finding the examples ------------------------------------------------------------------


def with_elisions(text: str) -> str:
    """``text`` with every bare ``…`` or ``...`` (outside strings) turned into valid JSON: a key or an element."""
    out: list[str] = []
    stack: list[str] = []
    i, in_string = 0, False
    while i < len(text):
        char = text[i]
        if in_string:
            out.append(char)
            if char == "\\":
                out.append(text[i + 1])
                i += 1
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
            out.append(char)
        elif char in "{[":
            stack.append(char)
            out.append(char)
        elif char in "}]":
            if stack:
                stack.pop()
            out.append(char)
        elif text.startswith("…", i) or text.startswith("...", i):
            i += 1 if char == "…" else 3
            before = "".join(out).rstrip()
            rest = text[i:].lstrip()
            lead = "" if before.endswith(("{", "[", ",")) else ", "
            trail = "" if rest.startswith((",", "}", "]")) else ", "
            out.append(lead + (f'"{ELIDED}": null' if stack and stack[-1] == "{" else f'"{ELIDED}"') + trail)
            continue
        else:
            out.append(char)
        i += 1
    return "".join(out)


def _values(text: str, first_line: int, sender: Literal["client", "server"] | None) -> list[Example]:
    """Every JSON value in ``text``, one after another."""
    decoder = json.JSONDecoder()
    found, at = [], 0
    while True:
        while at < len(text) and text[at].isspace():
            at += 1
        if at == len(text):
            return found
        line = first_line + text.count("\n", 0, at)
        try:
            value, at = decoder.raw_decode(text, at)
        except json.JSONDecodeError as exc:
            return [*found, Example(NotJson(str(exc)), line, sender)]
        found.append(Example(value, line, sender))


def _transcript(block: str, first_line: int) -> list[Example]:
    """The messages of a worked-session block: the value after each ``→`` (client) or ``←`` (server)."""
    found = []
    decoder = json.JSONDecoder()
    for arrow in re.finditer(r"[→←] ", block):
        line = first_line + block.count("\n", 0, arrow.start())
        sender: Literal["client", "server"] = "client" if arrow.group().startswith("→") else "server"
        try:
            value, _ = decoder.raw_decode(with_elisions(block[arrow.end() :]))
        except json.JSONDecodeError as exc:
            value = NotJson(str(exc))
        found.append(Example(value, line, sender))
    return found


def examples(doc: str) -> list[Example]:
    """Every example in ``doc`` (a PROTOCOL.md text)."""
    found: list[Example] = []
    fence = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
    for block in fence.finditer(doc):
        line = doc.count("\n", 0, block.start(2)) + 1
        if block.group(1) == "json":
            found += _values(with_elisions(block.group(2)), line, None)
        elif re.search(r"[→←] \{", block.group(2)):
            found += _transcript(block.group(2), line)
    prose = fence.sub(lambda block: "\n" * block.group().count("\n"), doc)
    for span in re.finditer(r'`(\{"type":[^`]*)`', prose):
        found += _values(with_elisions(span.group(1)), prose.count("\n", 0, span.start()) + 1, None)
    return found


# --- judging one example -------------------------------------------------------------------


def _elided(value: Any) -> bool:
    if isinstance(value, dict):
        return ELIDED in value or any(_elided(v) for v in value.values())
    if isinstance(value, list):
        return ELIDED in value or any(_elided(v) for v in value)
    return False


def _is_default(value: Any, field: msgspec.structs.FieldInfo) -> bool:
    default = field.default_factory() if field.default_factory is not msgspec.NODEFAULT else field.default
    return value is None if default is None else type(value) is type(default) and value == default


def _exact(value: Any) -> str:
    """``value`` as canonical JSON: equal texts mean equal keys, values and types (``60`` is not ``60.0``)."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def shape_errors(value: Any, annotation: Any, path: str, server: bool) -> list[str]:
    """What is wrong with ``value`` as a ``annotation`` sent by the server (``server``) or a client."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        if not _elided(value):
            return _convert_errors(value, annotation, path)
        return shape_errors(value, typing.get_args(annotation)[0], path, server)
    if isinstance(annotation, type) and issubclass(annotation, msgspec.Struct):
        return _struct_errors(value, annotation, path, server)
    if origin in (Union, types.UnionType):
        members = typing.get_args(annotation)
        if value is None:
            return [] if type(None) in members else [f"{path}: null where {annotation} is expected"]
        attempts = [shape_errors(value, member, path, server) for member in members if member is not type(None)]
        return [] if any(not errors for errors in attempts) else min(attempts, key=len)
    if origin is list and isinstance(value, list):
        [item] = typing.get_args(annotation)
        return [error for i, v in enumerate(value) if v != ELIDED for error in shape_errors(v, item, f"{path}[{i}]", server)]
    if origin is dict and isinstance(value, dict):
        _, item = typing.get_args(annotation)
        return [error for key, v in value.items() if key != ELIDED for error in shape_errors(v, item, f"{path}.{key}", server)]
    if annotation is Any:
        return []
    return _convert_errors(value, annotation, path)


def _convert_errors(value: Any, annotation: Any, path: str) -> list[str]:
    if _elided(value) and annotation is not Any:
        return [f"{path}: {annotation} cannot be shortened"] if typing.get_origin(annotation) not in (dict, list) else []
    try:
        msgspec.convert(value, annotation, strict=True, dec_hook=m.wire_dec_hook)
    except msgspec.ValidationError as exc:
        return [f"{path}: {exc}"]
    return []


def _struct_errors(value: Any, cls: type[msgspec.Struct], path: str, server: bool) -> list[str]:
    if not isinstance(value, dict):
        return [f"{path}: a {cls.__name__} is a map"]
    config = cls.__struct_config__
    fields = {field.encode_name: field for field in msgspec.structs.fields(cls)}
    shortened = ELIDED in value
    errors = [f"{path}: {cls.__name__} has no key {key!r}" for key in value if key not in fields and key not in (ELIDED, config.tag_field)]
    for name, field in fields.items():
        where = f"{path}.{name}"
        if name not in value:
            if field.required and not shortened:
                errors.append(f"{where}: missing; {cls.__name__} always has it")
            elif server and not config.omit_defaults and not shortened:
                errors.append(f"{where}: missing; the server always sends every key of a {cls.__name__}")
            continue
        if server and config.omit_defaults and not field.required and _is_default(value[name], field):
            errors.append(f"{where}: {value[name]!r} is the default, which the server leaves out")
        errors += shape_errors(value[name], field.type, where, server)
    return errors


def judge(example: Example) -> list[str]:
    """Everything wrong with ``example``; empty when it is exactly what its sender may send."""
    value = example.value
    if isinstance(value, NotJson):
        return [f"not JSON: {value.error}"]
    if not isinstance(value, dict):
        return [f"an example that is not a map: {value!r}"]
    if "type" not in value:
        if "seats" in value and "status" in value:
            return _server_errors(value, m.TableInfo, "TableInfo")
        return []  # a view, a clock map: free-form
    tag = value["type"]
    sender = example.sender
    if sender is None:
        if tag in REQUEST_TAGS and tag in SERVER_TAGS:
            keys = {field.encode_name for field in msgspec.structs.fields(REQUEST_TAGS[tag])} | {"type", ELIDED}
            sender = "client" if set(value) <= keys else "server"
        else:
            sender = "client" if tag in REQUEST_TAGS else "server"
    known = REQUEST_TAGS if sender == "client" else SERVER_TAGS
    if tag not in known:
        return [f"no {sender} message has the type {tag!r}"]
    if sender == "client":
        errors = shape_errors(value, known[tag], tag, server=False)
        if not errors and not _elided(value):
            try:
                m.parse_request(value)
            except m.MessageError as exc:
                errors.append(str(exc))
        return errors
    return _server_errors(value, known[tag], tag)


def _server_errors(value: dict[str, Any], cls: type[msgspec.Struct], name: str) -> list[str]:
    errors = shape_errors(value, cls, name, server=True)
    if errors or _elided(value):
        return errors
    try:
        decoded = m.parse_server_message(value) if "type" in value else msgspec.convert(value, cls, strict=True, dec_hook=m.wire_dec_hook)
    except (m.MessageError, msgspec.ValidationError) as exc:
        return [str(exc)]
    again = msgspec.to_builtins(decoded, enc_hook=m.wire_enc_hook)
    if _exact(again) != _exact(value):
        return [f"the server would send {_exact(again)}"]
    return []


# --- the tests -------------------------------------------------------------------------------

EXAMPLES = examples(DOC.read_text(encoding="utf-8"))


def test_the_document_has_examples_of_every_message() -> None:
    """Every message type has at least one example (so each one is checked), and there are many."""
    shown = {example.value.get("type") for example in EXAMPLES if isinstance(example.value, dict)}
    assert set(REQUEST_TAGS) - shown == set(), "requests without an example"
    assert set(SERVER_TAGS) - shown == set(), "server messages without an example"
    assert len(EXAMPLES) > 150


@pytest.mark.parametrize("example", EXAMPLES, ids=str)
def test_every_example_is_what_its_sender_sends(example: Example) -> None:
    assert judge(example) == [], example.value if isinstance(example.value, NotJson) else json.dumps(example.value, ensure_ascii=False)


# --- the checker itself catches drift ----------------------------------------------------------

CAUGHT = {
    "a TableInfo with 11 of its 15 keys": (
        '{"type": "table_updated", "table": {"id": 1, "game": "othello", "options": {"size": 8}, "seats": ["ann", null], '
        '"status": "waiting", "spectators": 0, "ply": 0, "seed": "464719119db67bba", "outcome": null, "time_control": null, "clock": null}}'
    ),
    "a settled rating with its false": '{"type": "table_updated", "table": {"id": 1, "game": "othello", "options": {}, "seats": ["ann", null], '
    '"status": "waiting", "spectators": 0, "ply": 0, "seed": null, "outcome": null, "time_control": null, "clock": null, '
    '"computer": null, "hints": false, "bots": null, "ratings": [[1484, false], null]}}',
    "a who entry with its defaults": '{"type": "players", "id": 7, "total": 1, "next": null, "players": [{"name": "ann", "status": "idle", "claimed": false}]}',
    "a default the server leaves out": '{"type": "moved", "table": 1, "seat": 0, "move": "d3", "ply": 1, "view": {}, "forced": false}',
    "a float written as an int": '{"type": "player_away", "table": 1, "seat": 1, "name": "bob", "forfeit_in_s": 60}',
    "a key no request has": '{"type": "join_table", "id": 3, "table": 1, "sit": 0}',
    "a request that does not decode": '{"type": "move", "id": 3, "table": "1", "move": "d3"}',
    "a shortened example with a wrong key": '{"type": "paired", "table": {"id": 12, …}, "seat": 0, "view": {…}, "moves": [], "challeng": 4}',
    "an unknown type": '{"type": "whisper", "id": 1}',
}


@pytest.mark.parametrize("text", list(CAUGHT.values()), ids=list(CAUGHT))
def test_the_checker_refuses_a_drifted_example(text: str) -> None:
    [example] = _values(with_elisions(text), 1, None)
    assert judge(example) != []


def test_the_checker_accepts_what_the_server_really_encodes() -> None:
    info = m.TableInfo(id=1, game="othello", options={"size": 8}, seats=["ann", None], status="waiting", spectators=0, ply=0,
                       ratings=[m.SeatRating(rating=1484), None])
    for message in (m.TableUpdated(table=info), m.Players(id=7, players=[m.PlayerInfo(name="ann", status="idle")], total=1, next=None)):
        assert judge(Example(m.to_wire(message), 1, "server")) == []


def test_ellipses_become_keys_in_maps_and_elements_in_lists() -> None:
    assert json.loads(with_elisions('{"a": [1, …], … "b": "x…", ...}')) == {"a": [1, ELIDED], ELIDED: None, "b": "x…"}
