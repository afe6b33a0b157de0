"""The MCP server (official `mcp` SDK, low-level server, streamable HTTP at /mcp).

The low-level server, not MCPServer's decorators: the tools are declared once
by the product (tools), with their own JSON Schemas, so they are
listed and called from those declarations rather than from Python signatures.
"""

import logging
import time

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import close_old_connections
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.settings import AuthSettings
from mcp.server.lowlevel import Server
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS, INVALID_REQUEST, CallToolRequestParams, ListToolsResult

from assistant_engine.foundation.paths import MCP_PATH
from assistant_engine.surfaces.mcp import tools
from assistant_engine.surfaces.mcp.auth import ApiTokenVerifier, member_of
from assistant_engine.surfaces.mcp.throttle import seconds_to_wait
from assistant_engine.tools.framework import UnknownTool

logger = logging.getLogger("assistant_engine.surfaces.mcp")

# A server-defined JSON-RPC error (the -32000..-32099 range): JSON-RPC has no 429.
THROTTLED = -32029


def _like_a_request(fn):
    """Run `fn` as Django runs a request's work: database connections past
    their age (CONN_MAX_AGE) or broken are closed before and after, as the
    request_started/finished signals would, which nothing sends for MCP."""
    def wrapped(*args, **kwargs):
        close_old_connections()
        try:
            return fn(*args, **kwargs)
        finally:
            close_old_connections()
    return sync_to_async(wrapped)


async def list_tools(ctx, params) -> ListToolsResult:
    return ListToolsResult(tools=await sync_to_async(tools.mcp_tools)())


async def call_tool(ctx, params: CallToolRequestParams):
    access_token = get_access_token()
    if access_token is None:  # the route requires a token: only a misconfiguration gets here
        raise MCPError(code=INVALID_REQUEST, message="Authentication required.")
    member = member_of(access_token)
    retry_after = await sync_to_async(seconds_to_wait)(member)
    if retry_after is not None:
        raise MCPError(code=THROTTLED, message=f"Too many tool calls: retry in {retry_after} s.",
                       data={"code": "throttled", "retryAfter": retry_after})
    site_url = str(ctx.request.base_url) if ctx.request is not None else ""
    started = time.monotonic()
    try:
        result = await _like_a_request(tools.call_tool)(
            member, params.name, params.arguments or {}, site_url=site_url)
    except UnknownTool as error:
        raise MCPError(code=INVALID_PARAMS, message=str(error)) from None
    # Ids, kinds and durations only: never the input or the result.
    logger.info("mcp_tool_called", extra={
        "tool": params.name[:64], "user_id": member.user_id, "organization_id": member.organization_id,
        "is_error": result.is_error, "duration_ms": round((time.monotonic() - started) * 1000),
    })
    return result


def build_server() -> Server:
    return Server("assistant", title="Assistant engine", version="1",
                  instructions="The product's tools, acting with your rights. Tools that delete or send "
                               "create a card that you confirm in the product.",
                  on_list_tools=list_tools, on_call_tool=call_tool)


def transport_security() -> TransportSecuritySettings:
    """DNS-rebinding protection for the deployment's own hosts (ALLOWED_HOSTS)."""
    hosts = list(settings.ALLOWED_HOSTS)
    if "*" in hosts:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    allowed = [pattern for host in hosts for pattern in (host.lstrip("."), f"{host.lstrip('.')}:*")]
    return TransportSecuritySettings(
        allowed_hosts=allowed,
        allowed_origins=[f"{scheme}://{host}" for scheme in ("http", "https") for host in allowed],
    )


def mcp_app(path: str = MCP_PATH):
    """The Starlette app serving /mcp; it needs the ASGI lifespan (see surfaces/mcp/asgi.py).

    Stateless: each request stands alone (no `Mcp-Session-Id`, nothing kept in
    the process), so any web process serves any client with no sticky routing.
    What a session would remember — the trifecta guard's taint, the calls —
    is in the database (record.py). The SDK has no shared session store (its
    event store only replays a stream's events), and the tools need no
    server-initiated messages, which are what a session would carry."""
    return build_server().streamable_http_app(
        streamable_http_path=path,
        stateless_http=True,
        transport_security=transport_security(),
        # The SDK requires an issuer; with our own token verifier and no OAuth
        # routes (resource_server_url=None) it is never shown or fetched.
        auth=AuthSettings(issuer_url="http://localhost", resource_server_url=None, required_scopes=[]),
        token_verifier=ApiTokenVerifier(),
    )
