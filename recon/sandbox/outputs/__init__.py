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

from recon.sandbox.outputs.folder import check_tree, not_archived, output_folder, take_folder
from recon.sandbox.outputs.links import MAX_HOPS
from recon.sandbox.outputs.refusals import (
    MAX_REFUSALS,
    OutputCaps,
    OutputRefused,
    name_problem,
    refused,
    shown,
    too_deep,
    too_many,
)
from recon.sandbox.outputs.unpack import unpack_output

__all__ = [
    "MAX_HOPS",
    "MAX_REFUSALS",
    "OutputCaps",
    "OutputRefused",
    "check_tree",
    "name_problem",
    "not_archived",
    "output_folder",
    "refused",
    "shown",
    "take_folder",
    "too_deep",
    "too_many",
    "unpack_output",
]
