"""Where the line client's commands come from: piped stdin, or prompt_toolkit on a terminal."""

from __future__ import annotations

import asyncio
import sys
import threading
from typing import Any, Callable

__all__ = ["LineInput", "PromptInput", "INTERRUPT"]


class LineInput:
    """Reads stdin line by line in a daemon thread (works for pipes and files)."""

    def __init__(self) -> None:
        self._queue: asyncio.Queue[str | None] = asyncio.Queue()
        loop = asyncio.get_running_loop()

        def pump() -> None:
            for line in sys.stdin:
                loop.call_soon_threadsafe(self._queue.put_nowait, line)
            loop.call_soon_threadsafe(self._queue.put_nowait, None)

        threading.Thread(target=pump, daemon=True, name="stdin").start()

    async def read(self) -> str | None:
        """The next line, or ``None`` at end of input."""
        return await self._queue.get()


INTERRUPT = "\x03"
"""What :meth:`PromptInput.read` returns for Ctrl-C: the shell asks before quitting during a game."""


class PromptInput:
    """Reads lines with prompt_toolkit, keeping the prompt below printed output.

    Args:
        prompt: the prompt text, or a function returning it (redrawn with the
            toolbar, e.g. :meth:`TerminalClient.prompt_text`: ``[t3 othello, your move] ``).
        toolbar: returns the text of a bottom toolbar (e.g.
            :meth:`TerminalClient.status_line`), redrawn every half second so
            the clocks count down; ``None``: no toolbar.
    """

    def __init__(self, prompt: str | Callable[[], str] = "> ", toolbar: Callable[[], str] | None = None) -> None:
        from prompt_toolkit import PromptSession

        extra: dict[str, Any] = {}
        if toolbar is not None:
            extra = {"bottom_toolbar": toolbar, "refresh_interval": 0.5}
        self._session: Any = PromptSession(prompt, **extra)

    async def read(self) -> str | None:
        """The next line; :data:`INTERRUPT` for Ctrl-C; ``None`` when the user pressed Ctrl-D."""
        try:
            return await self._session.prompt_async()
        except EOFError:
            return None
        except KeyboardInterrupt:
            return INTERRUPT

    async def ask(self, question: str) -> bool:
        """Ask a yes/no ``question``; true only for an answer starting with ``y`` (Ctrl-C, Ctrl-D and Enter say no)."""
        from prompt_toolkit import PromptSession

        try:
            answer = await PromptSession().prompt_async(f"{question} [y/N] ")
        except (EOFError, KeyboardInterrupt):
            return False
        return answer.strip().lower().startswith("y")
