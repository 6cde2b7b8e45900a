"""A table's offers (draw, takeback, rematch) and its takebacks: what may be offered, and the position a takeback returns to.

Part of :class:`server.tables.table.Table` (a mixin): nothing here waits or
writes; the authority (:mod:`server.play.offers`) commits in between plan and apply.
"""

from __future__ import annotations

from games import State
from protocol import Code

from ..core.errors import RequestError
from ..core.session import Session

__all__ = ["TableOffers"]


class TableOffers:
    """The offer and takeback methods of :class:`server.tables.table.Table`."""

    def offer(self, peer: Session, kind: str, plies: int) -> int:
        """Record ``kind`` offered by a session's seat; return the seat.

        Raises:
            RequestError: ``not_seated``, ``not_started``, ``game_over`` or
                ``bad_action`` (an offer that makes no sense now).
        """
        seat = self.seat_of(peer)
        if kind == "rematch":
            if not self.started or self.outcome is None:
                raise RequestError(Code.BAD_ACTION, "a rematch can be offered once the game is over")
            if self.rematch is not None:
                raise RequestError(Code.BAD_ACTION, f"the game at table {self.id} was already rematched: the rematch is table {self.rematch}")
        else:
            self.check_running()
        if kind == "takeback":
            self._check_takeback(plies)
        pending = self.offers.get(kind)
        if pending is not None and pending[0] == seat:
            raise RequestError(Code.BAD_ACTION, f"you already made a {kind} offer; wait for the answer")
        self.offers[kind] = (seat, plies)
        return seat

    def take_offer(self, peer: Session, kind: str) -> tuple[int, int]:
        """Remove and return the opponent's pending offer of ``kind`` as (seat, plies).

        Raises:
            RequestError: ``not_seated`` or ``bad_action`` (no such offer from the opponent).
        """
        seat = self.seat_of(peer)
        pending = self.offers.get(kind)
        if pending is None or pending[0] == seat:
            raise RequestError(Code.BAD_ACTION, f"there is no {kind} offer from your opponent to answer")
        del self.offers[kind]
        return pending

    def lapse_offers(self, mover: int) -> list[str]:
        """Drop offers a move makes stale: the mover's draw offer and any takeback request."""
        lapsed = []
        if self.offers.get("draw", (None,))[0] == mover:
            lapsed.append("draw")
        if "takeback" in self.offers:
            lapsed.append("takeback")
        for kind in lapsed:
            del self.offers[kind]
        return lapsed

    def _check_takeback(self, plies: int) -> None:
        """Refuse a takeback of more plies than the players have played.

        Raises:
            RequestError: ``bad_action``, naming how many plies can be taken back.
        """
        played = self.forced.count(False)
        if plies > played:
            passes = " (forced passes do not count)" if played < len(self.moves) else ""
            raise RequestError(Code.BAD_ACTION, f"only {played} plies have been played{passes}; cannot take back {plies}")

    def plan_takeback(self, plies: int) -> tuple[State, int]:
        """The position before the last ``plies`` plies the players played, and how many plies that removes.

        Only the players' own plies are counted; the forced passes among or
        after them go too, so the takeback always ends on a player's ply and
        the seat to move is never one that can only pass.

        Returns:
            ``(state, removed)``: the position to go back to, and the number
            of plies removed, forced passes included (at least ``plies``).

        Raises:
            RequestError: ``bad_action`` when fewer than ``plies`` plies were
                played by the players (the takeback would not be what was asked).
        """
        self._check_takeback(plies)
        keep = len(self.moves)
        counted = 0
        while counted < plies:
            keep -= 1
            if not self.forced[keep]:
                counted += 1
        state = self.game.new_state(self.options, self.seed)
        for move in self.moves[:keep]:
            state = state.play(move)
        return state, len(self.moves) - keep

    def apply_takeback(self, state: State, plies: int) -> None:
        """Make a planned takeback the table's true state."""
        del self.moves[len(self.moves) - plies:]
        del self.forced[len(self.forced) - plies:]
        self.state = state
        self.moved = self.movers(self.moves)
        self.offers.clear()

    def movers(self, moves: list[str]) -> set[int]:
        """The seats that played a move of their own (not a pass) among ``moves``, played from the start."""
        state = self.game.new_state(self.options, self.seed)
        movers = set()
        for move in moves:
            if move != "pass" and state.to_move is not None:
                movers.add(state.to_move)
            state = state.play(move)
        return movers
