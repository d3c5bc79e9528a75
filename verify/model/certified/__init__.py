"""Orchestration over the tiers: certified truth tables (each tier on what the previous leave
open), the rigorous float64 passes shared by several tables, check-model's passes over the cube
on an executor, check-model's one pass (the table and the diagnostics together), and the fused
label kernel of the float64 stage.
"""
