"""Ratings: Glicko-2, players' ratings per game and family, casual counts, and what a game's end does to them."""
