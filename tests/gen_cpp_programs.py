#!/usr/bin/env python3
"""Generates the JAX-lowered programs of the C++ guest SDK tests.

Run from the workspace root:

    .venv/bin/python tests/gen_cpp_programs.py [--out DIR]

The programs call the C/C++ kernels of ``guests/cpp/`` (rms_norm_cpp*,
scale_any_cpp, inplace_set0_cpp and aliasing_cpp, with
``input_output_aliases`` and ``donate_argnums``) and ``tests/cpp/`` (binding.cc, raw_c_api.c, statics.cc). The test
``cpp_sdk`` (tests/integration/cpp_sdk.rs) runs each program twice in one
process: with every target served by the kernel built as a wasm guest
against cyxla's headers, and with the target renamed to ``<target>__native``
and served by the same source built natively against jaxlib's headers
(registered as ``--native`` does). The two runs must give bit-identical
outputs, or the same error code and message (the guest's message carries the
host's prefix "target `<t>` (guest <file>): ").

For each program DIR (default: tests/cpp/programs next to this script)
receives ``<name>.mlir`` (StableHLO text), ``<name>.in<k>.npy`` and, where
numpy can predict them, ``<name>.out<k>.npy``; ``manifest.json`` describes
them. Output is deterministic; the test ``cpp_sdk::generator_reproduces_programs``
reruns this script and requires identical files.
"""

from __future__ import annotations

import argparse
import dataclasses
import pathlib
import sys
from typing import Any

# Sets JAX up (CPU, 64-bit types, no source locations): before jax is imported.
from programs_common import EPS, STATUS_CODES, BaseProgram, ffi_call_like, lower
from programs_common import aliasing_call, inplace_set0, np_set0, rms_norm_call, rms_norm_with_vjp
from programs_common import check_no_source_locations, clear_generated, save_inputs, save_outputs
from programs_common import write_manifest

import numpy as np  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent
DEFAULT_OUT = HERE / "cpp" / "programs"
SEED = 20250704


@dataclasses.dataclass
class Program(BaseProgram):
    """A program run twice, as a guest and natively (oracle None: the native
    build is the only reference)."""

    # the error both builds must produce: (code name, message of the native
    # build); the guest's message is the host's prefix followed by it
    error: tuple[str, str] | None = None
    # the guest's message when it differs from the native one (numbers that
    # depend on the wasm32 layout)
    guest_message: str | None = None
    # an error only the guest produces (the native build succeeds):
    # (code name, substring of the guest's message)
    guest_error: tuple[str, str] | None = None
    # run only as a guest (the native build would abort the process)
    guest_only: bool = False


def rng() -> np.random.Generator:
    return np.random.default_rng(SEED)


def f32(shape: tuple[int, ...], seed: int) -> np.ndarray:
    return np.random.default_rng(SEED + seed).standard_normal(shape).astype(np.float32)


# --------------------------------------------------------------------------
# rms_norm: the tutorial's forward, vmap and grad through custom_vjp
# --------------------------------------------------------------------------


def rms_norm(x: jax.Array, vmap_method: str = "broadcast_all") -> jax.Array:
    return rms_norm_call("rms_norm_cpp", x, vmap_method=vmap_method)


# Its gradient calls rms_norm_cpp_fwd and rms_norm_cpp_bwd.
rms_norm_vjp = rms_norm_with_vjp("rms_norm_cpp")


def np_rms_norm_rows(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """y and 1/rms per row, in float32, summing in the handler's order."""
    rows = x.reshape(-1, x.shape[-1])
    y = np.empty_like(rows)
    res = np.empty(rows.shape[0], np.float32)
    n = np.float32(rows.shape[1])
    for r, row in enumerate(rows):
        s = np.float32(0)
        for v in row:
            s = np.float32(s + np.float32(v * v))
        inv = np.float32(np.float32(1) / np.sqrt(np.float32(s / n + EPS)))
        res[r] = inv
        y[r] = row * inv
    return y.reshape(x.shape), res.reshape(x.shape[:-1])


def np_rms_norm_grad(x: np.ndarray, ct: np.ndarray) -> np.ndarray:
    """The bwd handler's formula in float32, same order."""
    _, res = np_rms_norm_rows(x)
    rows = x.reshape(-1, x.shape[-1])
    cts = ct.reshape(rows.shape)
    out = np.empty_like(rows)
    n = np.float32(rows.shape[1])
    for r, (row, c) in enumerate(zip(rows, cts)):
        dot = np.float32(0)
        for a, b in zip(row, c):
            dot = np.float32(dot + np.float32(a * b))
        inv = res.reshape(-1)[r]
        factor = np.float32(np.float32(np.float32(dot * inv) * inv) * inv) / n
        out[r] = inv * c - np.float32(factor) * row
    return out.reshape(x.shape)


def rms_norm_programs() -> list[Program]:
    x = f32((4, 16), 1)
    xb = f32((3, 4, 16), 2)
    w = f32((4, 16), 3)

    def loss(x, w):
        return jnp.sum(rms_norm_vjp(x) * w)

    return [
        Program(
            "rms_norm",
            "rms_norm_cpp(x, eps=1e-5) on f32[4,16]",
            lambda x: rms_norm(x),
            [x],
            ["rms_norm_cpp"],
            oracle=lambda x: [np_rms_norm_rows(x)[0]],
        ),
        Program(
            "rms_norm_vmap",
            "jax.vmap(rms_norm) over f32[3,4,16] (vmap_method broadcast_all: one call)",
            jax.vmap(lambda x: rms_norm(x)),
            [xb],
            ["rms_norm_cpp"],
            oracle=lambda x: [np_rms_norm_rows(x)[0]],
        ),
        Program(
            "rms_norm_vmap_sequential",
            "jax.vmap(rms_norm) with vmap_method sequential: one call per row in a loop",
            jax.vmap(lambda x: rms_norm(x, vmap_method="sequential")),
            [xb[0]],
            ["rms_norm_cpp"],
            oracle=lambda x: [np_rms_norm_rows(x)[0]],
        ),
        Program(
            "rms_norm_grad",
            "jax.grad of sum(rms_norm(x) * w) through custom_vjp (rms_norm_cpp_fwd/_bwd)",
            jax.grad(loss),
            [x, w],
            ["rms_norm_cpp_fwd", "rms_norm_cpp_bwd"],
            oracle=lambda x, w: [np_rms_norm_grad(x, w)],
        ),
        Program(
            "rms_norm_vmap_value_and_grad",
            "jax.vmap(jax.value_and_grad(loss)) over a batch of x",
            jax.vmap(jax.value_and_grad(loss), in_axes=(0, None)),
            [xb, w],
            ["rms_norm_cpp_fwd", "rms_norm_cpp_bwd"],
        ),
    ]


# --------------------------------------------------------------------------
# scale_any: dispatch on AnyBuffer's dtype
# --------------------------------------------------------------------------

SCALE_DTYPES = ["float32", "float64", "complex64", "complex128", "int8", "int32", "int64", "uint8"]


def scale_any(x: jax.Array, factor: float) -> jax.Array:
    return ffi_call_like("scale_any_cpp", x, factor=np.float64(factor))


def scale_inputs() -> list[np.ndarray]:
    g = rng()
    out = []
    for name in SCALE_DTYPES:
        dt = np.dtype(name)
        if dt.kind == "f":
            out.append(g.standard_normal((2, 5)).astype(dt))
        elif dt.kind == "c":
            out.append((g.standard_normal((2, 5)) + 1j * g.standard_normal((2, 5))).astype(dt))
        else:
            info = np.iinfo(dt)
            out.append(g.integers(info.min, info.max, (2, 5), endpoint=True, dtype=dt))
    return out


def np_scale(x: np.ndarray, factor: float) -> np.ndarray:
    dt = x.dtype
    if dt.kind == "f":
        return (x * dt.type(factor)).astype(dt)
    if dt.kind == "c":
        part = np.float32 if dt == np.complex64 else np.float64
        return (x * part(factor)).astype(dt)
    # Integer: wrap-around multiplication by the truncated factor.
    bits = dt.itemsize * 8
    u = np.dtype(f"uint{bits}")
    return (x.astype(u) * u.type(int(factor) % (1 << bits))).astype(u).view(dt)


def scale_programs() -> list[Program]:
    return [
        Program(
            "scale_any",
            "scale_any_cpp(x, factor=2.5) for x of each dtype "
            + ", ".join(SCALE_DTYPES),
            lambda *xs: tuple(scale_any(x, 2.5) for x in xs),
            scale_inputs(),
            ["scale_any_cpp"],
            oracle=lambda *xs: [np_scale(x, 2.5) for x in xs],
        ),
    ]


# --------------------------------------------------------------------------
# In-place updates through aliasing (guests/cpp/inplace_set0.cc)
# --------------------------------------------------------------------------

def inplace_set0_cpp(x: jax.Array) -> jax.Array:
    return inplace_set0("inplace_set0_cpp", x)


def inplace_programs() -> list[Program]:
    x64 = f32((2, 3, 5), 21).astype(np.float64) * 10
    # (name, description, x, donate_argnums)
    set0_cases = [
        (
            "inplace_set0_aliased_f32",
            "inplace_set0_cpp with input_output_aliases={0: 0} over f32[3, 4]: only the "
            "first element of each row is written, the rest is x's",
            f32((3, 4), 20),
            (),
        ),
        (
            "inplace_set0_aliased_f64",
            "inplace_set0_cpp with input_output_aliases={0: 0} over f64[2, 3, 5]",
            x64,
            (),
        ),
        (
            "inplace_set0_donated_f32",
            "inplace_set0_cpp with input_output_aliases={0: 0} under "
            "jax.jit(..., donate_argnums=0) over f32[4, 3]",
            f32((4, 3), 22),
            (0,),
        ),
    ]
    return [
        Program(
            name,
            description,
            inplace_set0_cpp,
            [x],
            ["inplace_set0_cpp"],
            oracle=np_set0,
            donate_argnums=donate_argnums,
        )
        for name, description, x, donate_argnums in set0_cases
    ] + [
        Program(
            "aliasing_aliased",
            "JAX's aliasing example (aliasing_cpp) with input_output_aliases={0: 0}: one "
            "data pointer, y = x",
            lambda x: aliasing_call(x, alias=True),
            [f32((2, 8), 23)],
            ["aliasing_cpp"],
            oracle=lambda x: [x],
        ),
        Program(
            "err_aliasing_unaliased",
            "JAX's aliasing example (aliasing_cpp) without aliasing: the handler's own error",
            lambda x: aliasing_call(x, alias=False),
            [f32((2, 8), 24)],
            ["aliasing_cpp"],
            error=(
                "INVALID_ARGUMENT",
                "When aliased, the input and output buffers should point to the same data.",
            ),
        ),
    ]


# --------------------------------------------------------------------------
# The binding test kernels (tests/cpp/binding.cc)
# --------------------------------------------------------------------------

ATTRS = {
    "name": "héllo",
    "arr": np.array([1, -2, 40], np.int64),
    "dct": {"z": np.int32(5), "a": "abc", "m": np.float64(2.5)},
    "f64": np.float64(0.125),
    "flag": True,
    "i32": np.int32(-9),
    "f32arr": np.array([0.5, 1.25, -2.0], np.float32),
}


def attrs_call(x: jax.Array, y: jax.Array, **attrs: Any):
    return jax.ffi.ffi_call(
        "attrs_cpp",
        (
            jax.ShapeDtypeStruct((32,), jnp.float64),
            jax.ShapeDtypeStruct(x.shape, x.dtype),
            jax.ShapeDtypeStruct((512,), jnp.uint8),
        ),
    )(x, y, **attrs)


def dict_call(**attrs: Any):
    return jax.ffi.ffi_call(
        "dict_cpp",
        (jax.ShapeDtypeStruct((16,), jnp.float64), jax.ShapeDtypeStruct((256,), jnp.uint8)),
    )(**attrs)


def decode_error(bad_operands: str, diagnostics: str) -> tuple[str, str]:
    """XLA's error when a handler's operands (``bad_operands``, e.g. "1, 2";
    the attributes are operand 0) do not decode: INVALID_ARGUMENT with
    ``diagnostics``, one message per bad operand."""
    return (
        "INVALID_ARGUMENT",
        f"[execute] Failed to decode all FFI handler operands (bad operands at: {bad_operands})\n"
        f"Diagnostics:\n{diagnostics}",
    )


def strict_program(name: str, target: str, description: str, **expect: Any) -> Program:
    """strict_cpp's handler (``eps`` = 3) registered as ``target``, on
    f32[7]; ``expect`` is the oracle or the error."""
    return Program(
        name,
        description,
        lambda v: ffi_call_like(target, v, eps=np.float32(3.0)),
        [f32((7,), 5)],
        [target],
        **expect,
    )


def binding_programs() -> list[Program]:
    x = f32((2, 3), 4)
    y = np.arange(6, dtype=np.int16).reshape(3, 2)
    v = f32((7,), 5)
    bad_dct = dict(ATTRS, dct={"z": np.float32(5), "a": "abc", "m": np.float64(2.5)})
    return [
        strict_program(
            "strict",
            "strict_cpp",
            "strict_cpp (rank-1 buffers) on f32[7]",
            oracle=lambda v: [v * np.float32(3.0)],
        ),
        Program(
            "attrs",
            "attrs_cpp: every attribute kind, Ctx, RemainingArgs/Rets; the results "
            "summarize what was decoded, including XLA's messages for failed gets",
            lambda x, y: attrs_call(x, y, **ATTRS),
            [x, y],
            ["attrs_cpp"],
        ),
        Program(
            "dict",
            "dict_cpp: all attributes as a Dictionary (names, Isa per type)",
            lambda: dict_call(
                beta=np.float32(1.0),
                Alpha=np.int64(3),
                gamma="text",
                delta=np.float64(-1.5),
                eps=np.int32(2),
                zeta=True,
                arr=np.array([1, 2], np.int64),
            ),
            [],
            ["dict_cpp"],
        ),
        Program(
            "params",
            "params_cpp: attributes decoded into a struct (XLA_FFI_REGISTER_STRUCT_ATTR_DECODING)",
            lambda v: ffi_call_like(
                "params_cpp", v, scale=np.float32(0.5), offset=np.int64(-3), label="four"
            ),
            [v],
            ["params_cpp"],
            oracle=lambda v: [v * np.float32(0.5) + np.float32(1.0)],
        ),
        Program(
            "auto",
            "auto_cpp: binding inferred from the function signature (Attr<float, name>)",
            lambda v: ffi_call_like("auto_cpp", v, factor=np.float32(-2.0)),
            [v],
            ["auto_cpp"],
            oracle=lambda v: [v * np.float32(-2.0)],
        ),
        Program(
            "raw_device",
            "raw_device_c: a plain C handler reading the device ordinal through the API table",
            lambda: jax.ffi.ffi_call("raw_device_c", jax.ShapeDtypeStruct((2,), jnp.int32))(),
            [],
            ["raw_device_c"],
            oracle=lambda: [np.array([0, 7], np.int32)],
        ),
        Program(
            "raw_threads",
            "raw_threads_c: XLA_FFI_ThreadPool_NumThreads; natively 1, in the sandbox the "
            "call fails and the handler returns that error",
            lambda: jax.ffi.ffi_call("raw_threads_c", jax.ShapeDtypeStruct((), jnp.int64))(),
            [],
            ["raw_threads_c"],
            oracle=lambda: [np.array(1, np.int64)],
            guest_error=(
                "UNIMPLEMENTED",
                "`XLA_FFI_ThreadPool_NumThreads` is not supported in the cyxla sandbox",
            ),
        ),
        Program(
            "panic",
            "typed_data_mismatch_cpp on f32: AnyBuffer::typed_data<double> asserts; the "
            "guest traps with the assertion's message (guest only: natively XLA's "
            "assert aborts the process)",
            lambda v: ffi_call_like("typed_data_mismatch_cpp", v),
            [v],
            ["typed_data_mismatch_cpp"],
            guest_error=(
                "INTERNAL",
                "the guest panicked: Template type must match the underlying buffer dtype",
            ),
            guest_only=True,
        ),
        Program(
            "panic_bad_access",
            "bad_access_cpp: ErrorOr::value() without a value; libc++ cannot throw in a "
            "guest, the runtime traps with libc++'s message (guest only)",
            lambda: jax.ffi.ffi_call("bad_access_cpp", jax.ShapeDtypeStruct((), jnp.int32))(),
            [],
            ["bad_access_cpp"],
            guest_error=(
                "INTERNAL",
                "the guest panicked: bad_variant_access was thrown in -fno-exceptions mode",
            ),
            guest_only=True,
        ),
        Program(
            "probe",
            "probe_cpp: strict_cpp's handler answers a metadata probe (its headers' API "
            "version, as an offset from it: 0.0; no traits, no state)",
            lambda v: jax.ffi.ffi_call("probe_cpp", jax.ShapeDtypeStruct((4,), jnp.int64))(
                v, eps=np.float32(3.0)
            ),
            [v],
            ["probe_cpp"],
            oracle=lambda v: [np.array([0, 0, 0, 0], np.int64)],
        ),
        strict_program(
            "err_frame_size",
            "frame_size_cpp",
            "frame_size_cpp: strict_cpp's handler given a frame whose struct_size is one "
            "pointer too large (XLA's check; the sizes are the layout's: 168 natively, "
            "104 in wasm32)",
            error=(
                "INVALID_ARGUMENT",
                "Unexpected XLA_FFI_CallFrame size: expected 168 got 176. "
                "Check installed software versions.",
            ),
            guest_message="Unexpected XLA_FFI_CallFrame size: expected 104 got 108. "
            "Check installed software versions.",
        ),
        strict_program(
            "err_stage",
            "stage_cpp",
            "stage_cpp: strict_cpp's handler given a frame of stage INSTANTIATE",
            error=(
                "INVALID_ARGUMENT",
                "Wrong execution stage: expected `execute` but got `instantiate`",
            ),
        ),
        Program(
            "err_dict_value",
            "attrs_cpp with dct.z an f32: Dictionary::get<int32_t> fails, the handler returns it",
            lambda x, y: attrs_call(x, y, **bad_dct),
            [x, y],
            ["attrs_cpp"],
            error=("INTERNAL", "Wrong scalar data type: expected S32 but got F32"),
        ),
        Program(
            "err_params_missing",
            "params_cpp without `label`: struct decoding fails",
            lambda v: ffi_call_like("params_cpp", v, scale=np.float32(0.5), offset=np.int64(-3)),
            [v],
            ["params_cpp"],
            error=decode_error("0", "Wrong number of attributes: expected 3 attributes but got 2"),
        ),
        Program(
            "err_rank",
            "strict_cpp (rank-1 buffers) on f32[2,3]",
            lambda x: ffi_call_like("strict_cpp", x, eps=np.float32(3.0)),
            [x],
            ["strict_cpp"],
            error=decode_error("1, 2", "Wrong buffer rank: expected 1 but got 2" * 2),
        ),
        Program(
            "raw_fail",
            "raw_fail_c: a plain C handler returning an error made through the API table",
            lambda v: ffi_call_like("raw_fail_c", v),
            [v],
            ["raw_fail_c"],
            error=("FAILED_PRECONDITION", "raw_fail_c: deliberate failure (1 operands)"),
        ),
    ]


# --------------------------------------------------------------------------
# Decoding errors of the tutorial's handler (XLA's binding messages)
# --------------------------------------------------------------------------


def rms_call(*args: jax.Array, results=None, **attrs: Any):
    x = args[0]
    results = results or jax.ShapeDtypeStruct(x.shape, x.dtype)
    return jax.ffi.ffi_call("rms_norm_cpp", results)(*args, **attrs)


def error_programs() -> list[Program]:
    x = f32((2, 8), 6)
    x64 = x.astype(np.float64)
    scalar = np.array(2.0, np.float32)
    half = np.arange(4, dtype=np.float16)
    same = jax.ShapeDtypeStruct(x.shape, x.dtype)
    return [
        Program(
            "err_rank0",
            "rms_norm_cpp on a rank-0 x: the handler's own error",
            lambda s: rms_call(s, eps=EPS),
            [scalar],
            ["rms_norm_cpp"],
            error=("INVALID_ARGUMENT", "RmsNorm input must be an array"),
        ),
        Program(
            "err_unsupported_dtype",
            "scale_any_cpp on f16: the handler's own error",
            lambda h: scale_any(h, 2.0),
            [half],
            ["scale_any_cpp"],
            error=("UNIMPLEMENTED", "scale_any_cpp: unsupported dtype f16"),
        ),
        Program(
            "err_arity",
            "rms_norm_cpp called with two operands",
            lambda x: rms_call(x, x, eps=EPS),
            [x],
            ["rms_norm_cpp"],
            error=("INVALID_ARGUMENT", "[execute] Wrong number of arguments: expected 1 but got 2"),
        ),
        Program(
            "err_results",
            "rms_norm_cpp called with two results",
            lambda x: rms_call(x, results=(same, same), eps=EPS),
            [x],
            ["rms_norm_cpp"],
            error=("INVALID_ARGUMENT", "[execute] Wrong number of results: expected 1 but got 2"),
        ),
        Program(
            "err_dtype",
            "rms_norm_cpp on f64 operand and result",
            lambda x: rms_call(x, eps=EPS),
            [x64],
            ["rms_norm_cpp"],
            error=decode_error("1, 2", "Wrong buffer dtype: expected F32 but got F64" * 2),
        ),
        Program(
            "err_attr_type",
            "rms_norm_cpp with eps an f64",
            lambda x: rms_call(x, eps=np.float64(1e-5)),
            [x],
            ["rms_norm_cpp"],
            error=decode_error("0", "Wrong scalar data type: expected F32 but got F64"),
        ),
        Program(
            "err_attr_kind",
            "rms_norm_cpp with eps a string",
            lambda x: rms_call(x, eps="tiny"),
            [x],
            ["rms_norm_cpp"],
            error=decode_error("0", "Wrong attribute type: expected scalar but got string"),
        ),
        Program(
            "err_attr_missing",
            "rms_norm_cpp without eps",
            lambda x: rms_call(x),
            [x],
            ["rms_norm_cpp"],
            error=("INVALID_ARGUMENT", "[execute] Wrong number of attributes: expected 1 but got 0"),
        ),
        Program(
            "err_attr_extra",
            "rms_norm_cpp with eps and an extra attribute",
            lambda x: rms_call(x, eps=EPS, extra=np.int64(1)),
            [x],
            ["rms_norm_cpp"],
            error=(
                "INVALID_ARGUMENT",
                "[execute] Wrong number of attributes: expected 1 but got 2 with name(s): eps, extra",
            ),
        ),
        Program(
            "err_attr_name",
            "rms_norm_cpp with `epsilon` instead of `eps`",
            lambda x: rms_call(x, epsilon=EPS),
            [x],
            ["rms_norm_cpp"],
            error=decode_error("0", "Attribute name mismatch: epsilon vs eps"),
        ),
    ]


# --------------------------------------------------------------------------
# Statics under std::mutex / std::call_once / std::unordered_map
# (tests/cpp/statics.cc)
# --------------------------------------------------------------------------


def counter(x: jax.Array, index: int) -> tuple[jax.Array, jax.Array]:
    return jax.ffi.ffi_call(
        "counter_cpp",
        (jax.ShapeDtypeStruct(x.shape, x.dtype), jax.ShapeDtypeStruct((), np.int32)),
    )(x, index=np.int64(index))


def counter_chain(x: jax.Array):
    # Each call consumes the previous one's y, so the calls run in order
    # (on one instance of the guest's pool, which reuses its idle instance).
    y1, c1 = counter(x, 7)
    y2, c2 = counter(y1, 7)
    y3, c3 = counter(y2, 3)
    return y3, c1, c2, c3


def statics_programs() -> list[Program]:
    x = f32((6,), 41)
    return [
        Program(
            "statics_counter",
            "counter_cpp (std::mutex, std::lock_guard, std::call_once, "
            "std::unordered_map statics) called three times in sequence with "
            "index 7, 7, 3: counts 1, 2, 1 and y = x + 4, natively and in a "
            "fresh guest instance",
            counter_chain,
            [x],
            ["counter_cpp"],
            oracle=lambda x: [
                x + np.float32(1) + np.float32(2) + np.float32(1),
                np.array(1, np.int32),
                np.array(2, np.int32),
                np.array(1, np.int32),
            ],
        ),
    ]


def programs() -> list[Program]:
    return (
        rms_norm_programs()
        + scale_programs()
        + inplace_programs()
        + statics_programs()
        + binding_programs()
        + error_programs()
    )


# --------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------


def tensor(file: str | None, dtype: Any, shape: tuple[int, ...]) -> dict[str, Any]:
    dtype = np.dtype(dtype)
    return {"file": file, "descr": dtype.str, "shape": [int(d) for d in shape]}


def write_program(p: Program, out: pathlib.Path) -> dict[str, Any]:
    exp = lower(p)
    text = exp.mlir_module()
    check_no_source_locations(p, text)
    for t in p.targets:
        if f"stablehlo.custom_call @{t}(" not in text:
            sys.exit(f"{p.name}: no custom call to {t} in the lowered program")
    (out / f"{p.name}.mlir").write_text(text)

    inputs = save_inputs(p, exp, out, tensor)
    expected = p.oracle(*p.inputs) if p.oracle else None
    outputs = save_outputs(p, exp, expected, out, tensor)

    def err(e: tuple[str, str] | None, key: str) -> dict[str, Any] | None:
        return None if e is None else {"code": e[0], "code_value": STATUS_CODES[e[0]], key: e[1]}

    error = err(p.error, "native_message")
    if error is not None and p.guest_message is not None:
        error["guest_message"] = p.guest_message

    return {
        "name": p.name,
        "description": p.description,
        "mlir": f"{p.name}.mlir",
        "targets": p.targets,
        "inputs": inputs,
        "outputs": outputs,
        "error": error,
        "guest_error": err(p.guest_error, "message_contains"),
        "guest_only": p.guest_only,
    }


def generate(out: pathlib.Path) -> None:
    clear_generated(out, ("*.mlir", "*.npy", "manifest.json"))
    entries = [write_program(p, out) for p in programs()]
    write_manifest(out, "tests/gen_cpp_programs.py", entries, ensure_ascii=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=pathlib.Path, default=DEFAULT_OUT, help="output directory")
    args = parser.parse_args()
    generate(args.out)


if __name__ == "__main__":
    main()
