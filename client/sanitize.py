"""Make text from other users safe to print on a terminal.

Names, chat lines and record headers come from other people. Printed as they
are, a control character or an escape sequence in them could clear the
screen, move the cursor, retitle the window, forge lines ("bob offers a
draw") or, with a bidi override, make text read differently from what it is.
:func:`printable` turns every such character into a visible stand-in, so the
text still shows what was sent but nothing in it acts on the terminal:

>>> printable("\\x1b[2Jhi")
'␛[2Jhi'
>>> printable("abc\\u202edef")
'abc<U+202E>def'
>>> printable("Zoë 🎲")
'Zoë 🎲'

Replaced:

* C0 controls (U+0000..U+001F, including newline and tab) by their Control
  Pictures (``␛``, ``␊``, ``␉``, ...), DEL by ``␡``. ESC is what starts every
  ANSI/VT escape sequence (CSI, OSC, DCS, ...); once it is replaced, the rest
  of the sequence is plain text.
* C1 controls (U+0080..U+009F, among them the 8-bit CSI U+009B) by ``<U+XXXX>``.
* Format characters (category Cf: bidi overrides and isolates such as U+202E,
  U+2066..U+2069, marks U+200E/U+200F/U+061C, invisible ones such as U+2060,
  U+FEFF, U+00AD), line and paragraph separators (U+2028, U+2029) and lone
  surrogates, by ``<U+XXXX>``.

Kept, because real text needs them and they cannot act on a terminal: the
zero-width joiner and non-joiner (U+200D, U+200C) between two non-ASCII
characters (emoji sequences such as 👩‍💻, Indic and Persian script), and emoji
tag sequences (a black flag U+1F3F4 followed by tag characters up to the
cancel tag U+E007F, as in 🏴󠁧󠁢󠁳󠁣󠁴󠁿). Elsewhere those are escaped too, so
that ``a\\u200dnn`` cannot pass for ``ann``.
"""

from __future__ import annotations

import unicodedata

__all__ = ["printable", "printable_lines"]

_JOINERS = ("\u200c", "\u200d")
_BLACK_FLAG = "\U0001f3f4"
_TAG_FIRST, _TAG_LAST, _CANCEL_TAG = 0xE0020, 0xE007E, "\U000e007f"


def printable(text: str) -> str:
    """Return ``text`` with every character that could act on a terminal made visible.

    The result holds no control character, escape sequence or format
    character (see the module docstring for the exceptions kept inside emoji
    and joined scripts), and no line break: it prints as one line.
    """
    if text.isprintable() and text.isascii():  # the common case, fast
        return text
    out: list[str] = []
    keep_tags = _tag_spans(text)
    for index, char in enumerate(text):
        if index in keep_tags:
            out.append(char)
            continue
        code = ord(char)
        if code < 0x20:
            out.append(chr(0x2400 + code))  # ␀..␟: the Control Pictures block
        elif code == 0x7F:
            out.append("\u2421")  # ␡
        elif char in _JOINERS and _joins(text, index):
            out.append(char)
        elif _unsafe(char):
            out.append(f"<U+{code:04X}>")
        else:
            out.append(char)
    return "".join(out)


def printable_lines(text: str) -> str:
    """Like :func:`printable`, but keep line breaks (``\\n``) for multi-line text."""
    return "\n".join(printable(line) for line in text.split("\n"))


def _unsafe(char: str) -> bool:
    category = unicodedata.category(char)
    return category in ("Cc", "Cf", "Cs", "Zl", "Zp")


def _joins(text: str, index: int) -> bool:
    """Whether the joiner at ``index`` stands between two non-ASCII, non-space, visible characters."""
    if index == 0 or index == len(text) - 1:
        return False
    before, after = text[index - 1], text[index + 1]
    return all(not c.isascii() and not c.isspace() and not _unsafe(c) for c in (before, after))


def _tag_spans(text: str) -> set[int]:
    """The indexes of tag characters that form an emoji tag sequence (🏴 + tags + cancel tag)."""
    keep: set[int] = set()
    if _BLACK_FLAG not in text:
        return keep
    start = 0
    while (flag := text.find(_BLACK_FLAG, start)) >= 0:
        end = flag + 1
        while end < len(text) and _TAG_FIRST <= ord(text[end]) <= _TAG_LAST:
            end += 1
        if end > flag + 1 and end < len(text) and text[end] == _CANCEL_TAG:
            keep.update(range(flag + 1, end + 1))
        start = flag + 1
    return keep
