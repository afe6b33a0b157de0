"""What the guides' tests share: a guide's code blocks, each naming the file it
was copied from, and the lines of a block its file no longer has."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def code_blocks(guide: str) -> list[tuple[str, str, str]]:
    """(language, path, code) of each block written ```python path=some/file.py."""
    return re.findall(r"^```(\w+) path=(\S+)\n(.*?)^```$", guide, re.M | re.S)


def named_files(guide: str) -> list[str]:
    return sorted(set(re.findall(r"`((?:[\w.-]+/)+[\w.-]+\.(?:py|js|css|html|toml|md))`", guide)))


def lines_missing_from(path: str, code: str) -> list[str]:
    source = ROOT / path
    assert source.is_file(), f"the guide names {path}, which does not exist"
    lines = {line.strip() for line in source.read_text().splitlines()}
    return [line for line in code.splitlines() if line.strip() and line.strip() not in lines]
