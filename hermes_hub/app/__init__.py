"""The composed hub and its front ends: the composition root (``hub``), the status page (``web``), the
transports it is mounted on (``serving``) and the command line (``cli``)."""
