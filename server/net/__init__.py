"""The network: listening sockets, connections and their byte pump, peers, TLS, limits on what a client may cost, descriptors, event loops, LAN advertising. Knows no game and no session."""
