"""The package version, in the ground floor so every layer can name it without importing the
top-level package (which imports every layer)."""

__version__ = "0.1.0"
