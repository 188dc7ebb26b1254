"""The ``turnmark`` command line (typer): each command parses, calls one use case, prints.

The top of the shell: nothing else imports it.
"""
