"""Any MCP server's search tool as a source."""
