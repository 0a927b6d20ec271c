"""One module per cell kind (DESIGN §4): what each kind reads, computes and stores.

A kind module defines ``<kind>(rt, cell, inputs) -> Produced`` for each kind it
implements (``render`` implements ``oracle`` and ``capture``), and, when the cell reads
files from the project rather than from upstream cells, ``<kind>_extra(rt, cell)``
returning those extra input digests. Its import closure is the kind's code
(:mod:`recon.pipeline.codegraph`), so this package imports nothing: loading one kind
must not pull in the others.
"""
