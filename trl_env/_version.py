"""The package version, in a module of its own so that any module can read it without importing
the top-level package (which imports almost everything)."""

__all__: list[str] = []  # read as trl_env.__version__

__version__ = "0.2.0"
