"""The Parlour server: network, lobby, tables."""

__version__ = "0.1.0"
