from hermes_hub.app.cli import entry

entry()
