"""The commands of ``ktrain-recipes``, a module each (twine's shape): each declares its flags
(``add_arguments``), says whether it needs TensorFlow (``uses_tensorflow``) and calls one library function
(``run``). ``cli`` assembles them."""
