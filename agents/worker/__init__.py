"""The worker: open the envelope, verify the identity, run the session loop, report an outcome.

``run`` drives one worker end to end over the narrow ``deps.WorkerDeps``; ``loop`` is the
session itself over three ports (``ports``); ``budget``, ``prompt`` and ``record`` hold the
rest. Import from the modules: this package stays empty so that importing the dependencies'
shape (``deps``) does not load the SDKs ``run`` needs.
"""
