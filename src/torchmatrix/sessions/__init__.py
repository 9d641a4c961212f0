"""The bodies of the noxfile's sessions: each takes the loaded project and a nox session, and does its one job.

``probe`` runs a cell, ``installed`` the probes in a torch installed already,
``plan`` prints what the cells would run, ``report`` renders the stored
results, ``bisect`` and ``verify`` read them and run the cells they lack
through a child nox (``childnox``), whose probe sessions say how they ended
in a file (``handback``); ``common`` holds what the sessions that run probes
share.
"""
