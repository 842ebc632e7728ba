//! The C ABI over the Rust API. The header `native/include/s3native.h` is generated from
//! this file by cbindgen (build.rs); the doc comments here are the header's documentation.
//!
//! Conventions for every function:
//! - The return value is `S3N_OK` (0) or one of the `S3N_ERR_*` codes.
//! - On failure, when `err` is not NULL, `*err` receives an error object the caller frees
//!   with `s3n_error_free`; on success `*err` is left untouched.
//! - Strings are NUL-terminated UTF-8. Strings returned by accessors are owned by the
//!   object they came from and valid until it is freed; strings returned as `char *` are
//!   owned by the caller and freed with `s3n_string_free`.
//! - No call ever unwinds into C: an internal panic becomes `S3N_ERR_INTERNAL`.
//! - Thread safety: a writer may be used from any thread; writes and closes are serialised,
//!   and `s3n_writer_abort` may be called from another thread while a write or close is
//!   blocked (it makes them fail). Results and errors are immutable and may be read from
//!   several threads.
//!
//! Every rule (states, abort after close, errors) is the Rust API's [`SharedWriter`]; this
//! layer only checks pointers and strings and maps errors to codes.

use std::ffi::{c_char, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;

use crate::error::{Error, ErrorKind};
use crate::{Mode, Settings, SharedWriter, UploadResult, Writer};

/// Success.
pub const S3N_OK: i32 = 0;
/// A bad argument or setting (NULL pointer, invalid UTF-8, bad value); see `s3n_error_setting`.
pub const S3N_ERR_INVALID_ARGUMENT: i32 = 1;
/// A valid setting the native writer cannot honour; write the file another way.
pub const S3N_ERR_UNSUPPORTED: i32 = 2;
/// S3 answered 404 (missing bucket or upload).
pub const S3N_ERR_NOT_FOUND: i32 = 3;
/// S3 answered 401 or 403.
pub const S3N_ERR_ACCESS_DENIED: i32 = 4;
/// The call was interrupted; the upload is aborted.
pub const S3N_ERR_INTERRUPTED: i32 = 5;
/// The call does not fit the writer's state (write after close, close after abort).
pub const S3N_ERR_STATE: i32 = 6;
/// The object would need more parts than allowed (10,000 for S3).
pub const S3N_ERR_TOO_LARGE: i32 = 7;
/// Any other failure talking to S3.
pub const S3N_ERR_IO: i32 = 8;
/// An internal bug (a caught panic).
pub const S3N_ERR_INTERNAL: i32 = 9;

// The codes are ErrorKind's discriminants.
const _: () = assert!(
    S3N_ERR_INVALID_ARGUMENT == ErrorKind::InvalidArgument as i32
        && S3N_ERR_UNSUPPORTED == ErrorKind::Unsupported as i32
        && S3N_ERR_NOT_FOUND == ErrorKind::NotFound as i32
        && S3N_ERR_ACCESS_DENIED == ErrorKind::AccessDenied as i32
        && S3N_ERR_INTERRUPTED == ErrorKind::Interrupted as i32
        && S3N_ERR_STATE == ErrorKind::State as i32
        && S3N_ERR_TOO_LARGE == ErrorKind::TooLarge as i32
        && S3N_ERR_IO == ErrorKind::Io as i32
        && S3N_ERR_INTERNAL == ErrorKind::Internal as i32
);

/// `mode` of `s3n_writer_open`: close completes the upload (or sends one PUT).
pub const S3N_MODE_PUBLISH: i32 = 0;
/// `mode` of `s3n_writer_open`: close uploads all parts and returns without completing.
pub const S3N_MODE_DEFERRED: i32 = 1;

/// An open writer (opaque).
pub struct S3nWriter(SharedWriter);

/// The result of a closed writer (opaque).
pub struct S3nResult {
    result: UploadResult,
    bucket: CString,
    key: CString,
    upload_id: Option<CString>,
    etags: Vec<CString>,
}

/// An error (opaque).
pub struct S3nError {
    kind: ErrorKind,
    message: CString,
    s3_code: Option<CString>,
    setting: Option<CString>,
}

fn cstring(s: &str) -> CString {
    CString::new(s.replace('\0', "?")).expect("NUL bytes replaced")
}

impl S3nResult {
    fn new(result: UploadResult) -> Box<Self> {
        Box::new(S3nResult {
            bucket: cstring(&result.bucket),
            key: cstring(&result.key),
            upload_id: result.upload_id.as_deref().map(cstring),
            etags: result.etags.iter().map(|e| cstring(e)).collect(),
            result,
        })
    }
}

/// Run `f`, turning an error or a panic into a code and `*err`.
fn guard(err: *mut *mut S3nError, f: impl FnOnce() -> Result<(), Error>) -> i32 {
    let outcome = catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|panic| Err(Error::from_panic(panic)));
    match outcome {
        Ok(()) => S3N_OK,
        Err(e) => {
            let code = e.kind() as i32;
            if !err.is_null() {
                let boxed = Box::new(S3nError {
                    kind: e.kind(),
                    message: cstring(e.message()),
                    s3_code: e.s3_code().map(cstring),
                    setting: e.setting().map(cstring),
                });
                // SAFETY: the caller passed a valid `S3nError **` or NULL (checked).
                unsafe { *err = Box::into_raw(boxed) };
            }
            code
        }
    }
}

/// # Safety
/// `p` is NULL or a valid NUL-terminated string.
unsafe fn str_arg<'a>(p: *const c_char, what: &str) -> Result<&'a str, Error> {
    if p.is_null() {
        return Err(Error::invalid_argument(format!("{what} is NULL")));
    }
    CStr::from_ptr(p).to_str().map_err(|_| Error::invalid_argument(format!("{what} is not valid UTF-8")))
}

/// # Safety
/// `keys` and `values` point to `n` valid strings each (or are NULL with `n` = 0).
unsafe fn settings_arg(keys: *const *const c_char, values: *const *const c_char, n: usize) -> Result<Settings, Error> {
    if n > 0 && (keys.is_null() || values.is_null()) {
        return Err(Error::invalid_argument("settings keys or values are NULL"));
    }
    let mut s = Settings::new();
    for i in 0..n {
        let k = str_arg(*keys.add(i), "a settings key")?;
        let v = str_arg(*values.add(i), "a settings value")?;
        s.set(k, v);
    }
    Ok(s)
}

/// Open a writer for `s3://bucket/key`. `keys`/`values` are `n` settings (S3A's `fs.s3a.*`
/// keys and the native `fs.s3a.native.*` keys; see the README). No request is sent yet.
/// On success `*out` receives the writer; free it with `s3n_writer_free`.
///
/// Errors: `S3N_ERR_INVALID_ARGUMENT` (bad bucket, key, mode or setting; the setting's key
/// is in `s3n_error_setting`), `S3N_ERR_UNSUPPORTED` (a setting the native writer cannot
/// honour).
///
/// # Safety
/// All pointers are valid or NULL as described; `out` is a valid `s3n_writer **`.
#[no_mangle]
pub unsafe extern "C" fn s3n_writer_open(
    bucket: *const c_char,
    key: *const c_char,
    mode: i32,
    keys: *const *const c_char,
    values: *const *const c_char,
    n: usize,
    out: *mut *mut S3nWriter,
    err: *mut *mut S3nError,
) -> i32 {
    guard(err, || {
        if out.is_null() {
            return Err(Error::invalid_argument("out is NULL"));
        }
        let mode = match mode {
            S3N_MODE_PUBLISH => Mode::Publish,
            S3N_MODE_DEFERRED => Mode::Deferred,
            m => return Err(Error::invalid_argument(format!("unknown mode {m}"))),
        };
        let settings = settings_arg(keys, values, n)?;
        let writer = Writer::open(str_arg(bucket, "bucket")?, str_arg(key, "key")?, mode, &settings)?;
        *out = Box::into_raw(Box::new(S3nWriter(SharedWriter::new(writer))));
        Ok(())
    })
}

/// # Safety
/// `w` is a writer from s3n_writer_open not yet freed, or NULL.
unsafe fn writer_arg<'a>(w: *const S3nWriter) -> Result<&'a SharedWriter, Error> {
    w.as_ref().map(|w| &w.0).ok_or_else(|| Error::invalid_argument("writer is NULL"))
}

/// Write `len` bytes from `data` (copied once into the current part buffer). Blocks while
/// the process-wide memory budget is spent or the writer has its maximum of parts
/// uploading. Errors: the writer's first failure (a failed part upload is reported by the
/// next write), `S3N_ERR_TOO_LARGE`, `S3N_ERR_STATE` after close or abort.
///
/// # Safety
/// `writer` is a live writer; `data` points to `len` readable bytes (may be NULL if `len`
/// is 0).
#[no_mangle]
pub unsafe extern "C" fn s3n_writer_write(writer: *mut S3nWriter, data: *const u8, len: usize, err: *mut *mut S3nError) -> i32 {
    guard(err, || {
        if data.is_null() && len > 0 {
            return Err(Error::invalid_argument("data is NULL"));
        }
        let bytes = if len == 0 { &[][..] } else { std::slice::from_raw_parts(data, len) };
        writer_arg(writer)?.write(bytes)
    })
}

/// Finish the upload (complete it, send one PUT, or for a deferred writer return without
/// completing) and give its result in `*out` (free with `s3n_result_free`). A second close
/// gives a copy of the same result. On failure the upload has been aborted.
///
/// # Safety
/// `writer` is a live writer; `out` is a valid `s3n_result **`.
#[no_mangle]
pub unsafe extern "C" fn s3n_writer_close(writer: *mut S3nWriter, out: *mut *mut S3nResult, err: *mut *mut S3nError) -> i32 {
    guard(err, || {
        if out.is_null() {
            return Err(Error::invalid_argument("out is NULL"));
        }
        let r = writer_arg(writer)?.close()?;
        *out = Box::into_raw(S3nResult::new(r));
        Ok(())
    })
}

/// Abort the upload (terminal; a later close fails). Safe to call from another thread while
/// a write or close of this writer is blocked. Does nothing after a successful close (use
/// `s3n_abort` with the result to discard a deferred upload). Errors: `S3N_ERR_STATE` when
/// another thread's close is already completing the upload (that close goes on); the
/// abort's final failure after retries, naming the upload id.
///
/// # Safety
/// `writer` is a live writer.
#[no_mangle]
pub unsafe extern "C" fn s3n_writer_abort(writer: *mut S3nWriter, err: *mut *mut S3nError) -> i32 {
    guard(err, || writer_arg(writer)?.abort())
}

/// Bytes written so far, or 0 for NULL.
///
/// # Safety
/// `writer` is a live writer or NULL.
#[no_mangle]
pub unsafe extern "C" fn s3n_writer_length(writer: *const S3nWriter) -> u64 {
    catch_unwind(AssertUnwindSafe(|| writer.as_ref().map(|w| w.0.statistics().bytes_written)))
        .ok()
        .flatten()
        .unwrap_or(0)
}

/// Free a writer. An open writer's upload is aborted first (never completed).
///
/// # Safety
/// `writer` came from `s3n_writer_open` and is not used after this call; NULL is ignored.
#[no_mangle]
pub unsafe extern "C" fn s3n_writer_free(writer: *mut S3nWriter) {
    if !writer.is_null() {
        let _ = catch_unwind(AssertUnwindSafe(|| drop(Box::from_raw(writer))));
    }
}

/// Complete a deferred upload from its result, in this or any process; `keys`/`values`
/// give the endpoint and credentials. Completing an upload already completed with this
/// result's content succeeds.
///
/// # Safety
/// `result` is a live result; settings as in `s3n_writer_open`.
#[no_mangle]
pub unsafe extern "C" fn s3n_complete(
    result: *const S3nResult,
    keys: *const *const c_char,
    values: *const *const c_char,
    n: usize,
    err: *mut *mut S3nError,
) -> i32 {
    guard(err, || {
        let r = result.as_ref().ok_or_else(|| Error::invalid_argument("result is NULL"))?;
        crate::complete(&r.result, &settings_arg(keys, values, n)?)
    })
}

/// Abort a deferred upload from its result, in this or any process. An upload already gone
/// counts as aborted.
///
/// # Safety
/// As `s3n_complete`.
#[no_mangle]
pub unsafe extern "C" fn s3n_abort(
    result: *const S3nResult,
    keys: *const *const c_char,
    values: *const *const c_char,
    n: usize,
    err: *mut *mut S3nError,
) -> i32 {
    guard(err, || {
        let r = result.as_ref().ok_or_else(|| Error::invalid_argument("result is NULL"))?;
        crate::abort(&r.result, &settings_arg(keys, values, n)?)
    })
}

/// Abort the uploads of all writers still open in this process; returns how many.
#[no_mangle]
pub extern "C" fn s3n_abort_open_uploads() -> usize {
    catch_unwind(crate::abort_open_uploads).unwrap_or(0)
}

/// The result's bucket.
///
/// # Safety
/// `result` is a live result.
#[no_mangle]
pub unsafe extern "C" fn s3n_result_bucket(result: *const S3nResult) -> *const c_char {
    result.as_ref().map_or(ptr::null(), |r| r.bucket.as_ptr())
}

/// The result's object key.
///
/// # Safety
/// `result` is a live result.
#[no_mangle]
pub unsafe extern "C" fn s3n_result_key(result: *const S3nResult) -> *const c_char {
    result.as_ref().map_or(ptr::null(), |r| r.key.as_ptr())
}

/// The multipart upload id, or NULL for a single PUT.
///
/// # Safety
/// `result` is a live result.
#[no_mangle]
pub unsafe extern "C" fn s3n_result_upload_id(result: *const S3nResult) -> *const c_char {
    result.as_ref().and_then(|r| r.upload_id.as_ref()).map_or(ptr::null(), |s| s.as_ptr())
}

/// Object length in bytes.
///
/// # Safety
/// `result` is a live result.
#[no_mangle]
pub unsafe extern "C" fn s3n_result_length(result: *const S3nResult) -> u64 {
    result.as_ref().map_or(0, |r| r.result.length)
}

/// Number of ETags: parts of a multipart upload, or 1 for a single PUT.
///
/// # Safety
/// `result` is a live result.
#[no_mangle]
pub unsafe extern "C" fn s3n_result_etag_count(result: *const S3nResult) -> usize {
    result.as_ref().map_or(0, |r| r.etags.len())
}

/// ETag `i` (0-based: part i+1) as S3 returned it, quotes included; NULL when out of range.
///
/// # Safety
/// `result` is a live result.
#[no_mangle]
pub unsafe extern "C" fn s3n_result_etag(result: *const S3nResult, i: usize) -> *const c_char {
    result.as_ref().and_then(|r| r.etags.get(i)).map_or(ptr::null(), |s| s.as_ptr())
}

/// The whole result (statistics included) as JSON; free with `s3n_string_free`.
///
/// # Safety
/// `result` is a live result.
#[no_mangle]
pub unsafe extern "C" fn s3n_result_to_json(result: *const S3nResult) -> *mut c_char {
    result.as_ref().map_or(ptr::null_mut(), |r| cstring(&r.result.to_json()).into_raw())
}

/// Parse a result from `s3n_result_to_json` (e.g. from another process) into `*out`.
///
/// # Safety
/// `json` is a valid string; `out` a valid `s3n_result **`.
#[no_mangle]
pub unsafe extern "C" fn s3n_result_from_json(json: *const c_char, out: *mut *mut S3nResult, err: *mut *mut S3nError) -> i32 {
    guard(err, || {
        if out.is_null() {
            return Err(Error::invalid_argument("out is NULL"));
        }
        let r = UploadResult::from_json(str_arg(json, "json")?)?;
        *out = Box::into_raw(S3nResult::new(r));
        Ok(())
    })
}

/// Free a result; NULL is ignored.
///
/// # Safety
/// `result` came from this library and is not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn s3n_result_free(result: *mut S3nResult) {
    if !result.is_null() {
        drop(Box::from_raw(result));
    }
}

/// Process-wide statistics as JSON (byte counts, requests by kind, retries, time blocked,
/// part queue wait and upload time in microseconds); free with `s3n_string_free`.
#[no_mangle]
pub extern "C" fn s3n_global_statistics_json() -> *mut c_char {
    catch_unwind(|| serde_json::to_string(&crate::global_statistics()).map(|s| cstring(&s).into_raw()))
        .ok()
        .and_then(|r| r.ok())
        .unwrap_or(ptr::null_mut())
}

/// Free a string returned by this library; NULL is ignored.
///
/// # Safety
/// `s` came from this library (`s3n_*_json`) and is not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn s3n_string_free(s: *mut c_char) {
    if !s.is_null() {
        drop(CString::from_raw(s));
    }
}

/// The error's code (`S3N_ERR_*`).
///
/// # Safety
/// `error` is a live error.
#[no_mangle]
pub unsafe extern "C" fn s3n_error_code(error: *const S3nError) -> i32 {
    error.as_ref().map_or(S3N_ERR_INVALID_ARGUMENT, |e| e.kind as i32)
}

/// The error's message (never contains credentials).
///
/// # Safety
/// `error` is a live error.
#[no_mangle]
pub unsafe extern "C" fn s3n_error_message(error: *const S3nError) -> *const c_char {
    error.as_ref().map_or(ptr::null(), |e| e.message.as_ptr())
}

/// The S3 error code (`NoSuchBucket`, `AccessDenied`, ...) or NULL.
///
/// # Safety
/// `error` is a live error.
#[no_mangle]
pub unsafe extern "C" fn s3n_error_s3_code(error: *const S3nError) -> *const c_char {
    error.as_ref().and_then(|e| e.s3_code.as_ref()).map_or(ptr::null(), |s| s.as_ptr())
}

/// The setting key at fault (for `S3N_ERR_INVALID_ARGUMENT` / `S3N_ERR_UNSUPPORTED`) or NULL.
///
/// # Safety
/// `error` is a live error.
#[no_mangle]
pub unsafe extern "C" fn s3n_error_setting(error: *const S3nError) -> *const c_char {
    error.as_ref().and_then(|e| e.setting.as_ref()).map_or(ptr::null(), |s| s.as_ptr())
}

/// Free an error; NULL is ignored.
///
/// # Safety
/// `error` came from this library and is not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn s3n_error_free(error: *mut S3nError) {
    if !error.is_null() {
        drop(Box::from_raw(error));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_arguments_give_codes_and_errors_not_crashes() {
        let mut err: *mut S3nError = ptr::null_mut();
        let mut w: *mut S3nWriter = ptr::null_mut();
        let bucket = CString::new("bucket-1").unwrap();
        let key = CString::new("k").unwrap();
        let k = [CString::new("fs.s3a.native.part.size").unwrap()];
        let v = [CString::new("1M").unwrap()];
        let kp: Vec<*const c_char> = k.iter().map(|s| s.as_ptr()).collect();
        let vp: Vec<*const c_char> = v.iter().map(|s| s.as_ptr()).collect();
        unsafe {
            let code = s3n_writer_open(bucket.as_ptr(), key.as_ptr(), 0, kp.as_ptr(), vp.as_ptr(), 1, &mut w, &mut err);
            assert_eq!(code, S3N_ERR_INVALID_ARGUMENT);
            assert!(w.is_null());
            assert_eq!(CStr::from_ptr(s3n_error_setting(err)).to_str().unwrap(), "fs.s3a.native.part.size");
            s3n_error_free(err);
            err = ptr::null_mut();
            assert_eq!(s3n_writer_open(ptr::null(), key.as_ptr(), 0, ptr::null(), ptr::null(), 0, &mut w, &mut err), S3N_ERR_INVALID_ARGUMENT);
            s3n_error_free(err);
            assert_eq!(s3n_writer_write(ptr::null_mut(), ptr::null(), 0, ptr::null_mut()), S3N_ERR_INVALID_ARGUMENT);
            assert_eq!(s3n_writer_open(bucket.as_ptr(), key.as_ptr(), 7, ptr::null(), ptr::null(), 0, &mut w, ptr::null_mut()), S3N_ERR_INVALID_ARGUMENT);
        }
    }
}
