"""The bottom layer for finding probe points: the run modes and the probe
sets they attach (modes.py), what a resolver looks for and answers in
(points.py), and the ELF and USDT readers (elf.py, usdt.py).  Imports
nothing of walscope's: the engines' resolvers (engines/<name>/resolve.py)
and the collectors build on it."""
