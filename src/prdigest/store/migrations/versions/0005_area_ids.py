"""Digests carry area ids: stored digest payloads lose their per-language area strings.

Until 0004 a stored digest named each PR's area twice (``area`` in Chinese, ``area_en``) and its
assessment carried the audience phrase in both languages. From now on the data model carries
ids and a digest holds the names of its areas in its own language (``areas``). Old payloads
know only the names, so an area's id becomes the slug of its English name, which is what the
site already used as the area's filter value: pages rebuilt from migrated digests stay the same.

Dossiers and assessments need no rewrite: their versions changed with the same release
(``analyze/5``, ``triage/2``), so old rows are never read again and are replaced on the next run.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01
"""

from __future__ import annotations

import json
import re
from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

_SLUG = re.compile(r"[^0-9a-z]+")


def _slug(text: str) -> str:
    return _SLUG.sub("-", text.lower()).strip("-") or "x"


def _item(item: dict[str, Any], lang: str, names: dict[str, str]) -> str | None:
    """Rewrite one digest item in place; returns its area id."""
    pr, assessment = item.get("pr", {}), item.get("assessment", {})
    english = pr.pop("area_en", None) or assessment.get("area_en")
    local = pr.get("area")
    area_id = _slug(english) if english else None
    if area_id:
        names[area_id] = (local if lang == "zh" else english) or area_id
    pr["area"] = area_id
    focused = assessment.pop("audience", None) is not None
    assessment.pop("audience_en", None)
    assessment.pop("area_en", None)
    assessment["area"] = area_id
    assessment["audience"] = area_id if focused else None
    return area_id


def upgrade_payload(payload: str) -> str:
    data = json.loads(payload)
    if "areas" in data:
        return payload  # already in the new shape
    lang = data.get("lang", "zh")
    names: dict[str, str] = {}
    for item in data.get("selected", []):
        _item(item, lang, names)
    for group in data.get("others", []):
        ids = {_item(item, lang, names) for item in group.get("items", [])}
        group["name"] = group.get("area", "")
        group["area"] = next(iter(ids)) if len(ids) == 1 else None
    data["areas"] = names
    return json.dumps(data, ensure_ascii=False)


def upgrade() -> None:
    digests = sa.table("digests", sa.column("id", sa.Integer), sa.column("payload", sa.Text))
    conn = op.get_bind()
    rows = conn.execute(sa.select(digests.c.id, digests.c.payload)).all()
    for row_id, payload in rows:
        new = upgrade_payload(payload)
        if new != payload:
            conn.execute(digests.update().where(digests.c.id == row_id).values(payload=new))


def downgrade() -> None:
    raise NotImplementedError("area names per language cannot be recovered from ids")
