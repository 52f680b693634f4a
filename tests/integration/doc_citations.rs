//! Code and docs cite only documents the repository has.
//!
//! Scans the repository's sources and docs (not `target/`, not the upstream
//! sources under `vendor/`, whose `CYXLA-PATCH.md` files are scanned) for
//! citations of documents, and fails naming `file:line` when
//!
//! * a cited `.md` path names no file of the repository;
//! * a section heading cited in quotes after the path, as in
//!   `docs/abi.md, "XLA_FFI_CallFrame"`, is not a heading of that file
//!   (several may follow, separated by commas; a citation may continue on
//!   the next comment line, but each heading stays on one line);
//! * a line names a document kept outside the repository, or cites a
//!   section by number with a section sign (see [`FOREIGN`]).

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// Extensions of the files scanned.
const EXTENSIONS: [&str; 10] = ["rs", "h", "hpp", "c", "cc", "cpp", "py", "sh", "md", "toml"];

/// Directories never scanned, wherever they are: build output and tools'
/// state. Hidden directories (`.git`, `.venv`, ...) are skipped too.
const SKIPPED_DIRS: [&str; 4] = ["target", "node_modules", "__pycache__", "build"];

/// Phrases that name documents the repository does not have, lower case.
/// Spelled in pieces so that this file does not match itself.
const FOREIGN: [&str; 5] = [
    concat!("abi ", "reference"),
    concat!("target ", "reference"),
    concat!("key ", "finding"),
    concat!("reference", "/"),
    "\u{a7}",
];

#[test]
fn cited_documents_exist() {
    let root = cyxla_tests::workspace_root();
    let errors = check_tree(&root);
    assert!(
        errors.is_empty(),
        "{} citation(s) of documents the repository does not have:\n{}",
        errors.len(),
        errors.join("\n")
    );
}

/// The checker sees a bad citation (so the test above can fail).
#[test]
fn bad_citations_are_reported() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    fs::create_dir_all(root.join("docs")).unwrap();
    fs::create_dir_all(root.join("src")).unwrap();
    // Paths spelled in pieces, so that the scan of this file passes.
    let doc = concat!("docs/a", ".md");
    let missing = concat!("docs/missing", ".md");
    fs::write(
        root.join(doc),
        "# A\n\n## Known\n\n```\n## Not a heading\n```\n",
    )
    .unwrap();
    let source = [
        "//! DOC, \"Known\" is fine.\n",
        "//! MISSING is not.\n",
        "//! DOC, \"Known\", \"Unknown\"\n",
        "/// (DOC, \"Known\",\n/// \"Not a heading\")\n",
        "// DOC\n// (\"Known\")\n",
        "// see the spec SIGN2\n",
    ]
    .concat()
    .replace("DOC", doc)
    .replace("MISSING", missing)
    .replace("SIGN", "\u{a7}");
    fs::write(root.join("src/lib.rs"), source).unwrap();
    let errors = check_tree(root);
    let lines: Vec<&str> = errors
        .iter()
        .map(|e| e.split(": ").next().unwrap_or(""))
        .collect();
    assert_eq!(
        lines,
        [
            "src/lib.rs:2",
            "src/lib.rs:3",
            "src/lib.rs:5",
            "src/lib.rs:8"
        ],
        "{errors:#?}"
    );
}

/// Every problem in the tree under `root`, as `file:line: message`.
fn check_tree(root: &Path) -> Vec<String> {
    let mut files = Vec::new();
    collect(root, root, &mut files);
    files.sort();
    let docs: Vec<&PathBuf> = files
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "md"))
        .collect();
    let mut headings = BTreeMap::new();
    let mut errors = Vec::new();
    for file in &files {
        let Ok(text) = fs::read_to_string(root.join(file)) else {
            continue;
        };
        check_file(root, file, &text, &docs, &mut headings, &mut errors);
    }
    errors
}

/// Adds the files to scan under `dir` to `out`, relative to `root`.
fn collect(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let rel = path.strip_prefix(root).unwrap_or(&path).to_path_buf();
        if kind.is_dir() {
            let upstream = rel.parent() == Some(Path::new("vendor"));
            if name.starts_with('.') || SKIPPED_DIRS.contains(&name.as_ref()) {
                continue;
            }
            if upstream {
                // Upstream sources: only cyxla's notes on its patch.
                let patch = rel.join("CYXLA-PATCH.md");
                if root.join(&patch).is_file() {
                    out.push(patch);
                }
                continue;
            }
            collect(root, &path, out);
        } else if kind.is_file()
            && path
                .extension()
                .is_some_and(|e| EXTENSIONS.contains(&e.to_string_lossy().as_ref()))
        {
            out.push(rel);
        }
    }
}

/// Checks one file's lines.
fn check_file(
    root: &Path,
    file: &Path,
    text: &str,
    docs: &[&PathBuf],
    headings: &mut BTreeMap<PathBuf, Vec<String>>,
    errors: &mut Vec<String>,
) {
    let lines: Vec<&str> = text.lines().collect();
    let shown = file.display();
    for (i, line) in lines.iter().enumerate() {
        let at = format!("{shown}:{}", i + 1);
        let lower = line.to_lowercase();
        for phrase in FOREIGN {
            if lower.contains(phrase) {
                errors.push(format!(
                    "{at}: `{phrase}` cites a document outside the repository: {}",
                    line.trim()
                ));
            }
        }
        for (start, end) in md_paths(line) {
            let cited = &line[start..end];
            let found = resolve(root, file, cited, docs);
            if found.is_empty() {
                errors.push(format!("{at}: `{cited}` is not a file of the repository"));
                continue;
            }
            for (title, title_line) in cited_headings(&lines, i, end) {
                let Some(title) = title else {
                    errors.push(format!(
                        "{shown}:{}: a heading cited after `{cited}` is broken across lines",
                        title_line + 1
                    ));
                    continue;
                };
                let known = found.iter().any(|doc| {
                    headings
                        .entry(doc.clone())
                        .or_insert_with(|| headings_of(&root.join(doc)))
                        .contains(&title)
                });
                if !known {
                    errors.push(format!(
                        "{shown}:{}: `{cited}` has no heading \"{title}\"",
                        title_line + 1
                    ));
                }
            }
        }
    }
}

/// Byte ranges of the `.md` paths in `line`: `[A-Za-z0-9_./-]+\.md`, not
/// followed by a word character, with a file name before `.md`, and neither
/// a URL nor an absolute path.
fn md_paths(line: &str) -> Vec<(usize, usize)> {
    let bytes = line.as_bytes();
    let path_byte = |b: u8| b.is_ascii_alphanumeric() || b"_./-".contains(&b);
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(pos) = line[from..].find(".md") {
        let dot = from + pos;
        let end = dot + 3;
        from = end;
        if bytes
            .get(end)
            .is_some_and(|&b| b.is_ascii_alphanumeric() || b == b'_')
        {
            continue;
        }
        let mut start = dot;
        while start > 0 && path_byte(bytes[start - 1]) {
            start -= 1;
        }
        let path = &line[start..end];
        let stem_ok = path
            .rsplit('/')
            .next()
            .is_some_and(|name| name.len() > 3 && name != "..md");
        let url = start > 0 && bytes[start - 1] == b':';
        if stem_ok && !url && !path.starts_with('/') && !path.contains("//") {
            found.push((start, end));
        }
    }
    found
}

/// The repository documents `cited` (in `file`) may name: relative to the
/// root, relative to the citing file, or, for a bare or relative name, any
/// document whose path ends with it.
fn resolve(root: &Path, file: &Path, cited: &str, docs: &[&PathBuf]) -> Vec<PathBuf> {
    let dir = file.parent().unwrap_or(Path::new(""));
    for candidate in [PathBuf::from(cited), dir.join(cited)] {
        if root.join(&candidate).is_file() {
            return vec![normalize(&candidate)];
        }
    }
    let tail = cited.trim_start_matches("./").trim_start_matches("../");
    let tail = tail.trim_start_matches("../");
    docs.iter()
        .filter(|d| {
            let d = d.to_string_lossy();
            d == tail || d.ends_with(&format!("/{tail}"))
        })
        .map(|d| d.to_path_buf())
        .collect()
}

/// `a/b/../c` as `a/c`.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// The headings cited in quotes after the path that ends at byte `end` of
/// line `i`: `, "A", "B"` or `("A")`, continued on the next line when the
/// line ends after the path or after a comma. Each item is the heading (or
/// `None` if its closing quote is missing) and the line it is on.
fn cited_headings(lines: &[&str], i: usize, end: usize) -> Vec<(Option<String>, usize)> {
    let mut out = Vec::new();
    let mut line_no = i;
    let mut rest = &lines[i][end..];
    let mut need_separator = true;
    loop {
        let trimmed = rest.trim_start();
        let (after_sep, had_sep) = match trimmed.strip_prefix([',', '(']) {
            Some(r) => (r.trim_start(), true),
            None => match trimmed.strip_prefix("and ") {
                Some(r) if !need_separator => (r.trim_start(), true),
                _ => (trimmed, false),
            },
        };
        if after_sep.is_empty() {
            // The citation may go on on the next line.
            let continues =
                (had_sep || (need_separator && trimmed.is_empty())) && line_no + 1 < lines.len();
            if !continues {
                break;
            }
            let next = strip_comment(lines[line_no + 1]);
            let next = next.strip_prefix('(').unwrap_or(next);
            if !next.starts_with('"') {
                break;
            }
            line_no += 1;
            rest = next;
            need_separator = false;
            continue;
        }
        if !after_sep.starts_with('"') || (need_separator && !had_sep) {
            break;
        }
        let body = &after_sep[1..];
        match body.find('"') {
            Some(close) => {
                out.push((Some(body[..close].to_string()), line_no));
                rest = &body[close + 1..];
                need_separator = false;
            }
            None => {
                out.push((None, line_no));
                break;
            }
        }
    }
    out
}

/// A line without its comment marker and leading blanks.
fn strip_comment(line: &str) -> &str {
    let t = line.trim_start();
    for marker in ["//!", "///", "//", "#", "/*", "*"] {
        if let Some(rest) = t.strip_prefix(marker) {
            return rest.trim_start();
        }
    }
    t
}

/// The headings of a Markdown file, without `#`s, backticks and outer
/// blanks; lines inside fenced code blocks are not headings.
fn headings_of(path: &Path) -> Vec<String> {
    let text = fs::read_to_string(path).unwrap_or_default();
    let mut fenced = false;
    let mut out = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced && line.starts_with('#') {
            let title = line.trim_start_matches('#');
            if title.starts_with(' ') {
                out.push(title.trim().replace('`', ""));
            }
        }
    }
    out
}
