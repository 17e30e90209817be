"""GitHub events turned into work: signature checks, the fields we read from payloads, which
event means which work, and PR commands. Plain Python; the web server and the enqueueing live
in ``flows``."""
