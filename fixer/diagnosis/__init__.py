"""Stage 2, diagnose: Environment + Recipes -> [Finding], each with its evidence and the fix it implies.

`findings.diagnose` is the entry; `nogpu` decides what "no GPU visible" means.
"""
