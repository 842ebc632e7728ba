//! Generates the C header native/include/s3native.h from native/src/ffi.rs with cbindgen.
//! The header is committed; `make header-check` fails when it is stale.

fn main() {
    println!("cargo:rerun-if-changed=native/src");
    println!("cargo:rerun-if-changed=cbindgen.toml");
    println!("cargo:rerun-if-changed=build.rs");
    let dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let config = cbindgen::Config::from_file(format!("{dir}/cbindgen.toml")).expect("cbindgen.toml is valid");
    match cbindgen::Builder::new().with_crate(&dir).with_config(config).generate() {
        Ok(bindings) => {
            bindings.write_to_file(format!("{dir}/native/include/s3native.h"));
        }
        // A syntax error in the crate: let rustc report it instead of cbindgen.
        Err(e) => println!("cargo:warning=s3native.h not regenerated: {e}"),
    }
}
