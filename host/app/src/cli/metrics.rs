//! `cyxla-host metrics`: the figures of every cyxla process on the machine
//! (each notebook kernel's), per tenant, user and target, in Prometheus's
//! text format: printed once, written to a file for node_exporter's
//! textfile collector, or served over HTTP for Prometheus to scrape.
//!
//! Each process keeps its figures in a file of its own in the metrics
//! folder (`CYXLA_METRICS`, the policy's `metrics`; rewritten every
//! `CYXLA_STATS_INTERVAL` and at exit). What a process writes decides only
//! its own figures: the user of a file is its owner, which the process
//! cannot choose, and its tenant is the one the policy gives that user (a
//! user the policy does not map may run as any tenant, as the plugin
//! allows; a file claiming a tenant its user cannot be is left out, with a
//! warning). Files of processes that ended stay, so counters only grow.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use cyxla_sandbox::stats::{BUCKETS, Events, ProcessFigures, Snapshot};
use cyxla_setup::tenants::{Policy, UnixUser};

/// Who a file's figures belong to.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Who {
    tenant: String,
    user: String,
}

/// The folder's figures summed per tenant and user (and target).
#[derive(Debug, Default)]
pub struct Collected {
    targets: BTreeMap<(Who, String), Snapshot>,
    events: BTreeMap<Who, Events>,
    processes: BTreeMap<Who, u64>,
    /// Files left out, each with why.
    pub skipped: Vec<String>,
}

/// Reads every process's figures in `folder`; with `policy`, each file's
/// tenant is the one the policy gives its owner.
///
/// # Errors
///
/// The folder cannot be read. A file that cannot be read or trusted is
/// left out and named in [`Collected::skipped`].
pub fn collect(folder: &Path, policy: Option<&Policy>) -> Result<Collected> {
    let entries = std::fs::read_dir(folder)
        .with_context(|| format!("cannot read the metrics folder {}", folder.display()))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    let mut out = Collected::default();
    for path in files {
        match read_one(&path, policy) {
            Ok((who, figures)) => out.add(who, figures),
            Err(why) => out.skipped.push(format!("{}: {why}", path.display())),
        }
    }
    Ok(out)
}

/// One process's file: whose it is, and its figures.
fn read_one(path: &Path, policy: Option<&Policy>) -> Result<(Who, ProcessFigures), String> {
    let meta = std::fs::symlink_metadata(path).map_err(|e| format!("cannot be read: {e}"))?;
    if !meta.file_type().is_file() {
        return Err("not a regular file".to_owned());
    }
    let user = UnixUser::of_uid(meta.uid())?;
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot be read: {e}"))?;
    let figures =
        ProcessFigures::from_json(&text).map_err(|e| format!("not cyxla figures: {e}"))?;
    let tenant = match policy {
        Some(policy) => policy.select(figures.tenant.as_deref(), &user)?.0,
        None => figures.tenant.clone().unwrap_or_default(),
    };
    Ok((
        Who {
            tenant,
            user: user.name,
        },
        figures,
    ))
}

impl Collected {
    fn add(&mut self, who: Who, figures: ProcessFigures) {
        *self.processes.entry(who.clone()).or_default() += 1;
        self.events
            .entry(who.clone())
            .or_default()
            .add(&figures.events);
        for t in figures.targets {
            let key = (who.clone(), t.target.clone());
            match self.targets.get_mut(&key) {
                Some(sum) => sum.add(&t),
                None => {
                    self.targets.insert(key, t);
                }
            }
        }
    }

    /// The figures in Prometheus's text exposition format (version 0.0.4).
    pub fn prometheus(&self) -> String {
        let mut out = Exposition::default();
        let who_labels = |who: &Who| {
            format!(
                "tenant=\"{}\",user=\"{}\"",
                escape(&who.tenant),
                escape(&who.user)
            )
        };
        let target_labels =
            |who: &Who, target: &str| format!("{},target=\"{}\"", who_labels(who), escape(target));

        let per_target: [Family<Snapshot>; 4] = [
            (
                "cyxla_calls_total",
                "Sandboxed guest calls, successful or not.",
                |s| s.calls,
            ),
            (
                "cyxla_instances_created_total",
                "Guest instances created for calls.",
                |s| s.instances,
            ),
            (
                "cyxla_bytes_in_total",
                "Bytes of operands copied into guests.",
                |s| s.bytes_in,
            ),
            (
                "cyxla_bytes_out_total",
                "Bytes of results copied out of guests.",
                |s| s.bytes_out,
            ),
        ];
        let targets: Vec<(String, &Snapshot)> = (self.targets.iter())
            .map(|((who, target), s)| (target_labels(who, target), s))
            .collect();
        out.counters(&per_target, &targets);

        let name = out.family(
            "cyxla_call_failures_total",
            "counter",
            "Failed guest calls by kind: bad_input (INVALID_ARGUMENT, from the guest or the \
             host), guest_error (the guest's other errors), trap, limit, deadline, other (a \
             retired target, an instance that could not be made).",
        );
        for ((who, target), s) in &self.targets {
            for (kind, n) in [
                ("guest_error", s.guest_errors),
                ("bad_input", s.bad_inputs),
                ("trap", s.traps),
                ("limit", s.limits),
                ("deadline", s.deadlines),
                ("other", s.other_errors),
            ] {
                out.row(format!(
                    "{name}{{{},kind=\"{kind}\"}} {n}",
                    target_labels(who, target)
                ));
            }
        }

        let name = out.family(
            "cyxla_refused_targets_total",
            "counter",
            "Programs whose compile failed because they call a target that is not registered \
             (not allowed, or served by no guest).",
        );
        for (who, e) in &self.events {
            for (target, n) in &e.refused {
                out.row(format!("{name}{{{}}} {n}", target_labels(who, target)));
            }
        }

        let name = out.family(
            "cyxla_call_duration_seconds",
            "histogram",
            "Time of a call in the sandbox (the guest and the copies), on a sample: one call in \
             64 on each thread (every call where CYXLA_STATS is set).",
        );
        for ((who, target), s) in &self.targets {
            let labels = target_labels(who, target);
            let mut cumulative = 0;
            // A file of an older version may have fewer buckets (none).
            for i in 0..=BUCKETS.len() {
                cumulative += s.durations.get(i).copied().unwrap_or(0);
                let le = BUCKETS
                    .get(i)
                    .map_or_else(|| "+Inf".to_owned(), |b| b.to_string());
                out.row(format!(
                    "{name}_bucket{{{labels},le=\"{le}\"}} {cumulative}"
                ));
            }
            let seconds = (s.guest_ns + s.copy_ns) as f64 * 1e-9;
            out.row(format!("{name}_sum{{{labels}}} {seconds}"));
            out.row(format!("{name}_count{{{labels}}} {}", s.timed_calls));
        }

        let per_user: [Family<Events>; 5] = [
            (
                "cyxla_compile_cache_hits_total",
                "Guest modules read from the compile cache.",
                |e| e.cache_hits,
            ),
            (
                "cyxla_compile_cache_misses_total",
                "Guest modules compiled (not in the compile cache, or the cache is off).",
                |e| e.cache_misses,
            ),
            (
                "cyxla_guests_loaded_total",
                "Guest modules loaded, at start or by a reload.",
                |e| e.guests_loaded,
            ),
            (
                "cyxla_guests_reloaded_total",
                "Changed guest modules that serve their targets now.",
                |e| e.guests_reloaded,
            ),
            (
                "cyxla_guest_reloads_rejected_total",
                "Changed guest modules rejected (the previous version keeps serving).",
                |e| e.reloads_rejected,
            ),
        ];
        let users: Vec<(String, &Events)> = (self.events.iter())
            .map(|(who, e)| (who_labels(who), e))
            .collect();
        out.counters(&per_user, &users);

        let name = out.family(
            "cyxla_processes",
            "gauge",
            "cyxla processes (kernels) whose figures are in the metrics folder, running or ended.",
        );
        for (who, n) in &self.processes {
            out.row(format!("{name}{{{}}} {n}", who_labels(who)));
        }

        let name = out.family(
            "cyxla_metrics_files_skipped",
            "gauge",
            "Files in the metrics folder left out: unreadable, not cyxla's, or claiming a tenant \
             their owner cannot be.",
        );
        out.row(format!("{name} {}", self.skipped.len()));
        out.text
    }
}

/// A counter family over rows of `T` (a target's counters, a user's
/// events): its name, its help, and a row's count.
type Family<T> = (&'static str, &'static str, fn(&T) -> u64);

/// Prometheus text being written: families, each a header and its rows.
#[derive(Default)]
struct Exposition {
    text: String,
}

impl Exposition {
    /// Starts the family `name`; returns its name, for its rows.
    fn family(&mut self, name: &str, kind: &str, help: &str) -> String {
        let _ = writeln!(self.text, "# HELP {name} {help}\n# TYPE {name} {kind}");
        name.to_owned()
    }

    /// One sample line.
    fn row(&mut self, line: String) {
        self.text.push_str(&line);
        self.text.push('\n');
    }

    /// Counter `families`, each with a sample per row: its labels and what
    /// the family counts of it.
    fn counters<T>(&mut self, families: &[Family<T>], rows: &[(String, &T)]) {
        for (metric, help, get) in families {
            let name = self.family(metric, "counter", help);
            for (labels, row) in rows {
                self.row(format!("{name}{{{labels}}} {}", get(row)));
            }
        }
    }
}

/// A label value as the text format writes it.
fn escape(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// What the `metrics` subcommand does with the figures.
#[derive(Debug)]
pub enum Output {
    /// Print them once.
    Print,
    /// Write them to this file (through a temporary file and a rename),
    /// for node_exporter's textfile collector.
    Textfile(PathBuf),
    /// Serve them at `http://ADDR/metrics` until killed.
    Listen(String),
}

/// Runs `cyxla-host metrics`: the figures in `folder`, tenants by
/// `policy`, to `output`.
///
/// # Errors
///
/// The folder or the policy cannot be read, the file cannot be written,
/// the address cannot be listened on.
pub fn run(folder: &Path, policy: Option<&Path>, output: &Output) -> Result<()> {
    let policy = policy
        .map(|p| Policy::load(p).map_err(anyhow::Error::msg))
        .transpose()?;
    let text = || -> Result<String> {
        let collected = collect(folder, policy.as_ref())?;
        for skipped in &collected.skipped {
            tracing::warn!("metrics: left out {skipped}");
        }
        Ok(collected.prometheus())
    };
    match output {
        Output::Print => print!("{}", text()?),
        Output::Textfile(path) => {
            let tmp = path.with_extension("prom.tmp");
            std::fs::write(&tmp, text()?)
                .and_then(|()| std::fs::rename(&tmp, path))
                .with_context(|| format!("cannot write {}", path.display()))?;
        }
        Output::Listen(addr) => {
            let server = tiny_http::Server::http(addr.as_str())
                .map_err(|e| anyhow::anyhow!("cannot listen on {addr}: {e}"))?;
            eprintln!("cyxla-host metrics: serving http://{addr}/metrics");
            for request in server.incoming_requests() {
                let response = if request.url() == "/metrics" {
                    match text() {
                        Ok(body) => tiny_http::Response::from_string(body).with_header(
                            tiny_http::Header::from_bytes(
                                "Content-Type",
                                "text/plain; version=0.0.4; charset=utf-8",
                            )
                            .expect("a valid header"),
                        ),
                        Err(e) => tiny_http::Response::from_string(format!("{e:#}\n"))
                            .with_status_code(500),
                    }
                } else {
                    tiny_http::Response::from_string("cyxla-host metrics: see /metrics\n")
                        .with_status_code(404)
                };
                if let Err(e) = request.respond(response) {
                    tracing::warn!("metrics: cannot answer a request: {e}");
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figures(tenant: Option<&str>, calls: u64, traps: u64) -> ProcessFigures {
        let mut durations = vec![0; BUCKETS.len() + 1];
        durations[2] = 1;
        ProcessFigures {
            pid: 1,
            tenant: tenant.map(str::to_owned),
            targets: vec![Snapshot {
                target: "scale".to_owned(),
                calls,
                traps,
                timed_calls: 1,
                guest_ns: 7_000,
                durations,
                ..Snapshot::default()
            }],
            events: Events {
                cache_hits: 1,
                refused: [("nope".to_owned(), 2)].into(),
                ..Events::default()
            },
        }
    }

    #[test]
    fn processes_of_one_user_are_summed_and_written_as_prometheus_text() {
        let dir = tempfile::tempdir().unwrap();
        for (i, f) in [figures(None, 3, 1), figures(None, 4, 0)]
            .iter()
            .enumerate()
        {
            std::fs::write(dir.path().join(format!("{i}.json")), f.to_json()).unwrap();
        }
        std::fs::write(dir.path().join("junk.json"), "{").unwrap();
        std::fs::write(dir.path().join("ignored.txt"), "not json").unwrap();
        let collected = collect(dir.path(), None).unwrap();
        assert_eq!(collected.skipped.len(), 1, "{:?}", collected.skipped);
        assert!(collected.skipped[0].contains("junk.json: not cyxla figures"));
        let text = collected.prometheus();
        let me = UnixUser::current().unwrap().name;
        let labels = format!("tenant=\"\",user=\"{me}\"");
        for line in [
            format!("cyxla_calls_total{{{labels},target=\"scale\"}} 7"),
            format!("cyxla_call_failures_total{{{labels},target=\"scale\",kind=\"trap\"}} 1"),
            format!("cyxla_refused_targets_total{{{labels},target=\"nope\"}} 4"),
            format!(
                "cyxla_call_duration_seconds_bucket{{{labels},target=\"scale\",le=\"0.000005\"}} 0"
            ),
            format!(
                "cyxla_call_duration_seconds_bucket{{{labels},target=\"scale\",le=\"0.00001\"}} 2"
            ),
            format!(
                "cyxla_call_duration_seconds_bucket{{{labels},target=\"scale\",le=\"+Inf\"}} 2"
            ),
            format!("cyxla_call_duration_seconds_count{{{labels},target=\"scale\"}} 2"),
            format!("cyxla_compile_cache_hits_total{{{labels}}} 2"),
            format!("cyxla_processes{{{labels}}} 2"),
            "cyxla_metrics_files_skipped 1".to_owned(),
        ] {
            assert!(
                text.lines().any(|l| l == line),
                "no line {line} in:\n{text}"
            );
        }
    }

    #[test]
    fn a_tenant_comes_from_the_policy_not_from_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let me = UnixUser::current().unwrap().name;
        let policy_path = dir.path().join("policy.toml");
        std::fs::write(
            &policy_path,
            format!("[tenants.research]\n[tenants.student]\n[users]\n{me} = \"research\"\n"),
        )
        .unwrap();
        let policy = Policy::load(&policy_path).unwrap();
        let figures_dir = dir.path().join("m");
        std::fs::create_dir(&figures_dir).unwrap();
        // A file that claims another tenant than its owner's is left out.
        std::fs::write(
            figures_dir.join("a.json"),
            figures(Some("student"), 5, 0).to_json(),
        )
        .unwrap();
        std::fs::write(
            figures_dir.join("b.json"),
            figures(Some("research"), 2, 0).to_json(),
        )
        .unwrap();
        let collected = collect(&figures_dir, Some(&policy)).unwrap();
        assert_eq!(collected.skipped.len(), 1, "{:?}", collected.skipped);
        assert!(
            collected.skipped[0].contains("tenant `student`"),
            "{:?}",
            collected.skipped
        );
        let text = collected.prometheus();
        let line =
            format!("cyxla_calls_total{{tenant=\"research\",user=\"{me}\",target=\"scale\"}} 2");
        assert!(
            text.lines().any(|l| l == line),
            "no line {line} in:\n{text}"
        );
        assert!(!text.contains("tenant=\"student\""), "{text}");
    }

    #[test]
    fn label_values_are_escaped() {
        assert_eq!(escape("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
    }
}
