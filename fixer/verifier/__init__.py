"""Stage 6, verify: Environment -> [CheckResult], by running children/verify.py in the target
interpreter (a conv forward and backward on the GPU against a CPU reference, and the cuDNN really mapped).
"""
