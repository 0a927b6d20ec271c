"""recon.store."""
