"""Measurement code shared by several statements' checks (sampling models and bit flips, the
adversarial search, certified K_0 and recognition, tail fits); the statements use it from
``verify/statements/``."""
