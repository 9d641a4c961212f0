"""Small tools every stage shares: files written atomically, stored JSON read without trust, the cache folder,
arguments, a child's output shown and kept, a child that outlives no end of its parent, text made safe to show, an
interrupt told from a failure.
"""
