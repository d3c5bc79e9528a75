"""The named axioms: cited external facts the obligations rely on (never checked here).

Each has an id (``axiom.<name>``), a statement and a reference. The docs link each derivation
step that uses one to its id, and the blueprint draws it as an axiom node.
"""

from __future__ import annotations

from verify.proofs.core import axiom

__all__: list[str] = []

axiom(
    "axiom.cauchy_schwarz",
    "Cauchy-Schwarz",
    "|<x, y>| <= ||x|| ||y|| in every inner-product space (R^D, l2(p) for a probability vector"
    " p, the sum over parameter groups).",
    "Horn & Johnson, Matrix Analysis (2nd ed.), Thm 5.1.4",
)
axiom(
    "axiom.triangle",
    "Triangle and Minkowski inequalities",
    "||x + y|| <= ||x|| + ||y||; for vectors of per-head changes, ||(sum_g c_hg d_g)_h||_2 <="
    " sum_g d_g ||(c_hg)_h||_2.",
    "Horn & Johnson, Matrix Analysis, Sec 5.1 (norm axioms); Hardy, Littlewood & Polya,"
    " Inequalities, Thm 25",
)
axiom(
    "axiom.submultiplicative",
    "Operator norm",
    "||A x||_2 <= ||A||_2 ||x||_2 and ||A||_2 <= ||A||_F (spectral and Frobenius norms).",
    "Horn & Johnson, Matrix Analysis, Sec 5.6",
)
axiom(
    "axiom.hoelder_gain",
    "Hoelder for elementwise products",
    "||gamma (.) w||_2 <= ||gamma||_inf ||w||_2.",
    "Hardy, Littlewood & Polya, Inequalities, Thm 13",
)
axiom(
    "axiom.projection_contraction",
    "Orthogonal projections contract",
    "||P w|| <= ||w|| for an orthogonal projection P (the centring projector; dropping"
    " coordinates).",
    "Horn & Johnson, Matrix Analysis, Sec 2.5",
)
axiom(
    "axiom.popoviciu",
    "Popoviciu's inequality on variances",
    "A random variable with values in [m, M] has variance at most (M - m)^2 / 4.",
    "T. Popoviciu, Mathematica (Cluj) 9 (1935) 129-145",
)
axiom(
    "axiom.mean_value",
    "Mean value theorem / fundamental theorem of calculus",
    "f(1) - f(0) = int_0^1 f'(t) dt along a segment, so ||f(1) - f(0)|| <= sup_t ||f'(t)||;"
    " a function with a derivative of constant sign on an interval is monotone there.",
    "Rudin, Principles of Mathematical Analysis, Thm 5.10 and 6.21",
)
axiom(
    "axiom.positionwise_embedding",
    "Positionwise embedding (the model's definition)",
    "y^0_j = E[x_j] + P[j] (or the concatenation): position j's embedding depends on bit j only.",
    "docs/model-spec.md (the model contract)",
)
axiom(
    "axiom.union_bound",
    "Union bound",
    "P[A_1 or ... or A_m] <= P[A_1] + ... + P[A_m].",
    "Any probability text, e.g. Durrett, Probability: Theory and Examples, Sec 1.1",
)
axiom(
    "axiom.markov",
    "Markov's inequality",
    "P[X >= a] <= E[X] / a for X >= 0 and a > 0.",
    "Durrett, Probability: Theory and Examples, Thm 1.6.4",
)
axiom(
    "axiom.total_probability",
    "Total probability over a partition",
    "P[A] = sum_i P[C_i] P[A | C_i] for a partition into cells C_i; a uniform law restricted"
    " to a cell is uniform on it.",
    "Durrett, Probability: Theory and Examples, Sec 4.1",
)
axiom(
    "axiom.fubini_density",
    "Density of a projection (Fubini)",
    "If b has density f on R^D, the projection Pb onto a hyperplane has density"
    " int_line f, the integral of f along the line through the point orthogonal to it.",
    "Folland, Real Analysis, Thm 2.37",
)
axiom(
    "axiom.ball_volume",
    "Volume of a ball and of an ellipsoid",
    "vol{u in R^k : |u| <= r} = V_k r^k with V_k = pi^{k/2} / Gamma(k/2 + 1);"
    " vol{u : u^T G u <= c} = V_k c^{k/2} / sqrt(det G) for G positive definite.",
    "Folland, Real Analysis, Prop 2.54 and Thm 2.44 (linear change of variables)",
)
axiom(
    "axiom.stochastic_dominance",
    "Dominated adapted sums",
    "If X_k >= 0 is adapted and P[X_k > s | F_{k-1}] <= P[Y > s] for every s, then"
    " sum_k X_k is stochastically dominated by a sum of independent copies of Y; a sum of K"
    " independent Exp(lambda) is Gamma(K, lambda).",
    "Shaked & Shanthikumar, Stochastic Orders, Thm 6.B.3; Durrett, Sec 2.1",
)
axiom(
    "axiom.borel_cantelli",
    "Borel-Cantelli",
    "If sum_N P[E_N] < inf then almost surely only finitely many E_N occur.",
    "Durrett, Probability: Theory and Examples, Thm 2.3.1",
)
axiom(
    "axiom.anderson",
    "Anderson's inequality (noncentral chi-square)",
    "For a centred Gaussian vector and a symmetric convex set C, P[X + v in C] <= P[X in C];"
    " a noncentral chi-square is stochastically larger than the central one.",
    "T. W. Anderson, Proc. AMS 6 (1955) 170-176",
)
axiom(
    "axiom.integral_monotone",
    "Monotonicity of the integral",
    "f <= g pointwise on [0, x] implies int_0^x f <= int_0^x g.",
    "Rudin, Principles of Mathematical Analysis, Thm 6.12",
)
axiom(
    "axiom.packing",
    "Maximal separated sets and packing",
    "A maximal r-separated subset of a set is an r-net of it; disjoint balls inside a ball have"
    " total volume at most the ball's.",
    "Vershynin, High-Dimensional Probability, Lemma 4.2.6 and Prop 4.2.12",
)
axiom(
    "axiom.probability_range",
    "Probabilities lie in [0, 1]; monotonicity",
    "0 <= P[A] <= 1 for every event A, and A subset of B implies P[A] <= P[B].",
    "Kolmogorov's axioms; Durrett, Probability: Theory and Examples, Sec 1.1",
)
axiom(
    "axiom.log_monotone",
    "The logarithm is increasing",
    "For a, b > 0: a < b iff log a < log b; log(a b) = log a + log b, log(a^p) = p log a.",
    "Rudin, Principles of Mathematical Analysis, Sec 8.6",
)
axiom(
    "axiom.function_count",
    "Counting maps",
    "There are |B|^|A| maps from a finite set A to a finite set B.",
    "Any combinatorics text, e.g. Stanley, Enumerative Combinatorics I, Sec 1.4",
)
