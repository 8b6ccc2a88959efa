"""What every stage shares and no stage owns: child processes (`proc`), the tool's paths and
state (`paths`), version strings (`versions`), the package-index client (`index`), plugins
(`plugins`), TOML writing (`toml_write`) and version shims (`compat`).
"""
