//! Fingerprints the simulator's sources: `WIFICC_MODEL` is the SHA-256 (first 16 hex digits) of
//! every file under `src/` (relative path and contents, in path order), of Cargo.toml and of the
//! workspace's Cargo.lock when there is one (the versions of dependencies such as the random
//! number generators results depend on).
//! Results carry it, so a sweep can tell runs of this model from runs stored by another one.

use std::fs;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

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
    files(&root.join("src"), &mut paths);
    let mut hash = Sha256::new();
    for path in &paths {
        let name = path
            .strip_prefix(&root)
            .expect("under the crate")
            .to_string_lossy();
        let text = fs::read(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
        hash.update(name.replace('\\', "/").as_bytes());
        hash.update([0]);
        hash.update((text.len() as u64).to_le_bytes());
        hash.update(&text);
    }
    let digest: String = hash.finalize()[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    println!("cargo:rustc-env=WIFICC_MODEL={digest}");
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=Cargo.toml");
    println!("cargo:rerun-if-changed={}", lock.display());
}
