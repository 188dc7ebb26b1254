"""turnmark.shell: files, locks, HTTP, background work and the CLI around the core."""
