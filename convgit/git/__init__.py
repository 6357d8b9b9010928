"""The workspace track's machinery: git's command line, objects, the index file, the private
index, restores and side-by-side worktrees. It knows commits, trees and paths, never
conversations: nothing here imports the store, the conversation or the session."""
