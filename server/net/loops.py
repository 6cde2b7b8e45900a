"""Which asyncio event loop a server runs on: ``parlour serve`` and ``parlour host`` take ``--loop auto|asyncio|uvloop``.

uvloop (an event loop on libuv) is an optional dependency,
``pip install 'parlour[uvloop]'``, where the platform has it (not Windows).
``auto``, the default, uses it when it can be imported and asyncio's own loop
otherwise; ``uvloop`` insists on it; ``asyncio`` never uses it. The server's
code is the same on both: only the loop under it changes.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
from types import ModuleType
from typing import Callable, Coroutine, TypeVar

from protocol.cli_options import UsageError

__all__ = ["LOOPS", "LoopFactory", "add_loop_argument", "loop_factory", "loop_name", "run_on"]

LOOPS = ("auto", "asyncio", "uvloop")
"""The values of ``--loop``."""

LoopFactory = Callable[[], asyncio.AbstractEventLoop]
T = TypeVar("T")


def add_loop_argument(parser: argparse.ArgumentParser) -> None:
    """Add ``--loop {auto,asyncio,uvloop}`` (read by :func:`loop_factory`)."""
    parser.add_argument(
        "--loop",
        choices=LOOPS,
        default="auto",
        help="the event loop: uvloop (faster; pip install 'parlour[uvloop]'), asyncio's own, "
        "or auto, uvloop when it is installed (default: auto)",
    )


def loop_factory(choice: str) -> LoopFactory:
    """The function that makes the event loop ``--loop choice`` names.

    Args:
        choice: one of :data:`LOOPS`.

    Raises:
        UsageError: ``"uvloop"`` was asked for but cannot be imported here.
        ValueError: ``choice`` is not one of :data:`LOOPS`.
    """
    if choice not in LOOPS:
        raise ValueError(f"--loop is one of {', '.join(LOOPS)}, not {choice!r}")
    if choice == "asyncio":
        return asyncio.new_event_loop
    uvloop = _uvloop()
    if uvloop is not None:
        return uvloop.new_event_loop  # type: ignore[no-any-return]
    if choice == "auto":
        return asyncio.new_event_loop
    raise UsageError(
        "--loop uvloop: uvloop is not installed; install it with pip install 'parlour[uvloop]'"
        " (it does not run on Windows), or use --loop asyncio"
    )


def _uvloop() -> ModuleType | None:
    """The uvloop module, or ``None`` if it cannot be imported."""
    try:
        return importlib.import_module("uvloop")
    except ImportError:
        return None


def loop_name(loop: asyncio.AbstractEventLoop) -> str:
    """``"uvloop"`` or ``"asyncio"``: which kind of loop ``loop`` is, as ``--loop`` names it."""
    return "uvloop" if type(loop).__module__.split(".")[0] == "uvloop" else "asyncio"


def run_on(main: Coroutine[object, object, T], factory: LoopFactory) -> T:
    """Run ``main`` to completion on a new loop from ``factory``, as :func:`asyncio.run` does; return its result.

    Ctrl-C cancels ``main`` and raises :class:`KeyboardInterrupt`, as with :func:`asyncio.run`.
    """
    with asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(main)
