"""A CPU stand-in for torch.mps.compile_shader, for the dry check only (never for grading).

compile_shader(source, signatures) compiles the Metal source as C++ with g++ against a
small shim (include/metal_stdlib: address-space qualifiers dropped, `threadgroup` made a
function static, `half` made a reserved word, threadgroup_barrier a scheduling point) and
returns a library whose kernels are called like torch's:
`lib.name(*args, threads=N, group_size=G)`, with CPU tensors for buffers and Python ints
for `constant long&` arguments. emu_core.h runs the dispatch deterministically (lane
order EMU_ORDER: 0 forward, 1 reverse, 2 shuffled), so missing barriers become wrong
answers and divergent barriers become errors. Buffers are copied between guard regions,
so a read just past one sees NaN and a write past one is an error.

What it is not: a Metal compiler (MSL is C++14-based, but anything beyond this shim is
rejected or means something else here), a GPU (no SIMD-group lockstep, no real
concurrency, no fast-math), or proof that a shader compiles and runs under Metal.
"""
import ctypes
import hashlib
import os
import pathlib
import subprocess
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
_BUILD = pathlib.Path(tempfile.gettempdir()) / "sb_metal_emu"

# C++ types of the buffer/constant arguments, by the prompt's signature.
C_TYPES = {"const float*": "const float*", "float*": "float*", "const long*": "const long*", "long&": "long"}


def _entry(name, params):
    casts, ints = [], 0
    for i, kind in enumerate(params):
        if kind == "long&":
            casts.append(f"c{ints}")
            ints += 1
        else:
            casts.append(f"({C_TYPES[kind]})bufs[{i}]")
    locals_ = "".join(f"long c{k} = ints[{k}]; " for k in range(ints))
    return (f'extern "C" int emu_dispatch_{name}(void** bufs, long* ints, long n_groups, long group_size, '
            f'int order, char* err, int errlen) {{\n'
            f'    std::function<void(unsigned, unsigned, unsigned)> body = [&](unsigned row, unsigned lane, '
            f'unsigned gs) {{ {locals_}{name}({", ".join(casts)}, row, lane, gs); }};\n'
            f'    return emu::dispatch(n_groups, group_size, order, err, errlen, body);\n}}\n')


def compile_shader(source, signatures):
    """signatures: {kernel name: [param kinds before the three built-ins]}."""
    entries = "".join(_entry(name, params) for name, params in signatures.items())
    key = hashlib.sha256((source + entries + (HERE / "emu_core.h").read_text()
                          + (HERE / "include" / "metal_stdlib").read_text()).encode()).hexdigest()[:16]
    folder = _BUILD / key
    lib_path = folder / "kernel.so"
    if not lib_path.exists():
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "kernel.metal").write_text(source)
        (folder / "entry.cpp").write_text(
            '#include "emu_core.h"\n#define kernel\n#define device\n#define constant\n'
            '#define threadgroup static\n#define thread\n#define half float\n'
            '#include "kernel.metal"\n#undef kernel\n#undef device\n#undef constant\n#undef threadgroup\n'
            '#undef thread\n#undef half\n' + entries)
        cmd = ["g++", "-std=c++17", "-O1", "-shared", "-fPIC", "-w", "-I", str(HERE / "include"), "-I", str(HERE),
               "-I", str(folder), str(folder / "entry.cpp"), "-o", str(folder / "tmp.so")]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError("Failed to create Metal library (CPU emulation):\n" + proc.stderr[-4000:])
        os.replace(folder / "tmp.so", lib_path)
    return Library(ctypes.CDLL(str(lib_path)), signatures)


class Library:
    def __init__(self, dll, signatures):
        self._dll, self._signatures = dll, signatures

    def __getattr__(self, name):
        if name.startswith("_") or name not in self._signatures:
            raise AttributeError(name)
        fn = getattr(self._dll, f"emu_dispatch_{name}")
        params = self._signatures[name]

        def dispatch(*args, threads=None, group_size=None):
            if len(args) != len(params):
                raise RuntimeError(f"{name} takes {len(params)} arguments, got {len(args)}")
            threads = _count(threads)
            group = _count(group_size) if group_size is not None else threads
            if threads % group:
                raise RuntimeError("the emulator needs threads to be a multiple of group_size")
            if not 1 <= group <= 1024:
                raise RuntimeError(f"threadgroup size {group} out of 1..1024")
            bufs = (ctypes.c_void_p * len(args))()
            ints = (ctypes.c_long * max(1, len(args)))()
            guarded = []
            k = 0
            for i, (kind, arg) in enumerate(zip(params, args)):
                if kind == "long&":
                    ints[k] = int(arg)
                    k += 1
                else:
                    if arg.device.type != "cpu" or not arg.is_contiguous():
                        raise RuntimeError(f"argument {i} must be a contiguous CPU tensor here")
                    copy = _Guarded(arg, i)
                    guarded.append((i, arg, copy))
                    bufs[i] = copy.address
            err = ctypes.create_string_buffer(1000)
            order = int(os.environ.get("EMU_ORDER", "0"))
            rc = fn(bufs, ints, ctypes.c_long(threads // group), ctypes.c_long(group), ctypes.c_int(order), err,
                    ctypes.c_int(len(err)))
            if rc:
                raise RuntimeError("emulated dispatch failed: " + err.value.decode())
            for i, arg, copy in guarded:
                copy.copy_back(arg)
                if not copy.guards_intact():
                    raise RuntimeError(f"emulated dispatch wrote outside buffer argument {i}")
        return dispatch


class _Guarded:
    """A copy of a tensor's bytes between two guard regions: reads just past a buffer see
    a NaN whose payload names the buffer (float32 0x7FC000nn, nn = argument index + 1)
    instead of crashing or reading neighbouring data, and writes past it are detected,
    even of a NaN propagated from another buffer's guard."""

    GUARD = 1 << 16

    def __init__(self, tensor, index):
        import numpy as np
        data = tensor.view(-1).view(torch_uint8()).numpy() if tensor.numel() else np.zeros(0, np.uint8)
        self.size = data.size
        word = np.array([0x7FC00000 + index + 1], dtype=np.uint32).view(np.uint8)
        self.pattern = np.tile(word, self.GUARD // 4)
        self.raw = np.concatenate([self.pattern, data, self.pattern])
        self.address = self.raw.ctypes.data + self.GUARD

    def copy_back(self, tensor):
        if self.size:
            tensor.view(-1).view(torch_uint8()).numpy()[:] = self.raw[self.GUARD:self.GUARD + self.size]

    def guards_intact(self):
        return bool((self.raw[:self.GUARD] == self.pattern).all()
                    and (self.raw[self.GUARD + self.size:] == self.pattern).all())


def torch_uint8():
    import torch
    return torch.uint8


def _count(value):
    if isinstance(value, (tuple, list)):
        total = 1
        for v in value:
            total *= int(v)
        return total
    return int(value)
