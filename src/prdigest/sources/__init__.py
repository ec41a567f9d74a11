"""Sources of PR records: each yields ``prdigest.pr/v1`` records (DESIGN §2).

* :mod:`.base` — the :class:`~prdigest.sources.base.Source` protocol, the one sync loop and
  its report;
* :mod:`.gitdiff` — git's diff syntax (quoted paths, headers, hunk counts), shared by the
  GitHub and git sources;
* :mod:`.jsonl` reads and writes the ``prdigest.pr/v1`` interchange format;
* :mod:`.github` — a window of merged PRs from GitHub (GraphQL + REST diffs, checkpoints);
* :mod:`.git` — a window of a local clone's history.
"""
