"""The event bus: carries lobby and table events, already encoded, to the connections that follow them."""
