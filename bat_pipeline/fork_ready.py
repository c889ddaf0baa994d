"""Imported last by the multiprocess executor's fork server (executors.FORKSERVER_PRELOAD),
once it has imported Dagster and the pipeline: everything allocated so far leaves the
garbage collector's care (gc.freeze), as partition_runs.warm_up does before the partitions
fork. A step's process forked from the server then shares those pages with it instead of
copying each one a full collection would walk.

Importing this module is its only effect, so nothing else imports it: in another process it
would just keep the objects alive at that moment out of every later collection.
"""

import gc

gc.freeze()
