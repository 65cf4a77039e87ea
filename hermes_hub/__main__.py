from hermes_hub.app.cli import main

main()
