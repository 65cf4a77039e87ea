"""``python -m servers.calendar`` from a checkout (as the bundled hub.json runs it): the demo calendar server.
Its code is ``hermes_hub/demo/calendar.py``; an installed hermes-hub runs ``python -m hermes_hub.demo.calendar``."""

from hermes_hub.demo.calendar import main

if __name__ == "__main__":
    main(prog="python -m servers.calendar")
