#!/usr/bin/env python3
"""Generates the JAX-lowered programs that call the bundled wasm guests.

Run from the workspace root:

    .venv/bin/python tests/gen_guest_programs.py [--out DIR]

The programs call the targets of ``guests/rust/*`` and ``guests/cpp/*``
(built into ``guests/out/*.wasm`` by ``guests/build.sh``): ``rms_norm``,
``rms_norm_fwd``/``rms_norm_bwd`` (through ``jax.custom_vjp``, as in JAX's
FFI tutorial), ``echo_attrs``, ``scale_any``, ``tridiag_solve``, the in-place
``inplace_set0``, ``inplace_set0_cpp`` and ``aliasing_cpp`` (with
``input_output_aliases`` and ``donate_argnums``), ``fail`` and ``trap``. The tests ``guests`` (tests/integration/guests.rs, through the
library on the three plugins) and ``cli_guests`` (host/app/tests/cli_guests.rs,
through the ``cyxla-host`` binary) run them.

DIR (default: tests/programs/guests next to this script) receives, per
program:

* ``<name>.mlir``    StableHLO text (``Exported.mlir_module()``),
* ``<name>.mlirbc``  the StableHLO portable artifact (bytecode),
* ``<name>.in<k>.npy``  the k-th input,
* ``<name>.out<k>.npy`` the k-th expected output (absent when an error is
                        expected),

and ``manifest.json``, in the schema of ``tests/programs/manifest.json``
(``cyxla_tests::Manifest``) with every file name relative to
``tests/programs/`` (``guests/<name>.mlir``), so ``ProgramEntry`` finds the
files. The output is deterministic (fixed seeds, no source locations): the
test ``guests::generator_reproduces_committed_programs`` reruns this script
into a temporary directory and requires identical files.

Expected outputs come from numpy, in float64 and rounded once to the
result's type (the native reference of the issue); the rms_norm oracles are
also checked here against a pure-``jax.numpy`` implementation (forward and
``jax.grad``), and the tridiagonal oracle against a dense solve.
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import warnings
from typing import Any

# Sets JAX up (CPU, 64-bit types, no source locations): before jax is imported.
from programs_common import XLA_DTYPE_NAMES, Program, expected_error, ffi_call_like, lower
from programs_common import EPS, SET0_VALUE, rms_norm_call, rms_norm_with_vjp, single_call
from programs_common import aliasing_call, inplace_set0, np_set0
from programs_common import clear_generated, write_checked_program, write_manifest

import numpy as np  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent
PROGRAMS = HERE / "programs"
SUBDIR = "guests"
DEFAULT_OUT = PROGRAMS / SUBDIR
SEED = 20250811

# XLA_FFI_DataType values (echo_attrs writes them).
XLA_FFI_DTYPE = {
    "bool": 1,
    "int8": 2,
    "int16": 3,
    "int32": 4,
    "int64": 5,
    "uint8": 6,
    "uint16": 7,
    "uint32": 8,
    "uint64": 9,
    "float32": 11,
    "float64": 12,
}

# The bar for rms_norm through a guest against the native reference.
RMS_TOL = {"rtol": 1e-6, "atol": 0.0}


def rng_for(name: str) -> np.random.Generator:
    """A generator seeded from SEED and the program name (order-independent)."""
    return np.random.default_rng([SEED, *name.encode()])


def f32_normal(name: str, shape: tuple[int, ...]) -> np.ndarray:
    return rng_for(name).standard_normal(shape).astype(np.float32)


# --------------------------------------------------------------------------
# rms_norm: the tutorial's forward, vmap and grad through custom_vjp
# --------------------------------------------------------------------------


def rms_norm(x: jax.Array, *, has_side_effect: bool = False) -> jax.Array:
    return rms_norm_call("rms_norm", x, has_side_effect=has_side_effect)


# Its gradient calls the guest targets rms_norm_fwd and rms_norm_bwd.
rms_norm_vjp = rms_norm_with_vjp("rms_norm")


def rms_norm_loss(x: jax.Array, w: jax.Array) -> jax.Array:
    return jnp.sum(rms_norm_vjp(x) * w)


def np_rms_scale(x: np.ndarray) -> np.ndarray:
    """1/rms per row in float64, with keepdims (NaN for rows of length 0)."""
    x = x.astype(np.float64)
    with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)  # mean of an empty row
        return 1.0 / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + float(EPS))


def np_rms_norm(x: np.ndarray) -> np.ndarray:
    return (x.astype(np.float64) * np_rms_scale(x)).astype(np.float32)


def np_rms_norm_grad(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """d/dx sum(rms_norm(x) * w) in float64: res*w - (sum x*w) * res^3 / n * x."""
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    res = np_rms_scale(x)
    n = x.shape[-1]
    dot = np.sum(x64 * w64, axis=-1, keepdims=True)
    return (res * w64 - dot * res**3 / n * x64).astype(np.float32)


def jnp_rms_norm(x: jax.Array) -> jax.Array:
    """The tutorial's pure-JAX reference (evaluated in float64 here)."""
    return x / jnp.sqrt(jnp.mean(jnp.square(x), axis=-1, keepdims=True) + float(EPS))


def check_rms_oracles(x: np.ndarray, w: np.ndarray | None) -> None:
    """The numpy oracles agree with JAX's own arithmetic (float64)."""
    x64 = x.astype(np.float64)
    want = np.asarray(jnp_rms_norm(jnp.asarray(x64))).astype(np.float32)
    if not np.allclose(np_rms_norm(x), want, rtol=1e-6, atol=0):
        sys.exit(f"rms_norm oracle disagrees with the jnp reference for shape {x.shape}")
    if w is not None:
        loss = lambda x, w: jnp.sum(jnp_rms_norm(x) * w)  # noqa: E731
        g = np.asarray(jax.grad(loss)(jnp.asarray(x64), jnp.asarray(w.astype(np.float64))))
        if not np.allclose(np_rms_norm_grad(x, w), g.astype(np.float32), rtol=1e-6, atol=1e-7):
            sys.exit(f"rms_norm grad oracle disagrees with jax.grad for shape {x.shape}")


def guest_error(
    code: str, target: str, guest: str, *, message: str | None = None, contains: str | None = None
) -> dict[str, Any]:
    """The error a call to ``target`` (served by ``guest``) fails with when it
    executes: the guest's message or a part of it, which the host prefixes
    with the target and the guest file."""
    prefix = f"target `{target}` (guest {guest}): "
    return expected_error(
        "execute",
        code,
        message=None if message is None else prefix + message,
        contains=None if contains is None else prefix + contains,
    )


def shape_name(shape: tuple[int, ...]) -> str:
    return "x".join(str(d) for d in shape)


def rms_norm_program(shape: tuple[int, ...]) -> Program:
    name = f"rms_norm_{shape_name(shape)}"
    x = f32_normal(name, shape)
    check_rms_oracles(x, None)
    zero = 0 in shape
    note = ""
    if zero:
        note = (
            "; zero elements: the call has has_side_effect=True, or XLA would drop it "
            "(its result has no elements)"
        )
    return Program(
        name=name,
        description=f"rms_norm (guest rms_norm.wasm, eps=1e-5 f32) over f32{list(shape)}: "
        f"y = x / sqrt(mean(x^2, axis=-1) + eps), leading axes are batch axes{note}",
        fn=lambda x: rms_norm(x, has_side_effect=zero),
        inputs=[x],
        oracle=lambda x: [np_rms_norm(x)],
        targets=["rms_norm"],
        tolerance=dict(RMS_TOL),
    )


RMS_SHAPES = [
    (8,),
    (3, 5),
    (2, 3, 16),
    (8, 1024),
    (1, 1),
    (4, 1),
    (1, 7),
    (0, 5),
    (3, 0),
    (2, 0, 4),
]


def rms_programs() -> list[Program]:
    progs = [rms_norm_program(s) for s in RMS_SHAPES]
    progs.append(
        Program(
            name="rms_norm_rank0",
            description="rms_norm on a rank-0 f32: the guest's own INVALID_ARGUMENT error",
            fn=lambda x: rms_norm(x),
            inputs=[np.array(1.5, np.float32)],
            oracle=None,
            targets=["rms_norm"],
            expect_error=guest_error(
                "INVALID_ARGUMENT",
                "rms_norm",
                "rms_norm.wasm",
                message="input must be an array (rank >= 1), got a rank-0 x",
            ),
        )
    )
    x = f32_normal("rms_norm_vmap", (4, 3, 8))
    check_rms_oracles(x, None)
    progs.append(
        Program(
            name="rms_norm_vmap",
            description="jax.vmap of the rms_norm call (vmap_method='broadcast_all') over "
            "f32[4,3,8]: one guest call on the batched f32[4,3,8]",
            fn=jax.vmap(lambda x: rms_norm(x)),
            inputs=[x],
            oracle=lambda x: [np_rms_norm(x)],
            targets=["rms_norm"],
            tolerance=dict(RMS_TOL),
        )
    )
    x = f32_normal("rms_norm_vmap_axis1", (3, 4, 8))
    progs.append(
        Program(
            name="rms_norm_vmap_axis1",
            description="jax.vmap(rms_norm, in_axes=1, out_axes=1) over f32[3,4,8]: the "
            "batch axis is moved to the front for the guest call and back",
            fn=jax.vmap(lambda x: rms_norm(x), in_axes=1, out_axes=1),
            inputs=[x],
            oracle=lambda x: [np_rms_norm(x)],
            targets=["rms_norm"],
            tolerance=dict(RMS_TOL),
        )
    )
    for shape in [(3, 16), (2, 3, 8)]:
        name = f"rms_norm_grad_{shape_name(shape)}"
        x = f32_normal(name + ".x", shape)
        w = f32_normal(name + ".w", shape)
        check_rms_oracles(x, w)
        progs.append(
            Program(
                name=name,
                description="jax.grad of sum(rms_norm(x) * w) w.r.t. x over "
                f"f32{list(shape)}, through jax.custom_vjp whose fwd and bwd call the "
                "guest targets rms_norm_fwd and rms_norm_bwd: "
                "res*w - (sum x*w) * res^3 / n * x, res = 1/rms per row",
                fn=jax.grad(rms_norm_loss),
                inputs=[x, w],
                oracle=lambda x, w: [np_rms_norm_grad(x, w)],
                targets=["rms_norm_fwd", "rms_norm_bwd"],
                # The two terms may cancel: an absolute floor of 1e-6 of the
                # largest gradient entry.
                tolerance={"rtol": 1e-6, "atol": 1e-6 * float(np.abs(np_rms_norm_grad(x, w)).max())},
            )
        )
    return progs


# --------------------------------------------------------------------------
# echo_attrs: every attribute kind
# --------------------------------------------------------------------------

class NestedDict(dict):
    """A hashable dict for dictionaries nested in a dictionary attribute.

    ``ffi_call`` parameters must be hashable; JAX wraps a top-level dict
    itself but not the dicts inside it. This subclass lowers exactly like a
    dict (an MLIR ``DictAttr``).
    """

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(tuple(sorted(self.items())))


ECHO_ATTRS: dict[str, Any] = {
    # Scalars of every XLA FFI scalar type; Python bool/int/float lower to
    # pred, s64 and f64.
    "flag": True,
    "off": np.bool_(False),
    "s8": np.int8(-128),
    "s16": np.int16(-1600),
    "s32": np.int32(-320000),
    "s64": np.int64(-(2**40) - 3),
    "u8": np.uint8(255),
    "u16": np.uint16(60000),
    "u32": np.uint32(4000000000),
    "u64": np.uint64(2**60 + 2**8),
    "f32": np.float32(-0.1),
    "f64": np.float64(2.718281828459045),
    "py_int": 7,
    "py_float": 0.5,
    # Arrays of every element type.
    "a_s8": np.array([-1, 2, -128, 127], np.int8),
    "a_s16": np.array([300, -300], np.int16),
    "a_s32": np.array([1, -2, 3], np.int32),
    "a_s64": np.array([2**40, -(2**40)], np.int64),
    "a_u8": np.array([0, 255], np.uint8),
    "a_u16": np.array([65535], np.uint16),
    "a_u32": np.array([1, 4000000000], np.uint32),
    "a_u64": np.array([0, 2**63 + 2**11], np.uint64),
    "a_f32": np.array([0.5, -1.25, 3.0e10], np.float32),
    "a_f64": np.array([1e-300, -2.5, 1e300], np.float64),
    # Strings, the empty one and UTF-8 included.
    "name": "hello, wasm",
    "empty": "",
    "utf8": "h\u00e9 \u2713",
    # Byte-wise order: capitals sort before lower case.
    "Zeta": np.int32(26),
    # Dictionaries, nested (JAX refuses arrays inside dictionaries).
    "dict": {
        "Bias": np.float32(0.25),
        "count": np.int32(5),
        "label": "abc",
        "inner": NestedDict(deep=np.int64(-7), s="x", empty=NestedDict()),
    },
}

ECHO_LEN = 512


def echo_encode(attrs: dict[str, Any]) -> list[float]:
    """The vector echo_attrs writes (guests/README.md, `echo_attrs` encoding)."""

    def entry(name: str, v: Any) -> list[float]:
        b = list(name.encode())
        out: list[float] = [len(b), *b]
        if isinstance(v, dict):
            out += [2, 0, len(v)]
            for k in sorted(v, key=lambda k: k.encode()):
                out += entry(k, v[k])
        elif isinstance(v, str):
            s = list(v.encode())
            out += [4, 0, len(s), *s]
        elif isinstance(v, np.ndarray):
            out += [1, XLA_FFI_DTYPE[v.dtype.name], v.size, *[float(e) for e in v.ravel().tolist()]]
        else:
            dt = {bool: "bool", int: "int64", float: "float64"}.get(type(v)) or np.asarray(v).dtype.name
            out += [3, XLA_FFI_DTYPE[dt], 1, float(v)]
        return out

    body: list[float] = [len(attrs)]
    for k in sorted(attrs, key=lambda k: k.encode()):
        body += entry(k, attrs[k])
    return [len(body) + 1, *body]


def echo_oracle(_x: np.ndarray) -> list[np.ndarray]:
    values = echo_encode(ECHO_ATTRS)
    if len(values) > ECHO_LEN:
        sys.exit(f"echo_attrs needs {len(values)} values, the program gives {ECHO_LEN}")
    out = np.zeros(ECHO_LEN, np.float64)
    out[: len(values)] = values
    return [out]


def echo_programs() -> list[Program]:
    return [
        Program(
            name="echo_attrs",
            description="echo_attrs (guest echo_attrs.wasm) with attributes of every kind: "
            "scalars of every type (pred, s8..s64, u8..u64, f32, f64, Python bool/int/float), "
            "arrays of every element type, strings (empty and UTF-8), nested dictionaries; "
            f"the operand is ignored; the output f64[{ECHO_LEN}] is the encoding of "
            "guests/README.md (`echo_attrs` encoding), zero-padded",
            fn=lambda x: jax.ffi.ffi_call("echo_attrs", jax.ShapeDtypeStruct((ECHO_LEN,), np.float64))(
                x, **ECHO_ATTRS
            ),
            inputs=[f32_normal("echo_attrs", (3,))],
            oracle=echo_oracle,
            targets=["echo_attrs"],
        )
    ]


# --------------------------------------------------------------------------
# scale_any: one kernel, f32 and f64
# --------------------------------------------------------------------------


def scale_any(x: jax.Array, factor: float) -> jax.Array:
    return ffi_call_like("scale_any", x, factor=np.float64(factor))


def scale_programs() -> list[Program]:
    progs = []
    for dtype, shape, factor in [
        (np.float32, (3, 4), -1.75),
        (np.float64, (2, 5), 2.5),
        (np.float64, (), 1e-3),
    ]:
        dt = np.dtype(dtype)
        name = f"scale_any_{XLA_DTYPE_NAMES[dt.name]}_{shape_name(shape) or 'rank0'}"
        x = (rng_for(name).standard_normal(shape) * 100).astype(dt)
        progs.append(
            Program(
                name=name,
                description=f"scale_any (guest scale_any.wasm, any-dtype kernel) over "
                f"{dt.name}{list(shape)} with factor={factor} (f64 attribute): x * factor, "
                "computed in f64 and rounded once",
                fn=lambda x, factor=factor: scale_any(x, factor),
                inputs=[x],
                oracle=lambda x, factor=factor, dt=dt: [
                    np.asarray(x.astype(np.float64) * factor).astype(dt)
                ],
                targets=["scale_any"],
            )
        )
    return progs


# --------------------------------------------------------------------------
# tridiag_solve: a batched tridiagonal solver
# --------------------------------------------------------------------------


def tridiag_inputs(name: str, batch: tuple[int, ...], n: int, k: int | None, dt: np.dtype):
    r = rng_for(name)
    dl = r.uniform(-1, 1, (*batch, n))
    du = r.uniform(-1, 1, (*batch, n))
    # Diagonally dominant: well conditioned (the solver pivots anyway).
    d = r.uniform(2.5, 4, (*batch, n)) * r.choice([-1, 1], (*batch, n))
    b = r.standard_normal((*batch, n) if k is None else (*batch, n, k))
    return [a.astype(dt) for a in (dl, d, du, b)]


def np_tridiag_solve(dl, d, du, b):
    """Dense solve in float64 (dl[..., 0] and du[..., n-1] ignored)."""
    dt = b.dtype
    n = d.shape[-1]
    a = np.zeros((*d.shape, n))
    idx = np.arange(n)
    a[..., idx, idx] = d
    a[..., idx[1:], idx[:-1]] = dl[..., 1:]
    a[..., idx[:-1], idx[1:]] = du[..., :-1]
    rhs = b.astype(np.float64)
    single = rhs.shape == d.shape
    x = np.linalg.solve(a, rhs[..., None] if single else rhs)
    return [(x[..., 0] if single else x).astype(dt)]


def tridiag_programs() -> list[Program]:
    progs = []
    for dtype, batch, n, k, tol in [
        (np.float64, (2, 3), 6, 2, {"rtol": 1e-12, "atol": 1e-12}),
        (np.float32, (4,), 5, None, {"rtol": 1e-5, "atol": 1e-6}),
    ]:
        dt = np.dtype(dtype)
        bshape = (*batch, n) if k is None else (*batch, n, k)
        name = f"tridiag_solve_{XLA_DTYPE_NAMES[dt.name]}_{shape_name(bshape)}"
        progs.append(
            Program(
                name=name,
                description=f"tridiag_solve (guest tridiag_solve.wasm) over {dt.name}: "
                f"dl, d, du [{', '.join(map(str, (*batch, n)))}], b {list(bshape)}; "
                "x solves A x = b per batch element (diagonally dominant systems); "
                "oracle: a dense float64 solve",
                fn=lambda dl, d, du, b: jax.ffi.ffi_call(
                    "tridiag_solve", jax.ShapeDtypeStruct(b.shape, b.dtype)
                )(dl, d, du, b),
                inputs=tridiag_inputs(name, batch, n, k, dt),
                oracle=np_tridiag_solve,
                targets=["tridiag_solve"],
                tolerance=tol,
            )
        )
    return progs


# --------------------------------------------------------------------------
# In-place updates: a result aliased with its operand
# --------------------------------------------------------------------------


def inplace_programs() -> list[Program]:
    progs = []
    for target, guest in [("inplace_set0", "inplace_set0.wasm (Rust)"),
                          ("inplace_set0_cpp", "inplace_set0_cpp.wasm (C++)")]:
        for dtype, shape, donate in [
            (np.float32, (3, 4), False),
            (np.float64, (2, 3, 5), False),
            (np.float64 if target == "inplace_set0" else np.float32, (4, 3), True),
        ]:
            dt = np.dtype(dtype)
            how = "donated" if donate else "aliased"
            name = f"{target}_{how}_{XLA_DTYPE_NAMES[dt.name]}_{shape_name(shape)}"
            x = (rng_for(name).standard_normal(shape) * 10).astype(dt)
            where = (
                "jax.jit(..., donate_argnums=0) of the call with input_output_aliases={0: 0}"
                if donate
                else "input_output_aliases={0: 0}"
            )
            progs.append(
                Program(
                    name=name,
                    description=f"{target} (guest {guest}) over {dt.name}{list(shape)} with "
                    f"{where}: the result is the operand's memory, so writing only the first "
                    f"element of each row (value={SET0_VALUE}) leaves x's other elements",
                    fn=lambda x, target=target: inplace_set0(target, x),
                    inputs=[x],
                    oracle=np_set0,
                    targets=[target],
                    donate_argnums=(0,) if donate else (),
                )
            )
    progs += [
        Program(
            name="aliasing_cpp_aliased",
            description="aliasing_cpp (guest inplace_set0_cpp.wasm, JAX's aliasing example) "
            "with input_output_aliases={0: 0} over f32[2, 8]: operand and result have one "
            "data pointer, and y = x",
            fn=lambda x: aliasing_call(x, alias=True),
            inputs=[f32_normal("aliasing_cpp_aliased", (2, 8))],
            oracle=lambda x: [x],
            targets=["aliasing_cpp"],
        ),
        Program(
            name="aliasing_cpp_unaliased",
            description="aliasing_cpp without input_output_aliases: operand and result have "
            "different data pointers, so the handler's own INVALID_ARGUMENT (as natively)",
            fn=lambda x: aliasing_call(x, alias=False),
            inputs=[f32_normal("aliasing_cpp_unaliased", (2, 8))],
            oracle=None,
            targets=["aliasing_cpp"],
            expect_error=guest_error(
                "INVALID_ARGUMENT",
                "aliasing_cpp",
                "inplace_set0_cpp.wasm",
                message="When aliased, the input and output buffers should point to the same data.",
            ),
        ),
    ]
    return progs


# --------------------------------------------------------------------------
# Two guests in one program; errors and traps
# --------------------------------------------------------------------------


def other_programs() -> list[Program]:
    return [
        Program(
            name="rms_norm_then_scale",
            description="two guests in one program: scale_any(rms_norm(x), factor=3) over "
            "f32[4,8] (rms_norm.wasm, then scale_any.wasm)",
            fn=lambda x: scale_any(rms_norm(x), 3.0),
            inputs=[f32_normal("rms_norm_then_scale", (4, 8))],
            oracle=lambda x: [
                (x.astype(np.float64) * np_rms_scale(x) * 3.0).astype(np.float32)
            ],
            targets=["rms_norm", "scale_any"],
            tolerance=dict(RMS_TOL),
        ),
        Program(
            name="fail",
            description="the guest target `fail` (trap.wasm) with code=8 and a message: "
            "RESOURCE_EXHAUSTED with that message, prefixed by the host with the target "
            "and the guest file",
            fn=lambda x: ffi_call_like("fail", x, code=np.int32(8), message="tenant quota exceeded"),
            inputs=[f32_normal("fail", (4,))],
            oracle=None,
            targets=["fail"],
            expect_error=guest_error(
                "RESOURCE_EXHAUSTED", "fail", "trap.wasm", message="tenant quota exceeded"
            ),
        ),
        single_call(
            "trap",
            "trap",
            f32_normal("trap", (4,)),
            "the guest target `trap` (trap.wasm), which executes `unreachable`: "
            "an INTERNAL error naming the trap",
            expect_error=guest_error(
                "INTERNAL",
                "trap",
                "trap.wasm",
                contains="trapped: wasm `unreachable` instruction executed",
            ),
        ),
    ]


def programs() -> list[Program]:
    return (
        rms_programs()
        + echo_programs()
        + scale_programs()
        + tridiag_programs()
        + inplace_programs()
        + other_programs()
    )


# --------------------------------------------------------------------------
# Lowering and writing
# --------------------------------------------------------------------------


def write_program(p: Program, out: pathlib.Path) -> dict[str, Any]:
    exp = lower(p)
    called = {line.split("stablehlo.custom_call @", 1)[1].split("(", 1)[0]
              for line in exp.mlir_module().splitlines() if "stablehlo.custom_call @" in line}
    if called != set(p.targets):
        sys.exit(f"{p.name}: the lowered program calls {sorted(called)}, expected {p.targets}")
    return write_checked_program(p, exp, out, subdir=f"{SUBDIR}/", oracle="numpy (float64, rounded once)")


def check_tridiag_oracle() -> None:
    """The dense oracle agrees with jax.lax.linalg.tridiagonal_solve (f64)."""
    dl, d, du, b = tridiag_inputs("check", (3,), 7, 2, np.dtype(np.float64))
    want = np.asarray(jax.lax.linalg.tridiagonal_solve(dl, d, du, b))
    if not np.allclose(np_tridiag_solve(dl, d, du, b)[0], want, rtol=1e-12, atol=1e-12):
        sys.exit("tridiag_solve oracle disagrees with jax.lax.linalg.tridiagonal_solve")


def generate(out: pathlib.Path) -> None:
    check_tridiag_oracle()
    clear_generated(out, ("*.mlir", "*.mlirbc", "*.npy", "manifest.json"))
    progs = programs()
    names = [p.name for p in progs]
    if len(set(names)) != len(names):
        sys.exit(f"duplicate program names: {names}")
    write_manifest(out, "tests/gen_guest_programs.py", [write_program(p, out) for p in progs])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=pathlib.Path, default=DEFAULT_OUT, help="output directory")
    args = ap.parse_args()
    generate(args.out)


if __name__ == "__main__":
    main()
