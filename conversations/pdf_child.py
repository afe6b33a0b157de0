"""The text of an untrusted PDF, read in a child process of its own.

Run as a script by conversations.pdf_reading (never imported by the engine):
it reads the PDF on stdin and writes one JSON object on stdout, `{"text",
"pages"}` or `{"refused": code}`. Before it touches the file it caps its own
CPU time and address space, so a PDF crafted to cost minutes of CPU or
gigabytes of memory is killed by the kernel; the parent bounds the wall clock.
No Django, no engine import: it starts in a moment and shares nothing.
"""

import json
import resource
import sys


class Refused(Exception):
    def __init__(self, code: str):
        super().__init__(code)
        self.code = code


def cap_resources(cpu_seconds: int, memory_bytes: int) -> None:
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 1))
    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))


def read(data: bytes, *, max_pages: int, max_content_bytes: int, max_chars: int) -> dict:
    import io

    from pypdf import PdfReader

    _bound_decompression(max_content_bytes)
    reader = PdfReader(io.BytesIO(data))
    if reader.is_encrypted:
        raise Refused("encrypted_pdf")
    pages = len(reader.pages)
    if pages > max_pages:
        raise Refused("too_many_pages")
    # Inflating is cheap, parsing is not: every page's content is measured before
    # any is parsed. A stream shared by many pages is parsed once per page: counted each time.
    content_bytes = 0
    for page in reader.pages:
        contents = page.get_contents()
        content_bytes += len(contents.get_data()) if contents is not None else 0
        if content_bytes > max_content_bytes:
            raise Refused("unreadable_pdf")
    texts, chars = [], 0
    for page in reader.pages:
        text = page.extract_text() or ""
        chars += len(text)
        if chars > max_chars:
            raise Refused("unreadable_pdf")
        texts.append(text)
    return {"text": "\n\n".join(texts).replace("\x00", ""), "pages": pages}


def _bound_decompression(max_bytes: int) -> None:
    """pypdf's own decompression bounds, down to what one upload may inflate to
    (its Configuration, pypdf 7.1; without it the bounds above still hold)."""
    try:
        from pypdf import overwrite_configuration
    except ImportError:
        return
    overwrite_configuration(zlib_maximum_output_length=max_bytes, lzw_maximum_output_length=max_bytes,
                            run_length_maximum_output_length=max_bytes, brotli_maximum_output_length=max_bytes,
                            array_based_stream_maximum_output_length=max_bytes)


def main() -> None:
    limits = json.loads(sys.argv[1])
    cap_resources(limits.pop("cpu_seconds"), limits.pop("memory_bytes"))
    data = sys.stdin.buffer.read()
    try:
        result = read(data, **limits)
    except Refused as refusal:
        result = {"refused": refusal.code}
    except Exception as error:  # pypdf raises many kinds on a malformed file: all mean "can't read it"
        result = {"refused": "unreadable_pdf", "error_type": type(error).__name__}
    sys.stdout.write(json.dumps(result))


if __name__ == "__main__":
    main()
