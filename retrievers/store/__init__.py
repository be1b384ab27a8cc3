"""The store, the fourth stage: an index directory, written safely, and its searchable arrays.

Modules: :mod:`.durable` (atomic writes, guarded reads), :mod:`.files` (vector files and per-generation
arrays), :mod:`.database` (the SQLite database: :class:`~retrievers.store.database.Store`),
:mod:`.settings` (an index's settings), :mod:`.names` (which document a file or a name is),
:mod:`.identities` (each document's issuer, type and period), :mod:`.corpus` (the in-memory search
arrays), :mod:`.vectors` (nearest-neighbour search), :mod:`.arrays` (the arrays of the committed
generation, loaded or rebuilt), :mod:`.shards` (processed documents in Parquet files),
:mod:`.commit` (documents into the index: the write half of :class:`retrievers.index.Index`).
"""
