"""The ``sourcewise`` command: one module per group of commands, ``main`` the entry point."""
