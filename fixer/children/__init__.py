"""Scripts that run inside a foreign interpreter (the target's Python), by path, stdlib only.

In: argv from the tool. Out: JSON (or `@@fixer-verify@@` records) on stdout. They never import
the `fixer` package; the rules they share with it live in `childrules.py`, imported by path.
"""
