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
//! Every rule (states, abort after close, errors, credential caching and refresh) is the
//! Rust API's ([`SharedWriter`], [`SharedCredentials`]); this layer checks pointers and
//! strings, maps errors to codes, and keeps a C callback's lifetime rule (never called after
//! `s3n_credentials_free`).

use std::cell::Cell;
use std::ffi::{c_char, c_void, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, UNIX_EPOCH};

use crate::error::{Error, ErrorKind};
use crate::{CredentialSource, Credentials, Mode, ReadOptions, Reader, Settings, SharedCredentials, SharedWriter, UploadResult, VectoredRead, Writer};

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
/// `S3N_MODE_CREATE_IF_ABSENT`: an object already exists at the key (S3 answered 412 to
/// `If-None-Match: *`); nothing was written.
pub const S3N_ERR_ALREADY_EXISTS: i32 = 10;
/// A read past the end of the object (a vectored range ending past it); nothing was read.
pub const S3N_ERR_EOF: i32 = 11;
/// A vectored read stopped by its reader (closed, unbuffered) before this range was taken.
pub const S3N_ERR_STOPPED: i32 = 12;

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
        && S3N_ERR_ALREADY_EXISTS == ErrorKind::AlreadyExists as i32
        && S3N_ERR_EOF == ErrorKind::EndOfFile as i32
        && S3N_ERR_STOPPED == ErrorKind::Stopped as i32
);

/// `mode` of `s3n_writer_open`: close completes the upload (or sends one PUT).
pub const S3N_MODE_PUBLISH: i32 = 0;
/// `mode` of `s3n_writer_open`: close uploads all parts and returns without completing.
pub const S3N_MODE_DEFERRED: i32 = 1;
/// `mode` of `s3n_writer_open`: as `S3N_MODE_PUBLISH`, but close never replaces an existing
/// object (`If-None-Match: *` on the PUT or the complete); one there fails close with
/// `S3N_ERR_ALREADY_EXISTS`.
pub const S3N_MODE_CREATE_IF_ABSENT: i32 = 2;

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
/// Credentials: `fs.s3a.access.key` + `fs.s3a.secret.key` (+ `fs.s3a.session.token`) when
/// set, else object_store's default chain: `AWS_ACCESS_KEY_ID` / `AWS_SECRET_ACCESS_KEY`,
/// web identity (`AWS_WEB_IDENTITY_TOKEN_FILE` + `AWS_ROLE_ARN`, STS at
/// `AWS_ENDPOINT_URL_STS`), container credentials, then the EC2 instance metadata service
/// (`fs.s3a.native.metadata.endpoint` or `AWS_METADATA_ENDPOINT`). For a callback, use
/// `s3n_writer_open_with_credentials`.
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
    s3n_writer_open_with_credentials(bucket, key, mode, keys, values, n, ptr::null(), out, err)
}

/// `s3n_writer_open` with credentials from `credentials` (`s3n_credentials_new`; NULL: as
/// `s3n_writer_open`). The writer keeps using them until it is freed: free `credentials`
/// after the writer.
///
/// # Safety
/// As `s3n_writer_open`; `credentials` NULL or live credentials.
#[no_mangle]
pub unsafe extern "C" fn s3n_writer_open_with_credentials(
    bucket: *const c_char,
    key: *const c_char,
    mode: i32,
    keys: *const *const c_char,
    values: *const *const c_char,
    n: usize,
    credentials: *const S3nCredentials,
    out: *mut *mut S3nWriter,
    err: *mut *mut S3nError,
) -> i32 {
    guard(err, || {
        if out.is_null() {
            return Err(Error::invalid_argument("out is NULL"));
        }
        let mode = mode_of(mode)?;
        let settings = with_credentials(settings_arg(keys, values, n)?, credentials);
        let writer = Writer::open(str_arg(bucket, "bucket")?, str_arg(key, "key")?, mode, &settings)?;
        *out = Box::into_raw(Box::new(S3nWriter(SharedWriter::new(writer))));
        Ok(())
    })
}

/// The writer mode a C caller names by its `S3N_MODE_*` number; `S3N_ERR_INVALID_ARGUMENT`
/// for any other number.
fn mode_of(mode: i32) -> Result<Mode, Error> {
    match mode {
        S3N_MODE_PUBLISH => Ok(Mode::Publish),
        S3N_MODE_DEFERRED => Ok(Mode::Deferred),
        S3N_MODE_CREATE_IF_ABSENT => Ok(Mode::CreateIfAbsent),
        m => Err(Error::invalid_argument(format!("unknown mode {m}"))),
    }
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
    s3n_complete_with_credentials(result, keys, values, n, ptr::null(), err)
}

/// `s3n_complete` with credentials from `credentials` (NULL: as `s3n_complete`).
///
/// # Safety
/// As `s3n_complete`; `credentials` NULL or live credentials.
#[no_mangle]
pub unsafe extern "C" fn s3n_complete_with_credentials(
    result: *const S3nResult,
    keys: *const *const c_char,
    values: *const *const c_char,
    n: usize,
    credentials: *const S3nCredentials,
    err: *mut *mut S3nError,
) -> i32 {
    guard(err, || {
        let r = result.as_ref().ok_or_else(|| Error::invalid_argument("result is NULL"))?;
        crate::complete(&r.result, &with_credentials(settings_arg(keys, values, n)?, credentials))
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
    s3n_abort_with_credentials(result, keys, values, n, ptr::null(), err)
}

/// `s3n_abort` with credentials from `credentials` (NULL: as `s3n_abort`).
///
/// # Safety
/// As `s3n_complete`; `credentials` NULL or live credentials.
#[no_mangle]
pub unsafe extern "C" fn s3n_abort_with_credentials(
    result: *const S3nResult,
    keys: *const *const c_char,
    values: *const *const c_char,
    n: usize,
    credentials: *const S3nCredentials,
    err: *mut *mut S3nError,
) -> i32 {
    guard(err, || {
        let r = result.as_ref().ok_or_else(|| Error::invalid_argument("result is NULL"))?;
        crate::abort(&r.result, &with_credentials(settings_arg(keys, values, n)?, credentials))
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

// ---------------------------------------------------------------------------------------
// Credentials

/// Where a writer's credentials come from, when not from its settings: a C callback, asked
/// through the library's credentials cache (see `s3n_credentials_new`). Opaque.
pub struct S3nCredentials {
    shared: SharedCredentials,
    callback: Arc<CCallback>,
}

/// What a credentials callback fills in, with `s3n_credentials_out_set` (opaque; valid only
/// during the callback).
pub struct S3nCredentialsOut {
    credentials: Option<Credentials>,
    invalid: Option<String>,
    message: Option<String>,
}

/// A credentials callback: fill `out` with `s3n_credentials_out_set` and return 0, or return
/// any other value (optionally after `s3n_credentials_out_error`) when there are no
/// credentials.
pub type S3nCredentialsFn = Option<unsafe extern "C" fn(user_data: *mut c_void, out: *mut S3nCredentialsOut) -> i32>;

/// The callback, its user data, and whether `s3n_credentials_free` has been called. `calling`
/// is held for the duration of each call, so a free waits for a call in progress.
struct CCallback {
    callback: unsafe extern "C" fn(*mut c_void, *mut S3nCredentialsOut) -> i32,
    user_data: UserData,
    description: String,
    freed: AtomicBool,
    calling: Mutex<()>,
}

struct UserData(*mut c_void);

// SAFETY: the header's contract for `s3n_credentials_new`: the callback may be called from
// any thread of the library (one call at a time), so its user data is usable from any thread.
unsafe impl Send for UserData {}
unsafe impl Sync for UserData {}

thread_local! {
    /// True on a thread while it runs a credentials callback (a free from inside the callback
    /// must not wait for the callback to return).
    static IN_CALLBACK: Cell<bool> = const { Cell::new(false) };
}

struct CallbackSource(Arc<CCallback>);

impl CredentialSource for CallbackSource {
    fn fetch(&self) -> Result<Credentials, Error> {
        let c = &self.0;
        let _calling = c.calling.lock().unwrap_or_else(|p| p.into_inner());
        if c.freed.load(Ordering::SeqCst) {
            return Err(Error::state("the credentials were freed (s3n_credentials_free) while a writer still used them"));
        }
        let mut out = S3nCredentialsOut { credentials: None, invalid: None, message: None };
        IN_CALLBACK.with(|f| f.set(true));
        // SAFETY: the callback and user data as s3n_credentials_new was given them; the
        // caller promised they stay valid until s3n_credentials_free, which waits for this
        // call (it holds `calling`) and is checked above.
        let rc = unsafe { (c.callback)(c.user_data.0, &mut out) };
        IN_CALLBACK.with(|f| f.set(false));
        match (rc, out.credentials, out.invalid) {
            (0, _, Some(why)) => Err(Error::new(ErrorKind::AccessDenied, format!("the callback gave unusable credentials: {why}"))),
            (0, Some(creds), None) => Ok(creds),
            (0, None, None) => Err(Error::new(ErrorKind::AccessDenied, "the callback returned 0 without calling s3n_credentials_out_set")),
            (rc, _, _) => Err(Error::new(
                ErrorKind::AccessDenied,
                match out.message {
                    Some(m) => format!("the callback failed with code {rc}: {m}"),
                    None => format!("the callback failed with code {rc}"),
                },
            )),
        }
    }

    fn describe(&self) -> String {
        format!("the C credentials callback '{}'", self.0.description)
    }
}

/// Credentials from `callback`, cached by the library: it is called when a request needs
/// credentials and the cached ones are due, never for every request. Due means: 5 minutes
/// before the expiry the callback gave (or at half the remaining life when that is shorter),
/// after 1 second when it gave no expiry, and once more when S3 answers `ExpiredToken` or
/// `InvalidToken` (the request is then sent again). Writers opened with the same
/// `s3n_credentials` share one client and one cache.
///
/// The callback runs on a thread of the library (not the caller's), one call at a time per
/// `s3n_credentials`, and must be safe to call from any thread. It fills `out` with
/// `s3n_credentials_out_set` and returns 0, or returns another value (optionally after
/// `s3n_credentials_out_error`): the request that needed the credentials then fails with an
/// error naming `description`, the code and the message. A call that takes more than 60 s
/// fails the request (the call itself is not interrupted).
///
/// Lifetime: `callback` and `user_data` must stay valid until `s3n_credentials_free`
/// returns; after that the callback is never called again. Free the credentials after the
/// writers opened with them: a writer still open then fails its next request that needs
/// fresh credentials (the message says they were freed), and so may the abort of its
/// upload when it is freed.
///
/// `description` (may be NULL) names the callback in messages; it must not be a secret. On
/// success `*out` receives the credentials.
///
/// # Safety
/// `callback` and `user_data` as above; `description` NULL or a valid string; `out` a valid
/// `s3n_credentials **`.
#[no_mangle]
pub unsafe extern "C" fn s3n_credentials_new(
    callback: S3nCredentialsFn,
    user_data: *mut c_void,
    description: *const c_char,
    out: *mut *mut S3nCredentials,
    err: *mut *mut S3nError,
) -> i32 {
    guard(err, || {
        if out.is_null() {
            return Err(Error::invalid_argument("out is NULL"));
        }
        let callback = callback.ok_or_else(|| Error::invalid_argument("the credentials callback is NULL"))?;
        let description = if description.is_null() { "unnamed".to_string() } else { str_arg(description, "description")?.to_string() };
        let c = Arc::new(CCallback {
            callback,
            user_data: UserData(user_data),
            description,
            freed: AtomicBool::new(false),
            calling: Mutex::new(()),
        });
        let shared = SharedCredentials::new(CallbackSource(c.clone()));
        *out = Box::into_raw(Box::new(S3nCredentials { shared, callback: c }));
        Ok(())
    })
}

/// Called by a credentials callback: the credentials to use. `access_key_id` and
/// `secret_access_key` are required; `session_token` may be NULL (long-term keys);
/// `expiry_unix_seconds` is when they stop working, in seconds since 1970-01-01 UTC, or 0
/// when they do not expire. The strings are copied before this returns. Errors:
/// `S3N_ERR_INVALID_ARGUMENT` for NULL, empty or non-UTF-8 keys or a negative expiry (the
/// callback's answer is then refused, also if it returns 0).
///
/// # Safety
/// `out` is the pointer the callback was given, during the callback; strings NULL or valid.
#[no_mangle]
pub unsafe extern "C" fn s3n_credentials_out_set(
    out: *mut S3nCredentialsOut,
    access_key_id: *const c_char,
    secret_access_key: *const c_char,
    session_token: *const c_char,
    expiry_unix_seconds: i64,
) -> i32 {
    let Some(out) = out.as_mut() else { return S3N_ERR_INVALID_ARGUMENT };
    let parsed = catch_unwind(AssertUnwindSafe(|| -> Result<Credentials, Error> {
        let key = |p, what: &str| -> Result<String, Error> {
            let s = str_arg(p, what)?;
            if s.is_empty() {
                return Err(Error::invalid_argument(format!("{what} is empty")));
            }
            Ok(s.to_string())
        };
        let access_key_id = key(access_key_id, "the access key id")?;
        let secret_access_key = key(secret_access_key, "the secret access key")?;
        let session_token = if session_token.is_null() { None } else { Some(key(session_token, "the session token")?) };
        let expiry = match expiry_unix_seconds {
            0 => None,
            s if s < 0 => return Err(Error::invalid_argument(format!("the expiry {s} is negative"))),
            s => Some(UNIX_EPOCH + Duration::from_secs(s as u64)),
        };
        Ok(Credentials { access_key_id, secret_access_key, session_token, expiry })
    }));
    match parsed {
        Ok(Ok(c)) => {
            out.credentials = Some(c);
            out.invalid = None;
            S3N_OK
        }
        Ok(Err(e)) => {
            out.invalid = Some(e.message().to_string());
            S3N_ERR_INVALID_ARGUMENT
        }
        Err(_) => S3N_ERR_INTERNAL,
    }
}

/// Called by a credentials callback that is about to return non-zero: why there are no
/// credentials, for the error message (copied; must not contain a secret). NULL is ignored.
///
/// # Safety
/// `out` is the pointer the callback was given, during the callback; `message` NULL or valid.
#[no_mangle]
pub unsafe extern "C" fn s3n_credentials_out_error(out: *mut S3nCredentialsOut, message: *const c_char) {
    if let (Some(out), false) = (out.as_mut(), message.is_null()) {
        out.message = Some(CStr::from_ptr(message).to_string_lossy().into_owned());
    }
}

/// Free credentials from `s3n_credentials_new`. Waits for a call of the callback in progress
/// on another thread; once this returns the callback is not running and is never called
/// again, so its user data may be freed. Called from inside the callback it does not wait
/// (the callback is not called again either). NULL is ignored.
///
/// # Safety
/// `credentials` came from `s3n_credentials_new` and is not used after this call.
#[no_mangle]
pub unsafe extern "C" fn s3n_credentials_free(credentials: *mut S3nCredentials) {
    if credentials.is_null() {
        return;
    }
    let _ = catch_unwind(AssertUnwindSafe(|| {
        let c = Box::from_raw(credentials);
        c.callback.freed.store(true, Ordering::SeqCst);
        if !IN_CALLBACK.with(|f| f.get()) {
            drop(c.callback.calling.lock().unwrap_or_else(|p| p.into_inner()));
        }
        drop(c);
    }));
}

/// # Safety
/// `c` is NULL or live credentials.
unsafe fn with_credentials(settings: Settings, c: *const S3nCredentials) -> Settings {
    match c.as_ref() {
        Some(c) => settings.with_credentials(c.shared.clone()),
        None => settings,
    }
}

/// Check settings as `s3n_writer_open_with_credentials` would, without sending a request;
/// on success `*json` receives (free with `s3n_string_free`) `{"warnings": [...],
/// "effective": {...}}`: the adjustments to report once (e.g. `fs.s3a.multipart.size` below
/// 5 MiB, used as 5 MiB) and the values a writer uses by name (`memory_budget`, `part_size`
/// in bytes, `parts_in_flight`, `request_timeout_ms`, `credentials`, ...).
///
/// Errors: as `s3n_writer_open`: `S3N_ERR_INVALID_ARGUMENT` naming the setting in
/// `s3n_error_setting`, `S3N_ERR_UNSUPPORTED`.
///
/// # Safety
/// As `s3n_writer_open_with_credentials`; `json` a valid `char **`.
#[no_mangle]
pub unsafe extern "C" fn s3n_validate(
    bucket: *const c_char,
    keys: *const *const c_char,
    values: *const *const c_char,
    n: usize,
    credentials: *const S3nCredentials,
    json: *mut *mut c_char,
    err: *mut *mut S3nError,
) -> i32 {
    guard(err, || {
        if json.is_null() {
            return Err(Error::invalid_argument("json is NULL"));
        }
        let settings = with_credentials(settings_arg(keys, values, n)?, credentials);
        let v = crate::validate(str_arg(bucket, "bucket")?, &settings)?;
        let text = serde_json::to_string(&v).map_err(|e| Error::new(ErrorKind::Internal, format!("serialising: {e}")))?;
        *json = cstring(&text).into_raw();
        Ok(())
    })
}

// ---------------------------------------------------------------------------------------
// Reading

/// An open reader (opaque). `s3n_reader_read` and `s3n_reader_unbuffer` are serialised;
/// `s3n_reader_pread`, `s3n_reader_read_ranges` and the accessors may run from several
/// threads at once.
pub struct S3nReader {
    reader: RwLock<Reader>,
    etag: CString,
}

/// The ranges of one vectored read, delivered as each completes (opaque).
pub struct S3nVectored {
    read: VectoredRead,
    /// The bytes `s3n_vectored_next` last handed out, valid until the next call.
    current: Option<bytes::Bytes>,
}

/// # Safety
/// `r` is a reader from s3n_reader_open not yet freed, or NULL.
unsafe fn reader_arg<'a>(r: *const S3nReader) -> Result<&'a S3nReader, Error> {
    r.as_ref().ok_or_else(|| Error::invalid_argument("reader is NULL"))
}

/// # Safety
/// `buf` points to `len` writable bytes (may be NULL if `len` is 0).
unsafe fn buf_arg<'a>(buf: *mut u8, len: usize) -> Result<&'a mut [u8], Error> {
    if buf.is_null() && len > 0 {
        return Err(Error::invalid_argument("buf is NULL"));
    }
    Ok(if len == 0 { &mut [][..] } else { std::slice::from_raw_parts_mut(buf, len) })
}

/// Open `s3://bucket/key` for reading into `*out` (free with `s3n_reader_free`), with the
/// settings of `s3n_writer_open` plus the read settings (`fs.s3a.native.read.*`, S3A's
/// `fs.s3a.readahead.range`, `fs.s3a.vectored.read.*`) and `credentials` (NULL: from the
/// settings or the default chain). `options_json` (NULL: none) names what the caller knows,
/// every field optional: `{"policy": "ADAPTIVE"|"SEQUENTIAL"|"RANDOM"|"COLUMNAR"|"WHOLE_FILE",
/// "length": bytes, "etag": "...", "split_end": bytes}`; with length and ETag no HEAD is
/// sent. Every GET is pinned to the ETag (If-Match). `split_end` (Hadoop's
/// `fs.option.openfile.split.end`) is where the caller's split ends: read-ahead stops there,
/// reads past it still succeed.
///
/// Errors: `S3N_ERR_NOT_FOUND` naming the key when there is no object,
/// `S3N_ERR_INVALID_ARGUMENT` (bad bucket, key, setting or options), `S3N_ERR_UNSUPPORTED`.
///
/// # Safety
/// As `s3n_writer_open_with_credentials`; `options_json` NULL or a valid string; `out` a
/// valid `s3n_reader **`.
#[no_mangle]
pub unsafe extern "C" fn s3n_reader_open(
    bucket: *const c_char,
    key: *const c_char,
    keys: *const *const c_char,
    values: *const *const c_char,
    n: usize,
    credentials: *const S3nCredentials,
    options_json: *const c_char,
    out: *mut *mut S3nReader,
    err: *mut *mut S3nError,
) -> i32 {
    guard(err, || {
        if out.is_null() {
            return Err(Error::invalid_argument("out is NULL"));
        }
        let options: ReadOptions = if options_json.is_null() {
            ReadOptions::default()
        } else {
            serde_json::from_str(str_arg(options_json, "options_json")?)
                .map_err(|e| Error::invalid_argument(format!("options_json: {e}")))?
        };
        let settings = with_credentials(settings_arg(keys, values, n)?, credentials);
        let reader = Reader::open(str_arg(bucket, "bucket")?, str_arg(key, "key")?, &settings, options)?;
        let etag = cstring(reader.etag());
        *out = Box::into_raw(Box::new(S3nReader { reader: RwLock::new(reader), etag }));
        Ok(())
    })
}

/// The object's length in bytes (0 for NULL).
///
/// # Safety
/// `reader` is a live reader or NULL.
#[no_mangle]
pub unsafe extern "C" fn s3n_reader_length(reader: *const S3nReader) -> u64 {
    reader.as_ref().map_or(0, |r| r.reader.read().unwrap_or_else(|p| p.into_inner()).length())
}

/// The ETag every GET is pinned to, in double quotes (owned by the reader).
///
/// # Safety
/// `reader` is a live reader.
#[no_mangle]
pub unsafe extern "C" fn s3n_reader_etag(reader: *const S3nReader) -> *const c_char {
    reader.as_ref().map_or(ptr::null(), |r| r.etag.as_ptr())
}

/// Stream read: up to `len` bytes at `position` into `buf`, `*n` the bytes read (0 at or past
/// the end); fills `buf` unless the object ends first. Drives sequential detection and
/// read-ahead. Errors: `S3N_ERR_IO` naming the key when the object changed since open or a
/// GET failed, `S3N_ERR_NOT_FOUND` when it was deleted.
///
/// # Safety
/// `reader` is a live reader; `buf` points to `len` writable bytes; `n` is a valid pointer.
#[no_mangle]
pub unsafe extern "C" fn s3n_reader_read(reader: *mut S3nReader, position: u64, buf: *mut u8, len: usize, n: *mut usize, err: *mut *mut S3nError) -> i32 {
    guard(err, || {
        let r = reader_arg(reader)?;
        let buf = buf_arg(buf, len)?;
        if n.is_null() {
            return Err(Error::invalid_argument("n is NULL"));
        }
        *n = r.reader.write().unwrap_or_else(|p| p.into_inner()).read(position, buf)?;
        Ok(())
    })
}

/// Positioned read (pread): as `s3n_reader_read`, but the read-ahead window is left alone.
///
/// # Safety
/// As `s3n_reader_read`.
#[no_mangle]
pub unsafe extern "C" fn s3n_reader_pread(reader: *const S3nReader, position: u64, buf: *mut u8, len: usize, n: *mut usize, err: *mut *mut S3nError) -> i32 {
    guard(err, || {
        let r = reader_arg(reader)?;
        let buf = buf_arg(buf, len)?;
        if n.is_null() {
            return Err(Error::invalid_argument("n is NULL"));
        }
        *n = r.reader.read().unwrap_or_else(|p| p.into_inner()).read_at(position, buf)?;
        Ok(())
    })
}

/// Drop the reader's buffers (read-ahead, whole object, footer), keeping it open.
///
/// # Safety
/// `reader` is a live reader or NULL.
#[no_mangle]
pub unsafe extern "C" fn s3n_reader_unbuffer(reader: *mut S3nReader) {
    if let Some(r) = reader.as_ref() {
        let _ = catch_unwind(AssertUnwindSafe(|| r.reader.write().unwrap_or_else(|p| p.into_inner()).unbuffer()));
    }
}

/// The reader's statistics as JSON by name (`bytes_read`, `gets_whole`, `gets_footer`,
/// `gets_read_ahead`, `gets_random`, `gets_pread`, `gets_vectored`, `bytes_discarded`,
/// `prefetch_hits`, `waits`, ...); free with `s3n_string_free`. NULL for a NULL reader.
///
/// # Safety
/// `reader` is a live reader or NULL.
#[no_mangle]
pub unsafe extern "C" fn s3n_reader_statistics_json(reader: *const S3nReader) -> *mut c_char {
    let Some(r) = reader.as_ref() else { return ptr::null_mut() };
    catch_unwind(AssertUnwindSafe(|| {
        serde_json::to_string(&r.reader.read().unwrap_or_else(|p| p.into_inner()).statistics()).map(|s| cstring(&s).into_raw())
    }))
    .ok()
    .and_then(|r| r.ok())
    .unwrap_or(ptr::null_mut())
}

/// Free a reader (its buffers go back to the memory budget); NULL is ignored.
///
/// # Safety
/// `reader` came from `s3n_reader_open` and is not used after this call.
#[no_mangle]
pub unsafe extern "C" fn s3n_reader_free(reader: *mut S3nReader) {
    if !reader.is_null() {
        let _ = catch_unwind(AssertUnwindSafe(|| drop(Box::from_raw(reader))));
    }
}

/// Start a vectored read of the `n` ranges `[starts[i], ends[i])` into `*out` (free with
/// `s3n_vectored_free`): planned together (coalesced across small holes, large ones split),
/// fetched in parallel, delivered by `s3n_vectored_next` as each completes. Errors:
/// `S3N_ERR_INVALID_ARGUMENT` for a reversed range or one past the end.
///
/// # Safety
/// `reader` is a live reader; `starts` and `ends` point to `n` values (may be NULL if `n` is
/// 0); `out` is a valid `s3n_vectored **`.
#[no_mangle]
pub unsafe extern "C" fn s3n_reader_read_ranges(
    reader: *const S3nReader,
    starts: *const u64,
    ends: *const u64,
    n: usize,
    out: *mut *mut S3nVectored,
    err: *mut *mut S3nError,
) -> i32 {
    guard(err, || {
        let r = reader_arg(reader)?;
        if out.is_null() || (n > 0 && (starts.is_null() || ends.is_null())) {
            return Err(Error::invalid_argument("out, starts or ends is NULL"));
        }
        let ranges: Vec<std::ops::Range<u64>> =
            if n == 0 { Vec::new() } else { (0..n).map(|i| *starts.add(i)..*ends.add(i)).collect() };
        let read = r.reader.read().unwrap_or_else(|p| p.into_inner()).read_ranges(&ranges)?;
        *out = Box::into_raw(Box::new(S3nVectored { read, current: None }));
        Ok(())
    })
}

/// The next range to complete, blocking until one does: `*index` is its position in the
/// request, `*data`/`*len` its bytes (owned by `vectored`, valid until the next call or
/// `s3n_vectored_free`). When every range was delivered, `*index` is `SIZE_MAX` and `*len`
/// 0. A failure is reported once, as an error, with `*index` saying what failed: a range's
/// own index when that range failed alone (`S3N_ERR_EOF`: it runs past the object's real
/// end, inside a declared length longer than the object), and later calls deliver the
/// other ranges; `SIZE_MAX` when the whole read failed (a GET that failed after retries, an
/// object changed since open, `S3N_ERR_STOPPED`), and nothing more is delivered.
///
/// # Safety
/// `vectored` is live; `index`, `data` and `len` are valid pointers.
#[no_mangle]
pub unsafe extern "C" fn s3n_vectored_next(
    vectored: *mut S3nVectored,
    index: *mut usize,
    data: *mut *const u8,
    len: *mut usize,
    err: *mut *mut S3nError,
) -> i32 {
    guard(err, || {
        let v = vectored.as_mut().ok_or_else(|| Error::invalid_argument("vectored is NULL"))?;
        if index.is_null() || data.is_null() || len.is_null() {
            return Err(Error::invalid_argument("index, data or len is NULL"));
        }
        v.current = None;
        *index = usize::MAX;
        *data = ptr::null();
        *len = 0;
        match v.read.next_range_with(&|| false) {
            None => {}
            Some(Err(e)) => {
                *index = e.range.unwrap_or(usize::MAX);
                return Err(e.error);
            }
            Some(Ok((i, bytes))) => {
                *index = i;
                *data = bytes.as_ptr();
                *len = bytes.len();
                v.current = Some(bytes);
            }
        }
        Ok(())
    })
}

/// Free a vectored read (GETs not done are cancelled); NULL is ignored.
///
/// # Safety
/// `vectored` came from `s3n_reader_read_ranges` and is not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn s3n_vectored_free(vectored: *mut S3nVectored) {
    if !vectored.is_null() {
        let _ = catch_unwind(AssertUnwindSafe(|| drop(Box::from_raw(vectored))));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    struct Answers {
        calls: AtomicUsize,
        free_inside: AtomicBool,
        own: std::sync::atomic::AtomicPtr<S3nCredentials>,
    }

    unsafe extern "C" fn answer(user_data: *mut c_void, out: *mut S3nCredentialsOut) -> i32 {
        let a = &*(user_data as *const Answers);
        let n = a.calls.fetch_add(1, Ordering::SeqCst);
        if a.free_inside.load(Ordering::SeqCst) {
            s3n_credentials_free(a.own.swap(ptr::null_mut(), Ordering::SeqCst));
        }
        let key = CString::new(format!("AKID{n}")).unwrap();
        let secret = CString::new("secret").unwrap();
        match n {
            // An empty secret is refused, even though the callback then returns 0.
            1 => {
                let empty = CString::new("").unwrap();
                assert_eq!(s3n_credentials_out_set(out, key.as_ptr(), empty.as_ptr(), ptr::null(), 0), S3N_ERR_INVALID_ARGUMENT);
                0
            }
            _ => s3n_credentials_out_set(out, key.as_ptr(), secret.as_ptr(), secret.as_ptr(), 2_000_000_000),
        }
    }

    #[test]
    fn a_callback_is_asked_until_its_credentials_are_freed_and_never_after() {
        let answers = Answers { calls: AtomicUsize::new(0), free_inside: AtomicBool::new(false), own: Default::default() };
        let mut c: *mut S3nCredentials = ptr::null_mut();
        let desc = CString::new("unit test").unwrap();
        let data = &answers as *const Answers as *mut c_void;
        unsafe {
            assert_eq!(s3n_credentials_new(Some(answer), data, desc.as_ptr(), &mut c, ptr::null_mut()), S3N_OK);
            let source = CallbackSource((*c).callback.clone());
            let got = source.fetch().unwrap();
            assert_eq!((got.access_key_id.as_str(), got.session_token.as_deref()), ("AKID0", Some("secret")));
            assert_eq!(got.expiry, Some(UNIX_EPOCH + Duration::from_secs(2_000_000_000)));
            let refused = source.fetch().unwrap_err();
            assert!(refused.message().contains("unusable credentials: the secret access key is empty"), "{refused}");
            assert!(source.describe().contains("'unit test'"));
            s3n_credentials_free(c);
            let freed = source.fetch().unwrap_err();
            assert!(freed.message().contains("freed"), "{freed}");
            assert_eq!(answers.calls.load(Ordering::SeqCst), 2, "not called after the free");

            // Freed from inside its own callback: no deadlock, not called again.
            let inside = Answers { calls: AtomicUsize::new(0), free_inside: AtomicBool::new(true), own: Default::default() };
            let data = &inside as *const Answers as *mut c_void;
            assert_eq!(s3n_credentials_new(Some(answer), data, ptr::null(), &mut c, ptr::null_mut()), S3N_OK);
            inside.own.store(c, Ordering::SeqCst);
            let source = CallbackSource((*c).callback.clone());
            assert!(source.fetch().is_ok(), "the answer of the call that freed them still counts");
            assert!(source.fetch().is_err());
            assert_eq!(inside.calls.load(Ordering::SeqCst), 1);
            assert_eq!(s3n_credentials_new(None, data, ptr::null(), &mut c, ptr::null_mut()), S3N_ERR_INVALID_ARGUMENT);
        }
    }

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

// ---------------------------------------------------------------------------------------
// Parquet

/// An open Parquet writer (opaque): Arrow data in, one Parquet object out (see
/// `s3n_parquet_open`). Writes and closes are serialised; `s3n_parquet_abort` may be called
/// from another thread.
pub struct S3nParquetWriter(crate::SharedParquetWriter);

/// # Safety
/// `w` is a Parquet writer from s3n_parquet_open not yet freed, or NULL.
unsafe fn parquet_arg<'a>(w: *const S3nParquetWriter) -> Result<&'a crate::SharedParquetWriter, Error> {
    w.as_ref().map(|w| &w.0).ok_or_else(|| Error::invalid_argument("Parquet writer is NULL"))
}

/// Open a Parquet writer for `s3://bucket/key`: the columns are the children of `schema`, a
/// `struct ArrowSchema *` of the Arrow C data interface of struct type (format `+s`), only
/// read here (the caller still releases it). `mode` and the settings are those of
/// `s3n_writer_open` (`S3N_MODE_DEFERRED`: close uploads every part and the result is
/// completed or aborted later with `s3n_complete` / `s3n_abort`). `options_json` (NULL: the
/// defaults) names the encoding, every field optional: `{"compression": "SNAPPY" | "ZSTD" |
/// "NONE", "compression_level": 1..22 (ZSTD only), "row_group_rows": rows (default
/// 1048576), "row_group_bytes": bytes (default 134217728), "created_by": "...",
/// "key_value_metadata": {"key": "value"}}`; an unknown field is an error naming it. On
/// success `*out` receives the writer; free it with `s3n_parquet_free`.
///
/// Errors: `S3N_ERR_INVALID_ARGUMENT` (bad bucket, key, mode, setting, options, or a schema
/// that does not import or that Parquet cannot hold), `S3N_ERR_UNSUPPORTED`.
///
/// # Safety
/// As `s3n_writer_open_with_credentials`; `schema` NULL or a valid `struct ArrowSchema *`;
/// `options_json` NULL or a valid string; `out` a valid `s3n_parquet_writer **`.
#[no_mangle]
pub unsafe extern "C" fn s3n_parquet_open(
    bucket: *const c_char,
    key: *const c_char,
    mode: i32,
    schema: *const c_void,
    options_json: *const c_char,
    keys: *const *const c_char,
    values: *const *const c_char,
    n: usize,
    credentials: *const S3nCredentials,
    out: *mut *mut S3nParquetWriter,
    err: *mut *mut S3nError,
) -> i32 {
    guard(err, || {
        if out.is_null() {
            return Err(Error::invalid_argument("out is NULL"));
        }
        let mode = mode_of(mode)?;
        let schema = (schema as *const arrow_schema::ffi::FFI_ArrowSchema)
            .as_ref()
            .ok_or_else(|| Error::invalid_argument("schema is NULL"))?;
        let schema = arrow_schema::Schema::try_from(schema).map_err(|e| Error::invalid_argument(format!("the Arrow schema does not import: {e}")))?;
        let options = if options_json.is_null() {
            crate::ParquetOptions::default()
        } else {
            crate::ParquetOptions::from_json(str_arg(options_json, "options_json")?)?
        };
        let settings = with_credentials(settings_arg(keys, values, n)?, credentials);
        let w = crate::ParquetWriter::open(str_arg(bucket, "bucket")?, str_arg(key, "key")?, mode, Arc::new(schema), &options, &settings)?;
        *out = Box::into_raw(Box::new(S3nParquetWriter(crate::SharedParquetWriter::new(w))));
        Ok(())
    })
}

/// Write every batch of `stream`, a `struct ArrowArrayStream *` of the Arrow C stream
/// interface whose schema is the file's, and release it; `*rows` (may be NULL) receives the
/// rows written. The stream is moved at once (its struct is left released), so it is
/// released even when this fails. Blocks as `s3n_writer_write` does.
///
/// Errors (each one fails the writer and aborts its upload; later calls report it):
/// `S3N_ERR_INVALID_ARGUMENT` for a NULL or released stream, a schema or batch not the
/// file's (the message names the column); `S3N_ERR_IO` for the stream's own error (the
/// producer's message included); the writer's failure;
/// `S3N_ERR_STATE` after close or abort.
///
/// # Safety
/// `writer` is a live Parquet writer; `stream` NULL or a valid `struct ArrowArrayStream *`
/// whose callbacks may be called from this thread; `rows` NULL or valid.
#[no_mangle]
pub unsafe extern "C" fn s3n_parquet_write_stream(writer: *mut S3nParquetWriter, stream: *mut c_void, rows: *mut u64, err: *mut *mut S3nError) -> i32 {
    guard(err, || {
        let n = parquet_arg(writer)?.write_c_stream(stream as *mut arrow_array::ffi_stream::FFI_ArrowArrayStream)?;
        if !rows.is_null() {
            *rows = n;
        }
        Ok(())
    })
}

/// Write one batch: `array`, a `struct ArrowArray *` of struct type (its children are the
/// columns; no top-level nulls) described by `schema`, a `struct ArrowSchema *`. `array` is
/// moved (its struct is left released, the library releases the data); `schema` is only
/// read (the caller still releases it).
///
/// Errors: as `s3n_parquet_write_stream` (each one fails the writer).
///
/// # Safety
/// `writer` is a live Parquet writer; `array` and `schema` NULL or valid C data interface
/// structs, the schema describing the array.
#[no_mangle]
pub unsafe extern "C" fn s3n_parquet_write_array(writer: *mut S3nParquetWriter, array: *mut c_void, schema: *const c_void, err: *mut *mut S3nError) -> i32 {
    guard(err, || {
        parquet_arg(writer)?.write_c_array(array as *mut arrow_array::ffi::FFI_ArrowArray, schema as *const arrow_schema::ffi::FFI_ArrowSchema)
    })
}

/// Finish the file (last row group, footer) and close the writer as its mode says. `*result`
/// (may be NULL; free with `s3n_result_free`) receives the upload's result, for
/// `s3n_complete` / `s3n_abort` of a deferred file; `*json` (may be NULL; free with
/// `s3n_string_free`) the Parquet result as JSON: `{"upload": <the result's JSON>, "rows":
/// n, "row_groups": n, "file_size": bytes}`. A second close gives the same result. On
/// failure the upload has been aborted.
///
/// # Safety
/// `writer` is a live Parquet writer; `result` and `json` NULL or valid pointers.
#[no_mangle]
pub unsafe extern "C" fn s3n_parquet_close(writer: *mut S3nParquetWriter, result: *mut *mut S3nResult, json: *mut *mut c_char, err: *mut *mut S3nError) -> i32 {
    guard(err, || {
        let r = parquet_arg(writer)?.close()?;
        if !json.is_null() {
            *json = cstring(&r.to_json()).into_raw();
        }
        if !result.is_null() {
            *result = Box::into_raw(S3nResult::new(r.upload));
        }
        Ok(())
    })
}

/// Abort the file's upload (terminal; a later write or close fails). Safe to call from
/// another thread while a write or close is blocked; does nothing after a successful close
/// (use `s3n_abort` with the result to discard a deferred file). Errors: as
/// `s3n_writer_abort`.
///
/// # Safety
/// `writer` is a live Parquet writer.
#[no_mangle]
pub unsafe extern "C" fn s3n_parquet_abort(writer: *mut S3nParquetWriter, err: *mut *mut S3nError) -> i32 {
    guard(err, || parquet_arg(writer)?.abort())
}

/// Free a Parquet writer; an open one's upload is aborted first (never completed).
///
/// # Safety
/// `writer` came from `s3n_parquet_open` and is not used after this call; NULL is ignored.
#[no_mangle]
pub unsafe extern "C" fn s3n_parquet_free(writer: *mut S3nParquetWriter) {
    if !writer.is_null() {
        let _ = catch_unwind(AssertUnwindSafe(|| drop(Box::from_raw(writer))));
    }
}
