"""Answering: cross-source merge, relevance and authority, ambiguity, the extractive and the
model writers."""
