"""The build's one part pyproject.toml cannot say: the optional C accelerators.

``games/_othello_accel.c`` (the Othello engine's move generation, flips, rows
and names) and ``server/tables/_othello_views.c`` (an Othello position's view
written as MessagePack for every move's fan-out) are built when a C compiler
and Python's headers are there; ``optional=True`` lets the install go on
without them, and ``games/othello.py`` and ``server/tables/othello_views.py``
then run their pure-Python paths, which give the same results. Both read
bitboard arguments with ``games/_bitboard_arg.h``.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension("games._othello_accel", ["games/_othello_accel.c"], optional=True),
        Extension("server.tables._othello_views", ["server/tables/_othello_views.c"], include_dirs=["games"], optional=True),
    ]
)
