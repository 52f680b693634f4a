//! The reference cannot drift from the code:
//!
//! - docs/reference-cli.md holds every subcommand and option of
//!   `cyxla-host` as its `-h` gives them (the tables between its
//!   `generated` markers are this test's [`cli_reference`]);
//! - every `CYXLA_*` variable the product reads is in docs/reference-cli.md
//!   or docs/reference-settings.md, and every one docs/reference-cli.md
//!   lists is read somewhere;
//! - docs/reference-limits.md has a row for every limit of the `limits!`
//!   table, with its default as the table shows it, and that text is the
//!   default the code has.
//!
//! On a mismatch the message names what is missing or different, and for the
//! CLI prints the tables the document should hold.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use cyxla_host::config::SETTINGS;
use cyxla_sandbox::limits::{Limits, Scope};
use cyxla_tests::workspace_root;

const CLI_DOC: &str = "docs/reference-cli.md";
const LIMITS_DOC: &str = "docs/reference-limits.md";
const SETTINGS_DOC: &str = "docs/reference-settings.md";
const BEGIN: &str = "<!-- generated: host/app/tests/reference.rs, begin -->";
const END: &str = "<!-- generated: host/app/tests/reference.rs, end -->";

fn doc(path: &str) -> String {
    std::fs::read_to_string(workspace_root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

// ---------------------------------------------------------------------------
// The command line, as `cyxla-host ... -h` prints it.

/// One entry of a help screen's "Arguments:" or "Options:" list.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Entry {
    /// `-i`, if it has a short spelling.
    short: Option<String>,
    /// `--input`, or the argument as the help writes it (`<PROGRAM>`,
    /// `[DIR]`).
    long: String,
    /// An option's value name (`X.npy`), with `...` when it takes several.
    value: Option<String>,
    /// `[default: ...]`.
    default: Option<String>,
    /// `[possible values: ...]`.
    possible: Option<String>,
    /// `[env: NAME=...]`: the variable's name.
    env: Option<String>,
    /// The help text without those.
    help: String,
    /// The whole line, its runs of spaces made one, to tell a global option
    /// from a subcommand's own one of the same name.
    line: String,
}

/// One help screen.
#[derive(Debug, Default)]
struct Screen {
    usage: Vec<String>,
    commands: Vec<(String, String)>,
    arguments: Vec<Entry>,
    options: Vec<Entry>,
}

fn help_screen(path: &[&str]) -> Screen {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cyxla-host"));
    cmd.args(path).arg("-h");
    // `[env: NAME=VALUE]` shows the value the environment has.
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("CYXLA_") {
            cmd.env_remove(name);
        }
    }
    let out = cmd.output().expect("cyxla-host runs");
    let text = String::from_utf8(out.stdout).expect("help is UTF-8");
    assert!(
        out.status.success(),
        "cyxla-host {} -h failed: {}",
        path.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    parse_screen(&text)
}

/// `cyxla-host -h` opens with what the program does (its command line's doc
/// comment), not the description of the Cargo package that builds it.
#[test]
fn the_help_opens_with_what_the_program_does() {
    let out = Command::new(env!("CARGO_BIN_EXE_cyxla-host"))
        .arg("-h")
        .output()
        .expect("cyxla-host runs");
    let text = String::from_utf8(out.stdout).expect("help is UTF-8");
    let first = text.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("Run XLA custom-call kernels on a PJRT plugin"),
        "{first:?}"
    );
    assert!(!text.contains(env!("CARGO_PKG_DESCRIPTION")), "{text}");
}

fn parse_screen(text: &str) -> Screen {
    let mut screen = Screen::default();
    let mut section = "";
    for line in text.lines() {
        if let Some(usage) = line.strip_prefix("Usage: ") {
            section = "usage";
            screen.usage.push(usage.trim().to_owned());
            continue;
        }
        if line.is_empty() {
            section = "";
            continue;
        }
        match line {
            "Commands:" | "Arguments:" | "Options:" => {
                section = line;
                continue;
            }
            _ => {}
        }
        match section {
            "usage" => screen.usage.push(line.trim().to_owned()),
            "Commands:" => {
                let line = line.trim();
                let (name, about) = line.split_once("  ").unwrap_or((line, ""));
                screen
                    .commands
                    .push((name.to_owned(), about.trim().to_owned()));
            }
            // One line each: a line that starts otherwise is a wrapped one,
            // which this parser would misread.
            "Arguments:" => {
                let t = line.trim_start();
                assert!(t.starts_with(['<', '[']), "not an argument: {line:?}");
                screen.arguments.push(parse_entry(line));
            }
            "Options:" => {
                assert!(
                    line.trim_start().starts_with('-'),
                    "not an option: {line:?}"
                );
                screen.options.push(parse_entry(line));
            }
            _ => {}
        }
    }
    screen
}

fn parse_entry(line: &str) -> Entry {
    let trimmed = line.trim();
    let (spec, help) = trimmed.split_once("  ").unwrap_or((trimmed, ""));
    let mut help = help.trim().to_owned();
    let (mut default, mut possible, mut env) = (None, None, None);
    // The trailing `[default: ...]`, `[possible values: ...]`, `[env: ...]`.
    while help.ends_with(']') {
        let mut depth = 0;
        let mut open = None;
        for (i, c) in help.char_indices().rev() {
            match c {
                ']' => depth += 1,
                '[' => {
                    depth -= 1;
                    if depth == 0 {
                        open = Some(i);
                        break;
                    }
                }
                _ => {}
            }
        }
        let Some(open) = open else { break };
        let inner = help[open + 1..help.len() - 1].to_owned();
        if let Some(v) = inner.strip_prefix("default: ") {
            default = Some(v.to_owned());
        } else if let Some(v) = inner.strip_prefix("possible values: ") {
            possible = Some(v.to_owned());
        } else if let Some(v) = inner.strip_prefix("env: ") {
            env = Some(v.split('=').next().unwrap_or(v).to_owned());
        } else {
            break;
        }
        help = help[..open].trim_end().to_owned();
    }
    let (short, rest) = match spec.split_once(", ") {
        Some((s, rest)) if s.starts_with('-') && !s.starts_with("--") => (Some(s.to_owned()), rest),
        _ => (None, spec),
    };
    let (long, value) = if rest.starts_with('-') {
        match rest.split_once(' ') {
            Some((long, value)) => {
                let value = value.replacen('<', "", 1).replacen('>', "", 1);
                (long.to_owned(), Some(value))
            }
            None => (rest.to_owned(), None),
        }
    } else {
        (rest.to_owned(), None)
    };
    Entry {
        short,
        long,
        value,
        default,
        possible,
        env,
        help,
        // Without the padding, which depends on the screen's widest entry.
        line: trimmed.split_whitespace().collect::<Vec<_>>().join(" "),
    }
}

/// Every command of the tree, root first, each with its help screen
/// (`help` has none of its own: it prints the others).
fn command_tree() -> Vec<(Vec<String>, Screen)> {
    let mut done = Vec::new();
    let mut todo = vec![Vec::<String>::new()];
    while let Some(path) = todo.pop() {
        let args: Vec<&str> = path.iter().map(String::as_str).collect();
        let screen = help_screen(&args);
        for (name, _) in screen.commands.iter().rev() {
            if name != "help" {
                let mut sub = path.clone();
                sub.push(name.clone());
                todo.push(sub);
            }
        }
        done.push((path, screen));
    }
    done
}

/// Text for a table cell: Markdown's `|`, `<`, `*` and `~` escaped outside
/// code spans.
fn cell(text: &str) -> String {
    let mut out = String::new();
    for (i, part) in text.split('`').enumerate() {
        if i > 0 {
            out.push('`');
        }
        if i % 2 == 1 {
            out.push_str(part);
            continue;
        }
        for c in part.chars() {
            match c {
                '|' => out.push_str("\\|"),
                '<' => out.push_str("&lt;"),
                '>' => out.push_str("&gt;"),
                '*' => out.push_str("\\*"),
                '~' => out.push_str("\\~"),
                _ => out.push(c),
            }
        }
    }
    out
}

fn title(path: &[String]) -> String {
    let mut words = vec!["cyxla-host".to_owned()];
    words.extend(path.iter().cloned());
    words.join(" ")
}

fn heading(path: &[String]) -> String {
    format!("### `{}`", title(path))
}

/// The rows of one command's table: its arguments, then its options.
fn rows(entries: &[&Entry], global: Option<&BTreeSet<String>>) -> String {
    let mut out = String::new();
    match global {
        Some(_) => {
            out.push_str("| argument or option | value | default | every subcommand | meaning |\n");
            out.push_str("|---|---|---|---|---|\n");
        }
        None => {
            out.push_str("| argument or option | value | default | meaning |\n");
            out.push_str("|---|---|---|---|\n");
        }
    }
    for e in entries {
        let spelling = match &e.short {
            Some(s) => format!("`{s}`, `{}`", e.long),
            None => format!("`{}`", e.long),
        };
        let mut value = e.value.as_ref().map_or(String::new(), |v| format!("`{v}`"));
        if let Some(p) = &e.possible {
            let list: Vec<String> = p.split(", ").map(|v| format!("`{v}`")).collect();
            value = format!("{value}: {}", list.join(", "));
        }
        let default = e.default.as_deref().map_or(String::new(), cell);
        let mut meaning = cell(&e.help);
        if let Some(env) = &e.env {
            meaning.push_str(&format!(" (read from `{env}` too)"));
        }
        match global {
            Some(g) => {
                let every = if g.contains(&e.long) { "yes" } else { "" };
                out.push_str(&format!(
                    "| {spelling} | {value} | {default} | {every} | {meaning} |\n"
                ));
            }
            None => out.push_str(&format!(
                "| {spelling} | {value} | {default} | {meaning} |\n"
            )),
        }
    }
    out
}

/// The root's options that every subcommand takes: global ones, documented
/// once, at the root.
fn globals(tree: &[(Vec<String>, Screen)]) -> BTreeSet<String> {
    let top = &tree[0].1;
    top.options
        .iter()
        .filter(|o| {
            tree[1..]
                .iter()
                .all(|(_, s)| s.options.iter().any(|so| so.long == o.long))
        })
        .map(|o| o.long.clone())
        .collect()
}

/// Whether a subcommand's entry is a global option of the root (the same
/// line; `--help` and `--version` whatever their line): not its own, so not
/// in its section.
fn inherited(tree: &[(Vec<String>, Screen)], global: &BTreeSet<String>, e: &Entry) -> bool {
    global.contains(&e.long)
        && (tree[0].1.options.iter().any(|o| o.line == e.line)
            || e.long == "--help"
            || e.long == "--version")
}

/// The generated part of docs/reference-cli.md.
fn cli_reference(tree: &[(Vec<String>, Screen)]) -> String {
    let global = globals(tree);
    let mut out = String::new();
    out.push_str(BEGIN);
    out.push('\n');
    for (path, screen) in tree {
        out.push('\n');
        out.push_str(&heading(path));
        out.push_str("\n\n```text\n");
        for (i, usage) in screen.usage.iter().enumerate() {
            out.push_str(if i == 0 { "Usage: " } else { "       " });
            out.push_str(usage);
            out.push('\n');
        }
        out.push_str("```\n");
        if !screen.commands.is_empty() {
            out.push_str("\n| subcommand | what it does |\n|---|---|\n");
            for (name, about) in &screen.commands {
                let mut sub = path.clone();
                sub.push(name.clone());
                let name = if name == "help" {
                    format!("`{}`", title(&sub))
                } else {
                    format!("[`{}`](#{})", title(&sub), anchor(&sub))
                };
                out.push_str(&format!("| {name} | {} |\n", cell(about)));
            }
        }
        let root = path.is_empty();
        let own: Vec<&Entry> = screen
            .arguments
            .iter()
            .chain(
                screen
                    .options
                    .iter()
                    .filter(|o| root || !inherited(tree, &global, o)),
            )
            .collect();
        if !own.is_empty() {
            out.push('\n');
            out.push_str(&rows(&own, root.then_some(&global)));
        }
        if !root {
            out.push_str(
                "\nAnd the options marked \"every subcommand\" of [`cyxla-host`](#cyxla-host).\n",
            );
        }
    }
    out.push('\n');
    out.push_str(END);
    out.push('\n');
    out
}

/// GitHub's anchor of [`heading`]: `cyxla-host kernelspec install` →
/// `cyxla-host-kernelspec-install`.
fn anchor(path: &[String]) -> String {
    title(path).replace(' ', "-")
}

/// The text of docs/reference-cli.md under `heading`, to the next heading
/// of the same or a higher level.
fn section<'a>(text: &'a str, heading: &str) -> Option<&'a str> {
    let start = text.find(&format!("\n{heading}\n"))? + 1;
    let body = &text[start + heading.len()..];
    let end = ["\n### ", "\n## ", "\n# "]
        .iter()
        .filter_map(|next| body.find(next))
        .min()
        .unwrap_or(body.len());
    Some(&body[..end])
}

#[test]
fn the_cli_reference_lists_every_subcommand_and_option() {
    let text = doc(CLI_DOC);
    let tree = command_tree();
    // The walk itself: it found the subcommands and options it must.
    let paths: Vec<String> = tree.iter().map(|(p, _)| p.join(" ")).collect();
    for must in [
        "",
        "run",
        "list",
        "policy check",
        "kernelspec install",
        "doctor",
    ] {
        assert!(
            paths.iter().any(|p| p == must),
            "the walk missed `{must}`: {paths:?}"
        );
    }
    assert!(
        tree[0].1.options.iter().any(|o| o.long == "--plugin"),
        "the root's options were not read: {:?}",
        tree[0].1.options
    );
    let run = &tree.iter().find(|(p, _)| p == &["run"]).unwrap().1;
    let input = run.options.iter().find(|o| o.long == "--input").unwrap();
    assert_eq!(
        (input.short.as_deref(), input.value.as_deref()),
        (Some("-i"), Some("X.npy"))
    );

    let global = globals(&tree);
    let mut missing = Vec::new();
    for (path, screen) in &tree {
        let Some(body) = section(&text, &heading(path)) else {
            missing.push(format!(
                "the subcommand `{}` (no heading {})",
                title(path),
                heading(path)
            ));
            continue;
        };
        for (name, _) in &screen.commands {
            if !body.contains(&format!("`{} {name}`", title(path))) {
                missing.push(format!(
                    "`{} {name}`, in the section `{}`",
                    title(path),
                    title(path)
                ));
            }
        }
        for e in screen.arguments.iter().chain(&screen.options) {
            if !path.is_empty() && inherited(&tree, &global, e) {
                continue; // checked in the root's section
            }
            for spelling in e.short.iter().chain([&e.long]) {
                if !body.contains(&format!("`{spelling}`")) {
                    missing.push(format!("`{spelling}` of `{}`", title(path)));
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "{CLI_DOC} lacks:\n  {}\n\nThe generated part should read:\n\n{}",
        missing.join("\n  "),
        cli_reference(&tree)
    );

    let expected = cli_reference(&tree);
    assert!(
        text.contains(&expected),
        "{CLI_DOC}'s generated part differs from `cyxla-host -h`; it should read:\n\n{expected}"
    );
}

// ---------------------------------------------------------------------------
// Environment variables.

/// Where the product's code is: the programs, libraries and the Python
/// package, and the guest SDK the wheel ships (not tests, benches or the
/// contributors' scripts).
const PRODUCT: &[&str] = &[
    "host/src",
    "host/app/src",
    "host/setup/src",
    "host/pjrt/src",
    "host/lapack/src",
    "host/client/src",
    "plugin-glue/src",
    "abi/src",
    "abi/xla-types/src",
    "host/python/jax_plugins",
    "guest-sdk/src",
    "guest-sdk/c",
    "guest-sdk/include",
    "guest-sdk/cmake",
    "guest-sdk/panic-handler",
];

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("a directory entry").path();
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        if path.is_dir() {
            if !matches!(name.as_ref(), "tests" | "target" | "__pycache__") {
                files(&path, out);
            }
        } else {
            out.push(path);
        }
    }
}

/// The `CYXLA_*` names in `text` that are environment variables: in code
/// (not comments), a name alone in a string literal (`"CYXLA_LOG"`,
/// `'CYXLA_LOG'`), or `$ENV{CYXLA_ZIG}` in CMake, `$CYXLA_X`/`${CYXLA_X}` in
/// a shell script. C macros and CMake's own variables are not.
fn variables_in(path: &Path, text: &str) -> BTreeSet<String> {
    let ext = path
        .extension()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned();
    let name = path
        .file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned();
    let cmake = ext == "cmake" || name == "CMakeLists.txt";
    let shell = ext == "sh";
    let code = matches!(ext.as_str(), "rs" | "py" | "c" | "cc" | "h" | "hpp");
    let mut found = BTreeSet::new();
    let lines: Vec<&str> = text.lines().collect();
    for (n, line) in lines.iter().enumerate() {
        let t = line.trim_start();
        // A Rust file's unit tests, at its end.
        if ext == "rs"
            && t == "#[cfg(test)]"
            && lines
                .get(n + 1)
                .is_some_and(|l| l.trim_start().starts_with("mod "))
        {
            break;
        }
        if t.starts_with("//")
            || t.starts_with('#') && !t.starts_with("#[")
            || t.starts_with("/*")
            || t.starts_with("* ")
        {
            continue;
        }
        for (i, _) in line.match_indices("CYXLA_") {
            let name: String = line[i..]
                .chars()
                .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '_')
                .collect();
            let before = &line[..i];
            let after = &line[i + name.len()..];
            let quoted = |q: char| before.ends_with(q) && after.starts_with(q);
            let is_var = (code && (quoted('"') || quoted('\'')))
                || (cmake && before.ends_with("$ENV{"))
                || (shell && (before.ends_with('$') || before.ends_with("${")));
            if is_var && !name.ends_with('_') {
                found.insert(name);
            }
        }
    }
    found
}

/// Every variable the product reads, with the first file naming it.
fn product_variables() -> BTreeMap<String, String> {
    let mut all = Vec::new();
    for dir in PRODUCT {
        files(&workspace_root().join(dir), &mut all);
    }
    all.sort();
    let mut vars = BTreeMap::new();
    for path in all {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue; // a binary file
        };
        let shown = path
            .strip_prefix(workspace_root())
            .unwrap_or(&path)
            .display()
            .to_string();
        for name in variables_in(&path, &text) {
            vars.entry(name).or_insert_with(|| shown.clone());
        }
    }
    vars
}

/// The variables docs/reference-cli.md's table of variables lists.
fn cli_doc_variables(text: &str) -> BTreeSet<String> {
    let body = text
        .split_once("\n## Environment variables\n")
        .map_or("", |(_, b)| b);
    let body = body.split("\n## ").next().unwrap_or("");
    body.lines()
        .filter_map(|l| l.strip_prefix("| `CYXLA_"))
        .map(|rest| format!("CYXLA_{}", rest.split('`').next().unwrap_or("")))
        .collect()
}

#[test]
fn every_variable_the_product_reads_is_in_the_reference() {
    let vars = product_variables();
    // The scan finds what it must: every setting's variable (read by the
    // set-up crate), and ones outside the table.
    for s in SETTINGS {
        if let Some(env) = s.env {
            assert!(
                vars.contains_key(env),
                "the scan of the sources missed {env}: {vars:?}"
            );
        }
    }
    for env in ["CYXLA_LAPACK", "CYXLA_ZIG", "CYXLA_WASM_OPT"] {
        assert!(
            vars.contains_key(env),
            "the scan of the sources missed {env}: {vars:?}"
        );
    }

    let cli = doc(CLI_DOC);
    let settings = doc(SETTINGS_DOC);
    let listed = cli_doc_variables(&cli);
    let missing: Vec<String> = vars
        .iter()
        .filter(|(name, _)| {
            let spelled = format!("`{name}`");
            !listed.contains(*name) && !settings.contains(&spelled)
        })
        .map(|(name, file)| format!("{name} (read in {file})"))
        .collect();
    assert!(
        missing.is_empty(),
        "in neither {CLI_DOC}'s \"Environment variables\" nor {SETTINGS_DOC}:\n  {}",
        missing.join("\n  ")
    );
    // And the other way: what the table lists, the product reads.
    let stale: Vec<&String> = listed.iter().filter(|n| !vars.contains_key(*n)).collect();
    assert!(
        stale.is_empty(),
        "{CLI_DOC} lists variables no product source reads: {stale:?}"
    );
    // The settings' variables are named, each with who reads it, and
    // linked for the rest.
    let named = cli
        .split_once("\n### The settings\n")
        .map_or("", |(_, b)| b.split("\n### ").next().unwrap_or(""));
    for s in SETTINGS {
        if let Some(env) = s.env {
            assert!(
                named.contains(&format!("`{env}`")),
                "{CLI_DOC}, \"The settings\": {env} is missing"
            );
        }
    }
    // The settings' variables are linked, not repeated.
    assert!(
        cli.contains("reference-settings.md"),
        "{CLI_DOC} does not link {SETTINGS_DOC}"
    );
}

#[test]
fn the_variable_scan_tells_variables_from_other_names() {
    // (file, text, the variables the scan must find there, in order).
    let cases: [(&str, &str, &[&str]); 8] = [
        ("a.rs", "const X: &str = \"CYXLA_ONE\";", &["CYXLA_ONE"]),
        ("a.py", "os.environ.get('CYXLA_TWO')", &["CYXLA_TWO"]),
        ("a.cmake", "if(\"$ENV{CYXLA_THREE}\")", &["CYXLA_THREE"]),
        (
            "a.sh",
            "echo \"${CYXLA_FOUR:-}\" $CYXLA_FIVE",
            &["CYXLA_FIVE", "CYXLA_FOUR"],
        ),
        // Comments, C macros and messages, CMake's own variables and test
        // modules name no variable the product reads.
        ("a.rs", "/// `\"CYXLA_DOC\"`\n// \"CYXLA_C\"", &[]),
        (
            "a.h",
            "#define CYXLA_EXPORT(x) x\n\"CYXLA_TARGET: too long\"",
            &[],
        ),
        ("a.cmake", "set(CYXLA_LINK_OPT \"${CYXLA_LINK_OPT}\")", &[]),
        (
            "a.rs",
            "#[cfg(test)]\nmod tests {\n    const T: &str = \"CYXLA_TEST\";\n}",
            &[],
        ),
    ];
    for (file, text, expected) in cases {
        let found: Vec<String> = variables_in(Path::new(file), text).into_iter().collect();
        assert_eq!(found, expected, "{file}: {text:?}");
    }
}

// ---------------------------------------------------------------------------
// Limits.

/// The rows of docs/reference-limits.md's table: name, default cell, and
/// the rest of the row.
fn limit_rows(table: &str) -> Vec<(String, String, String)> {
    table
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|rest| {
            let (name, rest) = rest.split_once("` | ")?;
            let (default, meaning) = rest.split_once(" | ")?;
            Some((
                name.to_owned(),
                default.trim().to_owned(),
                meaning.to_owned(),
            ))
        })
        .collect()
}

#[test]
fn the_limits_reference_has_every_limit_with_its_default() {
    let text = doc(LIMITS_DOC);
    let table = text
        .split_once("| name | default | what it limits |")
        .map(|(_, t)| t.split("\n\n").next().unwrap_or(""))
        .unwrap_or_else(|| {
            panic!("{LIMITS_DOC} has no table `| name | default | what it limits |`")
        });
    let rows = limit_rows(table);
    let mut problems = Vec::new();
    for name in Limits::NAMES {
        let shown = Limits::shown_default(name).expect("a limit's shown default");
        let Some((_, default, meaning)) = rows.iter().find(|(n, _, _)| n == name) else {
            problems.push(format!("no row for the limit `{name}` (default: {shown})"));
            continue;
        };
        if default != shown {
            problems.push(format!(
                "`{name}`: the default is `{default}` there, the code's is `{shown}`"
            ));
        }
        let wide = Limits::scope(name).and_then(Scope::wide);
        if let Some(wide) = wide
            && !meaning.contains("flag only")
            && !meaning.contains("flag or policy only")
        {
            problems.push(format!(
                "`{name}` is {wide} (no side file may set it): its row does not say \"flag only\""
            ));
        }
    }
    for (name, _, _) in &rows {
        if !Limits::NAMES.contains(&name.as_str()) {
            problems.push(format!("`{name}` is no limit of the code's table"));
        }
    }
    let order: Vec<&str> = rows.iter().map(|(n, _, _)| n.as_str()).collect();
    if problems.is_empty() && order != Limits::NAMES {
        problems.push(format!(
            "the rows are not in the code's order: {:?}",
            Limits::NAMES
        ));
    }
    assert!(
        problems.is_empty(),
        "{LIMITS_DOC}:\n  {}",
        problems.join("\n  ")
    );
}

/// The default the docs show for each limit is the value `Limits::default`
/// has: set to that text, the limits do not change.
#[test]
fn each_shown_default_is_the_default() {
    let cpus = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(4);
    for name in Limits::NAMES {
        let shown = Limits::shown_default(name).expect("a limit's shown default");
        let value = match shown {
            "the number of CPUs, at most 4" => cpus.to_string(),
            _ => {
                let plain = shown.replace('`', "");
                let plain = plain.split(" (").next().unwrap_or(&plain);
                let plain = plain.split(':').next().unwrap_or(plain).trim();
                if plain.chars().all(|c| c.is_ascii_digit() || c == ' ') {
                    plain.replace(' ', "")
                } else {
                    plain.to_owned()
                }
            }
        };
        let mut limits = Limits::default();
        limits
            .set(name, &value)
            .unwrap_or_else(|e| panic!("`{name}`: its shown default `{shown}` is no value: {e}"));
        assert_eq!(
            limits,
            Limits::default(),
            "`{name}`: its shown default `{shown}` ({value}) is not its default"
        );
    }
    // A wrong text would be caught.
    let mut limits = Limits::default();
    limits.set("memory", "128 MiB").unwrap();
    assert_ne!(limits, Limits::default());
}
