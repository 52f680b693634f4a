//! A guest module compiled as the sandbox compiles it, written out as
//! wasmtime's precompiled module (an ELF file) for reading its machine code:
//! `objdump -d OUT` shows every function Cranelift emitted, with the
//! engine's settings and the patched code generator (`scripts/mca.sh` reads
//! the matmul kernel's inner loop out of it for `llvm-mca`).
//!
//! Run: `cargo run --release -p cyxla-benches --example precompile -- GUEST.wasm OUT.cwasm`.

use cyxla_sandbox::{Engine, Limits};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [wasm, out] = args.as_slice() else {
        eprintln!("usage: precompile GUEST.wasm OUT.cwasm");
        std::process::exit(2);
    };
    let bytes = std::fs::read(wasm).unwrap_or_else(|e| {
        eprintln!("precompile: cannot read {wasm}: {e}");
        std::process::exit(1);
    });
    let engine = Engine::new(&Limits::default()).unwrap_or_else(|e| {
        eprintln!("precompile: cannot make the engine: {e:#}");
        std::process::exit(1);
    });
    let code = engine.precompile(&bytes).unwrap_or_else(|e| {
        eprintln!("precompile: {wasm} does not compile: {e:#}");
        std::process::exit(1);
    });
    if let Err(e) = std::fs::write(out, code) {
        eprintln!("precompile: cannot write {out}: {e}");
        std::process::exit(1);
    }
}
