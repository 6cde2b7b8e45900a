"""Challenges to us as dialogs, and tells as notifications (PROTOCOL.md §17).

:class:`SocialNotices` watches the session model: each ``challenge_received``
opens a :class:`ChallengeScreen` (who, game, time control, rated or casual,
their rating) to accept or decline; a challenge that ends elsewhere
(withdrawn, expired, its player gone) closes its dialog with a notification.
Accepting needs nothing more here: the server's ``paired`` push makes the
model add and focus the table, and the tabs follow the model.
"""

from __future__ import annotations

from typing import Any, Callable

from textual.app import App

from protocol import messages as m

from ..connection import ConnectionLost, ServerError
from ..option_text import options_text, schema
from ..ratings_text import rating_text
from ..sanitize import printable
from ..session import Change, ClientSession
from .offers import OfferScreen

__all__ = ["ChallengeScreen", "SocialNotices", "challenge_question", "ENDED_WORDS"]

ENDED_WORDS = {"withdrawn": "was withdrawn", "expired": "expired", "gone": "ended: a player left", "declined": "was declined", "accepted": "was accepted"}
"""How a notification says why a challenge ended (``challenge_ended.reason``)."""


def challenge_question(challenge: m.ChallengeInfo, rating: tuple[int, bool] | None = None) -> str:
    """The dialog's text for ``challenge``; ``rating`` is the challenger's (rating, provisional) in the game, if known.

    >>> info = m.ChallengeInfo(id=1, challenger="bob", challenged="ann", game="othello", options={}, time_control="5+3", rated=True)
    >>> challenge_question(info, (1620, True))
    'bob (1620?) challenges you to a rated game of othello, clock 5+3.'
    >>> challenge_question(m.ChallengeInfo(id=2, challenger="bob", challenged="ann", game="morris", options={"flying": True}, rated=False))
    'bob challenges you to a casual game of morris, no clock, Flying: yes.'
    """
    who = printable(challenge.challenger) + (f" ({rating_text(*rating)})" if rating is not None else "")
    kind = "rated" if challenge.rated else "casual"
    clock = f"clock {printable(challenge.time_control)}" if challenge.time_control else "no clock"
    options = options_text(schema(challenge.game), challenge.options)  # "Flying: yes", not flying=True
    seat = "" if challenge.seat is None else f" They take seat {challenge.seat}."
    return f"{who} challenges you to a {kind} game of {printable(challenge.game)}, {clock}{', ' + options if options else ''}.{seat}"


class ChallengeScreen(OfferScreen):
    """Accept (``a``) or decline (``d``, Escape) the challenge ``challenge``; dismisses with the answer.

    :meth:`withdraw` closes it without an answer when the challenge ends elsewhere.
    """

    def __init__(self, challenge: m.ChallengeInfo, question: str) -> None:
        super().__init__("challenge", question)
        self.challenge = challenge


class SocialNotices:
    """Opens challenge dialogs and tell notifications for ``session`` in ``app``; :meth:`close` stops it.

    One challenge dialog is shown at a time, the oldest open challenge first;
    the next comes up when it is answered or ends.

    Args:
        app: the running app (its screen stack holds the dialogs).
        session: the model whose ``challenge`` and ``told`` changes are shown.
    """

    def __init__(self, app: App[Any], session: ClientSession) -> None:
        self.app = app
        self.session = session
        self.dialog: ChallengeScreen | None = None
        self._answered: set[int] = set()
        self._asking = False
        self._unsubscribe: Callable[[], None] = session.subscribe(self._on_change)
        if session.challenges:
            app.call_later(self._show_next)

    def close(self) -> None:
        """Stop following the model."""
        self._unsubscribe()

    def _on_change(self, change: Change) -> None:
        event = change.event
        if change.kind == "challenge" and isinstance(event, m.ChallengeReceived):
            self.app.call_later(self._show_next)
        elif change.kind == "challenge" and isinstance(event, m.ChallengeEnded):
            self.app.call_later(self._ended, event.challenge, event.reason)
        elif change.kind == "told" and isinstance(event, m.Told):
            self.app.notify(f"{printable(event.name)} tells you: {printable(event.text)}", title="Message", timeout=15)

    async def _show_next(self) -> None:
        if self.dialog is not None or self._asking:
            return
        waiting = [c for c in self.session.challenges.values() if c.id not in self._answered]
        if not waiting:
            return
        challenge = waiting[0]
        self._asking = True
        try:
            rating = await self._rating_of(challenge.challenger, challenge.game)
        finally:
            self._asking = False
        if challenge.id not in self.session.challenges or self.dialog is not None:
            self.app.call_later(self._show_next)  # it ended while we asked
            return
        dialog = self.dialog = ChallengeScreen(challenge, challenge_question(challenge, rating))
        self.app.push_screen(dialog, lambda accept: self._answered_with(dialog, accept))

    async def _rating_of(self, name: str, game: str) -> tuple[int, bool] | None:
        """The most played rating of ``name`` in ``game`` from ``finger`` (``None``: unrated, or no ratings on the server)."""
        try:
            player = await self.session.client.finger(name)
        except (ServerError, ConnectionLost):
            return None
        ratings = [r for r in player.ratings if r.game == game]
        if not ratings:
            return None
        best = max(ratings, key=lambda r: r.games)
        return best.rating, best.provisional

    def _answered_with(self, dialog: ChallengeScreen, accept: bool | None) -> None:
        if self.dialog is dialog:
            self.dialog = None
        challenge = dialog.challenge.id
        if accept is not None and challenge in self.session.challenges:
            self._answered.add(challenge)
            self.app.run_worker(self._send_answer(challenge, accept), group="challenge-answer")
        self.app.call_later(self._show_next)

    async def _send_answer(self, challenge: int, accept: bool) -> None:
        try:
            await (self.session.accept_challenge(challenge) if accept else self.session.decline_challenge(challenge))
        except (ServerError, ConnectionLost) as exc:
            self.app.notify(f"Challenge {challenge}: {printable(getattr(exc, 'message', None) or str(exc))}", severity="error")
        finally:
            self._answered.discard(challenge)

    def _ended(self, challenge: int, reason: str) -> None:
        dialog = self.dialog
        if dialog is None or dialog.challenge.id != challenge:
            return  # answered here, or never shown
        if self.app.screen is dialog:
            dialog.withdraw()  # dismisses with None: the next challenge, if any, comes up
        else:  # something was opened over it: answering it now only earns "no such challenge"
            self.dialog = None
            dialog.query_one("#offer-question").update(dialog.question + " (It has ended.)")  # type: ignore[attr-defined]
        words = ENDED_WORDS.get(reason, f"ended ({printable(reason)})")
        self.app.notify(f"The challenge from {printable(dialog.challenge.challenger)} {words}.", severity="warning")
