"""The run folder's format, the bottom layer of everything that reads or
writes one: its files and where each comes from (files.py), and the
binary records' layouts, read from the BPF object's BTF (records.py).
Imports only the engine registry's declarations (engines/)."""
