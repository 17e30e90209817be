"""Measuring review quality: a labelled set, findings scored against it, a judge for free text;
and the writer's: issues implemented, judged by tests the writer never saw.

- ``labels.py``: the set's format: one YAML file per pull request, its files and its labels
- ``scoring.py``: findings matched to labels by place and category; precision, recall, F1
- ``results.py``: an evaluation's JSON and markdown table, and the comparison of two
- ``judge.py``: a model decides whether a finding names a golden comment's problem
- ``judge_prompt.md``: the judge's system prompt
- ``imports.py``: PR URLs with golden comments (a public benchmark, merged PRs) as a set
- ``cases.py``: an implement set's format: one YAML file per issue, its files and hidden tests
- ``implement.py``: the writer's pull requests judged by the hidden tests; its JSON and table
"""
