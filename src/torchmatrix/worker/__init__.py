"""The host side of the worker: the runner that feeds a cell's Python its pairs, repeated runs merged into one record,
and what a pair printed as it is compared.
"""
