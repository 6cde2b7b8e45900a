"""Players: sessions and the handshake, claimed names and their proofs, look-alike names, who is online, finger, mutes."""
