"""Offline stand-ins for the demo and the tests: a GitHub API server and a scripted model.

- ``eval/``: Labelled pull requests served by the sandbox GitHub, for ``swarm eval``
- ``github/``: An offline stand-in for the parts of GitHub's REST and GraphQL APIs swarm uses
- ``model/``: The scripted model: an offline, deterministic stand-in for the Anthropic Messages API
- ``server.py``: Run the sandbox GitHub on a loopback port, in a background thread or in the
  foreground
"""
