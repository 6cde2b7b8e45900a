"""The read-only web face (``parlour serve --http``): the lobby, tables live, a TV page and the archive, for browsers.

:mod:`.app` serves the pages and JSON with aiohttp on the game server's own
event loop; :mod:`.feed` feeds each browser's WebSocket from the server's bus
as a spectator; :mod:`.snapshots` builds what a page starts from;
:mod:`.assets` holds the pages' files (``static/``: plain HTML, CSS and
JavaScript that draws the boards as SVG).
"""

from .app import CONTENT_SECURITY_POLICY, WebFace

__all__ = ["CONTENT_SECURITY_POLICY", "WebFace"]
