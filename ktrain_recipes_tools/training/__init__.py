"""Distillation: a student cut from a pretrained model, taught by a saved teacher's logits on transfer data."""
