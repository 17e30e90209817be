"""``python -m flows``: the ``swarm`` command line, where the console script is not installed."""

from flows.cli.app import main

main()
