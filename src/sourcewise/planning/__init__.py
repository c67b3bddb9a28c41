"""Reading a question: route, classify, plan, dates, variants, broadening and refinement
(seeds 001, 003, 004)."""
