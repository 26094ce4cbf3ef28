"""Who may talk to the bot: a channel's ``allowFrom`` list, checked before anything else happens.

An empty list lets nobody in (a freshly configured bot must not answer the whole platform), ``"*"`` lets
everyone in. A refused sender is logged once with the line to add to the config, so the owner can let
themselves in after writing to the bot the first time.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence

log = logging.getLogger("tierclaw.channels")


class AllowList:
    """The ``allowFrom`` entries of one channel (ids, or usernames with or without ``@``)."""

    def __init__(self, channel: str, entries: Sequence[str]) -> None:
        self.channel = channel
        cleaned = [entry.strip() for entry in entries if entry.strip()]
        self.everyone = "*" in cleaned
        self._allowed = {_normal(entry) for entry in cleaned if entry != "*"}
        self._reported: set[str] = set()

    @property
    def nobody(self) -> bool:
        """True when the list is empty: every message is refused."""
        return not self.everyone and not self._allowed

    def allows(self, identities: Iterable[str]) -> bool:
        """Whether any of a sender's identities (id, username) is on the list."""
        if self.everyone:
            return True
        return any(_normal(identity) in self._allowed for identity in identities if identity)

    def warn_if_empty(self) -> None:
        """Log at start that nobody can reach the bot yet, and how to change that."""
        if self.nobody:
            log.warning(
                "[%s] channels.%s.allowFrom is empty, so nobody is let in. Message the bot once: the log "
                "shows your id and the line to add.",
                self.channel,
                self.channel,
            )

    def refuse(self, sender_id: str, shown_as: str = "") -> None:
        """Log (once per sender) that a message was ignored and how to let this sender in."""
        if sender_id in self._reported:
            return
        self._reported.add(sender_id)
        who = f"{sender_id} ({shown_as})" if shown_as else sender_id
        log.warning(
            '[%s] ignored a message from %s: not in channels.%s.allowFrom; add "%s" there to let them in',
            self.channel,
            who,
            self.channel,
            sender_id,
        )


def _normal(identity: str) -> str:
    """Usernames compare without ``@`` and case-insensitively; numeric ids are unchanged by this."""
    return identity.strip().removeprefix("@").casefold()
