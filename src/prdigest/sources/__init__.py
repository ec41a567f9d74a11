"""Sources of PR records: each yields ``records.PullRequest`` (DESIGN §2).

* :mod:`.jsonl` reads and writes the ``prdigest.pr/v1`` interchange format.
* :mod:`.github` syncs a window of merged PRs from GitHub (GraphQL + REST diffs).
"""
