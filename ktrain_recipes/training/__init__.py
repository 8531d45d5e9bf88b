"""Fine-tuning with ktrain: the run's skeleton (``recipe``), length-bucketed batches (``batching``), seeds, timing
and the fit with its checkpoint (``train``, ``checkpoint``), the run's record (``record``), the precision it trains
in (``precision``) and tf.distribute (``distribute``). Distillation and ETHICS are the tools' (ktrain_recipes_tools)."""
