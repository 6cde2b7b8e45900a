"""A frozen copy of the Othello computer player as it was on main before issue 22 (commit b6b377b).

Kept for the benchmarks only (``benchmarks/strength.py``'s new-against-previous
match and ``benchmarks/othello_search_speed.py --compare``): the bitboard
primitives, the hand-weighted evaluation, the search and the chooser of
that commit, unchanged but for their imports. It is not part of the package.

>>> import random, games
>>> from games.bots import Budget
>>> from othello_previous import make_chooser
>>> state = games.get("othello").new_state({"size": 8})
>>> make_chooser(5).choose(state.view(0), Budget(nodes=500), random.Random(1)) in state.legal_moves()
True
"""

from .othello import make_chooser
from .othello_search import Searcher

__all__ = ["Searcher", "make_chooser"]
