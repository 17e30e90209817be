"""The programs: the Prefect flow, the ``swarm`` CLI, the webhook receiver, the local servers.

- ``__main__.py``: ``python -m flows``: the ``swarm`` command line, where the console script is not
  installed
- ``cli/``: The ``swarm`` commands, one small module per topic
- ``local/``: The developer's machine: a local Prefect server and the warm starter
- ``run/``: The ``swarm-run`` Prefect flow and its tasks: the only folder that defines flows and
  tasks
- ``webhook/``: The GitHub webhook receiver (``swarm webhook serve``)
"""
