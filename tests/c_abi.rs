//! The C ABI as a C program sees it: tests/c/roundtrip.c compiled with the system C compiler
//! against the generated native/include/s3native.h and linked to the cdylib cargo built.

mod common;

use std::path::PathBuf;
use std::process::Command;

use common::{TestBucket, PART};

/// The bytes roundtrip.c writes: byte i is i * 31 mod 251.
fn data_pattern_c(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 31 % 251) as u8).collect()
}

fn compile() -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    // The cdylib lives next to the test binary's deps directory: target/<profile>/.
    let exe = std::env::current_exe().unwrap();
    let lib_dir = exe.parent().unwrap().parent().unwrap().to_path_buf();
    assert!(lib_dir.join("libs3native.so").exists(), "no libs3native.so in {}", lib_dir.display());
    let out = lib_dir.join("c_roundtrip");
    let status = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
        .args(["-std=c11", "-Wall", "-Werror", "-o"])
        .arg(&out)
        .arg(root.join("tests/c/roundtrip.c"))
        .arg(format!("-I{}", root.join("native/include").display()))
        .arg(format!("-L{}", lib_dir.display()))
        .arg(format!("-Wl,-rpath,{}", lib_dir.display()))
        .arg("-ls3native")
        .status()
        .expect("a C compiler (cc) on PATH");
    assert!(status.success(), "compiling tests/c/roundtrip.c failed");
    out
}

#[test]
fn a_c_program_writes_through_the_header() {
    require_server!();
    let exe = compile();
    let tb = TestBucket::new("c_abi");
    for (name, len) in [("small", 1000usize), ("multipart", PART + 12345)] {
        let key = tb.key(name);
        let e = common::env();
        let out = Command::new(&exe)
            .args([&e.endpoint, &tb.bucket, &key, &len.to_string()])
            .env("AWS_ACCESS_KEY_ID", &e.access_key)
            .env("AWS_SECRET_ACCESS_KEY", &e.secret_key)
            .output()
            .unwrap();
        assert!(out.status.success(), "{name}: {}", String::from_utf8_lossy(&out.stderr));
        let result = s3native::UploadResult::from_json(String::from_utf8_lossy(&out.stdout).trim()).expect("result JSON");
        assert_eq!(result.length, len as u64);
        tb.assert_object(&key, &data_pattern_c(len));
    }
}
