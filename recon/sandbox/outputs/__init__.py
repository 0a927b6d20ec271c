"""recon.sandbox.outputs: a build output as the harness takes it in, one rule on every
backend (DESIGN §5.1).

Both backends hand the output folder over as a tar archive, and one function,
``unpack_output``, judges it: the docker backend streams the folder out of the container
(GNU tar, after ``find`` checked the caps in the container); the native backend archives
its folder on the host with ``take_folder`` (``check_tree`` first checks the caps in place;
no link is followed; names travel as bytes). Whatever the Candidate left, the answer is a
clean folder of plain files and folders, or ``OutputRefused``; never another exception.

Normalised: a symbolic or hard link whose target lies inside the output becomes a copy of
what it names, a link to a folder a copy of that folder's tree. Links to links and links
through linked folders resolve as the kernel would resolve them. Copies count against the
caps. A file keeps only its executable bit (mode 0755 or 0644).

Refused (the attempt is ``ungradeable``; its reason names the first refused path, and its
record's ``refusals`` list every one, at most ``MAX_REFUSALS``; paths are shown escaped,
bytes that are not UTF-8 and control characters as ``\\xNN``):

- a name that is not valid UTF-8, or holds a control character (C0, DEL or C1: unsafe in
  URLs, logs and one-line reasons downstream);
- a FIFO, a character or block device, a socket, or any type but file, folder and link;
- a link that is absolute, leads outside the output, names nothing, or makes a cycle (more
  than ``MAX_HOPS`` links in one resolution, or a link to a folder that holds the link);
- a file over the per-file cap, or one that cannot be read;
- a member outside the output folder, below a file or link, or twice in the archive;
- the output folder itself a link or behind one, or not a folder;
- more than ``output_files`` files and folders, or a path more than ``output_depth`` levels
  below the output folder, copies included. These stop the unpack at once, so a flood
  costs at most one cap's worth of work.

On refusal nothing is kept: ``out`` is removed.

Modules: ``refusals`` (caps and what a refusal says), ``listing`` (an archive's members by
relative path), ``links`` (resolved, sized, copied), ``unpack`` (``unpack_output``),
``folder`` (the native side, and GNU tar's messages). Pure file logic: no engine.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from recon._lazy import exports

if TYPE_CHECKING:  # the same names, for type checkers: they do not run __getattr__
    from recon.sandbox.outputs.folder import check_tree as check_tree
    from recon.sandbox.outputs.folder import not_archived as not_archived
    from recon.sandbox.outputs.folder import output_folder as output_folder
    from recon.sandbox.outputs.folder import take_folder as take_folder
    from recon.sandbox.outputs.links import MAX_HOPS as MAX_HOPS
    from recon.sandbox.outputs.refusals import MAX_REFUSALS as MAX_REFUSALS
    from recon.sandbox.outputs.refusals import OutputCaps as OutputCaps
    from recon.sandbox.outputs.refusals import OutputRefused as OutputRefused
    from recon.sandbox.outputs.refusals import name_problem as name_problem
    from recon.sandbox.outputs.refusals import refused as refused
    from recon.sandbox.outputs.refusals import shown as shown
    from recon.sandbox.outputs.refusals import too_deep as too_deep
    from recon.sandbox.outputs.refusals import too_many as too_many
    from recon.sandbox.outputs.unpack import unpack_output as unpack_output

_EXPORTS = {
    "check_tree": "recon.sandbox.outputs.folder",
    "not_archived": "recon.sandbox.outputs.folder",
    "output_folder": "recon.sandbox.outputs.folder",
    "take_folder": "recon.sandbox.outputs.folder",
    "MAX_HOPS": "recon.sandbox.outputs.links",
    "MAX_REFUSALS": "recon.sandbox.outputs.refusals",
    "OutputCaps": "recon.sandbox.outputs.refusals",
    "OutputRefused": "recon.sandbox.outputs.refusals",
    "name_problem": "recon.sandbox.outputs.refusals",
    "refused": "recon.sandbox.outputs.refusals",
    "shown": "recon.sandbox.outputs.refusals",
    "too_deep": "recon.sandbox.outputs.refusals",
    "too_many": "recon.sandbox.outputs.refusals",
    "unpack_output": "recon.sandbox.outputs.unpack",
}

__all__ = sorted(_EXPORTS)


__getattr__ = exports(__name__, _EXPORTS)
