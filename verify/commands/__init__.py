"""Command modules; each defines ``register(subparsers)``. See verify/cli.py."""
