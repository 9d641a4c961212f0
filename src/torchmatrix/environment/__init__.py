"""A cell's environment on disk, what each release keeps there and in uv's cache, and the matrix's own project built
into a wheel.
"""
