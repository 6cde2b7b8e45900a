"""Seating two players at a new table: what an accepted challenge and two matching seeks share.

:class:`Terms` is what the two players agreed to play (game, options, time
control, rated), checked once when the challenge or seek is made.
:func:`seat_pair` creates the table and seats both players through the
table authority's own ``create_table`` and ``join_table``, so a paired table
passes the same checks, commits and announcements as any other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import games
from protocol import Code
from protocol.messages import CreateTable, JoinTable, Paired

from ..play.authority import Authority
from ..tables.clock import TimeControl, TimeControlError
from ..ratings.rated import check_rated_seat
from ..core.session import Push, Session
from ..core.errors import RequestError
from ..tables.table import Table

__all__ = ["Terms", "seat_pair", "send_to", "check_rated"]



@dataclass(frozen=True, slots=True)
class Terms:
    """A game two players agree to: compared as a whole when seeks are matched.

    Attributes:
        game: the game's short name.
        options: the resolved options (every option of the game, defaults filled in).
        time_control: the time control as the player wrote it (``None``: untimed).
        clock: the parsed time control (``None``: untimed); two seeks match only with equal clocks.
        rated: whether the game is to be rated.
    """

    game: str
    options: dict[str, Any]
    time_control: str | None
    clock: TimeControl | None
    rated: bool

    @classmethod
    def check(cls, game_name: str, options: dict[str, Any], time_control: str | None, rated: bool) -> "Terms":
        """Read and check what a ``challenge`` or ``seek`` asks for.

        Raises:
            RequestError: ``unknown_game``; ``bad_option`` naming the option or ``time_control``.
        """
        try:
            game = games.get(game_name)
        except games.UnknownGame as exc:
            raise RequestError(Code.UNKNOWN_GAME, str(exc), "game") from None
        try:
            resolved = game.resolve_options(options)
        except games.InvalidOption as exc:
            raise RequestError(Code.BAD_OPTION, str(exc), f"options.{exc.option}" if exc.option else "options") from None
        try:
            clock = TimeControl.parse(time_control)
        except TimeControlError as exc:
            raise RequestError(Code.BAD_OPTION, str(exc), "time_control") from None
        return cls(game.name, resolved, time_control if clock is not None else None, clock, rated)

    def matches(self, other: "Terms") -> bool:
        """Whether two seeks ask for the same game: same game, options, clock and rated flag."""
        return (self.game, self.options, self.clock, self.rated) == (other.game, other.options, other.clock, other.rated)


def check_rated(allowed: bool, *players: Session) -> None:
    """Refuse a rated challenge or seek the server cannot seat, as ``create_table`` would refuse its table.

    Raises:
        RequestError: ``rated_off`` (the server does not rate games); ``rated_needs_claim`` naming
            the first player whose name is not claimed.
    """
    if not allowed:
        raise RequestError(Code.RATED_OFF, "this server does not allow rated games (its operator turned them off); leave out rated", "rated")
    for player in players:
        check_rated_seat(None, player, rated=True)


def send_to(session: Session, message: Any) -> None:
    """Send a push to ``session``'s live connection, if it has one (an away player misses it)."""
    peer = session.peer
    if peer is not None and not peer.closed:
        peer.send(message)


async def seat_pair(
    authority: Authority,
    first: Session,
    first_seat: int,
    second: Session,
    terms: Terms,
    then: list[Push],
    *,
    challenge: int | None = None,
    seeks: tuple[int | None, int | None] = (None, None),
) -> Table:
    """Create a table for ``terms``, ``first`` in ``first_seat`` and ``second`` in the other; return it.

    After the reply, each player gets a ``paired`` push (``seeks`` gives each
    one's own seek id, ``challenge`` the challenge), then the game starts as
    any table's does.

    Raises:
        RequestError: whatever ``create_table`` or ``join_table`` refuses (``too_many_tables``,
            ``game_over`` for a setup over before the first move, ...); nothing is left behind.
    """
    authority._check_room(second, repr(second.name))
    created: list[Push] = []
    request = CreateTable(id=0, game=terms.game, options=terms.options, seat=first_seat, time_control=terms.time_control, rated=terms.rated)
    joined = await authority.create_table(first, request, created)
    table = authority.table(joined.table.id)
    started: list[Push] = []
    try:
        await authority.join_table(second, JoinTable(id=0, table=table.id, seat=1 - first_seat), started)
    except BaseException:
        authority.vacate(first, table)
        raise
    for player, seek in ((first, seeks[0]), (second, seeks[1])):
        then.append(lambda player=player, seek=seek: _send_paired(player, table, challenge, seek))
    then.extend(created)
    then.extend(started)
    return table


def _send_paired(player: Session, table: Table, challenge: int | None, seek: int | None) -> None:
    seat = player.seats.get(table.id)
    if seat is None:
        return  # gone again before the pushes went out
    send_to(player, Paired(table=table.info(), seat=seat, view=table.view_for(seat), moves=list(table.moves), challenge=challenge, seek=seek))
