"""verify: formal-plus-numerical checks of the theory of transformers encoding Boolean functions.

Serves arXiv 2606.08768 (Kovér, Butoi, Svete, Hahn, Cotterell, ICML 2026) and arXiv 2402.09963
(Hahn & Rofin, ACL 2024). The statements checked here are reconstructions of the papers'
statements (see docs/), not verbatim quotes.
"""

from verify.errors import ValidationError

__version__ = "0.1.0"

__all__ = ["ValidationError", "__version__"]
