"""The migrations of what people send and ask beyond words, written once for both stores like
``schema_tables.py`` (which lists them in ``TEMPLATES``, and says what the placeholders become):
attachments (issue 33) and reminders (issue 36), kept here so that file stays one screenful of the older
versions."""

# Voice notes, photos and files (issue 33; README.md, "Voice notes, photos and files"): each inbox row
# keeps the message's media references (``media``: a JSON list — kind, platform file id or key, mime,
# size, name), stored before anything is downloaded, so a crash while media waits loses nothing. Each
# attachment a person sent (``direction`` "in") or was sent ("out") is a row of ``attachments``, with
# what understanding made of it (description, transcription, extracted text) and its own full-text index
# over those, the name and the caption (jieba-segmented ``search_text``, like memories and turns). The
# bytes are kept beside it in ``attachment_bytes`` (up to ``media.maxBytes`` each), in the database, so
# every replica reaches them and ``tierclaw memory copy`` carries them.
ATTACHMENTS = """
ALTER TABLE inbox ADD COLUMN media {TEXT} NOT NULL DEFAULT '';
CREATE TABLE attachments (
    id             {ID},
    owner          {TEXT}    NOT NULL,
    direction      {TEXT}    NOT NULL DEFAULT 'in' CHECK (direction IN ('in', 'out')),
    channel        {TEXT}    NOT NULL,
    chat_id        {TEXT}    NOT NULL,
    message_id     {TEXT}    NOT NULL DEFAULT '',
    part           INTEGER NOT NULL DEFAULT 0,
    kind           {TEXT}    NOT NULL,
    mime           {TEXT}    NOT NULL DEFAULT '',
    size           {BIGINT} NOT NULL DEFAULT 0,
    file_name      {TEXT}    NOT NULL DEFAULT '',
    file_key       {TEXT}    NOT NULL DEFAULT '',
    caption        {TEXT}    NOT NULL DEFAULT '',
    description    {TEXT}    NOT NULL DEFAULT '',
    transcription  {TEXT}    NOT NULL DEFAULT '',
    extracted_text {TEXT}    NOT NULL DEFAULT '',
    tags           {TEXT}    NOT NULL DEFAULT '[]',
    memory_ids     {TEXT}    NOT NULL DEFAULT '[]',
    status         {TEXT}    NOT NULL DEFAULT 'kept',
    sha256         {TEXT}    NOT NULL DEFAULT '',
    search_text    {TEXT}    NOT NULL DEFAULT '',
    created_at     {TEXT}    NOT NULL{SEARCH_COLUMNS}
);
CREATE UNIQUE INDEX idx_attachments_part ON attachments(channel, chat_id, message_id, part, direction)
    WHERE message_id != '';
CREATE INDEX idx_attachments_owner ON attachments(owner, created_at);
{attachments_own}
CREATE TABLE attachment_bytes (
    attachment_id {BIGINT} PRIMARY KEY,
    data          {BLOB}    NOT NULL
);
"""

# Reminders (issue 36, README "Reminders"): what a person asked to be told later, in the chat they asked
# from. ``local_at`` + ``zone`` is the wall-clock time they meant (kept, so a repeat and a change of
# summer time land on the same clock time); ``due_at`` is that moment in UTC, ``try_at`` when the next
# send may be tried (later than ``due_at`` after a failed send). A due reminder is claimed by one gateway
# (``claimed_by`` + ``lease_until``) until it is sent; ``status`` is pending, delivered, failed, missed or
# cancelled. ``person_zones`` holds each person's time zone once they set or confirmed one.
REMINDERS = """
CREATE TABLE reminders (
    id          {ID},
    owner       {TEXT}    NOT NULL,
    channel     {TEXT}    NOT NULL,
    chat_id     {TEXT}    NOT NULL,
    text        {TEXT}    NOT NULL,
    said        {TEXT}    NOT NULL DEFAULT '',
    lang        {TEXT}    NOT NULL DEFAULT 'en',
    zone        {TEXT}    NOT NULL,
    local_at    {TEXT}    NOT NULL,
    repeat      {TEXT}    NOT NULL DEFAULT '',
    due_at      {TEXT}    NOT NULL,
    try_at      {TEXT}    NOT NULL,
    status      {TEXT}    NOT NULL DEFAULT 'pending',
    attempts    INTEGER NOT NULL DEFAULT 0,
    sent_count  INTEGER NOT NULL DEFAULT 0,
    claimed_by  {TEXT},
    lease_until {TEXT},
    last_sent_at {TEXT},
    last_error  {TEXT},
    created_at  {TEXT}    NOT NULL,
    updated_at  {TEXT}    NOT NULL
);
CREATE INDEX idx_reminders_try ON reminders(try_at) WHERE status = 'pending';
CREATE INDEX idx_reminders_owner ON reminders(owner, status, due_at);
CREATE TABLE person_zones (
    owner      {TEXT} PRIMARY KEY,
    zone       {TEXT} NOT NULL,
    updated_at {TEXT} NOT NULL
);
"""
