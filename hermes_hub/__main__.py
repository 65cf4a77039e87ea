from hermes_hub.cli import main

main()
