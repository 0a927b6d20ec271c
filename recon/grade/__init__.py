"""recon.grade."""
