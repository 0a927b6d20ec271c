"""recon.pipeline."""
