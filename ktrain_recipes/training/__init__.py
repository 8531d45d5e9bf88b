"""Fine-tuning with ktrain: the run's skeleton, bucketed batches, checkpoints, distillation, tf.distribute."""
