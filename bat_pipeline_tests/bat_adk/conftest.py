"""The agents/ folders are data (bat-adk agents started as processes), not test modules."""

collect_ignore_glob = ["agents/*"]
