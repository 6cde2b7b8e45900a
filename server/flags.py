"""The one validator every numeric command-line flag of ``parlour`` uses.

A flag's value must be a finite number within a documented range; anything
else is refused by argparse with a message naming the flag, the range and the
value given, e.g. ``argument --grace: expected a number from 0 to 604800
(seconds), not 'nan'``.
"""

from __future__ import annotations

import argparse
import math
from typing import Callable

__all__ = ["number_in", "describe_range"]


def describe_range(low: float, high: float, *, whole: bool, low_open: bool = False, unit: str = "") -> str:
    """The range in words, as the help and the errors give it: ``"a whole number from 1 to 65535"``."""
    kind = "a whole number" if whole else "a number"
    start = f"more than {low:.15g} and at most {high:.15g}" if low_open else f"from {low:.15g} to {high:.15g}"
    return f"{kind} {start}" + (f" ({unit})" if unit else "")


def number_in(
    low: float, high: float, *, whole: bool = False, low_open: bool = False, unit: str = ""
) -> Callable[[str], float | int]:
    """An argparse ``type`` accepting a finite number in ``[low, high]`` (``(low, high]`` if ``low_open``).

    Args:
        low, high: the range, both finite.
        whole: accept only whole numbers (written without a fraction or exponent); return an ``int``.
        low_open: refuse ``low`` itself ("more than 0").
        unit: shown in the error, e.g. ``"seconds"``.

    Returns:
        A function from the flag's text to its value, raising
        :class:`argparse.ArgumentTypeError` (argparse adds the flag's name) for
        text that is not such a number.
    """
    wanted = describe_range(low, high, whole=whole, low_open=low_open, unit=unit)

    def parse(text: str) -> float | int:
        try:
            value: float | int = int(text.strip(), 10) if whole else float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {wanted}, not {text!r}") from None
        too_low = value <= low if low_open else value < low
        if not math.isfinite(value) or too_low or value > high:
            raise argparse.ArgumentTypeError(f"expected {wanted}, not {text!r}")
        return value

    parse.__name__ = "number"
    return parse
