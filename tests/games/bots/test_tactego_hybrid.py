"""Tactego's hybrid chooser: level 5's two-ply search, then playouts among its near-equal moves (issue 22)."""

from __future__ import annotations

import random

import games
from games.bots import Budget
from games.bots.tactego import choice_setup, make_chooser
from games.bots.tactego_hybrid import HybridChooser, HybridPlan, _exposing, _hunting
from games.tactego import DEFAULT_PIECES

from . import tactego_positions

GAME = games.get("tactego")
position = tactego_positions.small_set_position


def opening_view(plies: int = 20) -> dict:
    """Red's view after ``plies`` of capture-first play from a fixed setup."""
    state = GAME.new_state({"max_plies": 400}, "hybrid-opening")
    rng = random.Random(5)
    for _ in range(plies):
        state = state.play(make_chooser(2).choose(state.view(state.to_move), Budget(nodes=1), rng))
    return state.view(state.to_move)


def test_a_move_the_search_finds_clearly_best_is_played_without_playouts() -> None:
    # Blue's seen 7 stands next to Red's 10, far from Blue's 10: taking it wins a piece for nothing.
    state = position("""
        rF r5 .  .  r5
        .  r7 .  r10+ .
        .  .  .  b7* .
        .  .  .  .  .
        b10 .  b5 b5 bF
    """)
    bot = HybridChooser()
    for seed in range(3):
        assert bot.choose(state.view(0), Budget(nodes=3000), random.Random(seed)) == "d2-d3"
        assert bot.last_finalists == 0


def test_near_equal_quiet_moves_are_played_out_within_the_node_budget() -> None:
    view = opening_view()
    bot = HybridChooser()
    move = bot.choose(view, Budget(nodes=3000), random.Random(2))
    assert move in view["legal_moves"]
    assert 2 <= bot.last_finalists <= HybridPlan().finalists
    assert 3000 <= bot.last_nodes < 3000 + bot.last_finalists * (HybridPlan().playout.horizon + 1)


def test_with_no_margin_only_a_tie_is_played_out_and_the_rest_buys_search() -> None:
    view = opening_view()
    narrow = HybridChooser(plan=HybridPlan(margin=0.0, caution=False))  # with it, four moves tie here
    narrow.choose(view, Budget(nodes=3000), random.Random(2))
    wide = HybridChooser(plan=HybridPlan(margin=1000.0, finalists=3))
    wide.choose(view, Budget(nodes=3000), random.Random(2))
    assert wide.last_finalists == 3
    assert narrow.last_finalists < 3 and narrow.last_nodes <= 3000 + 200  # a deep sample's last root move


def test_the_same_view_and_generator_give_the_same_move() -> None:
    view = opening_view(30)
    moves = {HybridChooser().choose(view, Budget(nodes=2500), random.Random(3)) for _ in range(3)}
    assert len(moves) == 1 and moves <= set(view["legal_moves"])


def test_positions_that_look_the_same_to_the_hybrid_get_the_same_move() -> None:
    from .test_tactego import _replay, _twin_setup, play_game

    real = play_game(make_chooser(3), make_chooser(2), 21, 300)[:80]
    twin = _replay(_twin_setup(real, 0), [s.last_move for s in real[1:]])
    compared = played_out = 0
    for ply in range(10, len(real), 8):
        state, other = real[ply], twin[ply]
        if state.outcome is not None or state.to_move != 0:
            continue
        assert other.view(0) == state.view(0) and other.board != state.board
        bot = HybridChooser()
        moves = set()
        for view in (state.view(0), other.view(0)):
            moves.add(bot.choose(view, Budget(nodes=1500), random.Random(ply)))
            played_out += bot.last_finalists > 0
        assert len(moves) == 1
        compared += 1
    assert compared >= 3 and played_out >= 2


# Red (level 5) after 32 plies of a game against capture-first (seed 44028): Red's 10 fought, Blue's never did
# (Blue lost its 9 and a 5). Taking the 6 on c5 leaves Red's 10 next to nothing hidden; stepping to c4, d4 (next
# to c5), c6, d6 or e6 puts it next to Blue's never-fought pieces, the 10 among them maybe (on d7: where Red's 10
# went, to e6, it took it).
RAID = """
    r8  .   rF  r8+ .   .   .   .
    r6+ r5  r5+ r7+ r9  r6+ .   .
    .   r7+ r7+ .   r6+ r6+ r5+ r5+
    .   .   .   .   .   .   .   .
    .   .   b6+ r10* .  .   b7+ b7+
    .   .   .   .   .   .   b6+ .
    b6  bF  b6+ b10 .   b5  .   .
    b8  .   b7  .   b5  .   b8  b5
"""


def raid_view() -> dict:
    state = tactego_positions.position(RAID, DEFAULT_PIECES, lost=((), ("9", "5")))
    return state.view(0)


def test_moves_taking_the_strongest_piece_next_to_a_hidden_piece_that_may_match_it_are_exposing() -> None:
    view = raid_view()
    game, seat, sign, moves, steps = choice_setup(view, view["legal_moves"])
    exposing = {view["legal_moves"][i] for i in _exposing(view, seat, moves, steps)}
    assert {"d5-c6", "d5-d6", "d5-e6"} <= exposing
    assert not exposing & {"d5-c5", "d5-e5", "d5-e4", "b3-b4"}  # taking c5 leaves no hidden neighbour
    # once Blue's 10 has fought, nothing hidden can match Red's 10
    seen = tactego_positions.position(RAID.replace("b10 ", "b10* "), DEFAULT_PIECES, lost=((), ("9", "5"))).view(0)
    assert not _exposing(seen, seat, moves, steps)


def test_level_5_keeps_its_strongest_piece_away_from_hidden_pieces_that_may_match_it() -> None:
    view = raid_view()
    game, seat, sign, moves, steps = choice_setup(view, view["legal_moves"])
    exposing = {view["legal_moves"][i] for i in _exposing(view, seat, moves, steps)}
    for seed in range(3):
        assert make_chooser(5).choose(view, Budget(nodes=3000), random.Random(seed)) not in exposing
    # without the caution the search goes for the flag it hopes is next to d6 or e6
    careless = HybridChooser(plan=HybridPlan(caution=False))
    assert {careless.choose(view, Budget(nodes=3000), random.Random(seed)) for seed in range(3)} & exposing



# Blue (level 5) after 68 plies of a game against capture-first (seed 54019): Red's 10 fought (on f4), Blue's 10
# (on d8) never did. Red's 10 went on to take five pieces and Blue's flag on b7 while Blue's 10 stood by. An equal
# piece wins only by attacking first: Blue's 10 should stand between Red's and its flag, two squares from Red's 10,
# so that Red's 10 (which attacks whatever stands next to it) steps next to it on its way and is taken.
HUNT = """
    .   .   .   b8* .   .    .   r7
    .   .   .   .   .   .    .   rF
    .   .   .   .   .   .    .   .
    .   .   .   .   .   r10* .   r5+
    r9+ .   b9* b5+ b7+ b6+  .   .
    .   .   .   b6+ .   .    .   .
    b5+ bF  b7+ b7+ .   .    .   r8*
    .   b5  .   b10+ .  .    .   .
"""
RED_LOST = ("8", "7", "7", "6", "6", "6", "6", "5", "5", "5")
BLUE_LOST = ("8", "6", "6", "5")
FAR = {7: "b5+ bF b7+ b7+ . . . r8*", 8: ". b5 . . . . . b10+"}
"""Blue's 10 on h8, far from f4 and from c6, the one free square between f4 and Blue's flag."""


def board(rows: dict[int, str]) -> str:
    """:data:`HUNT` with the rows numbered in ``rows`` (1 to 8) replaced."""
    lines = HUNT.strip("\n").splitlines()
    for number, row in rows.items():
        lines[number - 1] = row
    return "\n".join(lines)


def blue_view(picture: str, red_lost: tuple[str, ...] = RED_LOST) -> dict:
    return tactego_positions.position(picture, DEFAULT_PIECES, to_move=1, lost=(red_lost, BLUE_LOST)).view(1)


def hunting_moves(picture: str, red_lost: tuple[str, ...] = RED_LOST) -> tuple[list[str], list[str]]:
    """Blue's ``(taking, closing)`` moves (:func:`_hunting`) in ``picture``, Blue to move."""
    view = blue_view(picture, red_lost)
    game, seat, sign, moves, steps = choice_setup(view, view["legal_moves"])
    taking, closing = _hunting(view, seat, moves, steps)
    return [view["legal_moves"][i] for i in taking], [view["legal_moves"][i] for i in closing]


def test_an_equal_piece_heads_between_the_enemys_fought_strongest_and_its_flag_and_takes_it_when_next_to_it() -> None:
    # towards c6 (h8-h7 would take a seen 8 and come nearer f4, but no nearer c6)
    assert hunting_moves(board(FAR)) == ([], ["h8-g7", "h8-g8"])
    assert hunting_moves(board({6: ". . b10+ b6+ . . . .", 8: ". b5 . . . . . ."})) == ([], [])  # there already
    assert hunting_moves(HUNT) == ([], [])  # no step of d8's comes nearer c6
    # from g6 (two squares from f4) to f6 or f7, nearer c6; not to g5, next to f4
    assert hunting_moves(board({6: ". . . b6+ . . b10+ .", 8: ". b5 . . . . . ."})) == ([], ["g6-f6", "g6-f7"])
    beside = board({5: "r9+ . b9* b5+ b7+ b6+ b10+ .", 8: ". b5 . . . . . ."})
    assert hunting_moves(beside)[0] == ["g5-f4"]
    # Red's 10 not seen (its 9 has): nothing is hunted, any hidden piece may be the 10
    assert hunting_moves(HUNT.replace("r10*", "r10+").replace("r9+", "r9*")) == ([], [])


def test_level_5_brings_its_strongest_piece_between_the_enemys_fought_strongest_and_its_flag() -> None:
    view = blue_view(board(FAR))
    closing = {"h8-g7", "h8-g8"}
    assert {make_chooser(5).choose(view, Budget(nodes=3000), random.Random(seed)) for seed in range(2)} <= closing
    # without the hunt the search sees no reason to (no capture happens within its two plies)
    idle = HybridChooser(plan=HybridPlan(hunt=False))
    assert not {idle.choose(view, Budget(nodes=3000), random.Random(seed)) for seed in range(4)} & closing


# Red (level 5) after 58 plies of a game against capture-first (seed 54132): Blue's 10 has just fought, on e4, next
# to Red's 10 (d4). Whoever attacks first wins; the search went on raiding with its 8 (a flag guessed next to h6
# outweighs a 10) and Blue's 10 took Red's, then its flag.
FACE_TO_FACE = """
    .   r5  r5  .    r5+  .   .   .
    .   .   rF  r6+  .    .   .   .
    .   .   r6+ r7+  r7+  r7+ .   .
    .   .   .   r10* b10* .   .   .
    b8+ .   .   .    .    .   .   r8*
    .   .   .   .    .    b6+ .   .
    b5  .   .   b5+  bF   .   .   b6
    .   .   .   b6   .    .   .   b5
"""


def test_level_5_takes_the_enemys_fought_strongest_when_its_own_equal_stands_next_to_it() -> None:
    lost = (("9", "8", "6", "6", "5"), ("9", "8", "7", "7", "7", "6", "5"))
    view = tactego_positions.position(FACE_TO_FACE, DEFAULT_PIECES, lost=lost).view(0)
    assert {make_chooser(5).choose(view, Budget(nodes=3000), random.Random(seed)) for seed in range(3)} == {"d4-e4"}
    idle = HybridChooser(plan=HybridPlan(hunt=False))
    assert "d4-e4" not in {idle.choose(view, Budget(nodes=3000), random.Random(seed)) for seed in range(3)}
