"""JAX platform ``cyxla``: the cyxla PJRT plugin.

JAX imports this module (``jax_plugins`` namespace) when it sets up its
backends and calls :func:`initialize`, which registers the plugin library
(``CYXLA_PJRT_LIBRARY``, or ``libcyxla_pjrt.so`` in this package) as the JAX
plugin ``cyxla``. Devices on ``cyxla`` are CPU devices of the real XLA CPU
plugin, so JAX lowers for them as for its own CPU backend: ``jnp.linalg``
reaches the native LAPACK targets and ``jax.ffi.ffi_call`` the allowed
guests, sandboxed.

Native handlers that client code registers for the CPU
(``jax.ffi.register_ffi_target(name, capsule, platform="cpu")``) are passed
on to the plugin's FFI extension too, where the host's policy applies: they
work as on JAX's CPU backend, or, where the operator forbids native code
(``CYXLA_ALLOW_NATIVE=0``), the registration raises and nothing is
registered.

Platform ``cyxla`` wraps a real XLA CPU PJRT plugin, found as the plugin
library finds it (:func:`find_real_plugin`). Where there is none, the
platform is not registered, so that JAX starts on its other platforms, and
a warning says what to install; unless ``JAX_PLATFORMS`` names ``cyxla``
(as under ``cyxla-host``), where JAX reports the plugin library's error.

On JAX's own ``cpu`` platform instead (``CYXLA_PLATFORM=cpu``, which
``cyxla-host --platform cpu -- COMMAND`` sets, or :func:`serve_on_cpu` in
a program started without the launcher), the allowed guests are registered
as FFI targets of jaxlib's CPU client, which has ``jax.distributed``
collectives across processes. The native LAPACK targets stay jaxlib's own
there; a configuration that forbids native code (``allow_native = false``)
is refused, because on ``cpu`` client code registers native handlers with
jaxlib directly.
"""

from __future__ import annotations

import ctypes
import logging
import os
import pathlib
import sys
from platform import machine as _machine
from typing import Any

logger = logging.getLogger(__name__)

PLATFORM = "cyxla"
CPU_PLATFORM = "cpu"
PLATFORM_ENV = "CYXLA_PLATFORM"
LIBRARY_ENV = "CYXLA_PJRT_LIBRARY"
LIBRARY_FILE = "libcyxla_pjrt.so"
PLUGIN_ENV = "CYXLA_PJRT_PLUGIN"
CONFIG_ENV = "CYXLA_CONFIG"
# The real PJRT plugins the plugin library looks for, in order, relative to
# a site-packages folder (PLUGIN_PACKAGES in host/setup/src/process.rs).
PLUGIN_PACKAGES = (
    "lammps_jax_pjrt_cpu/pjrt_c_api_cpu_plugin.so",
    "fastatomstruct_xla_cpu/libpjrt_cpu.so",
)
# This package, relative to a site-packages folder.
PACKAGE_DIR = ("jax_plugins", "cyxla")

# PJRT C API facts (pjrt_c_api.h, pjrt_c_api_ffi_extension.h; identical in
# PJRT 0.81, 0.106 and 0.115).
_EXTENSION_START = 8
_SLOT_ERROR_DESTROY = 40
_SLOT_ERROR_MESSAGE = 48
_SLOT_ERROR_GETCODE = 56
_EXTENSION_TYPE_FFI = 5
_FFI_REGISTER_HANDLER = 40
_REGISTER_ARGS_STRUCT_SIZE = 52
_MAX_EXTENSIONS = 64


PERMISSION_DENIED = 7  # PJRT_Error_Code


class RegistrationError(RuntimeError):
    """The cyxla plugin refused a native handler registration."""

    def __init__(self, message: str, code: int = 0):
        super().__init__(message)
        self.code = code


def library_path() -> str | None:
    """The plugin library: ``$CYXLA_PJRT_LIBRARY``, else the one in this package."""
    explicit = os.environ.get(LIBRARY_ENV)
    if explicit:
        if not os.path.isfile(explicit):
            raise RuntimeError(
                f"{LIBRARY_ENV}={explicit}: no such file; build it with "
                "`cargo build -p cyxla-pjrt`, or run under `cyxla-host [HOST OPTIONS] -- COMMAND`"
            )
        return explicit
    bundled = pathlib.Path(__file__).with_name(LIBRARY_FILE)
    return str(bundled) if bundled.is_file() else None


def initialize() -> None:
    """Registers the ``cyxla`` platform with JAX (called by JAX), or, with
    ``CYXLA_PLATFORM=cpu``, serves the allowed guests on JAX's ``cpu``."""
    platform = os.environ.get(PLATFORM_ENV, PLATFORM) or PLATFORM
    if platform == CPU_PLATFORM:
        devices = os.environ.get("CYXLA_DEVICES")
        if devices:
            import jax

            jax.config.update("jax_num_cpu_devices", int(devices))
        serve_on_cpu()
        return
    if platform != PLATFORM:
        raise RuntimeError(f"{PLATFORM_ENV}={platform}: expected `{PLATFORM}` or `{CPU_PLATFORM}`")
    path = library_path()
    asked = _jax_platforms()
    wanted = PLATFORM in asked
    if path is None:
        message = (
            f"the cyxla PJRT plugin library is not configured: set {LIBRARY_ENV} to "
            f"{LIBRARY_FILE}, or run the program under `cyxla-host [HOST OPTIONS] -- COMMAND`"
        )
        if wanted:
            raise RuntimeError(message)
        logger.debug("%s; platform %s not registered", message, PLATFORM)
        return
    if not wanted and find_real_plugin(path) is None:
        # JAX raises for a registered plugin that fails to start, and then
        # runs nothing: leave the platform out, as JAX's GPU plugins do on a
        # machine without a GPU.
        if asked or _cpu_settings is not None:
            # JAX was asked for other platforms only, or the program serves
            # the guests on cpu (serve_on_cpu): nothing to tell.
            logger.debug("no real XLA CPU PJRT plugin found; platform %s not registered", PLATFORM)
        else:
            _warn_no_real_plugin(path)
        return
    from jax._src import xla_bridge

    c_api = xla_bridge.register_plugin(PLATFORM, library_path=path)
    if c_api is None:
        raise RuntimeError(f"JAX could not register the cyxla PJRT plugin {path}")
    _forward_cpu_registrations(_Plugin(c_api))


def _jax_platforms() -> list[str]:
    """The platforms JAX is asked for (``JAX_PLATFORMS``, or
    ``jax.config.update("jax_platforms", ...)``); empty: every platform."""
    names = os.environ.get("JAX_PLATFORMS") or ""
    try:
        import jax

        names += "," + (jax.config.jax_platforms or "")
    except ImportError:
        pass
    return [name.strip() for name in names.split(",") if name.strip()]


def find_real_plugin(library: str) -> str | None:
    """The real XLA CPU PJRT plugin that the plugin library ``library`` would
    load, as its ``find_plugin`` looks for it (host/setup/src/process.rs),
    without loading anything; ``None`` if it would find none.

    A plugin named by ``CYXLA_PJRT_PLUGIN`` or by the ``plugin`` key of the
    ``CYXLA_CONFIG`` file is returned as named, whether or not it exists:
    the library reports a missing one, as it does a file it cannot read.
    """
    explicit = os.environ.get(PLUGIN_ENV)
    if explicit:
        return explicit
    config = os.environ.get(CONFIG_ENV)
    if config:
        try:
            import tomllib

            with open(config, "rb") as f:
                named = tomllib.load(f).get("plugin")
        except (ImportError, OSError, ValueError):
            named = None
        if isinstance(named, str) and named:
            # Relative paths in the file are relative to its folder.
            return str(pathlib.Path(config).parent / named)
    for folder in _site_packages(library):
        for package in PLUGIN_PACKAGES:
            candidate = folder / package
            if candidate.is_file():
                return str(candidate)
    return None


def _python_folders(prefix: pathlib.Path) -> list[pathlib.Path]:
    """``PREFIX/lib/python3.*/{site,dist}-packages`` that exist, newest
    Python first (``python_folders`` in host/setup/src/process.rs)."""
    try:
        entries = list((prefix / "lib").iterdir())
    except OSError:
        return []
    versions = []
    for entry in entries:
        minor = entry.name.removeprefix("python3.")
        if minor != entry.name and minor.isdigit():
            versions.append((int(minor), entry))
    versions.sort(key=lambda v: v[0], reverse=True)
    return [
        folder
        for _, lib in versions
        for folder in (lib / "site-packages", lib / "dist-packages")
        if folder.is_dir()
    ]


def _site_packages(library: str) -> list[pathlib.Path]:
    """The site-packages folders where the plugin library ``library`` looks
    for the real plugin, in its order (``site_packages`` in
    host/setup/src/process.rs): the one holding this package's library, the
    prefix above the library's folder, then a checkout's ``.venv`` up to
    three folders above the library or the Python executable."""
    install = pathlib.Path(library).absolute().parent
    folders: list[pathlib.Path] = []

    def add(folder: pathlib.Path) -> None:
        if folder.is_dir() and folder not in folders:
            folders.append(folder)

    packages = []
    if (install / LIBRARY_FILE).is_file() and install.parts[-2:] == PACKAGE_DIR:
        packages.append(install)
    for folder in _python_folders(install.parent):
        if (folder.joinpath(*PACKAGE_DIR) / LIBRARY_FILE).is_file():
            packages.append(folder.joinpath(*PACKAGE_DIR))
    for package in packages:
        add(package.parents[1])
    for folder in _python_folders(install.parent):
        add(folder)
    try:
        executable = os.readlink("/proc/self/exe")
    except OSError:
        executable = os.path.realpath(sys.executable)
    roots: list[pathlib.Path] = []
    for start in (install, pathlib.Path(executable).parent):
        for root in [start, *start.parents][:4]:
            if root not in roots:
                roots.append(root)
    for root in roots:
        for folder in _python_folders(root / ".venv"):
            add(folder)
    return folders


# Whether this process was told that platform cyxla is left out.
_warned = False


def _wheel_name() -> str:
    """This package's wheel file name, from its installed metadata."""
    from importlib import metadata

    fallback = f"py3-none-manylinux_2_28_{_machine()}"
    try:
        dist = metadata.distribution("cyxla-jax-plugin")
        tags = [
            line.split(":", 1)[1].strip()
            for line in (dist.read_text("WHEEL") or "").splitlines()
            if line.startswith("Tag:")
        ]
        tag = tags[0] if tags else fallback
        return f"cyxla_jax_plugin-{dist.version}-{tag}.whl"
    except metadata.PackageNotFoundError:
        return f"cyxla_jax_plugin-VERSION-{fallback}.whl"


def _warn_no_real_plugin(library: str) -> None:
    """Says once per process that platform cyxla is left out, and what to
    install for it."""
    global _warned
    if _warned:
        return
    _warned = True
    looked = ", ".join(str(f) for f in _site_packages(library)) or "nowhere"
    if _machine() != "x86_64":
        # The extra's plugin, like every other on PyPI, is built for x86-64
        # only: the wheel's marker leaves it out on any other machine, as
        # `cyxla-host doctor` says.
        install = (
            "set %s to a build of one for this machine, %s (PyPI has none, so the extra `pjrt` "
            "installs nothing here)" % (PLUGIN_ENV, _machine())
        )
    else:
        install = (
            "install the wheel's extra `pjrt` (pip install \"%s[pjrt]\") or lammps-jax-pjrt-cpu==0.11.2 "
            "(JAX up to 0.11.2), or set %s" % (_wheel_name(), PLUGIN_ENV)
        )
    logger.warning(
        "cyxla: platform `cyxla` is not registered: it needs a real XLA CPU PJRT plugin and none "
        "is installed (looked in %s); JAX runs on its own platforms (cpu). For platform `cyxla`, "
        "%s; to serve the guests on JAX's own cpu platform instead, run "
        "under `cyxla-host --platform cpu` or call jax_plugins.cyxla.serve_on_cpu(); "
        "JAX_PLATFORMS=cyxla makes this an error",
        looked,
        install,
    )


class _ExtensionBase(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("type", ctypes.c_uint32),
        ("next", ctypes.c_void_p),
    ]


class _RegisterHandlerArgs(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("target_name", ctypes.c_char_p),
        ("target_name_size", ctypes.c_size_t),
        ("handler", ctypes.c_void_p),
        ("platform_name", ctypes.c_char_p),
        ("platform_name_size", ctypes.c_size_t),
        ("traits", ctypes.c_uint32),
    ]


class _ErrorArgs(ctypes.Structure):
    # PJRT_Error_Destroy_Args / _Message_Args / _GetCode_Args share a prefix.
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("extension_start", ctypes.c_void_p),
        ("error", ctypes.c_void_p),
        ("message", ctypes.c_void_p),
        ("message_size", ctypes.c_size_t),
    ]


def _capsule_pointer(capsule: Any) -> int:
    get_name = ctypes.pythonapi.PyCapsule_GetName
    get_name.restype = ctypes.c_char_p
    get_name.argtypes = [ctypes.py_object]
    get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
    get_pointer.restype = ctypes.c_void_p
    get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    pointer = get_pointer(capsule, get_name(capsule))
    if not pointer:
        raise ValueError("the PyCapsule holds a NULL pointer")
    return pointer


def _handler_address(fn: Any) -> int:
    """The execute handler's address of what JAX registers: a capsule, a dict
    of stages, or an address."""
    if isinstance(fn, dict):
        if "execute" not in fn:
            raise ValueError(f"no `execute` stage among {sorted(fn)}")
        fn = fn["execute"]
    if isinstance(fn, int):
        return fn
    return _capsule_pointer(fn)


class _Plugin:
    """The plugin's PJRT_Api table, for the FFI extension's register_handler."""

    def __init__(self, c_api: Any):
        self.api = _capsule_pointer(c_api)
        self.register = None
        ext = ctypes.c_void_p.from_address(self.api + _EXTENSION_START).value
        for _ in range(_MAX_EXTENSIONS):
            if not ext:
                break
            base = _ExtensionBase.from_address(ext)
            if base.type == _EXTENSION_TYPE_FFI:
                address = ctypes.c_void_p.from_address(ext + _FFI_REGISTER_HANDLER).value
                self.register = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.POINTER(_RegisterHandlerArgs))(
                    address
                )
                break
            ext = base.next

    def _fn(self, offset: int, restype):
        address = ctypes.c_void_p.from_address(self.api + offset).value
        return ctypes.CFUNCTYPE(restype, ctypes.POINTER(_ErrorArgs))(address)

    def _take_error(self, error: int) -> RegistrationError:
        args = _ErrorArgs(struct_size=40, error=error)
        self._fn(_SLOT_ERROR_MESSAGE, None)(ctypes.byref(args))
        message = ctypes.string_at(args.message, args.message_size).decode("utf-8", "replace")
        # PJRT_Error_GetCode_Args: the code (an int) is written at offset 24.
        code = _ErrorArgs(struct_size=28, error=error)
        self._fn(_SLOT_ERROR_GETCODE, ctypes.c_void_p)(ctypes.byref(code))
        code = ctypes.c_int.from_address(ctypes.addressof(code) + 24).value
        destroy = _ErrorArgs(struct_size=24, error=error)
        self._fn(_SLOT_ERROR_DESTROY, None)(ctypes.byref(destroy))
        return RegistrationError(message, code)

    def register_handler(self, name: str, fn: Any, traits: int) -> None:
        if self.register is None:
            raise RegistrationError(f"cannot register `{name}`: the cyxla plugin has no FFI extension")
        target = name.encode()
        platform = b"Host"
        args = _RegisterHandlerArgs(
            struct_size=_REGISTER_ARGS_STRUCT_SIZE,
            target_name=target,
            target_name_size=len(target),
            handler=_handler_address(fn),
            platform_name=platform,
            platform_name_size=len(platform),
            traits=int(traits),
        )
        error = self.register(ctypes.byref(args))
        if error:
            raise self._take_error(error)


def _forward_cpu_registrations(plugin: _Plugin) -> None:
    """Passes every typed FFI handler registered for the CPU (before and after
    this call) on to the cyxla plugin as well as to JAX's CPU backend."""
    from jaxlib import xla_client

    lock = xla_client._custom_callback_lock
    with lock:
        previous = xla_client._custom_callback_handler.get("Host")
        # What JAX's CPU client installs when it is created: registration in
        # jaxlib's own XLA. Keep doing that for JAX's CPU backend.
        to_jax = previous or xla_client._xla.register_custom_call_target

        def handler(name, fn, platform, api_version=0, traits=0, *, replay=False):
            if api_version == 1:
                try:
                    plugin.register_handler(name, fn, traits)
                except RegistrationError as e:
                    if not replay:
                        raise
                    if e.code == PERMISSION_DENIED:
                        # Registered before the backend started: too late to
                        # raise; the target's calls on cyxla fail with this.
                        logger.warning("%s", e)
                    else:
                        # E.g. a bad configuration, which client creation
                        # reports next, once.
                        logger.debug("cyxla did not take `%s`: %s", name, e)
                except ValueError as e:
                    if not replay:
                        raise RegistrationError(f"cannot register `{name}` with cyxla: {e}") from None
                    logger.debug("cyxla did not take `%s`: %s", name, e)
            to_jax(name, fn, platform, api_version, traits)

        xla_client._custom_callback_handler["Host"] = handler
        pending = xla_client._custom_callback.pop("Host", [])
    for name, fn, api_version, traits in pending:
        handler(name, fn, "Host", api_version, traits, replay=True)


# ---------------------------------------------------------------------------
# Platform ``cpu``
# ---------------------------------------------------------------------------

# Targets registered with jaxlib's CPU client by this process.
_served_on_cpu: set[str] = set()
# The settings of the first serve_on_cpu call (the library reads them once).
_cpu_settings: dict[str, str] | None = None


def _settings(allow, guests, limits, config, reload) -> dict[str, str]:
    settings = {}
    if allow is not None:
        settings["CYXLA_ALLOW"] = ",".join([allow] if isinstance(allow, str) else list(allow))
    if guests is not None:
        settings["CYXLA_GUESTS"] = os.fspath(guests)
    if limits is not None:
        if isinstance(limits, dict):
            limits = ",".join(f"{k}={v}" for k, v in limits.items())
        settings["CYXLA_LIMITS"] = limits
    if config is not None:
        settings["CYXLA_CONFIG"] = os.fspath(config)
    if reload is not None:
        settings["CYXLA_RELOAD"] = "1" if reload else "0"
    return settings


def serve_on_cpu(allow=None, *, guests=None, limits=None, config=None, reload=None,
                 library=None) -> list[str]:
    """Serves the allowed guests on JAX's own ``cpu`` platform and returns the
    targets registered with it.

    ``allow`` (target names, or ``"*"``), ``guests`` (a folder), ``limits``
    (``"NAME=VALUE,..."`` or a dict), ``config`` (a configuration file) and
    ``reload`` stand for ``CYXLA_ALLOW``, ``CYXLA_GUESTS``, ``CYXLA_LIMITS``,
    ``CYXLA_CONFIG`` and ``CYXLA_RELOAD``; what is not given comes from the
    environment, as under ``cyxla-host``. ``library`` is the cyxla library
    (default: ``$CYXLA_PJRT_LIBRARY``, else the one in this package).

    The first call configures this process for good. Later calls, with no
    settings or the same ones, register what is new: the targets that a
    hot-reloaded guest added since. A changed guest of an already served
    target serves the next call without any call here.

    Raises RuntimeError if the configuration is bad or forbids native code
    from client code (then use platform ``cyxla``).
    """
    global _cpu_settings
    settings = _settings(allow, guests, limits, config, reload)
    if _cpu_settings is None:
        os.environ.update(settings)
        _cpu_settings = settings
    elif settings and settings != _cpu_settings:
        raise RuntimeError(
            f"serve_on_cpu: this process already serves on cpu with {_cpu_settings}; "
            "the settings are read once per process"
        )
    if library is not None:
        path = os.fspath(library)
    else:
        path = library_path()
    if path is None:
        raise RuntimeError(
            f"the cyxla library is not configured: set {LIBRARY_ENV} to {LIBRARY_FILE}, pass "
            "library=..., or run the program under `cyxla-host --platform cpu [HOST OPTIONS] -- COMMAND`"
        )
    lib = ctypes.CDLL(path)
    serve = lib.cyxla_serve_cpu
    serve.restype = ctypes.c_int
    serve.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t)]
    needed = ctypes.c_size_t(0)
    capacity = 1 << 16
    while True:
        buf = ctypes.create_string_buffer(capacity)
        status = serve(buf, capacity, ctypes.byref(needed))
        if needed.value <= capacity:
            break
        capacity = needed.value
    text = buf.value.decode("utf-8", "replace")
    if status != 0:
        raise RuntimeError(text)
    import jax

    new = []
    for line in text.splitlines():
        name, address = line.split("\t")
        if name in _served_on_cpu:
            continue
        jax.ffi.register_ffi_target(name, jax.ffi.pycapsule(int(address)), platform=CPU_PLATFORM,
                                    api_version=1)
        _served_on_cpu.add(name)
        new.append(name)
    logger.info("cyxla serves on cpu: %s", ", ".join(new) or "nothing new")
    return sorted(_served_on_cpu)
