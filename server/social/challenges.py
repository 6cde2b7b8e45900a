"""Challenges: one player asks another for a game; an accepted challenge seats both at a new table.

A challenge lives until it is accepted, declined, withdrawn, lapses after
``challenge_expiry_s``, or one of the two players leaves the server (their
session ends: at once for a player with no seat, after the grace period for
one holding a seat). Each end is pushed to both players as
``challenge_ended``. A player may have at most ``max_challenges_per_player``
open challenges and send ``challenges_per_minute``; a player who mutes the
challenger cannot be challenged by them.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import secrets
from dataclasses import dataclass
from typing import Callable, Mapping

from protocol import Code
from protocol.messages import (
    AcceptChallenge,
    Challenge,
    ChallengeEnded,
    ChallengeInfo,
    ChallengeReceived,
    ChallengeSent,
    DeclineChallenge,
    Ok,
    WithdrawChallenge,
    summarize_options,
)

from ..play.authority import Authority
from ..core.ids import issuable
from ..net.limits import Limits
from ..players.mutes import Mutes
from .pairing import Terms, check_rated, seat_pair, send_to
from ..core.session import Push, Session
from .spam import SpamLimits
from ..core.errors import RequestError
from .tells import online_player

__all__ = ["Challenges", "OpenChallenge"]

log = logging.getLogger(__name__)



@dataclass(eq=False, slots=True)
class OpenChallenge:
    """A challenge waiting for its answer.

    Attributes:
        id: the challenge's id (unique while the server runs).
        challenger: who made it; sits in ``seat``.
        challenged: who may accept or decline it.
        terms: the game asked for.
        seat: the challenger's seat, or ``None`` to draw it when accepted.
        expires_at: when it lapses, in seconds on the event loop's clock.
        timer: the lapse's timer.
        accepting: an accept is being carried out (the table is being committed).
    """

    id: int
    challenger: Session
    challenged: Session
    terms: Terms
    seat: int | None
    expires_at: float
    timer: asyncio.TimerHandle | None = None
    accepting: bool = False

    def info(self) -> ChallengeInfo:
        """The challenge as the protocol shows it."""
        return ChallengeInfo(
            id=self.id,
            challenger=self.challenger.name,
            challenged=self.challenged.name,
            game=self.terms.game,
            options=summarize_options(self.terms.options),
            seat=self.seat,
            time_control=self.terms.time_control,
            rated=self.terms.rated,
            expires_in_s=round(max(0.0, self.expires_at - asyncio.get_running_loop().time()), 3),
        )


class Challenges:
    """Every open challenge, by id and by player.

    Args:
        authority: creates and seats the accepted challenges' tables.
        by_name: name key -> the session holding the name.
        mutes: who mutes whom.
        spam: the per-minute limits.
        limits: returns the server's current limits.
        rated_allowed: whether the server rates games now (else a rated challenge is refused).
        seated: called with each of the two players an accepted challenge seated.
    """

    def __init__(
        self,
        authority: Authority,
        by_name: Mapping[str, Session],
        mutes: Mutes,
        spam: SpamLimits,
        limits: Callable[[], Limits],
        rated_allowed: Callable[[], bool] = lambda: False,
        seated: Callable[[Session], None] = lambda session: None,
    ) -> None:
        self._authority = authority
        self._seated = seated
        self._by_name = by_name
        self._mutes = mutes
        self._spam = spam
        self._limits = limits
        self.rated_allowed = rated_allowed
        self._open: dict[int, OpenChallenge] = {}
        self._of: dict[Session, dict[int, None]] = {}  # player -> ids of the challenges they made or received
        self.next_id: Callable[[], int] = itertools.count(1).__next__
        """Returns the next challenge id (a cluster's node takes them from ids unique across its nodes)."""

    def sent_by(self, session: Session) -> list[OpenChallenge]:
        """The open challenges ``session`` made."""
        return [c for c in self._involving(session) if c.challenger is session]

    def _involving(self, session: Session) -> list[OpenChallenge]:
        return [self._open[i] for i in self._of.get(session, ())]

    async def challenge(self, session: Session, request: Challenge, then: list[Push]) -> ChallengeSent:
        """Open a challenge to ``request.name``, pushed to them after the reply.

        Raises:
            RequestError: ``no_such_player``, ``bad_request`` (oneself), ``rated_off``, ``rated_needs_claim``, ``unknown_game``, ``bad_option``, ``muted``, ``too_many_challenges``, ``rate_limited``.
        """
        challenged = online_player(self._by_name, request.name, session, "challenge")
        terms = Terms.check(request.game, request.options, request.time_control, request.rated)
        if terms.rated:
            check_rated(self.rated_allowed(), session, challenged)
        if self._mutes.mutes(challenged, session):
            raise RequestError(Code.MUTED, f"{challenged.name} {self._mutes.refusal(challenged, session)}", "name")
        limits = self._limits()
        if len(self.sent_by(session)) >= limits.max_challenges_per_player:
            raise RequestError(
                Code.TOO_MANY_CHALLENGES,
                f"you already have {limits.max_challenges_per_player} open challenges, the most this server allows; withdraw one first",
            )
        self._spam.charge("challenges", session, challenged)
        loop = asyncio.get_running_loop()
        challenge = OpenChallenge(issuable(self.next_id(), "challenge"), session, challenged, terms, request.seat, loop.time() + limits.challenge_expiry_s)
        challenge.timer = loop.call_later(limits.challenge_expiry_s, self._lapse, challenge)
        self._open[challenge.id] = challenge
        for player in (session, challenged):
            self._of.setdefault(player, {})[challenge.id] = None
        info = challenge.info()
        then.append(lambda: send_to(challenged, ChallengeReceived(challenge=info)))
        log.info("%s challenges %s to %s (challenge %d)", session.name, challenged.name, terms.game, challenge.id)
        return ChallengeSent(id=request.id, challenge=info)

    async def accept(self, session: Session, request: AcceptChallenge, then: list[Push]) -> Ok:
        """Accept a challenge made to ``session``: the table is created and both are seated.

        Raises:
            RequestError: ``no_such_challenge``; ``no_such_player`` (the challenger is away);
                whatever creating or joining the table refuses (the challenge then stays open).
        """
        challenge = self._find(session, request.challenge, "challenged")
        challenger = challenge.challenger
        if not challenger.connected:
            raise RequestError(Code.NO_SUCH_PLAYER, f"{challenger.name} is away right now; try again when they are back")
        seat = challenge.seat if challenge.seat is not None else secrets.randbelow(2)
        challenge.accepting = True
        try:
            seated: list[Push] = []
            await seat_pair(self._authority, challenger, seat, session, challenge.terms, seated, challenge=challenge.id)
        finally:
            challenge.accepting = False
        self._end(challenge, "accepted", then)
        then.extend(seated)
        for player in (challenger, session):
            self._seated(player)
        return Ok(id=request.id)

    async def decline(self, session: Session, request: DeclineChallenge, then: list[Push]) -> Ok:
        """Decline a challenge made to ``session``; the challenger hears of it.

        Raises:
            RequestError: ``no_such_challenge``.
        """
        self._end(self._find(session, request.challenge, "challenged"), "declined", then)
        return Ok(id=request.id)

    async def withdraw(self, session: Session, request: WithdrawChallenge, then: list[Push]) -> Ok:
        """Take back a challenge ``session`` made; the challenged player hears of it.

        Raises:
            RequestError: ``no_such_challenge``.
        """
        self._end(self._find(session, request.challenge, "challenger"), "withdrawn", then)
        return Ok(id=request.id)

    def resend(self, session: Session, then: list[Push]) -> None:
        """Push the open challenges made to ``session`` again (it resumed on a new connection and may have missed them)."""
        for challenge in self._involving(session):
            if challenge.challenged is session:
                received = ChallengeReceived(challenge=challenge.info())
                then.append(lambda received=received: send_to(session, received))

    def forget(self, session: Session) -> None:
        """``session`` left the server: its challenges, made or received, end (``gone``)."""
        pushes: list[Push] = []
        for challenge in self._involving(session):
            self._end(challenge, "gone", pushes)
        for push in pushes:
            push()

    def close(self) -> None:
        """Stop every lapse timer (the server is closing)."""
        for challenge in self._open.values():
            if challenge.timer is not None:
                challenge.timer.cancel()

    def _find(self, session: Session, challenge_id: int, role: str) -> OpenChallenge:
        challenge = self._open.get(challenge_id)
        if challenge is None or getattr(challenge, role) is not session:
            whose = "made to you" if role == "challenged" else "of yours"
            raise RequestError(Code.NO_SUCH_CHALLENGE, f"there is no open challenge {challenge_id} {whose}", "challenge")
        if challenge.accepting:
            raise RequestError(Code.NO_SUCH_CHALLENGE, f"challenge {challenge_id} is being accepted", "challenge")
        return challenge

    def _lapse(self, challenge: OpenChallenge) -> None:
        if self._open.get(challenge.id) is not challenge:
            return
        if challenge.accepting:  # its table is being committed: look again in a moment
            challenge.timer = asyncio.get_running_loop().call_later(1.0, self._lapse, challenge)
            return
        pushes: list[Push] = []
        self._end(challenge, "expired", pushes)
        for push in pushes:
            push()

    def _end(self, challenge: OpenChallenge, reason: str, then: list[Push]) -> None:
        """Close ``challenge``; both players hear ``reason`` after the reply."""
        del self._open[challenge.id]
        if challenge.timer is not None:
            challenge.timer.cancel()
        for player in (challenge.challenger, challenge.challenged):
            ids = self._of.get(player)
            if ids is not None:
                ids.pop(challenge.id, None)
                if not ids:
                    del self._of[player]
        ended = ChallengeEnded(challenge=challenge.id, reason=reason)
        for player in (challenge.challenger, challenge.challenged):
            then.append(lambda player=player: send_to(player, ended))
