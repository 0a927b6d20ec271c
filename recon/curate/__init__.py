"""recon.curate."""
