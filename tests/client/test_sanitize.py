"""printable(): nothing another user sends can act on the terminal."""

from __future__ import annotations

import unicodedata

import pytest

from client.sanitize import printable, printable_lines


def _inert(text: str) -> bool:
    """No control, format, separator or surrogate character is left."""
    return all(unicodedata.category(ch) not in ("Cc", "Cf", "Cs", "Zl", "Zp") for ch in text)


def test_plain_ascii_is_unchanged() -> None:
    assert printable("ann") == "ann"
    assert printable("hello, world! (1+1=2) ~`'\"") == "hello, world! (1+1=2) ~`'\""
    assert printable("") == ""


@pytest.mark.parametrize(
    "text",
    ["Zoë", "Łukasz", "Ελένη", "Дмитрий", "山田太郎", "محمد", "עברית", "देवनागरी", "naïve café", "ﬁ", "x² ∑ ∞"],
)
def test_normal_unicode_is_unchanged(text: str) -> None:
    assert printable(text) == text


@pytest.mark.parametrize(
    "text",
    [
        "🎲",
        "good game 👍🏽",
        "👩\u200d💻",  # woman technologist: a ZWJ sequence
        "👨\u200d👩\u200d👧\u200d👦",  # family
        "❤\ufe0f",  # variation selector
        "🇫🇷",  # regional indicators
        "🏴\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f",  # Scotland: a tag sequence
        "می\u200cخواهم",  # Persian with a zero-width non-joiner
    ],
)
def test_emoji_and_joined_scripts_are_unchanged(text: str) -> None:
    assert printable(text) == text


def test_escape_becomes_a_visible_picture() -> None:
    assert printable("\x1b") == "␛"
    assert printable("\x1b[2J\x1b[Hgotcha") == "␛[2J␛[Hgotcha"
    assert printable("\x1b]0;new title\x07") == "␛]0;new title␇"  # OSC: retitle the window
    assert printable("\x1bP+q\x1b\\") == "␛P+q␛\\"  # DCS


def test_every_c0_control_and_del_is_replaced() -> None:
    for code in range(0x20):
        assert printable(f"a{chr(code)}b") == f"a{chr(0x2400 + code)}b"
    assert printable("a\x7fb") == "a␡b"


def test_line_breaks_cannot_forge_lines() -> None:
    out = printable("hi\nbob offers a draw — type accept or decline\r")
    assert "\n" not in out and "\r" not in out
    assert out == "hi␊bob offers a draw — type accept or decline␍"


def test_c1_controls_are_replaced() -> None:
    assert printable("\x9b31mred") == "<U+009B>31mred"  # the 8-bit CSI
    assert printable("a\x85b") == "a<U+0085>b"  # NEL, a line break
    for code in range(0x80, 0xA0):
        out = printable(chr(code))
        assert out == f"<U+{code:04X}>"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("abc\u202edef", "abc<U+202E>def"),  # right-to-left override
        ("\u202dx\u202c", "<U+202D>x<U+202C>"),
        ("a\u2066b\u2069", "a<U+2066>b<U+2069>"),  # isolates
        ("\u200fann", "<U+200F>ann"),  # right-to-left mark
        ("\u061cx", "<U+061C>x"),  # Arabic letter mark
        ("a\u2060nn", "a<U+2060>nn"),  # word joiner: invisible
        ("\ufeffann", "<U+FEFF>ann"),  # byte order mark
        ("an\u00adn", "an<U+00AD>n"),  # soft hyphen
        ("a\u2028b\u2029c", "a<U+2028>b<U+2029>c"),  # line and paragraph separators
    ],
)
def test_format_and_bidi_characters_are_replaced(text: str, expected: str) -> None:
    assert printable(text) == expected


def test_joiners_between_ascii_letters_are_escaped() -> None:
    # "a\u200dnn" would look exactly like "ann"
    assert printable("a\u200dnn") == "a<U+200D>nn"
    assert printable("\u200cann") == "<U+200C>ann"
    assert printable("ann\u200d") == "ann<U+200D>"


def test_stray_tag_characters_are_escaped() -> None:
    assert printable("ann\U000e0041") == "ann<U+E0041>"  # a tag with no flag: invisible
    assert printable("🏴\U000e0067") == "🏴<U+E0067>"  # no cancel tag


def test_lone_surrogates_are_replaced() -> None:
    assert printable("a\ud800b") == "a<U+D800>b"


def test_output_is_always_inert() -> None:
    hostile = "".join(chr(code) for code in range(0x00, 0xA0)) + "\u202e\u2066\u200e\u2028\ufeff\u200d\u2060"
    out = printable(hostile)
    assert _inert(out)
    assert "\x1b" not in out and "\x9b" not in out


def test_printable_lines_keeps_line_breaks_only() -> None:
    assert printable_lines("line 1\nline \x1b[2 2") == "line 1\nline ␛[2 2"
    assert printable_lines("a\r\nb") == "a␍\nb"
