"""The writer's workspace: a throwaway copy of the repository the model reads, searches and
edits through tools only, the paths it may never change, and the change set committed from it.

- ``copy.py``: The working copy: every path confined to its root (no ``..``, no absolute path,
  no link, no special file), reads and edits under size caps, and what changed since the fetch
- ``policy.py``: What the writer may change: the protected paths (defaults a repository can add
  to, never remove) and the caps on files and bytes changed
- ``search.py``: Searching the copy for a literal string: linear time on any input, bounded output
"""
