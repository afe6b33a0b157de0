"""The browser's door, for web/'s pages: it lives in organizations/pages.py,
so the host product's pages (workspace/) use the same one."""

from assistant_engine.organizations.pages import member_for_session, member_required

__all__ = ["member_for_session", "member_required"]
