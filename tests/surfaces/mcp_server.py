"""The real MCP server for tests: the project's ASGI application (config/asgi.py:
Django with /mcp mounted) under uvicorn in a thread, on a free port, and the
official MCP client against it."""

import asyncio
import socket
import threading
from contextlib import asynccontextmanager

import httpx2
import uvicorn
from asgiref.sync import sync_to_async
from django.db import connections
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client


class RunningServer:
    def __init__(self):
        self.socket = socket.socket()
        self.socket.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.socket.getsockname()[1]}"
        config = uvicorn.Config("config.asgi:application", lifespan="on", log_level="warning")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.socket]}, daemon=True)

    def __enter__(self):
        self.thread.start()
        while not self.server.started:
            if not self.thread.is_alive():
                raise RuntimeError("the server did not start")
            self.thread.join(0.02)
        return self

    def __exit__(self, *exc):
        self.server.should_exit = True
        self.thread.join(10)
        self.socket.close()
        # The server's database work ran in asgiref's one sync thread, where
        # connections live up to CONN_MAX_AGE: close them before the test
        # database is dropped.
        asyncio.run(sync_to_async(connections.close_all)())


@asynccontextmanager
async def mcp_session(url: str, token: str | None):
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
        async with streamable_http_client(f"{url}/mcp", http_client=http) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                yield session


def run(coroutine):
    return asyncio.run(coroutine)
