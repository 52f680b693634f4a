//! End to end through a real XLA CPU PJRT plugin: StableHLO programs whose
//! custom calls are served by the WAT guests of [`super`], compiled and run
//! with plugin-glue's client.

use std::sync::OnceLock;

use cyxla_pjrt_client::Client;
use cyxla_sandbox::{AllowList, Limits, Registered, Sandbox};
use plugin_glue::DType;
use plugin_glue::plugin::Plugin;

use super::{full_guest, test_limits};

/// Everything one test binary shares: the plugin, the sandbox (whose
/// targets are registered once per process) and a client.
pub struct Harness {
    pub plugin: Plugin,
    pub sandbox: Sandbox,
    pub client: Client,
    pub prefix: &'static str,
    pub registered: Vec<Registered>,
    _dir: tempfile::TempDir,
}

/// The targets every harness allows (`<prefix>` + each name).
const ALLOWED: [&str; 6] = ["double", "scale_attr", "fail", "trap", "spin", "ordinal"];

/// Loads the plugin at `relative`, a guest whose targets are
/// `<prefix><export>`, allows [`ALLOWED`] and registers them; once per
/// process.
pub fn harness(
    cell: &'static OnceLock<Harness>,
    which: cyxla_tests::Plugin,
    prefix: &'static str,
) -> &'static Harness {
    cell.get_or_init(|| {
        let plugin = which.load();
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("k.wasm"), full_guest(prefix)).unwrap();
        let allowed = AllowList::targets(ALLOWED.iter().map(|t| format!("{prefix}{t}")));
        let limits: Limits = test_limits();
        let sandbox = Sandbox::new(dir.path(), allowed, limits).unwrap();
        let registered = sandbox
            .register_allowed(&plugin)
            .expect("register the guest targets");
        let client = Client::new(&plugin, Some(2)).expect("create a PJRT client");
        Harness {
            plugin,
            sandbox,
            client,
            prefix,
            registered,
            _dir: dir,
        }
    })
}

/// A program `f32[n] -> f32[n]` that calls `target` with `config` as its
/// `backend_config` dictionary.
pub fn vector_program(target: &str, n: usize, config: &str) -> String {
    format!(
        r#"module @m {{
  func.func public @main(%arg0: tensor<{n}xf32>) -> tensor<{n}xf32> {{
    %0 = stablehlo.custom_call @{target}(%arg0) {{api_version = 4 : i32, backend_config = {{{config}}}}} : (tensor<{n}xf32>) -> tensor<{n}xf32>
    return %0 : tensor<{n}xf32>
  }}
}}
"#
    )
}

impl Harness {
    /// `<prefix><name>`.
    pub fn target(&self, name: &str) -> String {
        format!("{}{name}", self.prefix)
    }

    /// Compiles `program` and runs it on `input` (f32 vector) on device 0.
    pub fn run(&self, program: &str, input: &[f32]) -> Result<Vec<f32>, plugin_glue::Error> {
        let exe = self.client.compile(program.as_bytes(), 1)?;
        self.run_compiled(&exe, input)
    }

    /// Runs an executable on `input`.
    pub fn run_compiled(
        &self,
        exe: &cyxla_pjrt_client::Executable,
        input: &[f32],
    ) -> Result<Vec<f32>, plugin_glue::Error> {
        let bytes: Vec<u8> = input.iter().flat_map(|v| v.to_le_bytes()).collect();
        let n = i64::try_from(input.len()).unwrap();
        let buffer = self.client.buffer_from_host(&bytes, DType::F32, &[n], 0)?;
        let outputs = exe.execute(&[vec![&buffer]])?;
        let out = outputs[0][0].to_host()?;
        Ok(out
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect())
    }
}

/// Runs every end-to-end check against one harness.
pub fn check_all(h: &Harness) {
    // Registration named every allowed target and its guest.
    let mut names: Vec<&str> = h.registered.iter().map(|r| r.target.as_str()).collect();
    names.sort_unstable();
    let mut expected: Vec<String> = ALLOWED.iter().map(|t| h.target(t)).collect();
    expected.sort_unstable();
    assert_eq!(names, expected);
    assert!(h.registered.iter().all(|r| r.guest.ends_with("k.wasm")));

    // A guest doubles a vector, twice on the same executable.
    let double = h.target("double");
    let exe = h
        .client
        .compile(vector_program(&double, 4, "").as_bytes(), 1)
        .expect("compile the double program");
    for _ in 0..2 {
        assert_eq!(
            h.run_compiled(&exe, &[1.0, 2.0, 3.0, -4.5]).unwrap(),
            [2.0, 4.0, 6.0, -9.0]
        );
    }

    // Calls whose shapes change from one to the next, on the instance the
    // call before left idle: each is laid out anew or found to be laid out
    // as the last, and each result is exact.
    let exes: Vec<_> = [4, 7]
        .iter()
        .map(|&n| {
            let program = vector_program(&double, n, "");
            (n, h.client.compile(program.as_bytes(), 1).unwrap())
        })
        .collect();
    for (round, pick) in [0, 1, 1, 0, 0, 1, 0].into_iter().enumerate() {
        let (n, exe) = &exes[pick];
        let input: Vec<f32> = (0..*n).map(|i| (round * 10 + i) as f32 - 2.5).collect();
        let doubled: Vec<f32> = input.iter().map(|v| v * 2.0).collect();
        assert_eq!(
            h.run_compiled(exe, &input).unwrap(),
            doubled,
            "call {round}"
        );
    }

    // Attributes reach the guest.
    let program = vector_program(&h.target("scale_attr"), 3, "scale = 3.5 : f32");
    assert_eq!(
        h.run(&program, &[1.0, 2.0, -1.0]).unwrap(),
        [3.5, 7.0, -3.5]
    );

    // A guest error keeps its code and message, named.
    let error = h
        .run(&vector_program(&h.target("fail"), 2, ""), &[1.0, 2.0])
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("INVALID_ARGUMENT")
            && error.contains(&format!(
                "target `{}` (guest k.wasm): bad input from guest",
                h.target("fail")
            )),
        "{error}"
    );

    // A trap fails its call, names the trap, and the next call works.
    let error = h
        .run(&vector_program(&h.target("trap"), 2, ""), &[1.0, 2.0])
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("trapped: wasm `unreachable` instruction executed"),
        "{error}"
    );
    assert_eq!(
        h.run_compiled(&exe, &[0.5, 1.0, 1.5, 2.0]).unwrap(),
        [1.0, 2.0, 3.0, 4.0]
    );

    // An infinite loop hits the deadline.
    let error = h
        .run(&vector_program(&h.target("spin"), 2, ""), &[1.0, 2.0])
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("DEADLINE_EXCEEDED") && error.contains("exceeded its deadline"),
        "{error}"
    );
    assert_eq!(
        h.run_compiled(&exe, &[1.0, 1.0, 1.0, 1.0]).unwrap(),
        [2.0; 4]
    );

    // A target the guest declares but policy does not allow is not
    // registered, and the sandbox says why.
    let oob = h.target("oob");
    let error = h
        .run(&vector_program(&oob, 2, ""), &[1.0, 2.0])
        .unwrap_err()
        .to_string();
    assert!(error.contains("No FFI handler registered"), "{error}");
    let hint = h.sandbox.hint_for_unregistered(&oob).unwrap();
    assert!(
        hint.ends_with(&format!("but not allowed: add --allow {oob}")),
        "{hint}"
    );
}

/// Concurrent executions of one executable from several threads.
pub fn check_concurrent(h: &'static Harness) {
    let exe = h
        .client
        .compile(vector_program(&h.target("double"), 4, "").as_bytes(), 1)
        .unwrap();
    super::on_threads(4, |t| {
        for i in 0..10 {
            let x = (t * 10 + i) as f32;
            assert_eq!(
                h.run_compiled(&exe, &[x, 1.0, 2.0, 3.0]).unwrap(),
                [2.0 * x, 2.0, 4.0, 6.0]
            );
        }
    });
}

/// The bundled `rms_norm` guest (Rust, built with the SDK) in a StableHLO
/// program, with the attribute in both spellings (`api_version = 4` with
/// `backend_config`, and JAX's `mhlo.backend_config`).
pub fn check_bundled_rms_norm(h: &Harness) {
    let sandbox = Sandbox::new(
        &super::bundled_guests(),
        AllowList::targets(["rms_norm"]),
        Limits::default(),
    )
    .unwrap();
    let registered = sandbox.register_allowed(&h.plugin).unwrap();
    assert_eq!(registered.len(), 1);
    assert!(registered[0].guest.ends_with("rms_norm.wasm"));
    let x = [1.0f32, 2.0, 3.0, -1.0, 0.5, 4.0];
    let bytes: Vec<u8> = x.iter().flat_map(|v| v.to_le_bytes()).collect();
    for config in [
        "api_version = 4 : i32, backend_config = {eps = 1.0e-05 : f32}",
        "backend_config = \"\", mhlo.backend_config = {eps = 1.0e-05 : f32}",
    ] {
        let program = format!(
            r#"module @m {{
  func.func public @main(%arg0: tensor<2x3xf32>) -> tensor<2x3xf32> {{
    %0 = stablehlo.custom_call @rms_norm(%arg0) {{{config}}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
    return %0 : tensor<2x3xf32>
  }}
}}
"#
        );
        let exe = h.client.compile(program.as_bytes(), 1).unwrap();
        let input = h
            .client
            .buffer_from_host(&bytes, DType::F32, &[2, 3], 0)
            .unwrap();
        let out = exe.execute(&[vec![&input]]).unwrap()[0][0]
            .to_host()
            .unwrap();
        let y: Vec<f32> = out
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        for (row, got) in x.chunks(3).zip(y.chunks(3)) {
            let scale = 1.0 / (row.iter().map(|v| v * v).sum::<f32>() / 3.0 + 1e-5).sqrt();
            for (v, g) in row.iter().zip(got) {
                assert!(
                    (v * scale - g).abs() < 1e-5,
                    "{config}: {v} * {scale} vs {g}"
                );
            }
        }
    }
}

/// Buffers of megabytes, whose copies in and out of guest memory the host
/// shares with helper threads (`copy_threads`): every result is exact, one
/// call at a time and several at once, on buffers whose length is no whole
/// number of the helpers' chunks.
pub fn check_large_buffers(h: &Harness) {
    let prefix = format!("{}large_", h.prefix);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("k.wasm"), full_guest(&prefix)).unwrap();
    let mut limits = test_limits();
    limits.memory = 128 << 20;
    limits.copy_threads = 3;
    let target = format!("{prefix}double");
    let sandbox = Sandbox::new(dir.path(), AllowList::targets([target.as_str()]), limits).unwrap();
    assert_eq!(sandbox.register_allowed(&h.plugin).unwrap().len(), 1);
    let n = (3 << 20) + 5;
    let exe = h
        .client
        .compile(vector_program(&target, n, "").as_bytes(), 1)
        .expect("compile the double program");
    let input = |seed: usize| -> Vec<f32> {
        (0..n)
            .map(|i| ((i * 7919 + seed) % 100_003) as f32 * 0.37 - 1.0e4)
            .collect()
    };
    let check = |seed: usize| {
        let x = input(seed);
        let y = h.run_compiled(&exe, &x).unwrap();
        assert_eq!(y.len(), n);
        if let Some(i) = (0..n).find(|&i| y[i] != 2.0 * x[i]) {
            panic!(
                "seed {seed}: element {i} of {n} is {}, not 2 * {} (a chunk of a shared copy went astray)",
                y[i], x[i]
            );
        }
    };
    check(1);
    check(2);
    super::on_threads(3, |t| {
        for round in 0..3 {
            check(10 + t * 3 + round);
        }
    });
}
