"""E-mail over SMTP: one message with a plain-text and an HTML part.

Security is ``starttls`` (port 587 by default), ``ssl`` (implicit TLS, port 465) or ``none``
(a local relay only). Certificates are verified against the system store, or ``ca_file`` for a
private CA. The password arrives as :class:`~prdigest.pipeline.config.Secret` and is used only for
``LOGIN``; errors name the channel and the SMTP reply code, never the password.

The HTML part comes from the ``email.html`` template (autoescape on) with the same escaped
paragraphs as the site; the plain-text part carries the same entries as text.
"""

from __future__ import annotations

import logging
import smtplib
import ssl
from email.message import EmailMessage
from email.utils import formatdate, make_msgid
from typing import Any

from prdigest.core.errors import DeliveryError
from prdigest.pipeline.config import EmailConfig, Secret
from prdigest.publish.summary import Summary
from prdigest.render.common import one_line
from prdigest.render.html import digest_context, environment, item_view

log = logging.getLogger("prdigest.publish")


class EmailChannel:
    kind = "email"

    def __init__(
        self,
        name: str,
        config: EmailConfig,
        *,
        password: Secret | None = None,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        self.name = name
        self.config = config
        self.top = config.top
        self._password = password
        self._ssl_context = ssl_context

    def __repr__(self) -> str:
        auth = ", password=[secure]" if self._password else ""
        return (
            f"EmailChannel(name={self.name!r}, host={self.config.host!r}, "
            f"port={self.config.effective_port}, security={self.config.security!r}{auth})"
        )

    # -- the message ----------------------------------------------------------------------

    def subject(self, summary: Summary) -> str:
        must = summary.digest.counts.get("must_read", 0)
        extra = f"（{must} 篇值得精读）" if summary.digest.lang == "zh" else f" ({must} must-read)"
        return one_line(f"{self.config.subject_prefix} {summary.heading}{extra if must else ''}")

    def plain_text(self, summary: Summary) -> str:
        lines = [summary.heading, summary.counts, ""]
        if summary.empty:
            lines += [summary.empty, ""]
        for index, entry in enumerate(summary.top(self.top), start=1):
            lines += [
                f"{index}. {entry.title}",
                f"   #{entry.number} · {entry.level_label} · {entry.area}",
                f"   {entry.link}",
                "",
            ]
        more = summary.more_line(len(summary.top(self.top)))
        if more:
            lines += [more, ""]
        if summary.page_url:
            lines.append(f"{summary.read_more}: {summary.page_url}")
        return "\n".join(lines).rstrip("\n") + "\n"

    def html(self, summary: Summary) -> str:
        digest = summary.digest
        context: dict[str, Any] = digest_context(digest)
        shown = summary.top(self.top)
        entries = []
        for item, entry in zip(digest.selected, shown, strict=False):
            view = item_view(item, digest.lang)
            view["link"] = entry.link
            entries.append(view)
        context.update(
            entries=entries,
            counts=summary.counts,
            more=summary.more_line(len(shown)),
            page_url=summary.page_url,
            read_more=summary.read_more,
        )
        return environment().get_template("email.html").render(**context)

    def message(self, summary: Summary) -> EmailMessage:
        message = EmailMessage()
        message["Subject"] = self.subject(summary)
        message["From"] = self.config.sender
        message["To"] = ", ".join(self.config.to)
        message["Date"] = formatdate(localtime=False)
        message["Message-ID"] = make_msgid(domain="prdigest.local")
        message["Auto-Submitted"] = "auto-generated"
        message.set_content(self.plain_text(summary))
        message.add_alternative(self.html(summary), subtype="html")
        return message

    # -- sending --------------------------------------------------------------------------

    def _context(self) -> ssl.SSLContext:
        if self._ssl_context is not None:
            return self._ssl_context
        cafile = str(self.config.ca_file) if self.config.ca_file else None
        try:
            return ssl.create_default_context(cafile=cafile)
        except (OSError, ssl.SSLError) as exc:
            raise DeliveryError(f"cannot load ca_file: {exc}", channel=self.name) from exc

    def _connect(self) -> smtplib.SMTP:
        config = self.config
        if config.security == "ssl":
            return smtplib.SMTP_SSL(
                config.host, config.effective_port, timeout=config.timeout, context=self._context()
            )
        smtp = smtplib.SMTP(config.host, config.effective_port, timeout=config.timeout)
        if config.security == "starttls":
            smtp.ehlo()
            smtp.starttls(context=self._context())
            smtp.ehlo()
        return smtp

    def send(self, summary: Summary) -> None:
        message = self.message(summary)
        try:
            with self._connect() as smtp:
                if self.config.username:
                    password = self._password.reveal() if self._password else ""
                    smtp.login(self.config.username, password)
                refused = smtp.send_message(message)
        except smtplib.SMTPResponseException as exc:
            raise DeliveryError(
                f"SMTP server answered {exc.smtp_code} ({type(exc).__name__})", channel=self.name
            ) from exc
        except smtplib.SMTPRecipientsRefused as exc:
            raise DeliveryError(
                f"every recipient was refused: {', '.join(sorted(exc.recipients))}",
                channel=self.name,
            ) from exc
        except ssl.SSLError as exc:
            raise DeliveryError(
                f"TLS failed: {exc.reason or type(exc).__name__}", channel=self.name
            ) from exc
        except (smtplib.SMTPException, OSError) as exc:
            reason = getattr(exc, "strerror", None) or type(exc).__name__
            raise DeliveryError(
                f"cannot send through {self.config.host}:{self.config.effective_port}: {reason}",
                channel=self.name,
            ) from exc
        if refused:  # delivered to the others: logged, not retried (that would repeat it)
            log.warning("channel %r: refused recipients: %s", self.name, ", ".join(sorted(refused)))
