"""Qt-free data model and pure analysis functions. Imports only the stdlib, numpy and pandas."""
