"""What a commit message says about its PR: number, title, body, and the people in trailers.

Two shapes are recognised (anything else is not a PR and is skipped by the caller):

* squash merge — subject ``Title (#N)``; the body is the PR description as GitHub put it in
  the squash message. When the subject ends in several numbers (``Fix (#12) (#15)``, a
  cherry-pick squashed again) the last one is the PR.
* true merge — subject ``Merge pull request #N from owner/branch``; GitHub writes the PR
  title as the first line of the body, and the description (when the repository's setting
  includes it) after that.

``Signed-off-by`` and ``Co-authored-by`` lines are authorship, not prose: they are taken out of
the body wherever they stand (a squash of several commits repeats them mid-body) and returned
as people. GitHub's ``---------`` separator before co-author lines goes with them.

A person is named by GitHub login when the e-mail is a GitHub no-reply address
(``[id+]login@users.noreply.github.com``, which also covers ``dependabot[bot]``) or the trailer
links a GitHub profile; otherwise by the name in the commit. Git has no logins, so that is the
best identity the clone holds. Trailers typed by hand in PR descriptions come in many shapes;
besides ``Name <e-mail>`` these are read: ``Name e-mail``, ``[Name](e-mail or profile URL)``,
``Name [e-mail](mailto:e-mail)``, HTML-escaped brackets, and an empty trailer whose person is on
the next line. Git's placeholder identity (``Your Name``/``you@example.com``) is nobody.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

_SQUASH = re.compile(r"^(?P<title>.*?)\s*\(#(?P<number>\d+)\)\s*$")
_MERGE = re.compile(r"^Merge pull request #(?P<number>\d+) from (?P<head>\S+)")
_TRAILER = re.compile(r"^\s*(?:signed-off-by|co-authored-by)\s*:\s*(?P<who>.*?)\s*$", re.I)
_ANGLE = re.compile(r"^(?P<name>.*?)\s*<(?P<email>[^<>]*)>")
_LINK = re.compile(r"\[(?P<text>[^\]]*)\]\((?P<target>[^)]*)\)")
_PROFILE = re.compile(r"^https?://github\.com/(?P<login>[A-Za-z0-9][A-Za-z0-9-]{0,38})/?$", re.I)
_PLACEHOLDERS = frozenset({"your name", "you@example.com", "your.email@example.com"})
_NOREPLY = re.compile(
    r"^(?:\d+\+)?(?P<login>[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:\[bot\])?)@users\.noreply\.github\.com$",
    re.I,
)
_SEPARATOR = re.compile(r"^\s*-{3,}\s*$")


@dataclass(frozen=True, slots=True)
class Person:
    name: str
    email: str
    login: str | None = None  # from a linked GitHub profile

    @property
    def identity(self) -> str:
        """GitHub login when known, else the name (else the e-mail)."""
        if self.login:
            return self.login
        match = _NOREPLY.match(self.email)
        return match.group("login") if match else self.name or self.email

    @property
    def nobody(self) -> bool:
        return not self.identity or bool({self.name.lower(), self.email.lower()} & _PLACEHOLDERS)


@dataclass(frozen=True, slots=True)
class PRMessage:
    number: int
    title: str
    body: str | None  # None when the message carries no description
    people: tuple[Person, ...]  # from trailers, in order, repeats included
    merge: bool  # "Merge pull request …" rather than a squash subject
    head: str | None = None  # "owner/branch" of a merge message


def parse_person(text: str) -> Person:
    """``Name <e-mail>`` and the hand-typed variants listed in the module docstring."""
    plain = html.unescape(text).strip().strip("“”\"'")
    angle = _ANGLE.match(plain)
    if angle:
        return Person(_clean(angle.group("name")), _clean(angle.group("email")))
    link = _LINK.search(plain)
    if link:
        target = link.group("target").removeprefix("mailto:").strip()
        profile = _PROFILE.match(target)
        outside = _clean(plain[: link.start()] + plain[link.end() :])
        name = outside or _clean(link.group("text"))
        if profile:
            return Person(name, "", login=profile.group("login"))
        return Person(name, target if "@" in target else "")
    words = plain.split()
    if len(words) > 1 and "@" in words[-1]:
        return Person(_clean(" ".join(words[:-1])), words[-1])
    return Person(_clean(plain), "")


def _clean(text: str) -> str:
    return text.strip().strip("“”\"'").strip()


def _split_trailers(lines: list[str]) -> tuple[list[str], list[Person]]:
    """Lines without trailer lines (and without the blank lines they leave doubled)."""
    kept: list[str] = []
    people: list[Person] = []
    removed = False
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        trailer = _TRAILER.match(line)
        if trailer:
            who = trailer.group("who")
            if not who and index < len(lines) and _lone_name(lines[index]):
                who = lines[index]  # "Co-authored-by:" with the person on the next line
                index += 1
            person = parse_person(who)
            if not person.nobody:
                people.append(person)
            removed = True
            continue
        if removed and not line.strip() and kept and not kept[-1].strip():
            continue
        removed = removed and not line.strip()
        kept.append(line)
    while kept and (not kept[-1].strip() or _SEPARATOR.match(kept[-1])):
        kept.pop()
    while kept and not kept[0].strip():
        kept.pop(0)
    return kept, people


def _lone_name(line: str) -> bool:
    """A line that can only be a person: one short token, a link or ``Name <e-mail>``."""
    text = line.strip()
    return (
        bool(text)
        and len(text) <= 120
        and (bool(_ANGLE.match(text)) or bool(_LINK.fullmatch(text)) or " " not in text)
    )


def parse_message(message: str) -> PRMessage | None:
    """The PR a commit message stands for, or None when the subject names no PR."""
    subject, _, rest = message.partition("\n")
    subject = subject.strip()
    lines, people = _split_trailers(rest.split("\n"))
    merge = _MERGE.match(subject)
    if merge:
        title = lines.pop(0).strip() if lines else ""
        while lines and not lines[0].strip():
            lines.pop(0)
        return PRMessage(
            number=int(merge.group("number")),
            title=title or subject,
            body="\n".join(lines) or None,
            people=tuple(people),
            merge=True,
            head=merge.group("head"),
        )
    squash = _SQUASH.match(subject)
    if squash:
        return PRMessage(
            number=int(squash.group("number")),
            title=squash.group("title") or subject,
            body="\n".join(lines) or None,
            people=tuple(people),
            merge=False,
        )
    return None


def head_owner_and_branch(head: str | None) -> tuple[str | None, str | None]:
    """``owner/branch`` of a merge subject → (owner, branch); the branch may contain slashes."""
    if not head or "/" not in head:
        return None, head
    owner, _, branch = head.partition("/")
    return owner, branch


def authors(primary: Person, people: tuple[Person, ...]) -> list[str]:
    """The distinct identities of a PR: the commit author first, then trailer people.

    A trailer person is the same as one seen before when the identity, the name or the e-mail
    matches (``Signed-off-by`` often repeats the author under another address).
    """
    result: list[str] = []
    seen: set[str] = set()
    for person in (primary, *people):
        if person.nobody:
            continue
        keys = {key.lower() for key in (person.identity, person.name, person.email) if key}
        if keys & seen:
            seen |= keys
            continue
        seen |= keys
        result.append(person.identity)
    return result
