"""Bisect: the search, what a record shows a question (criteria), the question read, the answer worded and kept."""
