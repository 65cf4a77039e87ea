"""``python -m servers.reminders`` from a checkout (as the bundled hub.json runs it): the demo reminders server.
Its code is ``hermes_hub/demo/reminders.py``; an installed hermes-hub runs ``python -m hermes_hub.demo.reminders``."""

from hermes_hub.demo.reminders import main

if __name__ == "__main__":
    main(prog="python -m servers.reminders")
