"""E-mail over SMTP: one message with a plain-text and an HTML part.

Security is ``starttls`` (port 587 by default), ``ssl`` (implicit TLS, port 465) or ``none``
(a local relay only). Certificates are verified against the system store, or ``ca_file`` for a
private CA. The password arrives as :class:`~prdigest.core.secrets.Secret` and is used only
for ``LOGIN``; errors name the channel and the SMTP reply code, never the password.

The HTML part comes from the ``email.html`` template (autoescape on) with the same escaped
paragraphs as the site; the plain-text part carries the same entries as text.
"""

from __future__ import annotations

import logging
import smtplib
import ssl
from collections.abc import Mapping
from email.message import EmailMessage
from email.utils import formatdate, make_msgid, parseaddr
from pathlib import Path
from typing import Any, Literal

import httpx
from pydantic import Field, field_validator, model_validator

from prdigest.core.configbase import EnvName, env_name, problem
from prdigest.core.errors import DeliveryError
from prdigest.core.locale import locale
from prdigest.core.secrets import Secret
from prdigest.publish.channels.base import Channel, ChannelConfigBase, ChannelKind
from prdigest.publish.summary import Summary
from prdigest.render.common import one_line

log = logging.getLogger("prdigest.publish")


class EmailConfig(ChannelConfigBase):
    """E-mail over SMTP with an HTML and a plain-text part."""

    type: Literal["email"]
    host: str = Field(min_length=1)
    port: int | None = Field(default=None, ge=1, le=65535)
    security: Literal["starttls", "ssl", "none"] = "starttls"
    username: str | None = None
    password_env: EnvName | None = None
    ca_file: Path | None = None
    sender: str = Field(alias="from")
    to: tuple[str, ...] = Field(min_length=1)
    subject_prefix: str = Field(default="[prdigest]", max_length=100)
    timeout: float = Field(default=30.0, gt=0, le=300)
    top: int = Field(default=8, ge=1, le=200)

    _check_password = field_validator("password_env")(env_name)

    @field_validator("sender")
    @classmethod
    def _sender_address(cls, value: str) -> str:
        return _address(value)

    @field_validator("to")
    @classmethod
    def _recipient_addresses(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(_address(v) for v in value)

    @field_validator("subject_prefix", "host")
    @classmethod
    def _one_line(cls, value: str) -> str:
        if "\n" in value or "\r" in value:
            raise ValueError("must be one line")
        return value

    @model_validator(mode="after")
    def _password_needs_user(self) -> EmailConfig:
        if self.password_env and not self.username:
            raise problem("username", "'password_env' needs 'username'")
        return self

    @property
    def effective_port(self) -> int:
        if self.port is not None:
            return self.port
        return {"starttls": 587, "ssl": 465, "none": 25}[self.security]


def _address(value: str) -> str:
    _name, addr = parseaddr(value)
    if "\n" in value or "\r" in value or "@" not in addr or " " in addr:
        raise ValueError(f"not an e-mail address: {value!r}")
    return value


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
        extra = locale(summary.digest.lang).say("email", "must_read", count=must)
        return one_line(f"{self.config.subject_prefix} {summary.heading}{extra if must else ''}")

    def plain_text(self, summary: Summary) -> str:
        lines = [summary.heading, summary.counts, ""]
        if summary.empty:
            lines += [summary.empty, ""]
        for index, entry in enumerate(summary.top(self.top), start=1):
            lines += [
                f"{index}. {entry.title}",
                f"   {entry.reason}",
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
        from prdigest.render.html import digest_context, environment, item_view  # jinja2

        digest = summary.digest
        context: dict[str, Any] = digest_context(digest)
        shown = summary.top(self.top)
        entries = []
        for item, entry in zip(digest.selected, shown, strict=False):
            view = item_view(item, digest)
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

    def message_id(self, summary: Summary) -> str:
        """Stable across resends of one delivery, so mail clients fold a duplicate."""
        domain = parseaddr(self.config.sender)[1].rpartition("@")[2] or "prdigest.local"
        if summary.message_key is None:
            return make_msgid(domain=domain)
        return f"<{summary.message_key}.prdigest@{domain}>"

    def message(self, summary: Summary) -> EmailMessage:
        message = EmailMessage()
        message["Subject"] = self.subject(summary)
        message["From"] = self.config.sender
        message["To"] = ", ".join(self.config.to)
        message["Date"] = formatdate(localtime=False)
        message["Message-ID"] = self.message_id(summary)
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


def _make(
    name: str,
    settings: Any,
    secrets: Mapping[str, Secret],
    client: httpx.Client,
    ssl_context: ssl.SSLContext | None,
) -> Channel:
    password = secrets.get("password_env")
    return EmailChannel(name, settings, password=password, ssl_context=ssl_context)


KIND = ChannelKind(EmailConfig, _make, ("password_env",))
