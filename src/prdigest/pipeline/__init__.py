"""The pipeline: wiring of the stages, and the only layer that knows them all.

:mod:`.digest` (a window → a digest: plan, compute, persist), :mod:`.run_all` (every configured
repository: sync → digest → site → delivery), :mod:`.config` (``prdigest.toml``).
"""
