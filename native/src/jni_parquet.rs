//! The JVM boundary of the Parquet writer: the native methods of
//! `io.s3native.parquet.ParquetNative` (behind `io.s3native.parquet.NativeParquetWriter`).
//!
//! A submodule of [`crate::jni`], with its rules: arguments checked here, errors and panics
//! turned into the exceptions `io.s3native.Native.exception` builds (through `call`), no
//! logic the Rust API ([`SharedParquetWriter`]) lacks.
//!
//! Arrow crosses by the Arrow C stream interface: the Java side exports one
//! `ArrowArrayStream` per file (arrow-c-data's `Data.exportArrayStream`) and passes its
//! address to `open`; the native writer moves the stream out at once (the Java struct is
//! left released, so closing it on the Java side is harmless), reads the schema once and
//! pulls batches by reference through the stream's callbacks, on the calling thread, in
//! `writeNext`. An address of 0 is refused before anything is opened.
//!
//! Handles: `open` returns a `Box<SharedParquetWriter>` as a `jlong`; the Java side frees it
//! exactly once (`free`), never while another call uses it.

use ::jni::objects::{JClass, JObject, JObjectArray, JString};
use ::jni::sys::jlong;
use ::jni::EnvUnowned;

use super::{by_name, call, new_string, settings, string, to_java, with_credentials, Result};
use crate::{Error, MagicFile, MagicLayout, Mode, ParquetOptions, ParquetWriter, PendingEtags, SharedParquetWriter, Writer};

fn writer<'a>(h: jlong) -> Result<&'a SharedParquetWriter> {
    if h == 0 {
        return Err(Error::state("the Parquet writer is closed").into());
    }
    // SAFETY: the Java side passes only live handles from open (see the module doc).
    Ok(unsafe { &*(h as *const SharedParquetWriter) })
}

fn options(env: &::jni::Env<'_>, json: &JString<'_>) -> Result<ParquetOptions> {
    if json.is_null() {
        return Ok(ParquetOptions::default());
    }
    Ok(ParquetOptions::from_json(&string(env, json, "the Parquet options")?)?)
}

fn stream_address(address: jlong) -> Result<*mut crate::arrow_array::ffi_stream::FFI_ArrowArrayStream> {
    if address == 0 {
        return Err(Error::invalid_argument("the Arrow stream address is 0 (null)").into());
    }
    Ok(address as *mut _)
}

/// Wrap `writer` around the stream at `address` and return the handle.
fn open_on_stream(writer: Writer, address: *mut crate::arrow_array::ffi_stream::FFI_ArrowArrayStream, options: &ParquetOptions) -> Result<jlong> {
    // SAFETY: the Java side passes the address of a live ArrowArrayStream it exported; its
    // callbacks run on this (an attached Java) thread.
    let w = unsafe { ParquetWriter::open_c_stream(writer, address, options)? };
    Ok(Box::into_raw(Box::new(SharedParquetWriter::new(w))) as jlong)
}

/// `static native long open(String bucket, String key, String mode, String[] settings, long credentials, String optionsJson, long stream)`:
/// a Parquet writer on the Arrow C stream at `stream` ([`ParquetWriter::open_c_stream`]);
/// `mode` is [`Mode`]'s name (`PUBLISH`, `DEFERRED`, `CREATE_IF_ABSENT`), `optionsJson`
/// [`ParquetOptions`]' JSON (null: the defaults).
#[no_mangle]
pub extern "system" fn Java_io_s3native_parquet_ParquetNative_open<'local>(
    unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    bucket: JString<'local>,
    key: JString<'local>,
    mode: JString<'local>,
    kv: JObjectArray<'local, JString<'local>>,
    credentials: jlong,
    options_json: JString<'local>,
    stream: jlong,
) -> jlong {
    call(unowned, |env| {
        let address = stream_address(stream)?;
        let bucket = string(env, &bucket, "bucket")?;
        let key = string(env, &key, "key")?;
        let mode: Mode = by_name(env, &mode, "mode")?;
        let options = options(env, &options_json)?;
        options.properties()?;
        let settings = with_credentials(settings(env, &kv)?, credentials);
        open_on_stream(Writer::open(&bucket, &key, mode, &settings)?, address, &options)
    })
}

/// `static native long openMagic(String bucket, String magicKey, String uri, String layout, String etags, String[] settings, long credentials, String optionsJson, long stream)`:
/// as `open`, for a file under an S3A magic path ([`Writer::open_magic`]; `layout` and
/// `etags` as `io.s3native.Native.openMagic` takes them).
#[no_mangle]
pub extern "system" fn Java_io_s3native_parquet_ParquetNative_openMagic<'local>(
    unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    bucket: JString<'local>,
    magic_key: JString<'local>,
    uri: JString<'local>,
    layout: JString<'local>,
    etags: JString<'local>,
    kv: JObjectArray<'local, JString<'local>>,
    credentials: jlong,
    options_json: JString<'local>,
    stream: jlong,
) -> jlong {
    call(unowned, |env| {
        let address = stream_address(stream)?;
        let bucket = string(env, &bucket, "bucket")?;
        let magic_key = string(env, &magic_key, "magic key")?;
        let uri = string(env, &uri, "uri")?;
        let layout: MagicLayout = by_name(env, &layout, "magic layout")?;
        let etags: PendingEtags = by_name(env, &etags, "etag form")?;
        let options = options(env, &options_json)?;
        options.properties()?;
        let settings = with_credentials(settings(env, &kv)?, credentials);
        let file = MagicFile::for_key(&magic_key, layout, etags)?
            .ok_or_else(|| Error::invalid_argument(format!("'{magic_key}' is not a magic path under {layout:?}")))?;
        open_on_stream(Writer::open_magic(&bucket, &file, &uri, &settings)?, address, &options)
    })
}

/// `static native Map<String, Object> writeNext(long handle, long maxBatches)`: pull up to
/// `maxBatches` batches (all when negative) from the stream and write them
/// ([`ParquetWriter::write_from_stream`]); the [`StreamProgress`](crate::StreamProgress) by
/// name (`batches`, `rows`, `ended`).
#[no_mangle]
pub extern "system" fn Java_io_s3native_parquet_ParquetNative_writeNext<'local>(
    unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    h: jlong,
    max_batches: jlong,
) -> JObject<'local> {
    call(unowned, |env| {
        let max = u64::try_from(max_batches).ok();
        let progress = writer(h)?.write_from_stream(max)?;
        to_java(env, &progress)
    })
}

/// `static native String close(long handle)`: [`SharedParquetWriter::close`]; the
/// [`ParquetResult`](crate::ParquetResult) JSON (a second close returns it again).
#[no_mangle]
pub extern "system" fn Java_io_s3native_parquet_ParquetNative_close<'local>(
    unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    h: jlong,
) -> JObject<'local> {
    call(unowned, |env| {
        let result = writer(h)?.close()?;
        new_string(env, &result.to_json())
    })
}

/// `static native void abort(long handle)`: [`SharedParquetWriter::abort`], also while
/// another thread is in a write or close.
#[no_mangle]
pub extern "system" fn Java_io_s3native_parquet_ParquetNative_abort<'local>(unowned: EnvUnowned<'local>, _class: JClass<'local>, h: jlong) {
    call(unowned, |_env| Ok(writer(h)?.abort()?))
}

/// `static native void free(long handle)`: drop the writer (an open one's upload is
/// aborted, never completed; the stream is released). Called exactly once per handle.
#[no_mangle]
pub extern "system" fn Java_io_s3native_parquet_ParquetNative_free<'local>(unowned: EnvUnowned<'local>, _class: JClass<'local>, h: jlong) {
    call(unowned, |_env| {
        if h != 0 {
            // SAFETY: `h` came from `open` and the Java side frees it once, unused.
            drop(unsafe { Box::from_raw(h as *mut SharedParquetWriter) });
        }
        Ok(())
    })
}
