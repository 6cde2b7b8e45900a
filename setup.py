"""The build's one part pyproject.toml cannot say: the optional C accelerator of the Othello engine.

``games/_othello_accel.c`` is built when a C compiler and Python's headers are
there; ``optional=True`` lets the install go on without it, and
``games/othello.py`` then runs its pure-Python primitives.
"""

from setuptools import Extension, setup

setup(ext_modules=[Extension("games._othello_accel", ["games/_othello_accel.c"], optional=True)])
