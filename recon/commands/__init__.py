"""The ``recon`` command line, above every other package (DESIGN §8): one module per group
of commands, each with a ``register`` that adds its commands to :class:`Commands`, and
handlers of one type, :data:`~recon.commands.base.Handler`. Only :mod:`recon.cli` imports it.
"""
