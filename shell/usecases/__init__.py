"""What a command does, end to end: summarize (catch-up), query, watch, the edit session, fork, and the
background tasks they run. They use storage and providers; the CLI calls them."""
