"""Escaping untrusted text for each chat dialect.

* Feishu/Lark card markdown, DingTalk markdown and WeCom markdown each give ``<`` a meaning
  (``<at id=all>``, ``<font>``, ``<@userid>``) and ``[..](..)`` makes links; their escaping rules
  are not uniformly documented, so these characters become their full-width look-alikes
  (``＜ ＞ ［ ］``): shown nearly the same, and no tag, mention or link can form.
* Slack mrkdwn documents exactly three escapes: ``&`` ``<`` ``>`` → ``&amp;`` ``&lt;`` ``&gt;``;
  with them no ``<!everyone>`` or ``<url|text>`` can form.
* In every dialect ``@name`` gets a zero-width space after the ``@``, so ``@everyone`` in a PR
  title pings nobody (the Markdown digest, meant to be copied, uses code spans instead).
"""

from __future__ import annotations

from prdigest.render.common import defuse_mentions, one_line

_LOOKALIKE = str.maketrans({"<": "＜", ">": "＞", "[": "［", "]": "］"})
_SLACK = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})


def chat_markdown(text: str) -> str:
    """Untrusted text for Feishu, DingTalk and WeCom markdown."""
    return defuse_mentions(one_line(text).translate(_LOOKALIKE))


def slack_mrkdwn(text: str) -> str:
    """Untrusted text for Slack mrkdwn (and Slack plain_text fields)."""
    return defuse_mentions(one_line(text).translate(_SLACK))
