#!/usr/bin/env python3
"""Generates the StableHLO programs of cyxla-host's integration tests.

Run from the workspace root:

    .venv/bin/python tests/gen_programs.py [--out DIR] [--verify-with LIB]

For each program it writes into DIR (default: tests/programs next to this
script):

* ``<name>.mlir``    StableHLO text (``Exported.mlir_module()``),
* ``<name>.mlirbc``  the StableHLO portable artifact (bytecode,
                     ``Exported.mlir_module_serialized``),
* ``<name>.in<k>.npy``  the k-th input,
* ``<name>.out<k>.npy`` the k-th expected output (absent when the program is
                        expected to fail),

and ``manifest.json`` describing every program. The output is deterministic
(fixed seeds, no source locations): the integration test ``programs`` reruns
this script into a temporary directory and requires byte-identical files.

Expected outputs come from numpy, an oracle independent of XLA. Programs
without custom calls are also run by JAX and must agree with numpy within the
manifest's tolerance. Programs with custom calls call the native test handlers
of ``tests/native/test_handlers.cc``; their numpy oracles implement the same
formulas (repeated below). ``--verify-with LIB`` (LIB = the built
``libcyxla_test_handlers.so``) registers those handlers with JAX and checks
that JAX computes exactly the oracle's outputs, single- and multi-device.

Handler formulas (f32 arithmetic unless noted):

* ``cyxla_test_attrs``: ``out[i] = x[i] * f32 + float32(c)`` where, in f64 and
  in this order,
  ``c = f64 + 2*i32 + 3*i64 + 5*flag + 7*len(name) + sum_k (k+1)*arr[k]
  + 11*dct.Bias + 13*dct.count + 17*len(dct.label) + 19*dct.weight``;
  ``x[i] * f32`` is rounded to f32 before the addition.
* ``cyxla_test_fail``: fails with FAILED_PRECONDITION (9),
  ``"cyxla_test_fail: deliberate failure for <reason>"``.
* ``cyxla_test_add_one``: ``out = x + 1`` (any shape, rank 0 included).
* ``cyxla_test_copy16``: ``out = x`` (exactly 16 elements).
* ``cyxla_test_device``: ``out = x + device_ordinal``.
"""

from __future__ import annotations

import argparse
import ctypes
import dataclasses
import json
import os
import pathlib
import sys
from typing import Any, Callable

# Must be set before jax is imported.
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import numpy as np  # noqa: E402

import jax  # noqa: E402
import jaxlib  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax import export  # noqa: E402

# 64-bit types (int64, uint64, float64, complex128) are needed by the dtype
# programs and the attributes.
jax.config.update("jax_enable_x64", True)
# No Python frames in MLIR locations: nothing of this machine (file paths) or
# of this script (line numbers) ends up in the programs. Name locations such
# as loc("jit(f)/ffi_call") remain.
jax.config.update("jax_traceback_in_locations_limit", 0)

HERE = pathlib.Path(__file__).resolve().parent
DEFAULT_OUT = HERE / "programs"
SEED = 20240611
MULTI_DEVICE_COUNT = 4

# XLA's names (as plugin-glue's DType::name() prints them) of numpy dtypes.
XLA_DTYPE_NAMES = {
    "bool": "pred",
    "int8": "s8",
    "int16": "s16",
    "int32": "s32",
    "int64": "s64",
    "uint8": "u8",
    "uint16": "u16",
    "uint32": "u32",
    "uint64": "u64",
    "float16": "f16",
    "float32": "f32",
    "float64": "f64",
    "complex64": "c64",
    "complex128": "c128",
}

# absl / XLA status codes.
ERROR_CODES = {"NOT_FOUND": 5, "FAILED_PRECONDITION": 9}

EXACT = {"rtol": 0.0, "atol": 0.0}


@dataclasses.dataclass
class Program:
    """One test program."""

    name: str
    description: str
    fn: Callable[..., Any]
    inputs: list[np.ndarray]
    # numpy oracle: inputs -> expected outputs (None when an error is expected)
    oracle: Callable[..., list[np.ndarray]] | None
    targets: list[str] = dataclasses.field(default_factory=list)
    tolerance: dict[str, float] = dataclasses.field(default_factory=lambda: dict(EXACT))
    expect_error: dict[str, Any] | None = None
    # Extra manifest entries (e.g. how replicas differ).
    notes: dict[str, Any] = dataclasses.field(default_factory=dict)


def ffi(target: str, x: jax.Array, **attrs: Any) -> jax.Array:
    """``jax.ffi.ffi_call(target, ...)(x, **attrs)`` with one result shaped like ``x``."""
    return jax.ffi.ffi_call(target, jax.ShapeDtypeStruct(x.shape, x.dtype))(x, **attrs)


# --------------------------------------------------------------------------
# cyxla_test_attrs
# --------------------------------------------------------------------------

ATTRS: dict[str, Any] = {
    "f32": np.float32(1.5),
    "f64": np.float64(2.25),
    "i32": np.int32(-3),
    "i64": np.int64(-7),
    "flag": True,
    "name": "hello",
    "arr": np.array([1, 2, 3], np.int64),
    # "Bias" sorts before the lower-case keys (XLA sorts byte-wise).
    "dct": {
        "Bias": np.float32(0.25),
        "count": np.int32(5),
        "label": "abc",
        # JAX refuses arrays nested in a dictionary attribute (unhashable).
        "weight": np.float64(-1.5),
    },
}


def attrs_constant(a: dict[str, Any]) -> float:
    """The f64 constant ``c`` of cyxla_test_attrs, summed in the handler's order."""
    d = a["dct"]
    c = float(a["f64"])
    c += 2.0 * float(a["i32"])
    c += 3.0 * float(a["i64"])
    c += 5.0 * (1.0 if a["flag"] else 0.0)
    c += 7.0 * float(len(a["name"].encode()))
    for k, v in enumerate(a["arr"]):
        c += float(k + 1) * float(v)
    c += 11.0 * float(d["Bias"])
    c += 13.0 * float(d["count"])
    c += 17.0 * float(len(d["label"].encode()))
    c += 19.0 * float(d["weight"])
    return c


def attrs_oracle(x: np.ndarray) -> list[np.ndarray]:
    scaled = (x * ATTRS["f32"]).astype(np.float32)
    return [(scaled + np.float32(attrs_constant(ATTRS))).astype(np.float32)]


# --------------------------------------------------------------------------
# Inputs
# --------------------------------------------------------------------------


def rng_for(name: str) -> np.random.Generator:
    """A generator seeded from SEED and the program name (order-independent)."""
    return np.random.default_rng([SEED, *name.encode()])


def f32_normal(name: str, shape: tuple[int, ...]) -> np.ndarray:
    return rng_for(name).standard_normal(shape).astype(np.float32)


def dtype_input(dt: np.dtype) -> np.ndarray:
    """A [2, 4] array of dtype ``dt`` covering its interesting values."""
    rng = rng_for("dtype_" + dt.name)
    if dt == np.bool_:
        values = np.array([True, False, True, True, False, False, True, False])
    elif np.issubdtype(dt, np.integer):
        info = np.iinfo(dt)
        edge = np.array([info.min, info.max, 0, 1], dtype=dt)
        rand = rng.integers(info.min, info.max, size=4, dtype=dt, endpoint=True)
        values = np.concatenate([edge, rand])
    elif np.issubdtype(dt, np.floating):
        edge = np.array([-0.0, np.inf, -np.inf, 1.5], dtype=dt)
        rand = (rng.standard_normal(4) * 100.0).astype(dt)
        values = np.concatenate([edge, rand])
    elif np.issubdtype(dt, np.complexfloating):
        part = np.float32 if dt == np.complex64 else np.float64
        re = (rng.standard_normal(8) * 100.0).astype(part)
        im = (rng.standard_normal(8) * 100.0).astype(part)
        values = re.astype(dt) + 1j * im.astype(dt)
        values[0] = complex(-0.0, 2.5)
    else:
        raise ValueError(f"no input recipe for dtype {dt}")
    return np.ascontiguousarray(values.astype(dt).reshape(2, 4))


def dtype_program(dt: np.dtype) -> Program:
    x = dtype_input(dt)
    if dt == np.bool_:
        fn, oracle, op = (lambda x: jnp.logical_not(x)), np.logical_not, "logical not"
    elif np.issubdtype(dt, np.integer):
        fn, oracle, op = (lambda x: jnp.invert(x)), np.invert, "bitwise not (~x)"
    else:
        fn, oracle, op = (lambda x: x + x), (lambda x: x + x), "x + x"
    return Program(
        name=f"dtype_{dt.name}",
        description=f"{op} over {dt.name}[2,4] (edge values included): "
        f".npy input/output of {dt.name}",
        fn=fn,
        inputs=[x],
        oracle=lambda v, oracle=oracle, dt=dt: [np.asarray(oracle(v)).astype(dt)],
    )


DTYPES = [
    np.dtype(n)
    for n in (
        "bool",
        "int8",
        "int16",
        "int32",
        "int64",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "float16",
        "float32",
        "float64",
        "complex64",
        "complex128",
    )
]


# --------------------------------------------------------------------------
# Programs
# --------------------------------------------------------------------------


def no_custom_call_oracle(x: np.ndarray, y: np.ndarray) -> list[np.ndarray]:
    # Computed in f64 and rounded once: closer to the exact value than any
    # f32 evaluation order XLA may choose.
    r = np.sin(x.astype(np.float64)) @ y.astype(np.float64) + 1.0
    return [r.astype(np.float32)]


def programs() -> list[Program]:
    progs = [
        Program(
            name="no_custom_call",
            description="sin(x) @ y + 1 in f32, no custom call",
            fn=lambda x, y: jnp.sin(x) @ y + 1,
            inputs=[f32_normal("no_custom_call.x", (3, 4)), f32_normal("no_custom_call.y", (4, 2))],
            oracle=no_custom_call_oracle,
            tolerance={"rtol": 1e-5, "atol": 1e-5},
        ),
        Program(
            name="attrs",
            description="cyxla_test_attrs with attributes of every kind (f32, f64, i32, i64, "
            "bool, string, i64 array, dictionary with f32/i32/string/f64 entries): "
            "out = x * f32 + float32(c), c = f64 + 2*i32 + 3*i64 + 5*flag + 7*len(name) "
            "+ sum (k+1)*arr[k] + 11*dct.Bias + 13*dct.count + 17*len(dct.label) "
            "+ 19*dct.weight",
            fn=lambda x: ffi("cyxla_test_attrs", x, **ATTRS),
            inputs=[f32_normal("attrs", (2, 3))],
            oracle=attrs_oracle,
            targets=["cyxla_test_attrs"],
            notes={"attrs_constant": attrs_constant(ATTRS)},
        ),
        Program(
            name="fail",
            description="cyxla_test_fail, which always fails with FAILED_PRECONDITION",
            fn=lambda x: ffi("cyxla_test_fail", x, reason="the fail program"),
            inputs=[f32_normal("fail", (4,))],
            oracle=None,
            targets=["cyxla_test_fail"],
            expect_error={
                "stage": "execute",
                "code": "FAILED_PRECONDITION",
                "code_value": ERROR_CODES["FAILED_PRECONDITION"],
                "message": "cyxla_test_fail: deliberate failure for the fail program",
            },
        ),
        Program(
            name="unknown_target",
            description="custom call to cyxla_test_not_registered, for which no handler exists",
            fn=lambda x: ffi("cyxla_test_not_registered", x),
            inputs=[f32_normal("unknown_target", (4,))],
            oracle=None,
            targets=["cyxla_test_not_registered"],
            expect_error={
                "stage": "compile",
                "code": "NOT_FOUND",
                "code_value": ERROR_CODES["NOT_FOUND"],
                "message_contains": "cyxla_test_not_registered",
            },
        ),
        Program(
            name="add_one",
            description="cyxla_test_add_one: out = x + 1 over f32[8]; also run replicated "
            f"on {MULTI_DEVICE_COUNT} devices (same output on each)",
            fn=lambda x: ffi("cyxla_test_add_one", x),
            inputs=[f32_normal("add_one", (8,))],
            oracle=lambda x: [(x + np.float32(1)).astype(np.float32)],
            targets=["cyxla_test_add_one"],
        ),
        Program(
            name="add_one_scalar",
            description="cyxla_test_add_one on a rank-0 f32 (the handler sees rank 0)",
            fn=lambda x: ffi("cyxla_test_add_one", x),
            inputs=[np.array(2.5, np.float32)],
            oracle=lambda x: [(x + np.float32(1)).astype(np.float32)],
            targets=["cyxla_test_add_one"],
        ),
        Program(
            name="copy16",
            description="cyxla_test_copy16: out = x over f32[16] (bench kernel)",
            fn=lambda x: ffi("cyxla_test_copy16", x),
            inputs=[f32_normal("copy16", (16,))],
            oracle=lambda x: [x.copy()],
            targets=["cyxla_test_copy16"],
        ),
        Program(
            name="device",
            description="cyxla_test_device: out = x + device ordinal over f32[8]; the expected "
            "output is device 0's, on device d it is x + d",
            fn=lambda x: ffi("cyxla_test_device", x),
            inputs=[f32_normal("device", (8,))],
            oracle=lambda x: [(x + np.float32(0)).astype(np.float32)],
            targets=["cyxla_test_device"],
            notes={"per_device": "output on device d is out0 + d"},
        ),
        Program(
            name="multi_output",
            description="two results of different dtypes and shapes: (x.T * 2: f32[3,2], "
            "k * 3 - 1: i32[4])",
            fn=lambda x, k: (x.T * 2, k * 3 - 1),
            inputs=[
                f32_normal("multi_output", (2, 3)),
                np.array([-4, 0, 7, 100], np.int32),
            ],
            oracle=lambda x, k: [
                (x.T * np.float32(2)).astype(np.float32),
                (k * np.int32(3) - np.int32(1)).astype(np.int32),
            ],
        ),
        Program(
            name="scalar",
            description="rank-0 input and output: x * 2 + 0.5 in f32",
            fn=lambda x: x * 2 + 0.5,
            inputs=[np.array(1.25, np.float32)],
            oracle=lambda x: [(x * np.float32(2) + np.float32(0.5)).astype(np.float32)],
        ),
    ]
    progs += [dtype_program(dt) for dt in DTYPES]
    return progs


# --------------------------------------------------------------------------
# Lowering and writing
# --------------------------------------------------------------------------


def named(p: Program) -> Callable[..., Any]:
    """``p.fn`` (a Python function; its parameter names name the arguments)
    renamed after the program: the module becomes ``@jit_<name>``."""
    p.fn.__name__ = p.fn.__qualname__ = p.name
    return p.fn


def lower(p: Program) -> export.Exported:
    checks = [export.DisabledSafetyCheck.custom_call(t) for t in p.targets]
    args = [jax.ShapeDtypeStruct(x.shape, x.dtype) for x in p.inputs]
    return export.export(jax.jit(named(p)), platforms=["cpu"], disabled_checks=checks)(*args)


def tensor_entry(file: str | None, dtype: np.dtype, shape: tuple[int, ...]) -> dict[str, Any]:
    dtype = np.dtype(dtype)
    return {
        "file": file,
        "dtype": dtype.name,
        "xla_dtype": XLA_DTYPE_NAMES[dtype.name],
        "descr": dtype.str,
        "shape": [int(d) for d in shape],
    }


def as_list(outs: Any) -> list[Any]:
    return list(outs) if isinstance(outs, (tuple, list)) else [outs]


def check_close(p: Program, k: int, expected: np.ndarray, got: np.ndarray, who: str) -> None:
    got = np.asarray(got)
    if got.dtype != expected.dtype or got.shape != expected.shape:
        sys.exit(
            f"{p.name}: output {k} from {who} is {got.dtype}{list(got.shape)}, "
            f"the oracle's is {expected.dtype}{list(expected.shape)}"
        )
    if p.tolerance == EXACT:
        same = got.tobytes() == expected.tobytes()
    else:
        same = np.allclose(got, expected, rtol=p.tolerance["rtol"], atol=p.tolerance["atol"])
    if not same:
        sys.exit(f"{p.name}: output {k} from {who} differs from the oracle:\n{got}\nvs\n{expected}")


def check_clean_text(p: Program, text: str, bytecode: bytes) -> None:
    """Refuses programs that carry source locations of this machine."""
    for needle in (".py", str(HERE), str(pathlib.Path.home())):
        if needle in text or needle.encode() in bytecode:
            sys.exit(f"{p.name}: lowered program contains {needle!r} (a source location)")


def write_program(p: Program, out: pathlib.Path) -> dict[str, Any]:
    exp = lower(p)
    text = exp.mlir_module()
    bytecode = exp.mlir_module_serialized
    check_clean_text(p, text, bytecode)
    for t in p.targets:
        if f"stablehlo.custom_call @{t}(" not in text:
            sys.exit(f"{p.name}: custom call to {t} missing from the lowered program")
    if "stablehlo.custom_call" in text and not p.targets:
        sys.exit(f"{p.name}: unexpected custom call in the lowered program")

    (out / f"{p.name}.mlir").write_text(text)
    (out / f"{p.name}.mlirbc").write_bytes(bytecode)

    inputs = []
    for k, x in enumerate(p.inputs):
        assert x.dtype == exp.in_avals[k].dtype and x.shape == exp.in_avals[k].shape
        name = f"{p.name}.in{k}.npy"
        np.save(out / name, x, allow_pickle=False)
        inputs.append(tensor_entry(name, x.dtype, x.shape))

    outputs = []
    expected = p.oracle(*p.inputs) if p.oracle else None
    if expected is not None and len(expected) != len(exp.out_avals):
        sys.exit(f"{p.name}: oracle gives {len(expected)} outputs, the program {len(exp.out_avals)}")
    for k, aval in enumerate(exp.out_avals):
        name = None
        if expected is not None:
            e = expected[k]
            if e.dtype != aval.dtype or e.shape != aval.shape:
                sys.exit(
                    f"{p.name}: oracle output {k} is {e.dtype}{list(e.shape)}, "
                    f"the program's {aval.dtype}{list(aval.shape)}"
                )
            name = f"{p.name}.out{k}.npy"
            # np.ascontiguousarray would turn rank 0 into rank 1.
            np.save(out / name, np.array(e, order="C"), allow_pickle=False)
        outputs.append(tensor_entry(name, aval.dtype, aval.shape))

    # Programs without custom calls: JAX is a second oracle.
    if expected is not None and not p.targets:
        for k, got in enumerate(as_list(jax.jit(named(p))(*p.inputs))):
            check_close(p, k, expected[k], got, "JAX")
        for k, got in enumerate(as_list(exp.call(*p.inputs))):
            check_close(p, k, expected[k], got, "the exported program run by JAX")

    entry: dict[str, Any] = {
        "name": p.name,
        "description": p.description,
        "mlir": f"{p.name}.mlir",
        "mlirbc": f"{p.name}.mlirbc",
        "targets": p.targets,
        "inputs": inputs,
        "outputs": outputs,
        "tolerance": p.tolerance,
        "expect_error": p.expect_error,
        "oracle": "none (an error is expected)"
        if p.expect_error
        else "numpy" if p.targets else "numpy, checked against JAX",
    }
    entry.update(p.notes)
    return entry


def clear_generated(out: pathlib.Path) -> None:
    """Removes earlier output (only the kinds of files this script writes)."""
    for pattern in ("*.mlir", "*.mlirbc", "*.npy", "manifest.json"):
        for f in out.glob(pattern):
            f.unlink()


def generate(out: pathlib.Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    clear_generated(out)
    entries = [write_program(p, out) for p in programs()]
    manifest = {
        "generator": "tests/gen_programs.py",
        "regenerate": ".venv/bin/python tests/gen_programs.py",
        "jax_version": jax.__version__,
        "jaxlib_version": jaxlib.__version__,
        "programs": entries,
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")


# --------------------------------------------------------------------------
# --verify-with: run the custom-call programs in JAX on the real handlers
# --------------------------------------------------------------------------


def verify_with(lib_path: pathlib.Path) -> None:
    # Before the CPU backend starts: several devices for the pmap checks.
    jax.config.update("jax_num_cpu_devices", MULTI_DEVICE_COUNT)
    lib = ctypes.cdll.LoadLibrary(str(lib_path))
    targets = sorted({t for p in programs() for t in p.targets if t != "cyxla_test_not_registered"})
    for t in targets:
        jax.ffi.register_ffi_target(t, jax.ffi.pycapsule(getattr(lib, t)), platform="cpu")
    n_dev = jax.device_count()
    checked = []
    for p in programs():
        if not p.targets or "cyxla_test_not_registered" in p.targets:
            continue
        exp = lower(p)
        if p.expect_error:
            try:
                jax.block_until_ready(exp.call(*p.inputs))
            except Exception as e:  # noqa: BLE001 (JAX raises XlaRuntimeError)
                msg = str(e)
                err = p.expect_error
                if err["code"] not in msg or err["message"] not in msg:
                    sys.exit(f"{p.name}: unexpected error: {msg}")
                checked.append(f"{p.name}: failed as expected ({msg.splitlines()[0]})")
                continue
            sys.exit(f"{p.name}: expected an error, got none")
        expected = p.oracle(*p.inputs)
        for k, got in enumerate(as_list(exp.call(*p.inputs))):
            check_close(p, k, expected[k], got, "JAX with the native handler")
        checked.append(f"{p.name}: JAX == numpy oracle (bit-exact)")
        if p.name in ("add_one", "device") and n_dev > 1:
            # Replicated on every device: device d gets the same input.
            stacked = np.stack([p.inputs[0]] * n_dev)
            got = np.asarray(jax.pmap(named(p))(stacked))
            for d in range(n_dev):
                want = expected[0] + np.float32(d if p.name == "device" else 0)
                check_close(p, 0, want, got[d], f"JAX pmap device {d}")
            checked.append(f"{p.name}: pmap over {n_dev} devices == oracle")
    print("\n".join(checked))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=pathlib.Path, default=DEFAULT_OUT, help="output directory")
    ap.add_argument(
        "--verify-with",
        type=pathlib.Path,
        metavar="LIB",
        help="instead of writing, run the custom-call programs in JAX with the handlers of "
        "LIB (libcyxla_test_handlers.so) and compare with the oracles",
    )
    args = ap.parse_args()
    if args.verify_with:
        verify_with(args.verify_with)
    else:
        generate(args.out)


if __name__ == "__main__":
    main()
