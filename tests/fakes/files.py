"""Small real files for tests: a PNG, a PDF with a line of text, made here."""

import struct
import zlib


def png(width: int = 2, height: int = 2) -> bytes:
    """A valid RGB PNG of one colour."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    rows = b"".join(b"\x00" + b"\x33\x66\x99" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def pdf(text: str = "Quarterly budget: 42 francs") -> bytes:
    """A one-page PDF whose page shows `text` (ASCII), with a correct xref table."""
    stream = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode()
    return _pdf(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream", pages=1)


def pdf_bomb(pages: int = 10, inflated_bytes: int = 2_000_000) -> bytes:
    """The attacker's PDF of a few KB: `pages` pages sharing one compressed
    content stream that inflates to `inflated_bytes` of text operators, so a
    text extractor parses it once per page (a minute of CPU, unbounded)."""
    line = b"BT /F1 12 Tf 72 720 Td (budget) Tj ET\n"
    stream = zlib.compress(line * (inflated_bytes // len(line)), 9)
    return _pdf(b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream",
                pages=pages)


def _pdf(content: bytes, *, pages: int) -> bytes:
    """A PDF of `pages` pages (objects 6…) that all show the content stream (object 4)."""
    kids = b" ".join(b"%d 0 R" % (6 + page) for page in range(pages))
    page = (b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
            b"/Resources << /Font << /F1 5 0 R >> >> >>")
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [" + kids + b"] /Count %d >>" % pages,
        b"<< >>",  # unused (object numbers kept stable)
        content,
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        *([page] * pages),
    ]
    out = b"%PDF-1.4\n"
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return out
