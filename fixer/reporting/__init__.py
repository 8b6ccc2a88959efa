"""Reports: the machine's GPU stack as one value to paste into a bug report (`report`), and
everything the tool read, raw (`debug`).
"""
