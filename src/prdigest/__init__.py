"""prdigest: a day of merged pull requests → a grounded reading digest for engineers.

The pipeline (DESIGN §2): sources → :class:`PullRequest` → store → :func:`analyze` →
:class:`Dossier` → :func:`assess` → :class:`Assessment` → writer → :class:`Entry` →
:class:`Digest` → :func:`render`.
"""

from __future__ import annotations

from .analyze import analyze
from .digest import DigestOptions, build_digest
from .errors import PrdigestError
from .models import Assessment, Digest, Dossier, Entry, Level
from .records import PullRequest, parse_record
from .render import render
from .store import Store, open_store
from .triage import assess
from .write.template import TemplateWriter

__version__ = "0.1.0"

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
