"""The knowledge base: files indexed on tantivy (or PostgreSQL) and searched."""
