"""Ranking, the fifth stage: from a query to the best chunks of a corpus.

Modules: :mod:`.question` (what a question names besides its terms), :mod:`.concepts` (its concepts
in the filer's words), :mod:`.named_documents` (the documents it names), :mod:`.query` (the work done
once per query), :mod:`.candidates` (the first-stage candidates as the features read them), the
features (:mod:`.chunk_features`, :mod:`.question_features`, :mod:`.page_features`, and the registry
:mod:`.features`), :mod:`.ranker` (the LightGBM ranker and the shipped models), :mod:`.search` (the
search modes: first stage, fusion, reranking) and :mod:`.training` (the ranker's training).
"""
