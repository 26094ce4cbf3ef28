"""Reminders (issue 36, README "Reminders"): memory of the future, delivered once, on time, in the
person's time zone.

``parsing`` (with ``words_en``, ``words_zh``, ``when``) reads a request in the person's words;
``schedule`` holds the repeat rules and wall-clock arithmetic; ``zones`` each person's time zone; ``book``
creates, lists and cancels reminders (the one path every way in uses: the model's tools, the offline
stand-in, chat commands, the CLI, the memory page); ``delivery`` sends due ones, each claimed by one
gateway; ``wording`` says it all in English or Chinese.
"""
