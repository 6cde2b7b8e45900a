"""Look-alike names: UTS #39 skeletons (as written and case-folded) and mixed scripts."""

from __future__ import annotations

import pytest

from server.players.confusables import look_alike_keys, mixed_scripts, skeleton


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("alice", "\u0430lice"),  # Cyrillic a
        ("Alice", "AIice"),  # capital i for small L
        ("paypal", "p\u0430yp\u0430l"),
        ("mary", "rnary"),  # m and r+n
        ("bill", "bi11"),  # digit one for small L
        ("eve", "\uff45ve"),  # fullwidth e
        ("carol", "CAROL"),  # case alone: the same name key
        ("Jos\u00e9", "Jose\u0301"),  # precomposed and combining accent
    ],
)
def test_names_that_look_alike_share_a_key(one: str, other: str) -> None:
    assert look_alike_keys(one) & look_alike_keys(other)


@pytest.mark.parametrize(("one", "other"), [("alice", "aiice"), ("bob", "dob"), ("Jos\u00e9", "Jose"), ("ann", "anna")])
def test_names_that_differ_do_not(one: str, other: str) -> None:
    assert not look_alike_keys(one) & look_alike_keys(other)


def test_a_skeleton_maps_a_character_to_its_class() -> None:
    assert skeleton("\u0430") == skeleton("a") and skeleton("m") == skeleton("rn") and skeleton("x") == "x"


def test_mixed_scripts_are_named_unless_a_language_mixes_them() -> None:
    assert mixed_scripts("p\u0430ypal") == ["Cyrillic", "Latin"]
    assert mixed_scripts("\u03a9mega") == ["Greek", "Latin"]
    for fine in ("Jos\u00e9 2", "\u0438\u0432\u0430\u043d", "\u5c71\u7530\u305f\u308d\u3046", "Kim \ud55c\uae00", "ann-\U0001f600"):
        assert mixed_scripts(fine) == [], fine


@pytest.mark.parametrize("one", ["ALlCE", "AIice", "aIice", "ALICE"])
def test_case_folding_and_the_skeleton_are_taken_in_both_orders(one: str) -> None:
    assert look_alike_keys(one) & look_alike_keys("alice")
