"""turnmark as JP command plugins (``jp turns``, ``jp find``, ``jp turnmark …``): the protocol, a command run
for ``jp``, and the executables. The top of the shell: it runs the command line, and nothing imports it."""
