"""Whose memory is it: the config's ``users`` map turns channel identities into one owner per person."""

from __future__ import annotations

from collections.abc import Mapping, Sequence


class Identities:
    """Maps ``channel:sender_id`` to an owner: ``user:<name>`` when mapped, else the identity itself.

    So one person has one memory across Telegram, Feishu and the terminal, and an unmapped sender is
    its own owner (never sharing anyone else's memories).
    """

    def __init__(self, users: Mapping[str, Sequence[str]] | None = None) -> None:
        self._owner_of: dict[str, str] = {}
        for person, identities in (users or {}).items():
            for identity in identities:
                self._owner_of[identity] = f"user:{person}"

    def owner_for(self, sender_key: str) -> str:
        """The owner whose memory a message from ``sender_key`` reads and writes."""
        return self._owner_of.get(sender_key, sender_key)
