"""recon.render."""
