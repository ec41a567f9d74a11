"""The static digest site: the incremental builder (:mod:`.builder`) and a localhost server for
a quick look (:mod:`.serve`). Pages and feeds are rendered by :mod:`prdigest.render`."""
