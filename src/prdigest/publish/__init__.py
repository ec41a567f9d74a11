"""Publish: stored digests to readers.

* :mod:`.channels` — chat webhooks (Feishu/Lark, DingTalk, WeCom, Slack) and e-mail, one module
  each with its config schema, and the registry;
* :mod:`.summary` — the summary card every channel is made from;
* :mod:`.deliver` — the delivery log logic (each channel gets a digest once);
* :mod:`.site` — the static site builder and a localhost server.
"""
