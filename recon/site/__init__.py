"""recon.site."""
