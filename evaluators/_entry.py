"""Run the evaluators' command line under an isolated interpreter: ``python3 -I -S -B <this file> ...``.

``-I`` ignores ``PYTHON*`` variables, the user site and the script's own
directory, and ``-S`` skips ``site``; so nothing the agent could have written
(a working directory, a ``sitecustomize``, a ``.pth`` file) is imported. This
file then puts the directory holding the ``evaluators`` package (a trusted,
read-only copy) at the end of ``sys.path``, after the standard library, so
nothing beside the package can shadow a standard module either.
"""

import os
import sys

if __name__ == "__main__":
    sys.path.append(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from evaluators.__main__ import main

    sys.exit(main(sys.argv[1:]))
