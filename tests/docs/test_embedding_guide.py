"""docs/embedding.md, "Add the assistant to your product", followed step by
step: every code block names the file it comes from and is still in it, every
file the guide names exists, the setting names a toolset with the page context
it describes, and the pages it builds render with the panel."""

import re

import pytest
from django.conf import settings
from django.test import Client
from django.utils.module_loading import import_string

from assistant_engine.tools import ContextTitle, Toolset
from tests.docs.guides import ROOT, code_blocks, lines_missing_from, named_files
from workspace.models import Note

GUIDE = (ROOT / "docs" / "embedding.md").read_text()
BLOCKS = code_blocks(GUIDE)
NAMED_FILES = named_files(GUIDE)


def test_the_guide_has_its_steps():
    assert [title for title in re.findall(r"^## (\d+)\. ", GUIDE, re.M)] == ["1", "2", "3", "4", "5", "6"]
    assert len(BLOCKS) >= 10 and len(NAMED_FILES) >= 5


@pytest.mark.parametrize("language, path, code", BLOCKS, ids=[f"{p}:{i}" for i, (_, p, _) in enumerate(BLOCKS)])
def test_each_code_block_is_still_in_the_file_it_names(language, path, code):
    missing = lines_missing_from(path, code)
    assert missing == [], f"{path} no longer has these lines of the guide: {missing}"


@pytest.mark.parametrize("path", NAMED_FILES)
def test_each_file_the_guide_names_exists(path):
    assert (ROOT / path).is_file(), path


def test_the_setting_names_the_toolset_with_its_page_context(db, owner):
    toolsets = [import_string(path) for path in settings.ASSISTANT_TOOLSETS]
    workspace = next(toolset for toolset in toolsets if toolset.name == "workspace")
    assert isinstance(workspace, Toolset) and {"delete_note", "send_email"} <= {t.name for t in workspace.tools}
    note = Note.objects.create(organization=owner.organization, owner=owner.user, title="Plan")
    assert workspace.contexts["note"](owner.member, str(note.id)) == ContextTitle("Plan", untrusted=False)


def test_the_pages_it_builds_render_with_the_panel(db, owner):
    note = Note.objects.create(organization=owner.organization, owner=owner.user, title="Plan")
    client = Client()
    client.force_login(owner.user)
    for url in ("/notes/", f"/notes/{note.id}/"):
        html = client.get(url).content.decode()
        assert 'aria-label="Assistant"' in html and "<assistant-chat" in html
        assert 'name="csrf-token"' in html
        assert "/static/assistant/app.js" in html and "/static/assistant/panel.css" in html
    assert f'data-context-kind="note" data-context-id="{note.id}"' in client.get(f"/notes/{note.id}/").content.decode()
