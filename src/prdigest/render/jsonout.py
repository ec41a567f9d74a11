"""JSON: every PR of the window with its level, score, reasons, audience and entry."""

from __future__ import annotations

import json
from typing import Any

from prdigest.core.models import Digest, DigestItem

FORMAT_ID = "prdigest.digest/v1"


def _item(item: DigestItem) -> dict[str, Any]:
    data = item.model_dump(mode="json")
    data["level"] = item.assessment.level.value
    data["score"] = item.assessment.score
    return data


def render(digest: Digest) -> bytes:
    payload = {
        "format": FORMAT_ID,
        "repo": digest.repo,
        "window": digest.window.model_dump(mode="json"),
        "lang": digest.lang,
        "total": digest.total,
        "counts": digest.counts,
        "selected": [item.pr.number for item in digest.selected],
        "prs": [_item(item) for item in digest.all_items()],
    }
    return (json.dumps(payload, ensure_ascii=False, indent=2) + "\n").encode("utf-8")
