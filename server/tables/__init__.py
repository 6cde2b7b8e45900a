"""A table and what surrounds it: its state and seats, its clock, its lock, the fan-out of its events, the lobby of live tables."""
