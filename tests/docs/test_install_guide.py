"""docs/install.md, "Install the engine into your Django product": every code
block names the file of examples/shop it comes from and is still in it (the shop
itself is installed from the wheel and driven end to end by
tests/web/test_example_shop.py), and every file the guide names exists."""

import re

import pytest

from tests.docs.guides import ROOT, code_blocks, lines_missing_from, named_files

GUIDE = (ROOT / "docs" / "install.md").read_text()
BLOCKS = code_blocks(GUIDE)
NAMED_FILES = named_files(GUIDE)


def test_the_guide_has_its_steps_and_shows_the_example():
    assert re.findall(r"^## (\d+)\. ", GUIDE, re.M) == ["1", "2", "3", "4", "5", "6", "7", "8"]
    assert len(BLOCKS) >= 12 and all(path.startswith("examples/shop/") for _, path, _ in BLOCKS)


@pytest.mark.parametrize("language, path, code", BLOCKS, ids=[f"{p}:{i}" for i, (_, p, _) in enumerate(BLOCKS)])
def test_each_code_block_is_still_in_the_file_it_names(language, path, code):
    missing = lines_missing_from(path, code)
    assert missing == [], f"{path} no longer has these lines of the guide: {missing}"


@pytest.mark.parametrize("path", NAMED_FILES)
def test_each_file_the_guide_names_exists(path):
    assert (ROOT / path).is_file(), path


def test_the_shop_imports_nothing_of_the_engine_but_the_kit():
    """The example is written as another team would: only the public surface."""
    imports = [
        (str(path.relative_to(ROOT)), line.strip())
        for path in (ROOT / "examples" / "shop").rglob("*.py")
        for line in path.read_text().splitlines()
        if re.match(r"\s*(from|import) (assistant|assistant_engine|conversations|credits)\b", line)
    ]
    public = re.compile(r"from assistant import kit$|from assistant\.kit import ")
    assert imports and all(public.match(line) for _, line in imports), imports
