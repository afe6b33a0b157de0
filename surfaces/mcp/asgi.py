"""Mounting the MCP server beside Django in one ASGI application.

Django's ASGI handler does not handle the `lifespan` protocol, which the
MCP session manager needs (it starts its task group there): lifespan and
/mcp go to the MCP app, everything else to Django.
"""

from surfaces.mcp.server import MCP_PATH, mcp_app


def with_mcp(django_app):
    # The SDK's session manager runs once per instance: each server run (its
    # lifespan) gets a new MCP app, so one `application` serves run after run
    # (a reloading server, the tests).
    current = {}

    async def application(scope, receive, send):
        if scope["type"] == "lifespan":
            current["mcp"] = mcp_app()
            await current["mcp"](scope, receive, send)
        elif scope["type"] == "http" and scope["path"] == MCP_PATH:
            if "mcp" not in current:
                await _unavailable(send)  # served without the lifespan protocol
                return
            await current["mcp"](scope, receive, send)
        else:
            await django_app(scope, receive, send)

    return application


async def _unavailable(send) -> None:
    body = b'{"code": "mcp_unavailable", "detail": "The MCP server needs an ASGI server with lifespan on."}'
    await send({"type": "http.response.start", "status": 503,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})
