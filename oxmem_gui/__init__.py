"""oxmem: see and fix what an AI agent remembers."""

__version__ = "0.1.0"
