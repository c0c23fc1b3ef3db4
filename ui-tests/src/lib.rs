//! Holds the trybuild suite in `tests/`; see tests/README.md.
