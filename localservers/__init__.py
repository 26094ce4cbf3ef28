"""Local stand-ins for the platforms tierclaw talks to, speaking their wire formats on 127.0.0.1.

``telegram_api`` (the Bot API), ``open_api`` (Feishu/Lark open-apis, event callbacks and the
websocket long connection) and ``openai_api`` (chat completions and embeddings). Tests and benchmarks
point the real clients (python-telegram-bot, lark-oapi, openai) at them; a person can start one with
``python -m localservers telegram|feishu|openai`` to try the gateway by hand (README.md here).
"""
