"""Experiments reproducing the papers' empirical claims (run by checks and by hand)."""
