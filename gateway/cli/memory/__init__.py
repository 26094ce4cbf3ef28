"""``tierclaw memory …``: inspect and curate one owner's long-term memory from the terminal (``register``)."""

from gateway.cli.memory.parser import register

__all__ = ["register"]
