"""Posting: the exactly-once writes to GitHub and the hidden markers that prove them.

- ``findings.py``: a finding as structured data: path, lines, severity, category, message
- ``keys.py``: the one definition of a review key, its hidden marker and whose markers count
- ``once.py``: one GitHub write exactly once, under a store claim and the bot's own marker
"""
