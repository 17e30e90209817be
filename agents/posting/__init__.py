"""Posting: the exactly-once writes to GitHub and the hidden markers that prove them.

- ``findings.py``: a finding as structured data: path, lines, severity, category, message
- ``keys.py``: the one definition of a review key, its hidden marker and whose markers count
- ``lines.py``: following a finding's lines from the commit it was posted at to a later head
- ``notes.py``: the note a PR gets instead of a full review, once per head, and the list of files
  a review names without reading them in full
- ``once.py``: one GitHub write exactly once, under a store claim and the bot's own marker
- ``render.py``: the GitHub markup of a review (inline findings, suggestions, the summary),
  written by code around the model's plain text, and read back
- ``selection.py``: which findings go inline, which fold into the summary, which threads close
"""
