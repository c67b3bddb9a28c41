"""Chat and mail exports as sources (Slack, mbox, Maildir)."""
