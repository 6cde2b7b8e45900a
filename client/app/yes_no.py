"""A checkbox whose label says its state: ``yes`` when ticked, ``no`` when not.

>>> YesNo(True, id="f-hints").label.plain   # doctest: +SKIP
'yes'

A plain :class:`textual.widgets.Checkbox` keeps one label whatever its
state ("on"), so a form read at a glance said "on" for a switch that was off.
"""

from __future__ import annotations

from typing import Any

from textual.widgets import Checkbox

__all__ = ["YesNo", "yes_no"]


def yes_no(value: bool, note: str = "") -> str:
    """``"yes"`` or ``"no"``, with ``note`` after it in brackets when given."""
    return ("yes" if value else "no") + (f" ({note})" if note else "")


class YesNo(Checkbox):
    """A compact checkbox labelled ``yes``/``no`` after its value (and ``note``, in brackets, after that).

    Args:
        value: ticked at the start.
        note: a few words kept after yes/no (``"claimed names only"``).
        kwargs: as for :class:`Checkbox` (``id``, ``disabled``...).
    """

    def __init__(self, value: bool = False, note: str = "", **kwargs: Any) -> None:
        kwargs.setdefault("compact", True)
        self.note = note
        super().__init__(yes_no(value, note), value, **kwargs)

    def watch_value(self) -> None:
        """Relabel, then do what a checkbox does (the ``-on`` class, the ``Changed`` message)."""
        self.label = yes_no(self.value, self.note)
        super().watch_value()
