"""The developer's machine: a local Prefect server and the warm starter.

- ``env.py``: Prefect's environment, set before Prefect is first imported
- ``manifest_page.py``: the loopback page of ``swarm app create`` and the addresses GitHub sends the
  browser back to
- ``prefect_server.py``: one local Prefect server per data directory, started on first use
- ``server_template.py``: a migrated Prefect database per Prefect version, kept in the user's cache,
  that a new data directory's server starts from
- ``server_keeper.py``: the local Prefect server's parent: ends it when unused or when its folder
  is gone
- ``warm_client.py``: hands ``swarm`` commands to a warm process that has the libraries loaded
- ``warm_server.py``: the warm process: libraries imported once, a forked child per command
"""
