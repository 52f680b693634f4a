//! The differential oracle: a module run by the host's engine and by
//! [wasmi](https://docs.rs/wasmi/1.1.0), every export called with the same
//! arguments on both.
//!
//! # Why wasmi is independent of what it checks
//!
//! [`super::unrolled_loops_in`] compares the patched compiler with deadline
//! checks against the same patched compiler without them: the x64 lowering
//! patches of the series (`vendor/cranelift-codegen/CYXLA-PATCH.md`: 1, the
//! two-component `lea`; 2, loads sunk into vector operations through a
//! bitcast; 3, loop alignment) apply to both sides, so a wrong lowering
//! cannot show there. wasmi (crates.io, features `std` and `simd`) is an
//! interpreter: it translates wasm to its own register bytecode and
//! executes that in Rust, with its own validation (wasmparser 0.239,
//! another release than wasmtime's), its own linear memory and its own
//! SIMD semantics (`wasmi_core::simd`, portable Rust). It contains no
//! Cranelift, no wasmtime code and none of the series, so where the host's
//! engine and wasmi agree on a module, the patched code generator computed
//! what the wasm specification says for it.
//!
//! wasmi 1.1.0, not 2.0.0 (the newest): 2.0.0 executes invalid bytecode of
//! its own translation for one of the first generated modules (its
//! executor stops at "failed to decode `OpCode`": undefined behaviour
//! without debug assertions; the module is
//! `host/tests/fuzz_findings/differential/wasmi-2.0.0-invalid-opcode.wasm`,
//! export "5", no arguments), and aborts the process. 1.1.0 runs it.
//!
//! The host's engine runs twice: as the host builds it (on this machine,
//! with AVX and AVX-512, so Cranelift picks VEX and EVEX forms), and with
//! the same configuration but every AVX extension turned off, so that the
//! SSE forms of patch 2 (legacy-encoded instructions with a memory operand,
//! which must not be sunk from an unaligned load) are reached too.
//!
//! # What is compared
//!
//! Both compile and instantiate, or neither. Then every exported function
//! (in the module's order, each once) is called with the same arguments,
//! drawn from a seed and biased toward values at the edges of wasm32
//! arithmetic and of the memory ([`Args`]), and after each call:
//!
//! - the results, floats bit for bit except that a NaN equals any NaN (wasm
//!   leaves NaN payloads and signs nondeterministic; the host's engine does
//!   not canonicalise them), or the trap, by kind (out of bounds of memory
//!   or table, unreachable, division by zero, integer overflow, conversion,
//!   indirect call to null or of the wrong type; anything else by name, and
//!   the deadline's interrupt as a trap wasmi never reports);
//! - every exported memory, byte for byte (a trapping store must have
//!   written nothing), and every exported global.
//!
//! A module whose calls leave NaNs in memory or in integers
//! (`i32.reinterpret_f32` of a computed NaN) may legitimately differ: the
//! generated modules canonicalise every NaN they compute (wasm-smith's
//! `canonicalize_nans`), and the hand-written shapes compute none.
//!
//! Not compared: a call on which wasmi runs out of fuel ([`WASMI_FUEL`]) or
//! either engine overflows its stack (the engines' frames differ in size,
//! so their stacks overflow at different depths); the module's remaining
//! exports are skipped then too, since the memories no longer correspond.

use std::sync::OnceLock;

use super::{Host, Instantiated, value_key};
use crate::limits::Limits;

/// The fuel wasmi gets for instantiation and for each call: far more than
/// a generated module (whose loops and calls share 1000 units of
/// wasm-smith's fuel) or a hand-written shape (whose loops run at most a
/// few thousand times) needs, little enough that a call that loops ends
/// within a second.
pub const WASMI_FUEL: u64 = 20_000_000;

/// Cranelift's x64 settings of the extensions that bring VEX and EVEX
/// encodings (and FMA, which needs VEX): all off for the SSE engine.
#[cfg(target_arch = "x86_64")]
const AVX_FLAGS: [&str; 10] = [
    "has_avx",
    "has_avx2",
    "has_avx512bitalg",
    "has_avx512dq",
    "has_avx512f",
    "has_avx512vbmi",
    "has_avx512vl",
    "has_avx512vnni",
    "has_avx_vnni",
    "has_fma",
];

/// A wasmtime engine of the host's configuration
/// (`crate::engine::wasm_config`) with Cranelift flags of its own, and a
/// deadline timer for it.
struct FlaggedEngine {
    // Field order is drop order: the engine before the timer that refers
    // to it weakly.
    wasm: wasmtime::Engine,
    ticker: crate::deadline::Ticker,
    tick: std::time::Duration,
}

impl FlaggedEngine {
    fn host(&self) -> Host<'_> {
        Host {
            wasm: &self.wasm,
            ticker: &self.ticker,
            tick: self.tick,
        }
    }
}

/// The engines every comparison uses, made once per process.
struct Engines {
    /// The host's engine, as `Engine::new` builds it.
    host: crate::Engine,
    /// The host's configuration without AVX (x64 only).
    sse: Option<FlaggedEngine>,
    wasmi: wasmi::Engine,
}

fn engines() -> &'static Engines {
    static ENGINES: OnceLock<Engines> = OnceLock::new();
    ENGINES.get_or_init(|| {
        let limits = Limits::default();
        let host = crate::Engine::new(&limits).expect("the host's engine");
        let mut config = wasmi::Config::default();
        config
            .consume_fuel(true)
            // Its results are implementation-defined: not comparable.
            .wasm_relaxed_simd(false)
            // Off in the host's engine (`crate::engine::wasm_config`).
            .wasm_tail_call(false)
            .wasm_multi_memory(false)
            .wasm_custom_page_sizes(false)
            .wasm_wide_arithmetic(false);
        Engines {
            host,
            sse: sse_engine(&limits),
            wasmi: wasmi::Engine::new(&config),
        }
    })
}

/// The host's engine configuration with every AVX extension off.
#[cfg(target_arch = "x86_64")]
fn sse_engine(limits: &Limits) -> Option<FlaggedEngine> {
    let mode = limits.interrupt.resolve();
    let mut config = crate::engine::wasm_config(limits, mode);
    for flag in AVX_FLAGS {
        // SAFETY: turning off an instruction-set extension only narrows
        // the instructions Cranelift may choose; the code it then emits
        // runs on every x64 the host's own code does (wasmtime checks the
        // flags against this machine when it builds the engine, below).
        unsafe {
            config.cranelift_flag_set(flag, "false");
        }
    }
    let wasm = wasmtime::Engine::new(&config).expect("an engine without AVX");
    crate::faults::install();
    let ticker = crate::deadline::Ticker::start(&wasm, limits.tick, mode)
        .expect("a deadline timer for the engine without AVX");
    Some(FlaggedEngine {
        wasm,
        ticker,
        tick: limits.tick,
    })
}

#[cfg(not(target_arch = "x86_64"))]
fn sse_engine(_limits: &Limits) -> Option<FlaggedEngine> {
    None
}

/// How a call ended, as compared.
#[derive(Debug, Clone, PartialEq)]
enum Ended {
    /// Its results, as [`value_key`]s.
    Returned(Vec<String>),
    /// A trap, by kind (the kinds both engines name alike), else by the
    /// engine's own name for it.
    Trapped(String),
    /// Not comparable: the stacks differ.
    StackOverflow,
    /// Not comparable: wasmi's fuel ran out.
    OutOfFuel,
}

fn trap_name(kind: &str) -> Ended {
    Ended::Trapped(kind.to_string())
}

/// How a trap both engines name alike ended, `$trap` a variant of `$Trap`
/// (wasmtime's `Trap`, wasmi's `TrapCode`: one name for each of these);
/// `None` for the others, which each engine names itself.
macro_rules! common_trap {
    ($trap:expr, $Trap:ident) => {
        match $trap {
            $Trap::StackOverflow => Some(Ended::StackOverflow),
            $Trap::MemoryOutOfBounds => Some(trap_name("memory out of bounds")),
            $Trap::TableOutOfBounds => Some(trap_name("table out of bounds")),
            $Trap::IndirectCallToNull => Some(trap_name("indirect call to null")),
            $Trap::BadSignature => Some(trap_name("indirect call type mismatch")),
            $Trap::UnreachableCodeReached => Some(trap_name("unreachable")),
            $Trap::IntegerDivisionByZero => Some(trap_name("integer divide by zero")),
            $Trap::IntegerOverflow => Some(trap_name("integer overflow")),
            $Trap::BadConversionToInteger => Some(trap_name("invalid conversion to integer")),
            _ => None,
        }
    };
}

/// How a call of the host's engine ended.
fn wasmtime_ended(result: wasmtime::Result<Vec<wasmtime::Val>>) -> Ended {
    use wasmtime::Trap;
    let e = match result {
        Ok(values) => return Ended::Returned(values.iter().map(value_key).collect()),
        Err(e) => e,
    };
    match e.downcast_ref::<Trap>() {
        Some(Trap::Interrupt) => trap_name("wasmtime: the 30 s deadline (a loop that did not end)"),
        Some(trap) => common_trap!(trap, Trap)
            .unwrap_or_else(|| Ended::Trapped(format!("wasmtime: {trap:?}"))),
        None => Ended::Trapped(format!("wasmtime: {e:#}")),
    }
}

/// How a call of wasmi ended.
fn wasmi_ended(result: Result<Vec<wasmi::Val>, wasmi::Error>) -> Ended {
    use wasmi::TrapCode;
    let e = match result {
        Ok(values) => return Ended::Returned(values.iter().map(wasmi_value_key).collect()),
        Err(e) => e,
    };
    match e.as_trap_code() {
        Some(TrapCode::OutOfFuel) => Ended::OutOfFuel,
        Some(trap) => common_trap!(trap, TrapCode)
            .unwrap_or_else(|| Ended::Trapped(format!("wasmi: {trap:?}"))),
        None => Ended::Trapped(format!("wasmi: {e}")),
    }
}

/// A wasmi value as [`value_key`] writes a wasmtime one.
fn wasmi_value_key(v: &wasmi::Val) -> String {
    use wasmi::Val;
    match v {
        Val::I32(x) => format!("i32 {x}"),
        Val::I64(x) => format!("i64 {x}"),
        Val::F32(f) if f32::from(*f).is_nan() => "f32 nan".into(),
        Val::F32(f) => format!("f32 {:#x}", f.to_bits()),
        Val::F64(f) if f64::from(*f).is_nan() => "f64 nan".into(),
        Val::F64(f) => format!("f64 {:#x}", f.to_bits()),
        Val::V128(b) => format!("v128 {:#x}", b.as_u128()),
        Val::FuncRef(f) => format!("funcref null={}", f.is_null()),
        Val::ExternRef(r) => format!("externref null={}", r.is_null()),
    }
}

/// The module instantiated in wasmi, with [`WASMI_FUEL`] and the limits of
/// [`Instantiated`]'s store.
struct Interpreted {
    store: wasmi::Store<wasmi::StoreLimits>,
    instance: wasmi::Instance,
}

impl Interpreted {
    fn new(engine: &wasmi::Engine, wasm: &[u8]) -> Result<Interpreted, wasmi::Error> {
        let module = wasmi::Module::new(engine, wasm)?;
        let limits = wasmi::StoreLimitsBuilder::new()
            .memory_size(16 << 20)
            .table_elements(10_000)
            .instances(1)
            .build();
        let mut store = wasmi::Store::new(engine, limits);
        store.limiter(|l| l);
        store.set_fuel(WASMI_FUEL)?;
        let instance = wasmi::Instance::new(&mut store, &module, &[])?;
        Ok(Interpreted { store, instance })
    }

    fn call(&mut self, func: &wasmi::Func, params: &[wasmi::Val]) -> Ended {
        let ty = func.ty(&self.store);
        let mut results: Vec<wasmi::Val> = ty
            .results()
            .iter()
            .map(|t| wasmi::Val::default(*t))
            .collect();
        let result = self
            .store
            .set_fuel(WASMI_FUEL)
            .and_then(|()| func.call(&mut self.store, params, &mut results));
        wasmi_ended(result.map(|()| results))
    }

    /// The size of the first exported memory in bytes (64 KiB without one):
    /// the edge the arguments aim at.
    fn memory_size(&self, names: &[&str]) -> u64 {
        names
            .iter()
            .find_map(|name| self.instance.get_memory(&self.store, name))
            .map_or(1 << 16, |m| m.data(&self.store).len() as u64)
    }
}

/// The edge values [`Args`] picks floats from: each row the bits of one
/// value as an f32 and as an f64 (but the last: 2^32 as an f32, 2^63 as an
/// f64, each the edge of its conversion to u32 and to i64).
const FLOAT_EDGES: [(u32, u64); 16] = [
    (0, 0),
    (0x8000_0000, 0x8000_0000_0000_0000), // -0
    (0x3f80_0000, 0x3ff0_0000_0000_0000), // 1
    (0xbf80_0000, 0xbff0_0000_0000_0000), // -1
    (0x3f00_0000, 0x3fe0_0000_0000_0000), // 0.5
    (0xbfc0_0000, 0xbff8_0000_0000_0000), // -1.5
    (0x7fc0_0000, 0x7ff8_0000_0000_0000), // NaN
    (0xffc0_0000, 0xfff8_0000_0000_0000), // -NaN
    (0x7fa0_0001, 0x7ff4_0000_0000_0001), // signalling NaN with a payload
    (0x7f80_0000, 0x7ff0_0000_0000_0000), // infinity
    (0xff80_0000, 0xfff0_0000_0000_0000), // -infinity
    (1, 1),                               // the smallest subnormal
    (0x7f7f_ffff, 0x7fef_ffff_ffff_ffff), // MAX
    (0x4f00_0000, 0x41e0_0000_0000_0000), // 2^31
    (0xcf00_0001, 0xc1e0_0000_0020_0000), // just below -2^31
    (0x4f80_0000, 0x43e0_0000_0000_0000), // 2^32 (f32), 2^63 (f64)
];

/// Arguments from a seed (splitmix64), biased toward the values where
/// lowering bugs show: 0, ±1, the ends of i32 and i64, the memory's size
/// and the bytes around it, small offsets, powers of two; for floats
/// zeros, infinities, NaNs (quiet, signalling, negative), the smallest
/// subnormal, and the edges of float-to-int conversion.
struct Args(u64);

impl Args {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// An integer for an index or a count into a memory of `memory` bytes.
    fn int(&mut self, memory: u64) -> i64 {
        let m = memory as i64;
        match self.below(14) {
            0 => 0,
            1 => 1,
            2 => -1,
            3 => i32::MIN.into(),
            4 => i32::MAX.into(),
            // One past the end.
            5 => m,
            // The last bytes.
            6 => m - 1 - self.below(32) as i64,
            // The last vectors, aligned.
            7 => m - 16 * (1 + self.below(4) as i64),
            // Around the end.
            8 => m + self.below(64) as i64 - 32,
            // Small offsets from 0, and from the top of the index space.
            9 => self.below(64) as i64,
            10 => -(self.below(64) as i64),
            11 => 1 << self.below(32),
            12 => i64::from(self.next() as u32),
            _ => self.next() as i64,
        }
    }

    fn i64(&mut self, memory: u64) -> i64 {
        match self.below(8) {
            0 => i64::MIN,
            1 => i64::MAX,
            // A 32-bit value zero-extended.
            2 => i64::from(self.int(memory) as u32),
            _ => self.int(memory),
        }
    }

    fn f32(&mut self, memory: u64) -> u32 {
        match self.below(3) {
            0 => self.float_edge().0,
            1 => (self.int(memory) as f32).to_bits(),
            _ => self.next() as u32,
        }
    }

    fn f64(&mut self, memory: u64) -> u64 {
        match self.below(3) {
            0 => self.float_edge().1,
            1 => (self.i64(memory) as f64).to_bits(),
            _ => self.next(),
        }
    }

    /// One of [`FLOAT_EDGES`], as the bits of an f32 and of an f64.
    fn float_edge(&mut self) -> (u32, u64) {
        FLOAT_EDGES[self.below(FLOAT_EDGES.len() as u64) as usize]
    }

    fn v128(&mut self, memory: u64) -> u128 {
        let splat32 = |x: u32| u128::from(x) * 0x0000_0001_0000_0001_0000_0001_0000_0001;
        match self.below(6) {
            0 => 0,
            1 => u128::MAX,
            2 => splat32(self.int(memory) as u32),
            3 => splat32(self.f32(memory)),
            4 => {
                let x = self.f64(memory);
                u128::from(x) | (u128::from(x) << 64)
            }
            _ => u128::from(self.next()) | (u128::from(self.next()) << 64),
        }
    }

    /// Arguments of `types` for both engines; `None` for a parameter no
    /// call from outside can give (a non-nullable reference).
    fn for_params(
        &mut self,
        types: &[wasmtime::ValType],
        memory: u64,
    ) -> Option<(Vec<wasmtime::Val>, Vec<wasmi::Val>)> {
        use wasmtime::ValType;
        let mut ours = Vec::new();
        let mut theirs = Vec::new();
        for ty in types {
            let (a, b) = match ty {
                ValType::I32 => {
                    let x = self.int(memory) as i32;
                    (wasmtime::Val::I32(x), wasmi::Val::I32(x))
                }
                ValType::I64 => {
                    let x = self.i64(memory);
                    (wasmtime::Val::I64(x), wasmi::Val::I64(x))
                }
                ValType::F32 => {
                    let x = self.f32(memory);
                    (
                        wasmtime::Val::F32(x),
                        wasmi::Val::F32(wasmi::F32::from_bits(x)),
                    )
                }
                ValType::F64 => {
                    let x = self.f64(memory);
                    (
                        wasmtime::Val::F64(x),
                        wasmi::Val::F64(wasmi::F64::from_bits(x)),
                    )
                }
                ValType::V128 => {
                    let x = self.v128(memory);
                    (
                        wasmtime::Val::V128(x.into()),
                        wasmi::Val::V128(wasmi::V128::from(x)),
                    )
                }
                ValType::Ref(r) if r.is_nullable() && r.heap_type().is_func() => (
                    wasmtime::Val::null_func_ref(),
                    wasmi::Val::FuncRef(wasmi::Ref::Null),
                ),
                ValType::Ref(r) if r.is_nullable() && r.heap_type().is_extern() => (
                    wasmtime::Val::null_extern_ref(),
                    wasmi::Val::ExternRef(wasmi::Ref::Null),
                ),
                ValType::Ref(_) => return None,
            };
            ours.push(a);
            theirs.push(b);
        }
        Some((ours, theirs))
    }
}

/// Writes `wasm` to a file named by its hash in the temporary directory,
/// and returns the path (or why it could not be written), for a failure's
/// message.
fn save(wasm: &[u8]) -> String {
    let hash = wasm.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    });
    let path = std::env::temp_dir().join(format!("cyxla-differential-{hash:016x}.wasm"));
    match std::fs::write(&path, wasm) {
        Ok(()) => path.display().to_string(),
        Err(e) => format!("(not saved: {e})"),
    }
}

/// The first difference between two memories, described.
fn memory_difference(ours: &[u8], theirs: &[u8]) -> Option<String> {
    if ours.len() != theirs.len() {
        return Some(format!(
            "{} bytes, wasmi {} bytes",
            ours.len(),
            theirs.len()
        ));
    }
    let at = ours.iter().zip(theirs).position(|(a, b)| a != b)?;
    let (start, end) = (at.saturating_sub(8), (at + 24).min(ours.len()));
    let differing = ours.iter().zip(theirs).filter(|(a, b)| a != b).count();
    Some(format!(
        "{differing} bytes differ, the first at {at:#x}; from {start:#x}: {:02x?}, wasmi {:02x?}",
        &ours[start..end],
        &theirs[start..end]
    ))
}

/// `wasm` run by the host's engine, by the host's configuration without
/// AVX (x64), and by wasmi: each must compile and instantiate or none, and
/// every exported function is called once, in order, on all of them with
/// the same arguments from `args_seed` (see [`Args`]); each call must end
/// the same way ([`Ended`]: results with NaN as NaN, or the same kind of
/// trap) and leave the same exported memories and globals. The module must
/// not use relaxed SIMD (implementation-defined results), and should leave
/// no computed NaN where its bits are observable (see the module
/// documentation). Returns how many calls were compared (each against both
/// configurations of the host's engine).
///
/// # Panics
///
/// On a disagreement, with the module saved to a temporary file, the
/// export, its arguments and every engine's outcome in the message.
pub fn differential_in(wasm: &[u8], args_seed: u64) -> usize {
    let engines = engines();
    let mut hosts = vec![("the host's engine", Host::of(&engines.host))];
    if let Some(sse) = &engines.sse {
        hosts.push(("the host's engine without AVX", sse.host()));
    }
    let reference = Interpreted::new(&engines.wasmi, wasm);
    let mut runs = Vec::new();
    for (label, host) in hosts {
        runs.push((label, Instantiated::new(host, wasm)));
    }
    let mut reference = match reference {
        Ok(reference) => reference,
        Err(e) => {
            let wasmi = wasmi_ended(Err(e));
            // Neither instantiates, or wasmi's start function ran out of
            // fuel or stack.
            if matches!(wasmi, Ended::OutOfFuel | Ended::StackOverflow)
                || runs.iter().all(|(_, run)| run.is_err())
            {
                return 0;
            }
            let ours: Vec<String> = runs
                .iter()
                .map(|(label, run)| match run {
                    Ok(_) => format!("{label}: instantiated"),
                    Err(e) => format!("{label}: {e:#}"),
                })
                .collect();
            panic!(
                "differential: wasmi did not instantiate the module saved to {}, wasmtime did: \
                 wasmi: {wasmi:?}; {}",
                save(wasm),
                ours.join("; ")
            );
        }
    };
    let mut instances = Vec::new();
    for (label, run) in runs {
        match run {
            Ok(run) => instances.push((label, run)),
            Err(e) => panic!(
                "differential: {label} did not instantiate the module saved to {}, wasmi did: {e:#}",
                save(wasm)
            ),
        }
    }
    let Some((_, first)) = instances.first() else {
        return 0;
    };
    // Each exported function's name and parameter types, and the exported
    // memories' names.
    let funcs: Vec<(String, Vec<wasmtime::ValType>)> = first
        .funcs()
        .into_iter()
        .map(|(name, func)| (name, func.ty(&first.store).params().collect()))
        .collect();
    let memory_names: Vec<String> = first
        .memories()
        .iter()
        .map(|(n, _)| n.to_string())
        .collect();
    let memory_names: Vec<&str> = memory_names.iter().map(String::as_str).collect();
    let mut args = Args(args_seed);
    let mut compared = 0;
    for (name, types) in &funcs {
        let Some(theirs) = reference.instance.get_func(&reference.store, name) else {
            panic!(
                "differential: wasmi has no exported function {name:?} in the module saved to {}",
                save(wasm)
            );
        };
        let memory = reference.memory_size(&memory_names);
        let Some((our_args, their_args)) = args.for_params(types, memory) else {
            continue;
        };
        let expected = reference.call(&theirs, &their_args);
        if matches!(expected, Ended::OutOfFuel | Ended::StackOverflow) {
            return compared;
        }
        for (label, run) in &mut instances {
            let Some((_, func)) = run.funcs().into_iter().find(|(n, _)| n == name) else {
                continue;
            };
            let got = wasmtime_ended(run.call(&func, &our_args));
            if got == Ended::StackOverflow {
                return compared;
            }
            let mut disagreements = Vec::new();
            if got != expected {
                disagreements.push(format!("{label}: {got:?}\n  wasmi: {expected:?}"));
            }
            for (memory, bytes) in run.memories() {
                let theirs = reference
                    .instance
                    .get_memory(&reference.store, memory)
                    .map(|m| m.data(&reference.store));
                match theirs {
                    None => disagreements.push(format!("memory {memory:?}: not in wasmi")),
                    Some(theirs) => {
                        if let Some(difference) = memory_difference(bytes, theirs) {
                            disagreements.push(format!(
                                "memory {memory:?} after the call: {label}: {difference}"
                            ));
                        }
                    }
                }
            }
            for (global, value) in run.globals() {
                let theirs = reference
                    .instance
                    .get_global(&reference.store, &global)
                    .map(|g| wasmi_value_key(&g.get(&reference.store)));
                if theirs.as_ref() != Some(&value) {
                    disagreements.push(format!(
                        "global {global:?} after the call: {label}: {value}, wasmi: {theirs:?}"
                    ));
                }
            }
            if !disagreements.is_empty() {
                panic!(
                    "differential: {label} and wasmi disagree on export {name:?} of the module \
                     saved to {} (argument seed {args_seed:#x}), called with {our_args:?}:\n  {}",
                    save(wasm),
                    disagreements.join("\n  ")
                );
            }
        }
        compared += 1;
    }
    compared
}

/// A module of wasm-smith's from `data`, biased toward what the code
/// generator's patches change: one memory of at most 4 pages (so that
/// random addresses reach its end), memory, numeric, vector and control
/// instructions only (SIMD on, relaxed SIMD off), 4 to 12 functions,
/// every export kept, every NaN a computation yields canonicalised, and
/// every loop and call given fuel that ends it (`ensure_termination`);
/// `None` when the bytes make none.
fn biased_module(data: &[u8]) -> Option<Vec<u8>> {
    use wasm_smith::InstructionKind as Kind;
    let config = wasm_smith::Config {
        min_memories: 1,
        max_memories: 1,
        max_memory32_bytes: 4 << 16,
        max_data_segments: 8,
        max_tables: 1,
        simd_enabled: true,
        relaxed_simd_enabled: false,
        multi_value_enabled: true,
        canonicalize_nans: true,
        allowed_instructions: wasm_smith::InstructionKinds::new(&[
            Kind::Numeric,
            Kind::Vector,
            Kind::Memory,
            Kind::Control,
            Kind::Variable,
            Kind::Parametric,
        ]),
        ..super::callable_config(4..=12, 300)
    };
    super::guest_module_of(config, data, Some(1000))
}

/// [`differential_in`] on the module [`biased_module`] makes of `data`,
/// with arguments seeded by a hash of `data`. Returns whether there was a
/// module, and how many calls were compared.
pub fn differential(data: &[u8]) -> (bool, usize) {
    let seed = data.iter().fold(0x8422_2325_cbf2_9ce4_u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    });
    match biased_module(data) {
        Some(wasm) => (true, differential_in(&wasm, seed)),
        None => (false, 0),
    }
}
