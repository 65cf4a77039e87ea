"""``python -m clients.chat`` from a checkout: ``hermes-hub chat``, a terminal chat with the hub's agent.
Its code is ``hermes_hub/chat/`` (installed with hermes-hub, under no top-level name of its own)."""

from hermes_hub.app.cli.chat import chat_cmd

if __name__ == "__main__":
    chat_cmd()
