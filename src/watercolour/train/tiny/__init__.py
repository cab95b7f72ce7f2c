"""The tiny painter's experiments: its longer runs (:mod:`.runs`), its policies probed with
fixed seeds (:mod:`.evaluate`) and its episodes published turn by turn
(:mod:`.episode_results`); their committed results are :data:`watercolour.results.TINY`.

The tiny painter itself (its sketches, tokenizer, revision examples and warm start) is
:mod:`watercolour.models.tiny`.
"""
