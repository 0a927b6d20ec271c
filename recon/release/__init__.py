"""recon.release."""
