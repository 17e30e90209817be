"""The ``SWARM_*`` settings: one model, the secrets it reads, and the names and docs made from it.

Nothing here imports pydantic at package import, so ``paths`` stays cheap for the warm client.

- ``model.py``: ``Settings``: the pydantic-settings model, built once at each entry point
- ``identity.py``: one GitHub identity's settings (App installation or bot PAT) and ``ConfigError``
- ``checks.py``: checks of values that flags and settings share (``--repo`` and ``SWARM_REPOS``)
- ``names.py``: the environment variable names the model reads, and did-you-mean for the rest
- ``secret_files.py``: settings read from the git-ignored ``secrets/`` folder
- ``secret_values.py``: every configured secret value, registered with redaction at start-up
- ``paths.py``: the default data directory (no pydantic: the warm client imports it)
- ``docs.py``: the settings tables of docs/configuration.md (``python -m agents.settings.docs``)
"""
