"""recon.grade: pure metrics, one module per dimension, and their composition."""

from recon.grade.compose import Composed, compose, mean

__all__ = ["Composed", "compose", "mean"]
