"""The only code that touches the network: the provider client and its deadlines, the page fetcher
and its address guard, caches, provider state (SQLite or Redis), MCP connections."""
