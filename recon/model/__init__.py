"""recon.model."""
