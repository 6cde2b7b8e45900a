"""Every game option has a label for people (forms and lobby lines say it, not the wire name)."""

from __future__ import annotations

import games

MOST_LABEL_CHARS = 16
"""The app's forms lay labels out in one column; a label longer than this would crowd an 80-column form."""


def test_every_option_describes_a_short_label_for_people() -> None:
    for name in games.names():
        for described in games.get(name).describe()["options"]:
            label = described["label"]
            assert label and len(label) <= MOST_LABEL_CHARS, (name, described)
            assert "_" not in label, (name, described)


def test_a_cryptic_name_gets_words_and_a_plain_one_is_capitalised() -> None:
    nimble = {o["name"]: o["label"] for o in games.get("nimble").describe()["options"]}
    assert (nimble["n"], nimble["p"], nimble["board"]) == ("Squares", "Most pawns", "Board")
    morris = {o["name"]: o["label"] for o in games.get("morris").describe()["options"]}
    assert (morris["mill_protection"], morris["flying"], morris["max_plies"]) == ("Mill protection", "Flying", "Most plies")
