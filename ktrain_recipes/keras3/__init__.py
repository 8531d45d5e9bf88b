"""Keras 3 pieces for the path after ktrain: what ktrain gave on top of Keras that Keras 3 lacks.

``OneCycle``, ktrain's one-cycle learning-rate schedule as a ``keras.optimizers.schedules.LearningRateSchedule``,
and ``LRFinder``, ktrain's learning-rate finder as a ``keras.callbacks.Callback`` (its plot: ``kr.plot_lr_find``).
They use Keras 3 (``import keras``), which works beside the tf_keras that ktrain needs: importing them never
changes which Keras ``tf.keras`` is.
"""
