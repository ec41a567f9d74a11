"""The static digest site: pages (:mod:`.pages`), Atom feeds (:mod:`.feed`), the incremental
builder (:mod:`.builder`) and a localhost server for a quick look (:mod:`.serve`)."""
