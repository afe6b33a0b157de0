"""Mounting the MCP server beside Django in one ASGI application.

Django's ASGI handler does not handle the `lifespan` protocol, which the
MCP session manager needs (it starts its task group there): lifespan and
/mcp go to the MCP app, everything else to Django.
"""

from surfaces.mcp.server import MCP_PATH, mcp_app


def with_mcp(django_app):
    mcp = mcp_app()

    async def application(scope, receive, send):
        if scope["type"] == "lifespan" or (scope["type"] == "http" and scope["path"] == MCP_PATH):
            await mcp(scope, receive, send)
        else:
            await django_app(scope, receive, send)

    return application
