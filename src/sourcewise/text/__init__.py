"""Text: the one analyzer (English and Korean), extraction, chunking, passages, markup."""
