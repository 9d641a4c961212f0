"""Reports: the stored results of every machine, merged and rendered for people and for other tools.

:mod:`.model` merges results into tables; the renderers (:mod:`.markdown`,
:mod:`.rst`, :mod:`.page`, :mod:`.export`, :mod:`.chart`, :mod:`.diff`) are pure
functions of that model; :mod:`.publish` writes their output files.
"""
