"""What the benches share."""

from pathlib import Path

README = Path(__file__).resolve().parent / "README.md"


def print_and_append(text: str, write: bool) -> None:
    """A bench's tables printed, and appended to bench/README.md with --write."""
    print(text)
    if write:
        with README.open("a") as readme:
            readme.write(text)
