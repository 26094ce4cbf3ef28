"""Feishu/Lark through lark-oapi: the channel and its parts (see channels/README.md)."""
