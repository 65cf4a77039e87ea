"""The demo servers as the bundled hub.json runs them from a checkout (``python -m servers.NAME``); their
code is ``hermes_hub/demo/`` and an installed hermes-hub runs ``python -m hermes_hub.demo.NAME``."""
