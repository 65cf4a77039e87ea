"""The status page: ``GET /status`` (HTML, updating itself) and ``/status.json`` for scripts.

    routes.py    the endpoints, mounted beside /mcp by ``hermes_hub.app.serving.app``
    access.py    who is looking (local user, login cookie, bearer header) and the CSRF token of actions
    logins.py    login sessions in the store: the cookie holds a random id, the store hashes of it and its token
    view.py      the page's data for one viewer: servers, calls, runs, memory
    activity.py  calls per minute and error rate per server, and their inline SVG sparklines
    templates/ static/   shipped in the package: no CDN, no build step
"""

from hermes_hub.app.web.routes import status_routes

__all__ = ["status_routes"]
