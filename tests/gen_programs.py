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
import pathlib
import sys
from typing import Any

# Sets JAX up (CPU, 64-bit types, no source locations): before jax is imported.
from programs_common import EXACT, Program, expected_error, ffi_call_like, lower, named, single_call
from programs_common import clear_generated, write_checked_program, write_manifest

import numpy as np  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent
DEFAULT_OUT = HERE / "programs"
SEED = 20240611
MULTI_DEVICE_COUNT = 4


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


def add_one_program(name: str, description: str, x: np.ndarray) -> Program:
    """cyxla_test_add_one (out = x + 1) on ``x``."""
    return single_call(
        name,
        "cyxla_test_add_one",
        x,
        description,
        oracle=lambda x: [(x + np.float32(1)).astype(np.float32)],
    )


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
            fn=lambda x: ffi_call_like("cyxla_test_attrs", x, **ATTRS),
            inputs=[f32_normal("attrs", (2, 3))],
            oracle=attrs_oracle,
            targets=["cyxla_test_attrs"],
            notes={"attrs_constant": attrs_constant(ATTRS)},
        ),
        Program(
            name="fail",
            description="cyxla_test_fail, which always fails with FAILED_PRECONDITION",
            fn=lambda x: ffi_call_like("cyxla_test_fail", x, reason="the fail program"),
            inputs=[f32_normal("fail", (4,))],
            oracle=None,
            targets=["cyxla_test_fail"],
            expect_error=expected_error(
                "execute",
                "FAILED_PRECONDITION",
                message="cyxla_test_fail: deliberate failure for the fail program",
            ),
        ),
        single_call(
            "unknown_target",
            "cyxla_test_not_registered",
            f32_normal("unknown_target", (4,)),
            "custom call to cyxla_test_not_registered, for which no handler exists",
            expect_error=expected_error("compile", "NOT_FOUND", contains="cyxla_test_not_registered"),
        ),
        add_one_program(
            "add_one",
            "cyxla_test_add_one: out = x + 1 over f32[8]; also run replicated "
            f"on {MULTI_DEVICE_COUNT} devices (same output on each)",
            f32_normal("add_one", (8,)),
        ),
        add_one_program(
            "add_one_scalar",
            "cyxla_test_add_one on a rank-0 f32 (the handler sees rank 0)",
            np.array(2.5, np.float32),
        ),
        single_call(
            "copy16",
            "cyxla_test_copy16",
            f32_normal("copy16", (16,)),
            "cyxla_test_copy16: out = x over f32[16] (bench kernel)",
            oracle=lambda x: [x.copy()],
        ),
        single_call(
            "device",
            "cyxla_test_device",
            f32_normal("device", (8,)),
            "cyxla_test_device: out = x + device ordinal over f32[8]; the expected "
            "output is device 0's, on device d it is x + d",
            oracle=lambda x: [(x + np.float32(0)).astype(np.float32)],
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


def write_program(p: Program, out: pathlib.Path) -> dict[str, Any]:
    exp = lower(p, keep_parameter_names=True)
    text = exp.mlir_module()
    for t in p.targets:
        if f"stablehlo.custom_call @{t}(" not in text:
            sys.exit(f"{p.name}: custom call to {t} missing from the lowered program")
    if "stablehlo.custom_call" in text and not p.targets:
        sys.exit(f"{p.name}: unexpected custom call in the lowered program")
    entry = write_checked_program(
        p, exp, out, oracle="numpy" if p.targets else "numpy, checked against JAX"
    )

    # Programs without custom calls: JAX is a second oracle.
    if p.oracle and not p.targets:
        expected = p.oracle(*p.inputs)
        for k, got in enumerate(as_list(jax.jit(named(p, keep_parameter_names=True))(*p.inputs))):
            check_close(p, k, expected[k], got, "JAX")
        for k, got in enumerate(as_list(exp.call(*p.inputs))):
            check_close(p, k, expected[k], got, "the exported program run by JAX")
    return entry


def generate(out: pathlib.Path) -> None:
    clear_generated(out, ("*.mlir", "*.mlirbc", "*.npy", "manifest.json"))
    write_manifest(out, "tests/gen_programs.py", [write_program(p, out) for p in programs()])


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
        exp = lower(p, keep_parameter_names=True)
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
            got = np.asarray(jax.pmap(named(p, keep_parameter_names=True))(stacked))
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
