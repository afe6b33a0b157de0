"""Addresses the engine answers at that more than one floor names: the MCP
server (surfaces/mcp) serves it, the tokens page (web) tells people where it is."""

# Beside the engine's pages: {the prefix the product included the engine at}/mcp.
MCP_PATH = "/mcp"
