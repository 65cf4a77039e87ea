"""``python -m servers.notes`` from a checkout (as the bundled hub.json runs it): the demo notes server.
Its code is ``hermes_hub/demo/notes.py``; an installed hermes-hub runs ``python -m hermes_hub.demo.notes``."""

from hermes_hub.demo.notes import main

if __name__ == "__main__":
    main(prog="python -m servers.notes")
