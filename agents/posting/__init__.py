"""Posting: the exactly-once writes to GitHub and the hidden markers that prove them. The tools
call into it; it never calls back into them (what it reads of the PR is handed in).

- ``anchors.py``: where an inline review comment can sit: the lines of the PR's diff hunks; the
  rest moves into the review body
- ``comment.py``: the triager's single comment on an issue, exactly once, whichever worker posts
  it (store claim per issue and role, hidden marker)
- ``findings.py``: a finding as structured data: path, lines, severity, category, message
- ``keys.py``: the one definition of a review key, its hidden marker and whose markers count
- ``lines.py``: following a finding's lines from the commit it was posted at to a later head
- ``notes.py``: the note a PR gets instead of a full review, once per head, and the list of files
  a review names without reading them in full
- ``once.py``: one GitHub write exactly once, under a store claim and the bot's own marker
- ``render.py``: the GitHub markup of a review (inline findings, suggestions, the summary),
  written by code around the model's plain text, and read back
- ``selection.py``: which findings go inline, which fold into the summary, which threads close
- ``summary.py``: the bot's one summary comment on a pull request, its content, created once and
  then edited in place
- ``threads.py``: the bot's earlier findings on a pull request, their threads, and closing the
  fixed ones
- ``writer.py``: one worker's review writes (``ReviewWriter``): claim ahead, select, post once,
  resolve the fixed threads, summarize; and what an interrupted run left of them
"""
