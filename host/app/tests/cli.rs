//! The `cyxla-host` binary end to end: JAX-lowered programs (text and
//! bytecode) on the three real PJRT plugins, native handlers from a shared
//! library, and every bad input a user can hand it.

#[path = "../../tests/common/mod.rs"]
mod common;

use common::{assert_exit, assert_usage_error, text, write, write_guest};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use cyxla_tests::{Plugin, manifest, programs_dir, read_npy, test_handlers_lib};

fn bin() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cyxla-host"));
    cmd.env_remove("CYXLA_PJRT_PLUGIN");
    cmd
}

/// Runs `cyxla-host --plugin P run PROGRAM ARGS...`.
fn run(plugin: Plugin, program: &Path, args: &[&str]) -> Output {
    bin()
        .arg("--plugin")
        .arg(plugin.path())
        .arg("run")
        .arg(program)
        .args(args)
        .output()
        .expect("cyxla-host runs")
}

fn native(target: &str) -> String {
    format!("{target}={}:{target}", test_handlers_lib().display())
}

fn inputs_of(name: &str) -> Vec<String> {
    let m = manifest();
    m.program(name)
        .inputs
        .iter()
        .flat_map(|t| {
            [
                "--input".to_owned(),
                t.path().unwrap().display().to_string(),
            ]
        })
        .collect()
}

/// Runs program `name` (text and bytecode) and checks every output file
/// against the expected one.
fn check_program(plugin: Plugin, name: &str, natives: &[&str]) {
    let m = manifest();
    let entry = m.program(name);
    for program in [entry.mlir_path(), entry.mlirbc_path()] {
        let dir = tempfile::tempdir().unwrap();
        let mut args: Vec<String> = inputs_of(name);
        args.push("--output-dir".into());
        args.push(dir.path().display().to_string());
        for t in natives {
            args.push("--native".into());
            args.push(native(t));
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = run(plugin, &program, &args);
        assert_exit(&out, 0, &format!("{name} on {}", plugin.label()));
        for k in 0..entry.outputs.len() {
            let (dims, descr, bytes) = read_npy(&dir.path().join(format!("out{k}.npy")));
            let dtype = cyxla_tests::dtype_from_descr(&descr).unwrap();
            entry
                .check_output(k, dtype, &dims, &bytes)
                .unwrap_or_else(|e| panic!("{} ({}): {e}", plugin.label(), program.display()));
        }
        let stdout = text(&out.stdout);
        assert_eq!(
            stdout.lines().count(),
            entry.outputs.len(),
            "one line per output:\n{stdout}"
        );
    }
}

#[test]
fn program_without_custom_calls_runs_on_every_plugin() {
    for plugin in Plugin::ALL {
        check_program(plugin, "no_custom_call", &[]);
    }
}

#[test]
fn native_handler_decodes_every_attribute_kind_on_every_plugin() {
    for plugin in Plugin::ALL {
        check_program(plugin, "attrs", &["cyxla_test_attrs"]);
    }
}

#[test]
fn every_npy_dtype_round_trips_through_a_program() {
    let m = manifest();
    let names: Vec<String> = m
        .programs
        .iter()
        .filter(|p| p.name.starts_with("dtype_"))
        .map(|p| p.name.clone())
        .collect();
    assert!(names.len() >= 14, "dtype programs: {names:?}");
    for name in &names {
        check_program(Plugin::P115, name, &[]);
    }
}

#[test]
fn handler_error_reaches_the_user_with_code_and_message() {
    let m = manifest();
    let expected = m
        .program("fail")
        .expect_error
        .clone()
        .expect("fail expects an error");
    for plugin in Plugin::ALL {
        let args = [
            inputs_of("fail"),
            vec!["--native".into(), native("cyxla_test_fail")],
        ]
        .concat();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = run(plugin, &m.program("fail").mlirbc_path(), &args);
        assert_exit(&out, 1, "failing handler");
        let err = text(&out.stderr);
        assert!(err.contains(&expected.code), "{}: {err}", plugin.label());
        let needle = expected
            .message
            .clone()
            .or(expected.message_contains.clone())
            .expect("a message to look for");
        assert!(err.contains(&needle), "{}: {err}", plugin.label());
    }
}

#[test]
fn unknown_target_gets_xla_message_and_a_hint() {
    let m = manifest();
    let entry = m.program("unknown_target");
    let target = &entry.targets[0];
    let args = [
        inputs_of("unknown_target"),
        vec!["--native".into(), native("cyxla_test_attrs")],
    ]
    .concat();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = run(Plugin::P115, &entry.mlir_path(), &args);
    assert_exit(&out, 1, "unknown target");
    let err = text(&out.stderr);
    assert!(
        err.contains(&format!("No FFI handler registered for {target}")),
        "{err}"
    );
    assert!(err.contains("hint:"), "{err}");
    assert!(
        err.contains("cyxla_test_attrs (native"),
        "lists what is registered: {err}"
    );
    assert!(
        err.contains(&format!("--native {target}=LIBRARY:SYMBOL")),
        "says how to register it: {err}"
    );
}

#[test]
fn replicated_over_four_devices_each_device_checked() {
    let m = manifest();
    let entry = m.program("add_one");
    for plugin in Plugin::ALL {
        let dir = tempfile::tempdir().unwrap();
        let args = [
            inputs_of("add_one"),
            vec![
                "--devices".into(),
                "4".into(),
                "--native".into(),
                native("cyxla_test_add_one"),
                "--output-dir".into(),
                dir.path().display().to_string(),
            ],
        ]
        .concat();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = run(plugin, &entry.mlirbc_path(), &args);
        assert_exit(&out, 0, "4 devices");
        entry.check_device_outputs(dir.path(), 4, plugin.label());
        assert_eq!(text(&out.stdout).lines().count(), 4);
    }
}

#[test]
fn json_output_is_one_document() {
    let m = manifest();
    let entry = m.program("no_custom_call");
    let args = [inputs_of("no_custom_call"), vec!["--json".into()]].concat();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = run(Plugin::P115, &entry.mlir_path(), &args);
    assert_exit(&out, 0, "json");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("valid JSON");
    let outputs = doc["outputs"].as_array().unwrap();
    assert_eq!(outputs.len(), 1);
    assert_eq!(outputs[0]["dtype"], "float32");
    assert_eq!(outputs[0]["shape"], serde_json::json!([3, 2]));
    assert_eq!(outputs[0]["values"].as_array().unwrap().len(), 6);
}

fn scratch_file(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn bad_inputs_are_clear_errors_never_crashes() {
    let m = manifest();
    let attrs = m.program("attrs");
    let nat = native("cyxla_test_attrs");
    let dir = tempfile::tempdir().unwrap();
    let good = attrs.inputs[0].path().unwrap();
    let wrong_dtype = m
        .programs
        .iter()
        .find(|p| p.inputs.len() == 1 && p.inputs[0].dtype != attrs.inputs[0].dtype)
        .and_then(|p| p.inputs[0].path())
        .unwrap();
    let wrong_shape = m
        .programs
        .iter()
        .find(|p| {
            p.inputs.len() == 1
                && p.inputs[0].dtype == attrs.inputs[0].dtype
                && p.inputs[0].shape != attrs.inputs[0].shape
        })
        .and_then(|p| p.inputs[0].path())
        .unwrap();
    let corrupt = scratch_file(dir.path(), "corrupt.npy", b"\x93NUMPY garbage");
    let bad_program = scratch_file(dir.path(), "bad.mlir", b"module { this is not stablehlo");
    let not_a_plugin = scratch_file(dir.path(), "notaplugin.so", b"\x7fELF not really");
    let program = attrs.mlir_path();
    let p = program.to_str().unwrap();
    let s = |p: &Path| p.display().to_string();
    // `run PROGRAM (-i INPUT)... [--native SPEC]`
    let run = |program: &Path, inputs: &[&Path], native: Option<String>| {
        let mut args = vec!["run".to_owned(), s(program)];
        for input in inputs {
            args.extend(["-i".to_owned(), s(input)]);
        }
        args.extend(native.into_iter().flat_map(|n| ["--native".to_owned(), n]));
        args
    };
    let cases: Vec<(&str, Vec<String>, i32, Vec<&str>)> = vec![
        (
            "missing .npy",
            run(&program, &[&dir.path().join("nope.npy")], Some(nat.clone())),
            2,
            vec!["nope.npy"],
        ),
        (
            "corrupt .npy",
            run(&program, &[&corrupt], Some(nat.clone())),
            2,
            vec!["corrupt.npy"],
        ),
        (
            "wrong dtype",
            run(&program, &[&wrong_dtype], Some(nat.clone())),
            2,
            vec!["input 0", "expected f32"],
        ),
        (
            "wrong shape",
            run(&program, &[&wrong_shape], Some(nat.clone())),
            2,
            vec!["input 0", "expected f32[2,3]"],
        ),
        (
            "wrong number of inputs",
            run(&program, &[&good, &good], Some(nat.clone())),
            2,
            vec!["takes 1 input(s)", "got 2"],
        ),
        (
            "corrupt program",
            run(&bad_program, &[&good], None),
            1,
            vec!["bad.mlir", "PJRT_Client_Compile"],
        ),
        (
            "missing program",
            run(&dir.path().join("none.mlir"), &[&good], None),
            2,
            vec!["none.mlir"],
        ),
        (
            "--native names a missing symbol",
            run(
                &program,
                &[&good],
                Some(format!(
                    "cyxla_test_attrs={}:no_such_symbol",
                    test_handlers_lib().display()
                )),
            ),
            2,
            vec!["no_such_symbol", "libcyxla_test_handlers"],
        ),
        (
            "--native names a missing library",
            run(
                &program,
                &[&good],
                Some(format!("t={}:sym", s(&dir.path().join("nolib.so")))),
            ),
            2,
            vec!["nolib.so"],
        ),
    ];
    for (what, args, code, needles) in cases {
        let out = bin()
            .arg("--plugin")
            .arg(Plugin::P115.path())
            .args(&args)
            .output()
            .unwrap();
        assert_exit(&out, code, what);
        let err = text(&out.stderr);
        for n in needles {
            assert!(err.contains(n), "{what}: stderr lacks {n:?}:\n{err}");
        }
    }
    // Plugins that are not plugins.
    for (what, plugin, needle) in [
        (
            "a file that is not a library",
            not_a_plugin,
            "notaplugin.so",
        ),
        (
            "a plugin path that does not exist",
            dir.path().join("nowhere.so"),
            "nowhere.so",
        ),
        (
            "a library that is not a PJRT plugin",
            test_handlers_lib(),
            "not a PJRT plugin",
        ),
    ] {
        let out = bin()
            .arg("--plugin")
            .arg(&plugin)
            .args(["run", p, "-i", good.to_str().unwrap()])
            .output()
            .unwrap();
        assert_usage_error(&out, what, needle);
    }
}

#[test]
fn plugin_comes_from_the_environment_when_not_given() {
    let m = manifest();
    let entry = m.program("no_custom_call");
    let run = |command: &mut Command| {
        command
            .arg("run")
            .arg(entry.mlir_path())
            .args(inputs_of("no_custom_call"))
            .output()
            .unwrap()
    };
    let out = run(bin().env(
        "CYXLA_PJRT_PLUGIN",
        programs_dir().join("no-such-plugin.so"),
    ));
    assert_usage_error(&out, "plugin from CYXLA_PJRT_PLUGIN", "no-such-plugin.so");
    // Without --plugin and the variable, the installed default is used.
    let out = run(&mut bin());
    assert_exit(&out, 0, "installed default plugin");
}

#[test]
fn usage_errors_exit_2() {
    let out = bin().args(["run"]).output().unwrap();
    assert_exit(&out, 2, "missing PROGRAM");
    let out = bin().args(["frobnicate"]).output().unwrap();
    assert_exit(&out, 2, "unknown subcommand");
    let out = bin()
        .args(["run", "x.mlir", "--native", "no-equals-sign"])
        .output()
        .unwrap();
    assert_usage_error(&out, "malformed --native", "TARGET=LIBRARY:SYMBOL");
}

/// A subcommand's own `--policy` (`kernelspec install`) shares its name
/// with the global `--policy` setting flag: both parse, as paths.
#[test]
fn kernelspec_install_takes_its_policy_beside_the_global_flag() {
    let dir = tempfile::tempdir().unwrap();
    let policy = write(
        dir.path(),
        "policy.toml",
        b"default_tenant = \"t\"\n[tenants.t]\n",
    );
    let mut install = bin();
    install
        .args(["kernelspec", "install", "--policy"])
        .arg(&policy);
    install.arg("--prefix").arg(dir.path());
    // Any existing file stands for the kernel's Python here.
    install
        .arg("--python")
        .arg(std::env::current_exe().unwrap());
    assert_exit(&install.output().unwrap(), 0, "kernelspec install --policy");
    let spec = dir.path().join("share/jupyter/kernels/cyxla/kernel.json");
    let spec = std::fs::read_to_string(spec).unwrap();
    let named = format!("\"--policy\",\n    {:?}", policy.to_str().unwrap());
    assert!(spec.contains(&named), "{spec}");
}

/// `interrupt=signal` and `interrupt=epoch` asked for deadline mechanisms
/// that were removed or replaced: the flag is a usage error that names the
/// setting and says why, and nothing runs (`CYXLA_LIMITS` and the
/// configuration file: tests/python/test_config.py).
#[test]
fn the_removed_signal_interrupt_is_a_usage_error() {
    for (name, why) in [
        ("signal", cyxla_sandbox::limits::SIGNAL_REMOVED),
        ("epoch", cyxla_sandbox::limits::EPOCH_REPLACED),
    ] {
        let flag = format!("interrupt={name}");
        let out = cyxla_sandbox(&["--limit", &flag, "list"]);
        assert_exit(&out, 2, &format!("--limit {flag}"));
        let stderr = text(&out.stderr);
        assert!(
            stderr.contains(&format!("--limit {flag}: {why}")),
            "{stderr}"
        );
        assert!(text(&out.stdout).is_empty(), "{}", text(&out.stdout));
    }
    // `poll`, what the errors point to, is accepted.
    let dir = tempfile::tempdir().unwrap();
    write_guest(dir.path(), "a.wasm", &[("a_double", "double")]);
    let out = cyxla_sandbox(&[
        "--limit",
        "interrupt=poll",
        "check",
        dir.path().to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
}

#[test]
fn an_error_names_its_cause_once() {
    // The host's errors name their cause and also return it as their
    // source: the printed chain must not say it twice.
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-folder");
    let out = bin()
        .args(["--guests", missing.to_str().unwrap(), "list"])
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    let os_error = "(os error 2)";
    assert!(stderr.contains(os_error), "{stderr}");
    assert_eq!(stderr.matches(os_error).count(), 1, "{stderr}");
}

fn cyxla_sandbox(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_cyxla-host"))
        .args(args)
        .output()
        .expect("run cyxla-host")
}

#[test]
fn the_limit_flag_sets_defaults_and_the_side_file_wins() {
    let dir = tempfile::tempdir().unwrap();
    write_guest(dir.path(), "a.wasm", &[("a_double", "double")]);
    write_guest(dir.path(), "b.wasm", &[("b_double", "double")]);
    write(dir.path(), "a.limits.toml", b"memory = \"32 MiB\"\n");
    let out = cyxla_sandbox(&[
        "--limit",
        "memory=16MiB",
        "--limit",
        "call_timeout=2s",
        "check",
        dir.path().to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(
        stdout.contains("limits   memory 32 MiB, stack 512 KiB, instances 8, call 2s, instantiate 5s (with ")
            && stdout.contains("limits   memory 16 MiB, stack 512 KiB, instances 8, call 2s, instantiate 5s (defaults and flags)"),
        "{stdout}"
    );

    let out = cyxla_sandbox(&["--limit", "memroy=1MiB", "list"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--limit memroy=1MiB: unknown field `memroy`, expected one of"),
        "{stderr}"
    );
}

#[test]
fn metrics_writes_a_textfile_and_names_a_missing_folder() {
    use cyxla_sandbox::stats::{ProcessFigures, Snapshot};
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("metrics");
    std::fs::create_dir(&folder).unwrap();
    let figures = ProcessFigures {
        targets: vec![Snapshot {
            target: "scale".to_owned(),
            calls: 5,
            deadlines: 2,
            durations: vec![0; cyxla_sandbox::stats::BUCKETS.len() + 1],
            ..Snapshot::default()
        }],
        ..ProcessFigures::default()
    };
    std::fs::write(folder.join("a.json"), figures.to_json()).unwrap();
    let out_file = dir.path().join("cyxla.prom");
    let out = bin()
        .env_remove("CYXLA_POLICY")
        .args(["metrics", "--folder"])
        .arg(&folder)
        .arg("--textfile")
        .arg(&out_file)
        .output()
        .unwrap();
    assert_exit(&out, 0, "");
    let prom = std::fs::read_to_string(&out_file).unwrap();
    for line in [
        "# TYPE cyxla_calls_total counter",
        "target=\"scale\"} 5",
        "target=\"scale\",kind=\"deadline\"} 2",
    ] {
        assert!(prom.contains(line), "no `{line}` in:\n{prom}");
    }

    let missing = dir.path().join("nowhere");
    let out = bin()
        .env_remove("CYXLA_POLICY")
        .args(["metrics", "--folder"])
        .arg(&missing)
        .output()
        .unwrap();
    assert_exit(
        &out,
        2,
        &format!("cannot read the metrics folder {}", missing.display()),
    );
}
