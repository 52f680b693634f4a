//! Builds the bundled guests (`guests/build.sh`) and checks each
//! `guests/out/<name>.wasm` against the ABI: the `cyxla.targets` records, the
//! required exports with their signatures, one `(i32) -> i32` export per
//! target, and imports only from module `cyxla` with the signatures of
//! `abi::IMPORT_TABLE`.
//!
//! Needs the `wasm32-unknown-unknown` Rust target (`scripts/setup.sh`).

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use cyxla_guest_sdk::abi;
use wasmparser::{Encoding, ExternalKind, Parser, Payload, TypeRef, ValType};

const I32: ValType = ValType::I32;

/// (params, results) of a function type.
type Signature = (Vec<ValType>, Vec<ValType>);

/// The parts of a core wasm module this test looks at.
#[derive(Default, Debug)]
struct Module {
    types: Vec<Signature>,
    /// (module, name, type index) of imported functions.
    imports: Vec<(String, String, u32)>,
    /// Imports that are not functions: (module, name, type).
    other_imports: Vec<(String, String, TypeRef)>,
    /// Type index of each defined function.
    functions: Vec<u32>,
    /// name -> (kind, index)
    exports: BTreeMap<String, (ExternalKind, u32)>,
    /// Custom sections: (name, contents), in order.
    customs: Vec<(String, Vec<u8>)>,
}

fn parse(wasm: &[u8]) -> Module {
    let mut m = Module::default();
    for payload in Parser::new(0).parse_all(wasm) {
        match payload.expect("a well-formed wasm module") {
            Payload::Version { encoding, .. } => {
                assert_eq!(encoding, Encoding::Module, "not a core wasm module");
            }
            Payload::CustomSection(c) => m.customs.push((c.name().to_owned(), c.data().to_vec())),
            Payload::TypeSection(types) => {
                for f in types.into_iter_err_on_gc_types() {
                    let f = f.expect("function type");
                    m.types.push((f.params().to_vec(), f.results().to_vec()));
                }
            }
            Payload::ImportSection(imports) => {
                for import in imports.into_imports() {
                    let import = import.expect("import");
                    let (module, name) = (import.module.to_owned(), import.name.to_owned());
                    match import.ty {
                        TypeRef::Func(t) => m.imports.push((module, name, t)),
                        ty => m.other_imports.push((module, name, ty)),
                    }
                }
            }
            Payload::FunctionSection(functions) => {
                for t in functions {
                    m.functions.push(t.expect("function"));
                }
            }
            Payload::ExportSection(exports) => {
                for e in exports {
                    let e = e.expect("export");
                    m.exports.insert(e.name.to_owned(), (e.kind, e.index));
                }
            }
            _ => {}
        }
    }
    m
}

impl Module {
    /// (params, results) of function `index` (imports first).
    fn func_type(&self, index: u32) -> &Signature {
        let i = index as usize;
        let t = if i < self.imports.len() {
            self.imports[i].2
        } else {
            self.functions[i - self.imports.len()]
        };
        &self.types[t as usize]
    }

    fn export_type(&self, name: &str) -> Option<&Signature> {
        match self.exports.get(name) {
            Some(&(ExternalKind::Func, index)) => Some(self.func_type(index)),
            _ => None,
        }
    }
}

fn check_abi(file: &str, m: &Module) -> Vec<(String, String)> {
    let sig = |p: &[ValType], r: &[ValType]| (p.to_vec(), r.to_vec());
    // Imports: only module `cyxla`, names and signatures from IMPORT_TABLE.
    assert!(
        m.other_imports.is_empty(),
        "{file}: non-function imports {:?}",
        m.other_imports
    );
    for (module, name, t) in &m.imports {
        assert_eq!(
            module,
            abi::IMPORT_MODULE,
            "{file}: import {module}::{name} outside `cyxla`"
        );
        let imp = abi::find_import(name)
            .unwrap_or_else(|| panic!("{file}: unknown import cyxla::{name}"));
        let want = if imp.returns_error {
            sig(&[I32], &[I32])
        } else {
            sig(&[I32], &[])
        };
        assert_eq!(
            m.types[*t as usize], want,
            "{file}: signature of import cyxla::{name}"
        );
    }
    // Required and optional exports.
    assert_eq!(
        m.exports.get(abi::EXPORT_MEMORY).map(|e| e.0),
        Some(ExternalKind::Memory),
        "{file}: exported memory"
    );
    for (name, want) in [
        (abi::EXPORT_ABI_VERSION, sig(&[], &[I32])),
        (abi::EXPORT_API, sig(&[], &[I32])),
        (abi::EXPORT_ALLOC, sig(&[I32, I32], &[I32])),
        (abi::EXPORT_FREE, sig(&[I32, I32, I32], &[])),
        (abi::EXPORT_LAST_PANIC, sig(&[], &[I32])),
    ] {
        assert_eq!(m.export_type(name), Some(&want), "{file}: {name}");
    }
    // Targets: exactly one section; every export is a handler.
    let sections: Vec<&Vec<u8>> = m
        .customs
        .iter()
        .filter(|(n, _)| n == abi::TARGETS_SECTION)
        .map(|(_, c)| c)
        .collect();
    assert_eq!(
        sections.len(),
        1,
        "{file}: number of `{}` sections",
        abi::TARGETS_SECTION
    );
    let targets = abi::parse_targets(sections[0]).unwrap_or_else(|e| panic!("{file}: {e}"));
    for (target, export) in &targets {
        assert_eq!(
            m.export_type(export),
            Some(&sig(&[I32], &[I32])),
            "{file}: handler export {export} of {target}"
        );
    }
    targets
        .into_iter()
        .map(|(t, e)| (t.to_string(), e.to_string()))
        .collect()
}

#[test]
fn bundled_guests_follow_the_abi() {
    let out = common::build_guests();
    let expected: &[(&str, &[(&str, &str)])] = &[
        ("echo_attrs", &[("echo_attrs", "echo_attrs")]),
        ("inplace_set0", &[("inplace_set0", "inplace_set0")]),
        ("noop", &[("frame_info", "frame_info"), ("noop", "noop")]),
        (
            "rms_norm",
            &[
                ("rms_norm", "rms_norm"),
                ("rms_norm_bwd", "rms_norm_bwd"),
                ("rms_norm_fwd", "rms_norm_fwd"),
            ],
        ),
        ("scale_any", &[("scale_any", "scale_any")]),
        (
            "trap",
            &[
                ("fail", "fail"),
                ("panic", "panic_now"),
                ("spin", "spin"),
                ("trap", "trap"),
            ],
        ),
        ("tridiag_solve", &[("tridiag_solve", "tridiag_solve")]),
    ];
    for (name, want) in expected {
        let file = format!("{name}.wasm");
        let path = out.join(&file);
        let wasm = std::fs::read(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
        assert!(
            wasm.len() < 256 * 1024,
            "{file} is {} bytes; guests should stay small",
            wasm.len()
        );
        let module = parse(&wasm);
        let mut got = check_abi(&file, &module);
        got.sort();
        let want: Vec<(String, String)> = want
            .iter()
            .map(|(t, e)| (t.to_string(), e.to_string()))
            .collect();
        assert_eq!(got, want, "{file}: targets");
        // The API table references every import, so all 18 are present
        // (in whatever order the linker emitted them).
        let mut names: Vec<&str> = module.imports.iter().map(|i| i.1.as_str()).collect();
        names.sort_unstable();
        let mut all = abi::IMPORTS.to_vec();
        all.sort_unstable();
        assert_eq!(names, all, "{file}: imports");
    }
}

/// Where `needle` occurs in `haystack`, if it does.
fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// The bundled guests carry no build path: no module names the checkout it
/// was built in or cargo's home (panic locations would; `guests/build.sh`
/// remaps them to `/cyxla` and `/cargo`, `guests/cpp/build.sh` to `/cyxla`).
#[test]
fn bundled_guests_name_no_folder_of_the_build() {
    let out = common::build_guests();
    let root = out
        .parent()
        .and_then(Path::parent)
        .expect("guests/out lies two folders under the checkout");
    let cargo_home = std::env::var_os("CARGO_HOME").map_or_else(
        || Path::new(&std::env::var_os("HOME").expect("HOME is set")).join(".cargo"),
        Into::into,
    );
    let mut names: Vec<String> = std::fs::read_dir(&out)
        .expect("read guests/out")
        .map(|e| {
            e.expect("an entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|n| n.ends_with(".wasm"))
        .collect();
    names.sort();
    assert!(names.len() >= 10, "guests/out holds only {names:?}");
    let mut remapped = 0;
    for name in &names {
        let bytes = std::fs::read(out.join(name)).expect("read a bundled module");
        for path in [root, cargo_home.as_path()] {
            let needle = path.to_string_lossy();
            if let Some(at) = find(&bytes, needle.as_bytes()) {
                panic!("{name} names {needle} at byte {at}");
            }
        }
        remapped += usize::from(find(&bytes, b"/cyxla/guest-sdk/src/").is_some());
    }
    // The Rust guests' panic locations are there, under the remapped prefix.
    assert!(
        remapped >= 5,
        "only {remapped} modules name /cyxla/guest-sdk/src/"
    );
}
