"""The ground floor: the vocabulary every stage shares.

Records (:mod:`.records`), the frozen models passed between stages (:mod:`.models`), the one
error hierarchy (:mod:`.errors`), time windows (:mod:`.window`), repository presets
(:mod:`.presets`) and the version. Nothing here imports from any other part of prdigest.
"""
