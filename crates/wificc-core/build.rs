//! Fingerprints the simulator's model: `WIFICC_MODEL` is the SHA-256 (first 16 hex digits) of
//! every source file under `src/` that the library compiles outside tests (relative path and
//! model text, in path order: code without comments, `#[cfg(test)]` items or layout, see
//! `fingerprint.rs`), of Cargo.toml and of the workspace's Cargo.lock when there is one (the
//! versions of dependencies such as the random number generators results depend on).
//! Results carry it, so a sweep can tell runs of this model from runs stored by another one.

use std::fs;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

// `model_text` is for the tests; the build needs its two steps apart.
#[allow(dead_code)]
#[path = "fingerprint.rs"]
mod fingerprint;

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .map(|entry| entry.expect("directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            files(&path, out);
        } else {
            out.push(path);
        }
    }
}

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let mut paths = vec![root.join("Cargo.toml")];
    let lock = root.join("../../Cargo.lock");
    if lock.is_file() {
        paths.push(lock.clone());
    }
    let mut sources = Vec::new();
    files(&root.join("src"), &mut sources);
    let read =
        |path: &Path| fs::read(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    // Each Rust file's model text, and the files only tests compile (left out).
    let mut texts = Vec::new();
    let mut test_only = Vec::new();
    for path in &sources {
        let raw = read(path);
        if path.extension().is_some_and(|e| e == "rs") {
            let code = fingerprint::strip_comments(&String::from_utf8_lossy(&raw));
            let dir = path.parent().expect("a file's directory");
            let owns_dir = matches!(
                path.file_name().and_then(|n| n.to_str()),
                Some("mod.rs" | "lib.rs")
            );
            for (name, given) in fingerprint::test_only_modules(&code) {
                match given {
                    Some(p) => test_only.push(dir.join(p)),
                    None if owns_dir => {
                        test_only.push(dir.join(format!("{name}.rs")));
                        test_only.push(dir.join(&name).join("mod.rs"));
                    }
                    None => {
                        let stem = path.file_stem().expect("a file name");
                        test_only.push(dir.join(stem).join(format!("{name}.rs")));
                    }
                }
            }
            texts.push((
                path.clone(),
                fingerprint::strip_test_items(&code).into_bytes(),
            ));
        } else {
            texts.push((path.clone(), raw));
        }
    }
    let mut hash = Sha256::new();
    let extra: Vec<(PathBuf, Vec<u8>)> = paths.iter().map(|p| (p.clone(), read(p))).collect();
    for (path, text) in extra
        .iter()
        .chain(texts.iter().filter(|(p, _)| !test_only.contains(p)))
    {
        let name = path
            .strip_prefix(&root)
            .expect("under the crate")
            .to_string_lossy();
        hash.update(name.replace('\\', "/").as_bytes());
        hash.update([0]);
        hash.update((text.len() as u64).to_le_bytes());
        hash.update(text);
    }
    let digest: String = hash.finalize()[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    println!("cargo:rustc-env=WIFICC_MODEL={digest}");
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=Cargo.toml");
    println!("cargo:rerun-if-changed=fingerprint.rs");
    println!("cargo:rerun-if-changed={}", lock.display());
}
