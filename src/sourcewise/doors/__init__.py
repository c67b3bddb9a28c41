"""The doors: the CLI, the MCP server, the HTTP API and web page, their guards and renderers."""
