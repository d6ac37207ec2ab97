"""Where the committed fixtures and bundled samples live (one definition for every test)."""
import os

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO = os.path.dirname(TESTS)
DATA = os.path.join(TESTS, "data")
SAMPLES = os.path.join(REPO, "resources", "samples")
