"""A PDF's text, read in a bounded child process (conversations/pdf_child.py).

Called by the worker's read_file task, never in a web request: a 7 KB PDF can
be made to cost a minute of CPU. The child caps its own CPU time and memory
(the kernel ends it past them) and the decompressed bytes and extracted
characters; this side bounds the wall clock. Whatever goes wrong is a refusal
the person sees on the file (`unreadable_pdf`, `too_many_pages`).
"""

import json
import logging
import subprocess
import sys
import time
from pathlib import Path

from django.conf import settings

logger = logging.getLogger("conversations.files")

CHILD = Path(__file__).with_name("pdf_child.py")
# What the child may answer, and what the person is told.
REFUSALS = {
    "unreadable_pdf": ("unreadable_pdf", "This PDF can't be read."),
    "encrypted_pdf": ("unreadable_pdf", "This PDF is encrypted: attach a copy without a password."),
    "too_many_pages": ("too_many_pages", "This PDF has too many pages."),
}


class PdfRefused(Exception):
    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason if reason in REFUSALS else "unreadable_pdf"


def child_limits() -> dict:
    return {"cpu_seconds": settings.FILE_PDF_CPU_SECONDS, "memory_bytes": settings.FILE_PDF_MEMORY_BYTES,
            "max_pages": settings.FILE_PDF_MAX_PAGES, "max_content_bytes": settings.FILE_PDF_MAX_CONTENT_BYTES,
            "max_chars": settings.FILE_PDF_MAX_CHARS}


def read_pdf(data: bytes) -> tuple[str, int]:
    """The PDF's text and number of pages. Raises PdfRefused."""
    started = time.monotonic()
    # -I: isolated (no PYTHONPATH, no user site, no current folder): the child imports pypdf only.
    command = [sys.executable, "-I", str(CHILD), json.dumps(child_limits())]
    try:
        # Our own script and settings; the untrusted PDF goes on stdin only.
        done = subprocess.run(command, input=data, capture_output=True,  # noqa: S603
                              timeout=settings.FILE_PDF_WALL_SECONDS, check=False)
    except subprocess.TimeoutExpired:
        done = None
    result = _result(done)
    logger.info("pdf_read", extra={"outcome": result.get("refused", "read"), "error_type": result.get("error_type"),
                                   "duration_ms": round((time.monotonic() - started) * 1000)})
    if "refused" in result:
        raise PdfRefused(result["refused"])
    return result["text"], result["pages"]


def _result(done: subprocess.CompletedProcess | None) -> dict:
    if done is None:
        return {"refused": "unreadable_pdf", "error_type": "wall_clock"}
    if done.returncode != 0:  # ended by the kernel at its CPU bound (SIGXCPU), or out of memory
        return {"refused": "unreadable_pdf", "error_type": f"exit_{done.returncode}"}
    try:
        result = json.loads(done.stdout)
    except ValueError:
        return {"refused": "unreadable_pdf", "error_type": "output"}
    return result if isinstance(result, dict) and ("refused" in result or "text" in result) else {
        "refused": "unreadable_pdf", "error_type": "output"}
