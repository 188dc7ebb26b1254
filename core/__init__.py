"""turnmark.core: pure values and functions over JP conversation streams.

Nothing here touches files, clocks, randomness, the network, threads, the
environment or the terminal. Randomness (new event IDs) is passed in as a
small callable; time is passed in as timestamp strings.
"""
