"""Mounting the MCP server beside Django in one ASGI application.

Django's ASGI handler does not handle the `lifespan` protocol, which the
MCP session manager needs (it starts its task group there): lifespan and
/mcp go to the MCP app, everything else to Django. Django's middleware does
not run for /mcp, so its security headers are added here (`security_headers`).
"""

from django.conf import settings

from assistant_engine.foundation.paths import MCP_PATH
from assistant_engine.surfaces.mcp.server import mcp_app

# /mcp answers JSON and event streams only: nothing in them may load, run or be framed.
MCP_CSP = "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"


def with_mcp(django_app, prefix: str = ""):
    """`prefix` is where the product included the engine's urls ("/helper"): MCP is at {prefix}/mcp."""
    path = prefix.rstrip("/") + MCP_PATH
    # The SDK's session manager runs once per instance: each server run (its
    # lifespan) gets a new MCP app, so one `application` serves run after run
    # (a reloading server, the tests).
    current = {}

    async def application(scope, receive, send):
        if scope["type"] == "lifespan":
            current["mcp"] = mcp_app(path)
            await current["mcp"](scope, receive, send)
        elif scope["type"] == "http" and scope["path"] == path:
            send = _with_headers(send, security_headers(scope))
            # Django's SSL redirect does not run for /mcp: a bearer token sent in
            # the clear is refused, not redirected (the client would resend it).
            if settings.SECURE_SSL_REDIRECT and not _is_secure(scope):
                await _refuse(send, 403, b"https_required", b"MCP is served over HTTPS only.")
                return
            if "mcp" not in current:
                await _unavailable(send)  # served without the lifespan protocol
                return
            await current["mcp"](scope, receive, send)
        else:
            await django_app(scope, receive, send)

    return application


def security_headers(scope) -> list[tuple[bytes, bytes]]:
    """What Django's SecurityMiddleware, XFrameOptionsMiddleware and CSP
    middleware send, from the same settings, for the MCP app's answers; and
    `no-store`: they carry the person's data."""
    headers = [(b"cache-control", b"no-store"), (b"content-security-policy", MCP_CSP.encode()),
               (b"x-frame-options", settings.X_FRAME_OPTIONS.encode())]
    if settings.SECURE_CONTENT_TYPE_NOSNIFF:
        headers.append((b"x-content-type-options", b"nosniff"))
    if settings.SECURE_REFERRER_POLICY:
        policy = settings.SECURE_REFERRER_POLICY
        policy = policy if isinstance(policy, str) else ",".join(policy)
        headers.append((b"referrer-policy", policy.encode()))
    if settings.SECURE_CROSS_ORIGIN_OPENER_POLICY:
        headers.append((b"cross-origin-opener-policy", settings.SECURE_CROSS_ORIGIN_OPENER_POLICY.encode()))
    if settings.SECURE_HSTS_SECONDS and _is_secure(scope):
        hsts = f"max-age={settings.SECURE_HSTS_SECONDS}"
        hsts += "; includeSubDomains" if settings.SECURE_HSTS_INCLUDE_SUBDOMAINS else ""
        hsts += "; preload" if settings.SECURE_HSTS_PRELOAD else ""
        headers.append((b"strict-transport-security", hsts.encode()))
    return headers


def _is_secure(scope) -> bool:
    """As Django's request.is_secure(): the scheme, or the proxy's header when trusted."""
    if settings.SECURE_PROXY_SSL_HEADER:
        name, value = settings.SECURE_PROXY_SSL_HEADER
        header = name.removeprefix("HTTP_").replace("_", "-").lower().encode()
        sent = dict(scope.get("headers") or []).get(header)
        if sent is not None:
            return sent.decode("latin-1").split(",", 1)[0].strip() == value
    return scope.get("scheme") == "https"


def _with_headers(send, extra: list[tuple[bytes, bytes]]):
    replaced = {name for name, _ in extra}

    async def sending(message):
        if message["type"] == "http.response.start":
            kept = [(name, value) for name, value in message.get("headers", []) if name.lower() not in replaced]
            message = {**message, "headers": kept + extra}
        await send(message)
    return sending


async def _unavailable(send) -> None:
    await _refuse(send, 503, b"mcp_unavailable", b"The MCP server needs an ASGI server with lifespan on.")


async def _refuse(send, status: int, code: bytes, detail: bytes) -> None:
    body = b'{"code": "' + code + b'", "detail": "' + detail + b'"}'
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})
