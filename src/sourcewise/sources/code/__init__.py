"""A code repository as a source, and reading a task against it."""
