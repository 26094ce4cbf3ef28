"""Small media the tests, the media bench and a person trying the local servers make themselves (nothing
downloaded): a WAV that says words
(the local transcriber hears them), a PNG that shows a description (the local vision reads it), a PDF with
text (pypdf), a DOCX (python-docx), a DOCX zip bomb, an encrypted PDF, an image-only PDF."""

from __future__ import annotations

import io
import zipfile

from localservers.openai_audio import described_png, speech_wav

__all__ = ["described_png", "docx_bomb", "docx_bytes", "pdf_bytes", "speech_wav"]


def pdf_bytes(text: str, *, password: str = "", pages: int = 1) -> bytes:
    """A PDF whose pages show ``text`` (an empty text: pages with no text layer, like a scan)."""
    from pypdf import PdfWriter
    from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

    writer = PdfWriter()
    for _ in range(pages):
        page = writer.add_blank_page(width=595, height=842)
        if text:
            font = DictionaryObject(
                {
                    NameObject("/Type"): NameObject("/Font"),
                    NameObject("/Subtype"): NameObject("/Type1"),
                    NameObject("/BaseFont"): NameObject("/Helvetica"),
                }
            )
            page[NameObject("/Resources")] = DictionaryObject(
                {NameObject("/Font"): DictionaryObject({NameObject("/F1"): writer._add_object(font)})}
            )
            safe = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
            lines = " T* ".join(f"({line}) Tj" for line in safe.splitlines() or [""])
            stream = DecodedStreamObject()
            stream.set_data(f"BT /F1 12 Tf 14 TL 50 800 Td {lines} ET".encode("latin-1", "replace"))
            page[NameObject("/Contents")] = writer._add_object(stream)
    if password:
        writer.encrypt(password)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def docx_bytes(paragraphs: list[str]) -> bytes:
    """A DOCX with these paragraphs (python-docx)."""
    import docx

    document = docx.Document()
    for paragraph in paragraphs:
        document.add_paragraph(paragraph)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def docx_bomb(unpacked_mb: int = 200) -> bytes:
    """A DOCX-shaped zip whose document part unpacks to ``unpacked_mb`` MB of zeros (a zip bomb)."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        with archive.open("word/document.xml", "w") as part:
            chunk = b"\0" * (1024 * 1024)
            for _ in range(unpacked_mb):
                part.write(chunk)
    return out.getvalue()
