"""The ``swarm`` commands, one small module per topic.

Each module defines ``commands``, a :class:`typer.Typer`: without a name its commands join the
top level (``swarm run``), with a name they form a group (``swarm memory list``). To add commands,
write a module here and add its name to :data:`flows.cli.COMMAND_MODULES`. Command bodies import
what they need inside the function so ``swarm --help`` stays fast, and raise
:class:`agents.config.ConfigError` (or any error :mod:`flows.cli_errors` knows) for mistakes a
person can fix: the CLI turns those into one line and exit status 2.
"""
