"""The full-screen terminal client (Textual): ``parlour play`` on a real terminal.

:class:`client.app.app.ParlourApp` is the application; each screen is one
module here (server, lobby, new table, archive, help, confirmation, challenge
dialogs, the challenge and seek form, a player picked from the online list).
"""
