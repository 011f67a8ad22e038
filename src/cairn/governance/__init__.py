"""Governed memory (DESIGN section 5, issue 35): agents write draft observations into a scope's
inbox; a dream (a model run, or an agent through MCP) loads the scope with a ``rev`` per file and
applies decisions that promote, merge or drop them into curated sections and entities, each
decision checked against the rev it was based on, so a person's edit made meanwhile is never lost.

Modules: ``files`` (revs, safe reads, create-only and compare-and-swap writes), ``inbox``
(observations), ``sections`` (sections and the projection), ``decisions`` (parsing and validating
decisions, no IO), ``dream`` (load, plan, apply, log.md, index.md), ``dream_config`` (dream.json),
``dream_runner`` (the OpenAI-compatible chat loop) and ``schedule`` (the daily tick of ``serve``).
"""
