"""arrayscope's Qt application and command-line entry point (no format knowledge here)."""
