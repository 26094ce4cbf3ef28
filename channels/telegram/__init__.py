"""Telegram through python-telegram-bot: the channel and its parts (see channels/README.md)."""
