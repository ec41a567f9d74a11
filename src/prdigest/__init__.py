"""prdigest: a day of merged pull requests → a grounded reading digest for engineers.

The pipeline (DESIGN §2): sources → :class:`PullRequest` → store → :func:`analyze` →
:class:`Dossier` → :func:`assess` → :class:`Assessment` → writer → :class:`Entry` →
:class:`Digest` → :func:`render`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from prdigest.core.version import __version__

if TYPE_CHECKING:
    from prdigest.analyze import analyze
    from prdigest.core.errors import PrdigestError
    from prdigest.core.models import Assessment, Digest, Dossier, Entry, Level
    from prdigest.core.records import PullRequest, parse_record
    from prdigest.pipeline.digest import DigestOptions, build_digest
    from prdigest.render import render
    from prdigest.store import Store, open_store
    from prdigest.triage import assess
    from prdigest.write.template import TemplateWriter

__all__ = [
    "Assessment",
    "Digest",
    "DigestOptions",
    "Dossier",
    "Entry",
    "Level",
    "PrdigestError",
    "PullRequest",
    "Store",
    "TemplateWriter",
    "__version__",
    "analyze",
    "assess",
    "build_digest",
    "open_store",
    "parse_record",
    "render",
]

# Where each public name lives: loaded on first use, so `import prdigest.cli` (every command)
# does not pay for the whole pipeline.
_HOMES = {
    "Assessment": "prdigest.core.models",
    "Digest": "prdigest.core.models",
    "DigestOptions": "prdigest.pipeline.digest",
    "Dossier": "prdigest.core.models",
    "Entry": "prdigest.core.models",
    "Level": "prdigest.core.models",
    "PrdigestError": "prdigest.core.errors",
    "PullRequest": "prdigest.core.records",
    "Store": "prdigest.store",
    "TemplateWriter": "prdigest.write.template",
    "analyze": "prdigest.analyze",
    "assess": "prdigest.triage",
    "build_digest": "prdigest.pipeline.digest",
    "open_store": "prdigest.store",
    "parse_record": "prdigest.core.records",
    "render": "prdigest.render",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'prdigest' has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)
