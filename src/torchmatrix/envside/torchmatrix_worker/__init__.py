"""torchmatrix's worker, in a cell's environment: Python 3.6 and newer, the standard library and torch only.

It never imports torchmatrix: ``envside/worker.py`` runs it (see its docstring for the protocol), and the
host reads none of it but the rules a script's output is compared by (``records.output_rules``).
"""
