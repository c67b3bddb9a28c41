"""The loops that drive a question through the other rooms: ``ask`` (seed 003: route, plan, gather,
merge, answer), ``retrieve`` (seed 004: the iterative retrieval over code and documents) and
``gather`` (every source at once, each under its own deadline). The public ``sourcewise.ask`` and
``sourcewise.retrieve`` are functions (``sources.api``); these are their modules."""
