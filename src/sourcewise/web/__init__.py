"""The web: URL keys, source tiers and rating, the provider chain and its providers, ranking and
citations (seeds 000-002)."""
