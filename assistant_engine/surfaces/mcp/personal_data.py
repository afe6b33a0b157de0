"""The MCP surface's part of a person's export and erasure (its calls are
conversations: exported and erased with them)."""

from assistant_engine.organizations.members import Member
from assistant_engine.organizations.personal_data import delete_in_order, iso
from assistant_engine.surfaces.mcp.models import McpReads


def export_reads(member: Member) -> dict | None:
    reads = McpReads.objects.filter(organization_id=member.organization_id, user_id=member.user_id).first()
    if reads is None:
        return None
    return {"privateReadAt": iso(reads.private_at), "untrustedReadAt": iso(reads.untrusted_at)}


def erase_reads(user, batch_size: int) -> int:
    return delete_in_order((McpReads.objects.filter(user=user),), batch_size)


def register() -> None:
    from assistant_engine.organizations.personal_data import register_eraser, register_exporter

    register_exporter("mcp", export_reads)
    register_eraser("mcp", erase_reads)
