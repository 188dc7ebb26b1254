"""Files on disk: the safe-write path, JP's locks, the workspace, config files, choosing a conversation,
reading and saving conversations, undo copies, and the memory of failed summary answers."""
