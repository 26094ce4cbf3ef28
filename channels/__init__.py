"""Chat platforms (Telegram, Feishu, terminal). Nothing here imports ``gateway``."""
