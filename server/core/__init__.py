"""The base every group imports: the request error, player names and their keys, the ids the server hands out, a player's session."""
