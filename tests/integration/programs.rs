//! The generated programs of `tests/programs/`: the committed files are what
//! `tests/gen_programs.py` generates, the manifest agrees with the files, and
//! the native test handlers export every handler the programs call.

use std::collections::BTreeSet;
use std::ffi::c_void;

use cyxla_tests::{
    TEST_HANDLERS, dtype_from_descr, manifest, programs_dir, read_npy, test_handlers_lib,
};

const REGENERATE: &str = ".venv/bin/python tests/gen_programs.py";

#[test]
fn generator_reproduces_committed_programs() {
    // Subdirectories (such as `tests/programs/lapack/`) have their own
    // generators.
    cyxla_tests::assert_generator_reproduces("tests/gen_programs.py", "tests/programs");
}

#[test]
fn manifest_agrees_with_files() {
    let m = manifest();
    let mut referenced = BTreeSet::from(["manifest.json".to_string()]);
    let mut names = BTreeSet::new();
    for p in &m.programs {
        assert!(
            names.insert(p.name.clone()),
            "program {} listed twice",
            p.name
        );
        assert_eq!(
            (p.mlir.as_str(), p.mlirbc.as_str()),
            (&*format!("{}.mlir", p.name), &*format!("{}.mlirbc", p.name))
        );

        let text = p.checked_mlir_text();
        assert!(
            text.contains("func.func public @main("),
            "{}: no @main in {}",
            p.name,
            p.mlir
        );
        assert_eq!(
            text.matches("stablehlo.custom_call @").count() > 0,
            !p.targets.is_empty(),
            "{}: custom calls in {} disagree with targets {:?}",
            p.name,
            p.mlir,
            p.targets
        );
        let bytecode = std::fs::read(p.mlirbc_path()).unwrap_or_else(|e| {
            panic!("{}: cannot read {}: {e}", p.name, p.mlirbc_path().display())
        });
        assert!(
            bytecode.starts_with(b"ML\xefR"),
            "{}: {} is not MLIR bytecode",
            p.name,
            p.mlirbc
        );
        assert!(
            !bytecode.windows(3).any(|w| w == b".py"),
            "{}: {} carries Python source locations",
            p.name,
            p.mlirbc
        );
        referenced.insert(p.mlir.clone());
        referenced.insert(p.mlirbc.clone());

        assert!(!p.inputs.is_empty(), "{}: no inputs", p.name);
        for (k, t) in p.inputs.iter().enumerate() {
            assert_eq!(
                t.file.as_deref(),
                Some(&*format!("{}.in{k}.npy", p.name)),
                "{}: input {k}",
                p.name
            );
        }
        for (k, t) in p.outputs.iter().enumerate() {
            let expected_file = p
                .expect_error
                .is_none()
                .then(|| format!("{}.out{k}.npy", p.name));
            assert_eq!(t.file, expected_file, "{}: output {k}", p.name);
        }
        for t in p.inputs.iter().chain(&p.outputs) {
            let dtype = dtype_from_descr(&t.descr)
                .unwrap_or_else(|| panic!("{}: unsupported type {}", p.name, t.descr));
            assert_eq!(
                dtype.name(),
                t.xla_dtype,
                "{}: {} vs {}",
                p.name,
                t.descr,
                t.xla_dtype
            );
            let Some(bytes) = t.read_checked(&p.name) else {
                continue;
            };
            let elements: i64 = t.shape.iter().product();
            let size = dtype
                .byte_size(u64::try_from(elements).expect("non-negative"))
                .expect("small");
            assert_eq!(
                bytes.len() as u64,
                size,
                "{}: data of {}",
                p.name,
                t.path().expect("has a file").display()
            );
            referenced.insert(t.file.clone().expect("has a file"));
        }
        if let Some(err) = &p.expect_error {
            assert!(
                matches!(err.stage.as_str(), "compile" | "execute"),
                "{}: stage {}",
                p.name,
                err.stage
            );
            assert!(
                err.message.is_some() || err.message_contains.is_some(),
                "{}: no message",
                p.name
            );
        }
    }

    let on_disk: BTreeSet<String> = cyxla_tests::files_in(&programs_dir()).into_keys().collect();
    let unlisted: Vec<&String> = on_disk.difference(&referenced).collect();
    let absent: Vec<&String> = referenced.difference(&on_disk).collect();
    assert!(
        unlisted.is_empty() && absent.is_empty(),
        "tests/programs/ and its manifest disagree: rerun `{REGENERATE}`\n  not in the manifest: {unlisted:?}\n  missing: {absent:?}"
    );
}

#[test]
fn manifest_has_the_agreed_programs() {
    let m = manifest();
    for name in [
        "no_custom_call",
        "attrs",
        "fail",
        "unknown_target",
        "add_one",
        "add_one_scalar",
        "copy16",
        "device",
        "multi_output",
        "scalar",
    ] {
        m.program(name);
    }
    let dtypes: BTreeSet<&str> = m
        .programs
        .iter()
        .filter(|p| p.name.starts_with("dtype_"))
        .map(|p| p.inputs[0].descr.as_str())
        .collect();
    let all = [
        "|b1", "|i1", "<i2", "<i4", "<i8", "|u1", "<u2", "<u4", "<u8", "<f2", "<f4", "<f8", "<c8",
        "<c16",
    ];
    assert_eq!(
        dtypes,
        BTreeSet::from(all),
        "dtype_* programs must cover every supported dtype"
    );

    let scalar = m.program("scalar");
    assert!(scalar.inputs[0].shape.is_empty() && scalar.outputs[0].shape.is_empty());
    let multi = m.program("multi_output");
    assert_eq!(multi.outputs.len(), 2);
    assert_ne!(multi.outputs[0].descr, multi.outputs[1].descr);
    for (name, want) in [("fail", ("execute", 9)), ("unknown_target", ("compile", 5))] {
        let error = m
            .program(name)
            .expect_error
            .as_ref()
            .unwrap_or_else(|| panic!("{name} must fail"));
        assert_eq!((error.stage.as_str(), error.code_value), want, "{name}");
    }
}

#[test]
fn expected_outputs_pass_their_own_check() {
    let m = manifest();
    for p in m.programs.iter().filter(|p| p.expect_error.is_none()) {
        for (k, t) in p.outputs.iter().enumerate() {
            let (dims, _, bytes) = read_npy(&t.path().expect("expected output"));
            p.check_output(k, t.dtype(), &dims, &bytes)
                .unwrap_or_else(|e| panic!("{e}"));
        }
    }
    // A perturbed result is caught.
    let p = m.program("add_one");
    let (dims, _, mut bytes) = read_npy(&p.outputs[0].path().expect("expected output"));
    bytes[0] ^= 1;
    let err = p
        .check_output(0, p.outputs[0].dtype(), &dims, &bytes)
        .expect_err("must differ");
    assert!(err.contains("program add_one output 0"), "{err}");
}

#[test]
fn test_handlers_export_every_handler() {
    type Handler = unsafe extern "C" fn(*mut c_void) -> *mut c_void;
    let path = test_handlers_lib();
    // SAFETY: the library is our own test_handlers.cc; loading it runs only the
    // C++ runtime's static initialisers, which have no preconditions.
    let lib = unsafe { libloading::Library::new(&path) }
        .unwrap_or_else(|e| panic!("cannot load {}: {e}", path.display()));
    for name in TEST_HANDLERS {
        // SAFETY: every exported handler has the XLA FFI handler signature
        // `XLA_FFI_Error* (XLA_FFI_CallFrame*)`; the symbol is only looked up,
        // never called.
        let symbol = unsafe { lib.get::<Handler>(name.as_bytes()) };
        assert!(
            symbol.is_ok(),
            "{} does not export {name}: {:?}",
            path.display(),
            symbol.err()
        );
    }
    // Every target a program calls is one of them (or deliberately unknown).
    for p in &manifest().programs {
        for t in &p.targets {
            assert!(
                TEST_HANDLERS.contains(&t.as_str()) || p.name == "unknown_target",
                "{}: target {t} is not a test handler",
                p.name
            );
        }
    }
}
