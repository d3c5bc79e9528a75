"""The spec's forward pass written once against an arithmetic context (``run_generic``) and its
high-precision runs: the mpmath reference and the arb enclosure (tier ``arb``). The MidRad
pass (``engine="numpy"``) and the sub-cube's affine pass run it too.
"""
