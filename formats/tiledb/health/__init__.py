"""Health and space: the fragments a reader at time T sees, of an array and of a group."""
