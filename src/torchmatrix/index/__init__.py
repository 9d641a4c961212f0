"""What the package index lists: torch's releases and their wheels, and the find-links in effect."""
