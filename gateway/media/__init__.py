"""Voice notes, photos and files (README.md, "Voice notes, photos and files").

The channel stores a message with its media references before anything is downloaded; the chat worker,
after claiming the message, hands it to ``service.MediaService``: fetch (``fetching.py``), hear
(``hearing.py``), see (``seeing.py``), read (``documents.py``), keep (``memory/attachments.py``), with
the person told in their language (``words.py``). ``send_back.py`` and ``tools.py`` send a kept file back;
``build.py`` makes all of it from the config.
"""
