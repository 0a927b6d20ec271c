"""Public faces: no module reaches past another package's face into its ``_private``
modules (issue 26). Fast: the sources are parsed, nothing is imported.
"""

from __future__ import annotations

from tests.imports import imports


def owner(module: str) -> str | None:
    """The sub-package of ``recon`` whose private module this is (``recon`` for the root's
    own, such as ``recon._lazy``), or None for a public module."""
    parts = module.split(".")
    private = [i for i, p in enumerate(parts) if p.startswith("_") and not p.startswith("__")]
    return ".".join(parts[: min(private[0], 2)]) if private else None


def test_no_module_imports_another_package_s_private_module() -> None:
    """``recon.grade._ssim`` is the grader's own; the site asks ``recon.grade`` for it."""
    wrong = []
    for edge in imports():
        home = owner(edge.target)
        if edge.named and home is not None and not (edge.importer + ".").startswith(home + "."):
            wrong.append(str(edge))
    assert wrong == []
