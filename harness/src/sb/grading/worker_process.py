"""The solution's worker: imports the solution and answers the judge. Standalone.

Usage: python -s -B -P worker_process.py WIRE_DIR SOLUTION_DIR WIRE_FD [PREIMPORT,...]

It holds nothing but the solution: no hidden test, no oracle, no expected value ever
reaches this process. Whatever the solution does here (patch anything, forge anything)
can only change the values it returns; the judge decides the verdict in another process.
"""

import importlib
import os
import sys


def preimport(names):
    """The declared dependencies, imported while the judge starts pytest (overlapping the two)."""
    for name in names:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - the solution's own import will raise the real error
            pass


def make_importer(solution_dir):
    solution_names = set()

    def importer(name):
        if name is None:  # reload: a fresh copy of every solution module on the next import
            for loaded in list(sys.modules):
                module = sys.modules.get(loaded)
                path = getattr(module, "__file__", None) or ""
                if path.startswith(solution_dir + os.sep):
                    del sys.modules[loaded]
            importlib.invalidate_caches()
            return None
        solution_names.add(name)
        return importlib.import_module(name)
    return importer


def main(argv):
    wire_dir, solution_dir, fd = argv[1], argv[2], int(argv[3])
    wanted = [n for n in (argv[4] if len(argv) > 4 else "").split(",") if n]
    sys.path.insert(0, wire_dir)
    import _wire  # type: ignore[import-not-found]  # sb/grading/wire's copy in wire_dir, on sys.path above
    sys.path.remove(wire_dir)
    for name in [n for n in sys.modules if n == "_wire" or n.startswith("_wire.")]:
        del sys.modules[name]  # the solution's modules never see the wire's modules by name
    preimport(wanted)
    os.chdir(solution_dir)
    sys.path.insert(0, solution_dir)
    peer = _wire.Peer(fd, fd, serves_imports=True)
    peer.import_hook = make_importer(os.path.realpath(solution_dir))
    peer.start_reader().join()
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv)
