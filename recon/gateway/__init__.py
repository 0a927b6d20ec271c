"""recon.gateway: the model gateway beside every attempt."""
