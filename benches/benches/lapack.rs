//! The native LAPACK targets versus JAX's own CPU backend, on the same
//! JAX-lowered programs, side by side in one run.
//!
//! `benches/gen_lapack_bench_programs.py` lowers (with `jax.export`, into a
//! temporary directory) lu_factor, cholesky, svd and eigh of one 512×512
//! matrix and solve, inv and eigh of 4096 matrices of 8×8, in f32 and f64,
//! with their inputs and JAX's outputs. This bench compiles each program's
//! StableHLO on the bare XLA CPU plugin with `cyxla_lapack::targets()`
//! registered, checks the results against JAX's, and times it (criterion,
//! our side only). Then it starts `benches/time_jax_lapack.py`, which runs
//! the very same lowered programs on jaxlib's CPU backend and LAPACK, and
//! measures both sides interleaved — a round of ours, a round of JAX's, per
//! program, repeated — and prints a table with the medians and the ratio
//! cyxla-host / JAX against the goal of each program (≤ 1.0× for the single
//! 512×512 matrices, ≤ 0.6× for the batches).
//!
//! Each side runs as its users get it, one device each: JAX on the OpenBLAS
//! that scipy ships, with that library's own kernel choice; cyxla-host on the
//! system's (`cyxla_lapack::library`), with the kernels the CLI names
//! (`cyxla_lapack::choose_openblas_kernels`). `OPENBLAS_*` variables
//! set by the user reach both sides.
//!
//! Run: `cargo bench -p cyxla-benches --bench lapack [-- FILTER]` (FILTER:
//! a substring of the program names, e.g. `4096` or `gesdd`).

use std::hint::black_box;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use criterion::Criterion;
use cyxla_benches::report::{self, Met, median};
use cyxla_benches::{load_default_plugin, mode, workspace_root};
use cyxla_lapack::KernelChoice;
use cyxla_pjrt_client::{Buffer, Client, Executable};
use plugin_glue::DType;
use serde_json::Value;

/// Interleaved rounds per program (each side measured once per round).
fn rounds() -> usize {
    mode::pick(7, 3)
}
/// Target duration of one measured round of one side.
fn round_time() -> Duration {
    Duration::from_millis(mode::pick(150, 30))
}
/// Pause after each round, so that the next side starts on a quiet machine:
/// OpenBLAS's idle threads spin for a while after a call (about 2²⁸ cycles,
/// `OPENBLAS_THREAD_TIMEOUT`), and on two cores a spinning thread of one
/// side would slow the other down.
fn settle() -> Duration {
    Duration::from_millis(mode::pick(200, 50))
}

/// One program, compiled, with its inputs on the device.
struct Program {
    name: String,
    description: String,
    goal: f64,
    exe: Executable,
    inputs: Vec<Buffer>,
}

impl Program {
    fn run(&self) -> Vec<Buffer> {
        let args: Vec<&Buffer> = self.inputs.iter().collect();
        let mut out = self
            .exe
            .execute(&[args])
            .unwrap_or_else(|e| panic!("{}: {e}", self.name));
        out.swap_remove(0)
    }

    /// Mean seconds per call over `iters` calls.
    fn time(&self, iters: usize) -> f64 {
        let start = Instant::now();
        for _ in 0..iters {
            black_box(self.run());
        }
        start.elapsed().as_secs_f64() / iters as f64
    }
}

/// Runs the generator into `dir` and returns its manifest.
fn generate(dir: &Path) -> Value {
    cyxla_tests::run_generator("benches/gen_lapack_bench_programs.py", dir);
    let path = dir.join("manifest.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn dtype_of(descr: &str) -> DType {
    cyxla_tests::dtype_from_descr(descr).unwrap_or_else(|| panic!("unexpected .npy type {descr}"))
}

/// Values of little-endian `f32`/`f64`/`s32` bytes as f64.
fn values(dtype: DType, bytes: &[u8]) -> Vec<f64> {
    match dtype {
        DType::F32 => bytes
            .chunks_exact(4)
            .map(|c| f64::from(f32::from_le_bytes(c.try_into().expect("4 bytes"))))
            .collect(),
        DType::F64 => bytes
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect(),
        DType::S32 => bytes
            .chunks_exact(4)
            .map(|c| f64::from(i32::from_le_bytes(c.try_into().expect("4 bytes"))))
            .collect(),
        other => panic!("no comparison for {}", other.name()),
    }
}

/// Compiles every program of the manifest that matches `filter`, uploads
/// its inputs and checks the outputs the manifest lists against JAX's.
fn load(client: &Client, dir: &Path, manifest: &Value, filter: &str) -> Vec<Program> {
    let mut programs = Vec::new();
    for entry in manifest["programs"].as_array().expect("programs") {
        let name = entry["name"].as_str().expect("name").to_owned();
        if !name.contains(filter) {
            continue;
        }
        let text = std::fs::read(dir.join(entry["mlir"].as_str().expect("mlir")))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let exe = client
            .compile(&text, 1)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let inputs = entry["inputs"]
            .as_array()
            .expect("inputs")
            .iter()
            .map(|t| {
                let (dims, descr, bytes) =
                    cyxla_tests::read_npy(&dir.join(t["file"].as_str().expect("file")));
                client
                    .buffer_from_host(&bytes, dtype_of(&descr), &dims, 0)
                    .unwrap_or_else(|e| panic!("{name}: {e}"))
            })
            .collect();
        let program = Program {
            description: entry["description"].as_str().unwrap_or("").to_owned(),
            goal: entry["goal"].as_f64().expect("goal"),
            name,
            exe,
            inputs,
        };
        check(&program, dir, entry);
        programs.push(program);
    }
    assert!(
        !programs.is_empty(),
        "no program matches the filter {filter:?}"
    );
    programs
}

/// The outputs listed under `check` must match JAX's within `tolerance`
/// relative to the largest expected magnitude (pivots exactly).
fn check(program: &Program, dir: &Path, entry: &Value) {
    let outputs = program.run();
    let tol = entry["tolerance"].as_f64().expect("tolerance");
    for k in entry["check"].as_array().expect("check") {
        let k = usize::try_from(k.as_u64().expect("output index")).expect("index");
        let file = entry["outputs"][k]["file"].as_str().expect("file");
        let (dims, descr, want) = cyxla_tests::read_npy(&dir.join(file));
        let dtype = dtype_of(&descr);
        let got = &outputs[k];
        assert_eq!(
            (got.dtype().expect("dtype"), got.dims().expect("dims")),
            (dtype, dims),
            "{} output {k}",
            program.name
        );
        let got = values(dtype, &got.to_host().expect("to_host"));
        let want = values(dtype, &want);
        let scale = want.iter().fold(1.0f64, |m, w| m.max(w.abs()));
        let worst = got
            .iter()
            .zip(&want)
            .map(|(g, w)| (g - w).abs())
            .fold(0.0f64, f64::max);
        let limit = if dtype == DType::S32 {
            0.0
        } else {
            tol * scale
        };
        assert!(
            worst <= limit,
            "{} output {k} differs from JAX's by {worst:e} (allowed {limit:e})",
            program.name
        );
    }
}

/// Whether `OPENBLAS_CORETYPE` in our environment is cyxla-host's choice
/// (`choose_openblas_kernels` set it), not the user's.
fn we_chose_kernels() -> bool {
    matches!(cyxla_lapack::kernel_choice(), Some(KernelChoice::Chose(_)))
}

/// `benches/time_jax_lapack.py`, running and ready.
struct Jax {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    ready: String,
}

impl Jax {
    fn start(dir: &Path) -> Jax {
        let script = workspace_root().join("benches/time_jax_lapack.py");
        let mut command = Command::new(cyxla_tests::venv_python());
        if we_chose_kernels() {
            // Our choice is ours: JAX's OpenBLAS keeps its own.
            command.env_remove(cyxla_lapack::library::CORETYPE_ENV);
        }
        let mut child = command
            .arg(&script)
            .arg(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", script.display()));
        let stdin = child.stdin.take().expect("piped stdin");
        let mut stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
        let mut ready = String::new();
        stdout.read_line(&mut ready).expect("reading the timer");
        assert!(
            ready.contains("\"ready\""),
            "{} did not start (said {ready:?}); run scripts/setup.sh",
            script.display()
        );
        Jax {
            child,
            stdin,
            stdout,
            ready,
        }
    }

    /// Mean seconds per call of `name` on JAX over `iters` calls.
    fn time(&mut self, name: &str, iters: usize) -> f64 {
        writeln!(self.stdin, "{name} {iters}").expect("writing to the timer");
        self.stdin.flush().expect("writing to the timer");
        let mut line = String::new();
        self.stdout.read_line(&mut line).expect("reading the timer");
        line.trim()
            .parse()
            .unwrap_or_else(|_| panic!("the JAX timer answered {line:?} for {name}"))
    }
}

impl Drop for Jax {
    fn drop(&mut self) {
        let _ = writeln!(self.stdin, "quit");
        let _ = self.stdin.flush();
        let _ = self.child.wait();
    }
}

fn format_time(seconds: f64) -> String {
    if seconds >= 1e-1 {
        format!("{:.0} ms", seconds * 1e3)
    } else if seconds >= 1e-3 {
        format!("{:.2} ms", seconds * 1e3)
    } else {
        format!("{:.1} µs", seconds * 1e6)
    }
}

/// One line of the table.
struct Row<'a> {
    program: &'a Program,
    iters: usize,
    ours: f64,
    theirs: f64,
    ratio: f64,
}

/// Interleaved rounds of both sides; prints the table.
fn compare(programs: &[Program], jax: &mut Jax) {
    let ready: Value = serde_json::from_str(&jax.ready).expect("the timer's JSON line");
    println!(
        "\nJAX {} CPU backend, LAPACK from scipy's OpenBLAS: {}",
        ready["jax"].as_str().unwrap_or("?"),
        ready["openblas"].as_str().unwrap_or("?")
    );
    let lib = cyxla_lapack::library().unwrap_or_else(|e| panic!("{e}"));
    println!(
        "cyxla-host LAPACK: {} ({}), kernels: {}",
        lib.name(),
        lib.config().unwrap_or("not OpenBLAS"),
        lib.core_name().unwrap_or("unknown")
    );
    if let Some(choice) = cyxla_lapack::kernel_choice() {
        println!("  kernels named by cyxla-host: {choice}");
    }
    let chosen = we_chose_kernels();
    let openblas_env: Vec<String> = std::env::vars()
        .filter(|(k, _)| k.starts_with("OPENBLAS_") || k.starts_with("CYXLA_LAPACK"))
        .filter(|(k, _)| !(chosen && k == cyxla_lapack::library::CORETYPE_ENV))
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    println!(
        "environment (both sides): {}",
        if openblas_env.is_empty() {
            "no OPENBLAS_* or CYXLA_LAPACK* variables".to_owned()
        } else {
            openblas_env.join(" ")
        }
    );
    println!("load average before: {}", report::load_average());
    let mut rows = Vec::new();
    for p in programs {
        // Calls per round from the median of three warm calls of ours.
        let once = median(&mut [p.time(1), p.time(1), p.time(1)]);
        let iters = ((round_time().as_secs_f64() / once).round() as usize).clamp(1, 1000);
        let (mut ours, mut theirs, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..rounds() {
            let t = p.time(iters);
            std::thread::sleep(settle());
            let j = jax.time(&p.name, iters);
            std::thread::sleep(settle());
            ours.push(t);
            theirs.push(j);
            ratios.push(t / j);
        }
        let row = Row {
            program: p,
            iters,
            ours: median(&mut ours),
            theirs: median(&mut theirs),
            ratio: median(&mut ratios),
        };
        eprintln!(
            "  {:<20} cyxla {:>10}  JAX {:>10}  ratio {:.3}x",
            p.name,
            format_time(row.ours),
            format_time(row.theirs),
            row.ratio
        );
        rows.push(row);
    }
    println!("load average after: {}", report::load_average());
    println!(
        "\nmedians of {} interleaved rounds; ratio = cyxla-host / JAX, the median of the \
         per-round ratios (lower is better):\n",
        rounds()
    );
    println!(
        "| {:<18} | {:>6} | {:>12} | {:>12} | {:>7} | {:>5} | {:<4} |",
        "program", "calls", "cyxla-host", "JAX CPU", "ratio", "goal", "met"
    );
    println!(
        "|{:-<20}|{:->8}|{:->14}|{:->14}|{:->9}|{:->7}|{:-<6}|",
        "", "", "", "", "", "", ""
    );
    for r in &rows {
        println!(
            "| {:<18} | {:>6} | {:>12} | {:>12} | {:>6.3}x | {:>4.1}x | {:<4} |",
            r.program.name,
            r.iters,
            format_time(r.ours),
            format_time(r.theirs),
            r.ratio,
            r.program.goal,
            if r.ratio <= r.program.goal {
                "yes"
            } else {
                "NO"
            }
        );
    }
    println!();
    for r in &rows {
        println!("  {:<18} {}", r.program.name, r.program.description);
    }
    report_rows(&rows);
}

/// Rows P5 (the single 512×512 matrices, goal 1.0×) and P6 (the batches,
/// goal 0.6×): the worst ratio of each group and how many programs meet
/// their goal.
fn report_rows(rows: &[Row<'_>]) {
    for (id, goal, what) in [
        ("P5", 1.0, "single 512x512"),
        ("P6", 0.6, "batched 4096x8x8"),
    ] {
        let group: Vec<&Row<'_>> = rows
            .iter()
            .filter(|r| (r.program.goal - goal).abs() < 1e-9)
            .collect();
        let Some(worst) = group.iter().max_by(|a, b| a.ratio.total_cmp(&b.ratio)) else {
            continue;
        };
        let best = group.iter().map(|r| r.ratio).fold(f64::INFINITY, f64::min);
        let met = group.iter().filter(|r| r.ratio <= goal).count();
        report::result(
            id,
            Met::from(met == group.len()),
            &format!("<={goal:.1}x"),
            &[
                ("worst_ratio", worst.ratio),
                ("best_ratio", best),
                ("programs", group.len() as f64),
                ("programs_met", met as f64),
            ],
            &format!(
                "{what}: {best:.2}-{:.2}x over {} programs (worst {}), {met} meet the goal",
                worst.ratio,
                group.len(),
                worst.program.name
            ),
        );
    }
}

/// The FILTER argument (`cargo bench ... -- FILTER`), if any: the last
/// argument that is neither an option nor the value of one of criterion's
/// options.
fn filter() -> String {
    const WITH_VALUE: [&str; 14] = [
        "--profile-time",
        "--sample-size",
        "--warm-up-time",
        "--measurement-time",
        "--save-baseline",
        "--baseline",
        "--load-baseline",
        "--output-format",
        "--color",
        "--plotting-backend",
        "--nresamples",
        "--noise-threshold",
        "--confidence-level",
        "--significance-level",
    ];
    let args: Vec<String> = std::env::args().skip(1).collect();
    args.iter()
        .enumerate()
        .filter(|(i, a)| {
            !a.starts_with('-') && (*i == 0 || !WITH_VALUE.contains(&args[i - 1].as_str()))
        })
        .map(|(_, a)| a.clone())
        .next_back()
        .unwrap_or_default()
}

fn main() {
    if std::env::var_os("TF_CPP_MIN_LOG_LEVEL").is_none() {
        // Keep XLA's INFO lines ("cpu_device_count set via create_options")
        // out of the report, as the CLI does.
        // SAFETY: first thing in main, before any other thread exists.
        unsafe { std::env::set_var("TF_CPP_MIN_LOG_LEVEL", "1") };
    }
    // As the CLI does. SAFETY: first thing in main, before any other thread.
    unsafe { cyxla_lapack::choose_openblas_kernels() };
    let filter = filter();
    let dir = tempfile::tempdir().expect("a temporary directory");
    let manifest = generate(dir.path());
    let plugin = load_default_plugin();
    for (name, handler) in cyxla_lapack::targets() {
        plugin_glue::registry::register(&plugin, name, handler)
            .unwrap_or_else(|e| panic!("registering {name}: {e}"));
    }
    let client = Client::new(&plugin, Some(1)).expect("client");
    let programs = load(&client, dir.path(), &manifest, &filter);

    let mut c = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .configure_from_args();
    if mode::sampling() {
        let mut group = c.benchmark_group("lapack");
        for p in &programs {
            group.bench_function(format!("{}/cyxla", p.name), |b| {
                b.iter(|| black_box(p.run()))
            });
        }
        group.finish();
    }

    let mut jax = Jax::start(dir.path());
    compare(&programs, &mut jax);
    drop(jax);
    c.final_summary();
    report::peak_rss("lapack");
}
