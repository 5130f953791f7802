import os
import sys

# tests import their small shared helpers (tests/exact.py) as top-level modules
sys.path.insert(0, os.path.dirname(__file__))
