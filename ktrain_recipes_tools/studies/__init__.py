"""Measurements and benchmarks: bench, compare, ETHICS, parameter counts, serving and scale benchmarks."""
