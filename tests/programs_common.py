"""What the program generators ``tests/gen_*.py`` share.

Importing this module sets JAX up for lowering test programs, so the
generators import it before ``jax``: the CPU platform, 64-bit types
(int64, uint64, float64, complex128), and no Python frames in MLIR
locations, so that nothing of this machine (file paths) or of the scripts
(line numbers) ends up in the programs; name locations such as
``loc("jit(f)/ffi_call")`` remain.

Then: the calls of the kernels that more than one generator lowers (the JAX
FFI tutorial's rms_norm and JAX's in-place examples, written both as Rust
and as C++ guests); the test program record, lowering it with
``jax.export``, and writing its StableHLO, ``.npy`` inputs and outputs and
``manifest.json``.
"""

from __future__ import annotations

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
from jax import export  # noqa: E402

jax.config.update("jax_enable_x64", True)
jax.config.update("jax_traceback_in_locations_limit", 0)

HERE = pathlib.Path(__file__).resolve().parent

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
STATUS_CODES = {
    "INVALID_ARGUMENT": 3,
    "NOT_FOUND": 5,
    "RESOURCE_EXHAUSTED": 8,
    "FAILED_PRECONDITION": 9,
    "UNIMPLEMENTED": 12,
    "INTERNAL": 13,
}

EXACT = {"rtol": 0.0, "atol": 0.0}


@dataclasses.dataclass
class BaseProgram:
    """One test program: ``fn`` lowered for ``inputs``."""

    name: str
    description: str
    fn: Callable[..., Any]
    inputs: list[np.ndarray]
    # The custom-call targets the lowered program calls.
    targets: list[str] = dataclasses.field(default_factory=list)
    # numpy oracle: inputs -> expected outputs (None when there are none)
    oracle: Callable[..., list[np.ndarray]] | None = None
    # jax.jit's donate_argnums: these inputs are donated to the program.
    donate_argnums: tuple[int, ...] = ()


@dataclasses.dataclass
class Program(BaseProgram):
    """A program of ``tests/programs/manifest.json``'s schema
    (``cyxla_tests::Manifest``): its outputs are compared with the oracle's
    within ``tolerance``, or it fails with ``expect_error``."""

    tolerance: dict[str, float] = dataclasses.field(default_factory=lambda: dict(EXACT))
    expect_error: dict[str, Any] | None = None
    # Extra manifest entries (e.g. how replicas differ).
    notes: dict[str, Any] = dataclasses.field(default_factory=dict)


def expected_error(
    stage: str, code: str, *, message: str | None = None, contains: str | None = None
) -> dict[str, Any]:
    """A ``Program.expect_error``: the stage that fails, the status
    code, and the whole message or a part of it."""
    e: dict[str, Any] = {"stage": stage, "code": code, "code_value": STATUS_CODES[code]}
    if message is not None:
        e["message"] = message
    if contains is not None:
        e["message_contains"] = contains
    return e


def ffi_call_like(target: str, x: jax.Array, **attrs: Any) -> jax.Array:
    """``jax.ffi.ffi_call(target, ...)(x, **attrs)`` with one result shaped like ``x``."""
    return jax.ffi.ffi_call(target, jax.ShapeDtypeStruct(x.shape, x.dtype))(x, **attrs)


def single_call(name: str, target: str, x: np.ndarray, description: str, **fields: Any) -> Program:
    """A program that calls ``target`` (no attributes) on its one input ``x``,
    with one result shaped like it; ``fields`` are the rest of the
    :class:`Program` (its oracle or error, notes)."""
    return Program(
        name=name,
        description=description,
        fn=lambda x: ffi_call_like(target, x),
        inputs=[x],
        targets=[target],
        **fields,
    )


# --------------------------------------------------------------------------
# rms_norm: the tutorial's forward, vmap and grad through custom_vjp
# --------------------------------------------------------------------------

# The `eps` attribute of every rms_norm call, exactly as the kernel sees it.
EPS = np.float32(1e-5)


def rms_norm_call(
    target: str, x: jax.Array, *, vmap_method: str = "broadcast_all", has_side_effect: bool = False
) -> jax.Array:
    """The tutorial's rms_norm as a call to ``target`` (``rms_norm`` of the
    Rust guest, ``rms_norm_cpp`` of the C++ one)."""
    return jax.ffi.ffi_call(
        target,
        jax.ShapeDtypeStruct(x.shape, x.dtype),
        vmap_method=vmap_method,
        has_side_effect=has_side_effect,
    )(x, eps=EPS)


def rms_norm_with_vjp(target: str) -> Callable[[jax.Array], jax.Array]:
    """``rms_norm_call(target, x)`` differentiable through ``jax.custom_vjp``
    as in the tutorial: the forward pass calls ``<target>_fwd`` (y and 1/rms
    per row), the backward pass ``<target>_bwd``."""

    def fwd(x: jax.Array):
        y, res = jax.ffi.ffi_call(
            f"{target}_fwd",
            (jax.ShapeDtypeStruct(x.shape, x.dtype), jax.ShapeDtypeStruct(x.shape[:-1], x.dtype)),
            vmap_method="broadcast_all",
        )(x, eps=EPS)
        return y, (res, x)

    def bwd(residuals, ct):
        res, x = residuals
        assert res.shape == ct.shape[:-1] and x.shape == ct.shape
        return (
            jax.ffi.ffi_call(
                f"{target}_bwd",
                jax.ShapeDtypeStruct(ct.shape, ct.dtype),
                vmap_method="broadcast_all",
            )(res, x, ct),
        )

    @jax.custom_vjp
    def rms_norm(x: jax.Array) -> jax.Array:
        return rms_norm_call(target, x)

    rms_norm.defvjp(fwd, bwd)
    return rms_norm


# --------------------------------------------------------------------------
# In-place updates: a result aliased with its operand
# --------------------------------------------------------------------------

# The value written over the first element of each row (rounded to f32 for
# f32 arrays, as numpy's cast does).
SET0_VALUE = 0.1


def inplace_set0(target: str, x: jax.Array) -> jax.Array:
    """A call to ``target`` (``inplace_set0`` of the Rust guest,
    ``inplace_set0_cpp`` of the C++ one) whose result is aliased with ``x``."""
    return jax.ffi.ffi_call(
        target, jax.ShapeDtypeStruct(x.shape, x.dtype), input_output_aliases={0: 0}
    )(x, value=np.float64(SET0_VALUE))


def np_set0(x: np.ndarray) -> list[np.ndarray]:
    y = x.copy()
    y[..., 0] = SET0_VALUE
    return [y]


def aliasing_call(x: jax.Array, *, alias: bool) -> jax.Array:
    """JAX's aliasing example (``aliasing_cpp``): it fails unless its result
    is aliased with its operand."""
    return jax.ffi.ffi_call(
        "aliasing_cpp",
        jax.ShapeDtypeStruct(x.shape, x.dtype),
        input_output_aliases={0: 0} if alias else {},
    )(x)


# --------------------------------------------------------------------------
# Lowering and writing
# --------------------------------------------------------------------------


def named(p: BaseProgram, *, keep_parameter_names: bool = False) -> Callable[..., Any]:
    """``p.fn`` renamed after the program: the module becomes ``@jit_<name>``.

    With ``keep_parameter_names``, ``p.fn`` itself is renamed (it must be a
    Python function); its parameter names name the arguments
    (``loc("x")``). Otherwise a wrapper taking ``*args`` is, which works for
    any callable (``jax.grad(...)``, ``jax.vmap(...)``); the arguments are
    then ``loc("args[0]")``, ...
    """
    if keep_parameter_names:
        p.fn.__name__ = p.fn.__qualname__ = p.name
        return p.fn

    def fn(*args):
        return p.fn(*args)

    fn.__name__ = fn.__qualname__ = p.name
    return fn


def lower(p: BaseProgram, *, keep_parameter_names: bool = False) -> export.Exported:
    """``p`` exported for the CPU platform, its custom calls allowed."""
    checks = [export.DisabledSafetyCheck.custom_call(t) for t in p.targets]
    args = [jax.ShapeDtypeStruct(x.shape, x.dtype) for x in p.inputs]
    fn = jax.jit(named(p, keep_parameter_names=keep_parameter_names), donate_argnums=p.donate_argnums)
    return export.export(fn, platforms=["cpu"], disabled_checks=checks)(*args)


def check_no_source_locations(p: BaseProgram, text: str, bytecode: bytes = b"") -> None:
    """Refuses programs that carry source locations of this machine."""
    for needle in (".py", str(HERE), str(pathlib.Path.home())):
        if needle in text or needle.encode() in bytecode:
            sys.exit(f"{p.name}: lowered program contains {needle!r} (a source location)")


# A manifest's description of one .npy file: (file name or None, dtype, shape) -> entry.
TensorEntry = Callable[[str | None, Any, tuple[int, ...]], dict[str, Any]]


def tensor_entry(file: str | None, dtype: Any, shape: tuple[int, ...], subdir: str = "") -> dict[str, Any]:
    """An input or output in ``cyxla_tests::Manifest``'s schema; ``file`` is
    relative to ``tests/programs/``, where ``subdir`` (e.g. ``guests/``) is."""
    dtype = np.dtype(dtype)
    return {
        "file": None if file is None else f"{subdir}{file}",
        "dtype": dtype.name,
        "xla_dtype": XLA_DTYPE_NAMES[dtype.name],
        "descr": dtype.str,
        "shape": [int(d) for d in shape],
    }


def save_inputs(
    p: BaseProgram, exp: export.Exported, out: pathlib.Path, entry: TensorEntry
) -> list[dict[str, Any]]:
    """Writes ``<name>.in<k>.npy`` for each input; returns their entries."""
    inputs = []
    for k, x in enumerate(p.inputs):
        assert x.dtype == exp.in_avals[k].dtype and x.shape == exp.in_avals[k].shape, p.name
        name = f"{p.name}.in{k}.npy"
        np.save(out / name, x, allow_pickle=False)
        inputs.append(entry(name, x.dtype, x.shape))
    return inputs


def save_outputs(
    p: BaseProgram,
    exp: export.Exported,
    expected: list[np.ndarray] | None,
    out: pathlib.Path,
    entry: TensorEntry,
) -> list[dict[str, Any]]:
    """Writes ``<name>.out<k>.npy`` for each expected output (none when
    ``expected`` is None); returns the entries of the program's outputs."""
    if expected is not None and len(expected) != len(exp.out_avals):
        sys.exit(f"{p.name}: oracle gives {len(expected)} outputs, the program {len(exp.out_avals)}")
    outputs = []
    for k, aval in enumerate(exp.out_avals):
        name = None
        if expected is not None:
            e = np.asarray(expected[k])
            if e.dtype != aval.dtype or e.shape != aval.shape:
                sys.exit(
                    f"{p.name}: oracle output {k} is {e.dtype}{list(e.shape)}, "
                    f"the program's {aval.dtype}{list(aval.shape)}"
                )
            name = f"{p.name}.out{k}.npy"
            # np.ascontiguousarray would turn rank 0 into rank 1.
            np.save(out / name, np.array(e, order="C"), allow_pickle=False)
        outputs.append(entry(name, aval.dtype, aval.shape))
    return outputs


def write_checked_program(
    p: Program, exp: export.Exported, out: pathlib.Path, *, subdir: str = "", oracle: str
) -> dict[str, Any]:
    """Writes ``p`` (lowered as ``exp``) into ``out``: ``<name>.mlir``,
    ``<name>.mlirbc``, its inputs and expected outputs. Returns its
    manifest entry, whose file names are relative to ``tests/programs/``,
    where ``subdir`` is; ``oracle`` says where the expected outputs come from."""
    text = exp.mlir_module()
    bytecode = exp.mlir_module_serialized
    check_no_source_locations(p, text, bytecode)
    (out / f"{p.name}.mlir").write_text(text)
    (out / f"{p.name}.mlirbc").write_bytes(bytecode)

    def tensor(file: str | None, dtype: Any, shape: tuple[int, ...]) -> dict[str, Any]:
        return tensor_entry(file, dtype, shape, subdir)

    expected = p.oracle(*p.inputs) if p.oracle else None
    entry = {
        "name": p.name,
        "description": p.description,
        "mlir": f"{subdir}{p.name}.mlir",
        "mlirbc": f"{subdir}{p.name}.mlirbc",
        "targets": p.targets,
        "inputs": save_inputs(p, exp, out, tensor),
        "outputs": save_outputs(p, exp, expected, out, tensor),
        "tolerance": p.tolerance,
        "expect_error": p.expect_error,
        "oracle": "none (an error is expected)" if p.expect_error else oracle,
    }
    entry.update(p.notes)
    return entry


def clear_generated(out: pathlib.Path, patterns: tuple[str, ...]) -> None:
    """Creates ``out`` and removes earlier output from it (only files that
    match ``patterns``, the kinds a generator writes)."""
    out.mkdir(parents=True, exist_ok=True)
    for pattern in patterns:
        for f in out.glob(pattern):
            f.unlink()


def write_manifest(
    out: pathlib.Path, script: str, entries: list[dict[str, Any]], *, ensure_ascii: bool = True
) -> None:
    """Writes ``out/manifest.json``: the programs' ``entries``, written by
    ``script`` (relative to the workspace root) with these JAX versions."""
    manifest = {
        "generator": script,
        "regenerate": f".venv/bin/python {script}",
        "jax_version": jax.__version__,
        "jaxlib_version": jaxlib.__version__,
        "programs": entries,
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2, ensure_ascii=ensure_ascii) + "\n")
