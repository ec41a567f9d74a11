"""prdigest: a day of merged pull requests → a grounded reading digest for engineers.

The pipeline (DESIGN §2): sources → :class:`PullRequest` → store → :func:`analyze` →
:class:`Dossier` → :func:`assess` → :class:`Assessment` → writer → :class:`Entry` →
:class:`Digest` → :func:`render`.
"""

from __future__ import annotations

from prdigest.analyze import analyze
from prdigest.core.errors import PrdigestError
from prdigest.core.models import Assessment, Digest, Dossier, Entry, Level
from prdigest.core.records import PullRequest, parse_record
from prdigest.core.version import __version__
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
