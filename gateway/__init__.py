"""The gateway: wires channels and memory together — configuration, the command line, the process loop,
the path of one message (``assistant.py``) and the scheduled memory jobs. ``gateway/README.md`` maps it."""
