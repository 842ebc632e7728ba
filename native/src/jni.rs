//! The JVM boundary: every native method of `io.s3native.Native` (jvm/).
//!
//! This layer checks arguments, owns the native handles, turns [`Error`]s into Java
//! exceptions and keeps panics from crossing into the JVM. It holds no upload logic: every
//! call forwards to the Rust API ([`Writer`], [`complete`](crate::complete),
//! [`abort`](crate::abort), ...).
//!
//! Handles: `open` returns a `Box<Handle>` as a `jlong`. The Java side (`NativeHandle`)
//! guarantees that `free` is called exactly once and never while another call uses the
//! handle; every other call takes the handle as a borrowed pointer. Write and close take the
//! writer's mutex; `abort` goes through the writer's [`AbortHandle`] when another thread holds
//! the mutex (a blocked write), so it never waits behind it.
//!
//! Exceptions: a failing call throws the exception built by the Java factory
//! `Native.exception(int kind, String message, String s3Code, String setting)`, where `kind`
//! is [`ErrorKind`]'s numeric value; the Java side maps kinds to exception classes. Every
//! export runs in [`EnvUnowned::with_env`] (which catches panics) and resolves with
//! [`ThrowJavaException`], so a panic becomes a Java `IOException`, never a crashed JVM.
//!
//! Interrupts: blocking calls poll `Thread.currentThread().isInterrupted()` through JNI from
//! the calling thread (the only thread the `interrupted` closures run on); the flag is read,
//! never cleared.

use std::any::Any;
use std::mem::MaybeUninit;
use std::ptr;
use std::sync::{Mutex, MutexGuard, OnceLock, TryLockError};

use ::jni::errors::{Error as JniError, ErrorPolicy};
use ::jni::objects::{JByteArray, JByteBuffer, JClass, JLongArray, JObject, JObjectArray, JString};
use ::jni::strings::JNIString;
use ::jni::sys::{jboolean, jbyte, jclass, jint, jlong, jmethodID, jsize, jvalue};
use ::jni::{Env, EnvUnowned};

use crate::{AbortHandle, Error, ErrorKind, MagicFile, MagicLayout, Mode, PendingEtags, Settings, Statistics, UploadResult, Writer};

/// Call a raw JNI function: `raw!(env_ptr, v1_1, Name, args...)`.
macro_rules! raw {
    ($env:expr, $version:ident, $name:ident $(, $arg:expr)*) => {{
        let env: *mut ::jni::sys::JNIEnv = $env;
        ((**env).$version.$name)(env $(, $arg)*)
    }};
}

/// One open writer, owned by a Java `NativeHandle`.
struct Handle {
    writer: Mutex<Writer>,
    abort: AbortHandle,
}

/// Why a native method failed: the writer's error, or a JNI failure (usually with a Java
/// exception already pending).
enum Failure {
    Native(Error),
    Jni(JniError),
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        Failure::Native(e)
    }
}

impl From<JniError> for Failure {
    fn from(e: JniError) -> Self {
        Failure::Jni(e)
    }
}

type Result<T> = std::result::Result<T, Failure>;

/// Throws the Java exception for an [`Error`] (or a panic) and returns the default value.
struct ThrowJavaException;

impl<T: Default> ErrorPolicy<T, Failure> for ThrowJavaException {
    type Captures<'unowned_env_local: 'native_method, 'native_method> = ();

    fn on_error<'unowned_env_local: 'native_method, 'native_method>(
        env: &mut Env<'unowned_env_local>,
        _captures: &mut (),
        err: Failure,
    ) -> ::jni::errors::Result<T> {
        if env.exception_check() {
            // A JNI call already threw (e.g. OutOfMemoryError): let that one propagate.
            return Ok(T::default());
        }
        let e = match err {
            Failure::Native(e) => e,
            Failure::Jni(e) => Error::new(ErrorKind::Internal, format!("JNI call failed: {e}")),
        };
        throw(env, &e);
        Ok(T::default())
    }

    fn on_panic<'unowned_env_local: 'native_method, 'native_method>(
        env: &mut Env<'unowned_env_local>,
        _captures: &mut (),
        payload: Box<dyn Any + Send + 'static>,
    ) -> ::jni::errors::Result<T> {
        let what = panic_message(payload);
        if !env.exception_check() {
            throw(env, &Error::new(ErrorKind::Internal, format!("panic (a bug in s3native): {what}")));
        }
        Ok(T::default())
    }
}

fn panic_message(payload: Box<dyn Any + Send + 'static>) -> String {
    let text = match payload.downcast::<&'static str>() {
        Ok(s) => return (*s).to_string(),
        Err(p) => match p.downcast::<String>() {
            Ok(s) => return *s,
            Err(p) => p,
        },
    };
    // A payload of another type: dropping it could itself panic; leak it instead.
    std::mem::forget(text);
    "panic with a non-string payload".to_string()
}

/// Throw the exception `Native.exception(kind, message, s3Code, setting)` builds; if that
/// fails, a plain `java.io.IOException` with the message.
fn throw(env: &mut Env<'_>, e: &Error) {
    let built = (|| -> std::result::Result<(), JniError> {
        let message = JString::from_str(env, e.message())?;
        let code = opt_string(env, e.s3_code())?;
        let setting = opt_string(env, e.setting())?;
        let raw_env = env.get_raw();
        // SAFETY: valid local references and a method id of the class just found.
        unsafe {
            let class = raw!(raw_env, v1_1, FindClass, c"io/s3native/Native".as_ptr());
            if class.is_null() {
                return Err(JniError::JavaException);
            }
            let mid = raw!(
                raw_env,
                v1_1,
                GetStaticMethodID,
                class,
                c"exception".as_ptr(),
                c"(ILjava/lang/String;Ljava/lang/String;Ljava/lang/String;)Ljava/lang/Throwable;".as_ptr()
            );
            if mid.is_null() {
                return Err(JniError::JavaException);
            }
            let args = [
                jvalue { i: e.kind() as jint },
                jvalue { l: message.as_raw() },
                jvalue { l: code.as_raw() },
                jvalue { l: setting.as_raw() },
            ];
            let ex = raw!(raw_env, v1_1, CallStaticObjectMethodA, class, mid, args.as_ptr());
            if ex.is_null() || raw!(raw_env, v1_2, ExceptionCheck) {
                return Err(JniError::JavaException);
            }
            raw!(raw_env, v1_1, Throw, ex);
        }
        Ok(())
    })();
    if built.is_err() {
        // SAFETY: plain JNI calls on this thread's env.
        unsafe {
            let raw_env = env.get_raw();
            raw!(raw_env, v1_1, ExceptionClear);
            let class = raw!(raw_env, v1_1, FindClass, c"java/io/IOException".as_ptr());
            if !class.is_null() {
                let msg = JNIString::from(e.message());
                raw!(raw_env, v1_1, ThrowNew, class, msg.as_ptr());
            }
        }
    }
}

fn opt_string<'local>(env: &mut Env<'local>, s: Option<&str>) -> std::result::Result<JObject<'local>, JniError> {
    Ok(match s {
        Some(s) => JString::from_str(env, s)?.into(),
        None => JObject::null(),
    })
}

// ---------------------------------------------------------------------------------------
// Interrupt polling

/// `java.lang.Thread` and the two methods needed to read the current thread's interrupt flag.
struct InterruptProbe {
    thread_class: jclass,
    current_thread: jmethodID,
    is_interrupted: jmethodID,
}

// SAFETY: a global class reference and method ids are valid on every thread.
unsafe impl Send for InterruptProbe {}
unsafe impl Sync for InterruptProbe {}

static PROBE: OnceLock<Option<InterruptProbe>> = OnceLock::new();

fn probe(raw_env: *mut ::jni::sys::JNIEnv) -> Option<&'static InterruptProbe> {
    PROBE
        .get_or_init(|| unsafe {
            // SAFETY: plain JNI calls on the calling thread's env.
            let local = raw!(raw_env, v1_1, FindClass, c"java/lang/Thread".as_ptr());
            if local.is_null() {
                raw!(raw_env, v1_1, ExceptionClear);
                return None;
            }
            let current = raw!(raw_env, v1_1, GetStaticMethodID, local, c"currentThread".as_ptr(), c"()Ljava/lang/Thread;".as_ptr());
            let is_interrupted = raw!(raw_env, v1_1, GetMethodID, local, c"isInterrupted".as_ptr(), c"()Z".as_ptr());
            if current.is_null() || is_interrupted.is_null() {
                raw!(raw_env, v1_1, ExceptionClear);
                raw!(raw_env, v1_1, DeleteLocalRef, local);
                return None;
            }
            let global = raw!(raw_env, v1_1, NewGlobalRef, local);
            raw!(raw_env, v1_1, DeleteLocalRef, local);
            (!global.is_null()).then_some(InterruptProbe { thread_class: global, current_thread: current, is_interrupted })
        })
        .as_ref()
}

/// Whether the calling Java thread's interrupt flag is set (read, not cleared). Must run on
/// the thread that owns `raw_env`.
fn java_thread_interrupted(raw_env: *mut ::jni::sys::JNIEnv) -> bool {
    let Some(p) = probe(raw_env) else { return false };
    // SAFETY: JNI calls on the thread that owns raw_env, with ids from `probe`.
    unsafe {
        if raw!(raw_env, v1_2, ExceptionCheck) {
            return false;
        }
        let thread = raw!(raw_env, v1_1, CallStaticObjectMethodA, p.thread_class, p.current_thread, ptr::null());
        if thread.is_null() {
            raw!(raw_env, v1_1, ExceptionClear);
            return false;
        }
        let flag: jboolean = raw!(raw_env, v1_1, CallBooleanMethodA, thread, p.is_interrupted, ptr::null());
        raw!(raw_env, v1_1, DeleteLocalRef, thread);
        if raw!(raw_env, v1_2, ExceptionCheck) {
            raw!(raw_env, v1_1, ExceptionClear);
            return false;
        }
        flag
    }
}

// ---------------------------------------------------------------------------------------
// Argument helpers

fn handle<'a>(h: jlong) -> Result<&'a Handle> {
    if h == 0 {
        return Err(Error::state("the stream is closed").into());
    }
    // SAFETY: the Java side passes only live pointers from `open` (see the module doc).
    Ok(unsafe { &*(h as *const Handle) })
}

fn lock(h: &Handle) -> Result<MutexGuard<'_, Writer>> {
    h.writer
        .lock()
        .map_err(|_| Error::new(ErrorKind::Internal, "the writer is unusable after an internal error").into())
}

fn string(env: &Env<'_>, s: &JString<'_>, what: &str) -> Result<String> {
    if s.is_null() {
        return Err(Error::invalid_argument(format!("{what} is null")).into());
    }
    Ok(s.try_to_string(env)?)
}

/// `String[] {key, value, key, value, ...}` to [`Settings`].
fn settings(env: &mut Env<'_>, kv: &JObjectArray<'_, JString<'_>>) -> Result<Settings> {
    let mut out = Settings::new();
    if kv.is_null() {
        return Ok(out);
    }
    let n = kv.len(env)?;
    if n % 2 != 0 {
        return Err(Error::invalid_argument("settings must be key/value pairs").into());
    }
    for i in (0..n).step_by(2) {
        let k = kv.get_element(env, i)?;
        let v = kv.get_element(env, i + 1)?;
        let key = string(env, &k, "a setting key")?;
        let value = string(env, &v, &format!("the value of {key}"))?;
        env.delete_local_ref(k);
        env.delete_local_ref(v);
        out.set(key, value);
    }
    Ok(out)
}

/// Check `off`/`len` against an array or buffer of `size` bytes.
fn check_range(off: jint, len: jint, size: usize) -> Result<(usize, usize)> {
    if off < 0 || len < 0 || off as usize + len as usize > size {
        return Err(Error::invalid_argument(format!("offset {off} and length {len} out of range for {size} bytes")).into());
    }
    Ok((off as usize, len as usize))
}

fn new_string<'local>(env: &mut Env<'local>, s: &str) -> Result<JObject<'local>> {
    Ok(JString::from_str(env, s)?.into())
}

fn long_array<'local>(env: &mut Env<'local>, values: &[i64]) -> Result<JObject<'local>> {
    let arr: JLongArray<'local> = JLongArray::new(env, values.len())?;
    arr.set_region(env, 0, values)?;
    Ok(arr.into())
}

/// Number of values in a statistics array (see `Statistics.java` for the order).
const STATS_LEN: usize = 31;

fn stats_values(s: &Statistics) -> [i64; STATS_LEN] {
    let d = |d: &crate::DurationSummary| [d.count, d.min_us, d.mean_us, d.max_us, d.p50_us, d.p99_us];
    let r = &s.requests;
    let q = d(&s.part_queue_wait);
    let u = d(&s.part_upload_time);
    let v: [u64; STATS_LEN] = [
        s.bytes_written,
        s.parts_uploaded,
        s.single_puts,
        s.retries,
        s.budget_blocked_us,
        s.in_flight_blocked_us,
        r.create_multipart_upload,
        r.upload_part,
        r.complete_multipart_upload,
        r.abort_multipart_upload,
        r.put_object,
        r.head_object,
        r.other,
        q[0],
        q[1],
        q[2],
        q[3],
        q[4],
        q[5],
        u[0],
        u[1],
        u[2],
        u[3],
        u[4],
        u[5],
        s.writers_opened,
        s.writers_closed,
        s.writers_aborted,
        s.budget_overcommits,
        s.buffer_bytes,
        s.buffer_peak_bytes,
    ];
    v.map(|x| x.min(i64::MAX as u64) as i64)
}

fn parse_result(env: &Env<'_>, json: &JString<'_>) -> Result<UploadResult> {
    let json = string(env, json, "the UploadResult JSON")?;
    Ok(UploadResult::from_json(&json)?)
}

// ---------------------------------------------------------------------------------------
// Exports: io.s3native.Native

/// `static native long open(String bucket, String key, boolean deferred, String[] settings)`
#[no_mangle]
pub extern "system" fn Java_io_s3native_Native_open<'local>(
    mut unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    bucket: JString<'local>,
    key: JString<'local>,
    deferred: jboolean,
    kv: JObjectArray<'local, JString<'local>>,
) -> jlong {
    unowned
        .with_env(|env| -> Result<jlong> {
            let bucket = string(env, &bucket, "bucket")?;
            let key = string(env, &key, "key")?;
            let settings = settings(env, &kv)?;
            let mode = if deferred { Mode::Deferred } else { Mode::Publish };
            // Look the interrupt probe up now, outside any blocking call.
            probe(env.get_raw());
            let writer = Writer::open(&bucket, &key, mode, &settings)?;
            let abort = writer.abort_handle();
            Ok(Box::into_raw(Box::new(Handle { writer: Mutex::new(writer), abort })) as jlong)
        })
        .resolve::<ThrowJavaException>()
}

/// `static native long openMagic(String bucket, String magicKey, String uri, int layout, int etags, String[] settings)`:
/// a writer for a file under an S3A magic path ([`Writer::open_magic`]). `layout`: 0 =
/// [`MagicLayout::Magic`] (`__magic`), 1 = [`MagicLayout::MagicJob`] (`__magic_job-`);
/// `etags`: 0 = [`PendingEtags::Unquoted`], 1 = `Quoted`, 2 = `Objects`. A key that is not
/// magic under `layout` is an invalid argument.
#[no_mangle]
pub extern "system" fn Java_io_s3native_Native_openMagic<'local>(
    mut unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    bucket: JString<'local>,
    magic_key: JString<'local>,
    uri: JString<'local>,
    layout: jint,
    etags: jint,
    kv: JObjectArray<'local, JString<'local>>,
) -> jlong {
    unowned
        .with_env(|env| -> Result<jlong> {
            let bucket = string(env, &bucket, "bucket")?;
            let magic_key = string(env, &magic_key, "magic key")?;
            let uri = string(env, &uri, "uri")?;
            let settings = settings(env, &kv)?;
            let layout = match layout {
                0 => MagicLayout::Magic,
                1 => MagicLayout::MagicJob,
                other => return Err(Error::invalid_argument(format!("unknown magic layout {other}")).into()),
            };
            let etags = match etags {
                0 => PendingEtags::Unquoted,
                1 => PendingEtags::Quoted,
                2 => PendingEtags::Objects,
                other => return Err(Error::invalid_argument(format!("unknown .pending etags form {other}")).into()),
            };
            let file = MagicFile::for_key(&magic_key, layout, etags)?
                .ok_or_else(|| Error::invalid_argument(format!("'{magic_key}' is not a magic path under {layout:?}")))?;
            probe(env.get_raw());
            let writer = Writer::open_magic(&bucket, &file, &uri, &settings)?;
            let abort = writer.abort_handle();
            Ok(Box::into_raw(Box::new(Handle { writer: Mutex::new(writer), abort })) as jlong)
        })
        .resolve::<ThrowJavaException>()
}

/// `static native void write(long handle, byte[] b, int off, int len)`: one copy, straight
/// from the Java array into the part buffer.
#[no_mangle]
pub extern "system" fn Java_io_s3native_Native_write<'local>(
    mut unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    h: jlong,
    array: JByteArray<'local>,
    off: jint,
    len: jint,
) {
    unowned
        .with_env(|env| -> Result<()> {
            let h = handle(h)?;
            if array.is_null() {
                return Err(Error::invalid_argument("the byte array is null").into());
            }
            let (off, len) = check_range(off, len, array.len(env)?)?;
            if len == 0 {
                return Ok(());
            }
            let raw_env = env.get_raw();
            let raw_array = array.as_raw();
            let mut w = lock(h)?;
            w.write_with(len, &|| java_thread_interrupted(raw_env), &mut |from, dst| {
                // SAFETY: off + from + dst.len() <= off + len, inside the array (checked
                // above); dst is writable memory of dst.len() bytes; GetByteArrayRegion
                // initialises all of it or throws.
                unsafe {
                    raw!(
                        raw_env,
                        v1_1,
                        GetByteArrayRegion,
                        raw_array,
                        (off + from) as jsize,
                        dst.len() as jsize,
                        dst.as_mut_ptr() as *mut jbyte
                    );
                    if raw!(raw_env, v1_2, ExceptionCheck) {
                        return Err(Error::new(ErrorKind::Internal, "GetByteArrayRegion threw"));
                    }
                }
                Ok(())
            })?;
            Ok(())
        })
        .resolve::<ThrowJavaException>()
}

/// `static native void writeDirect(long handle, ByteBuffer direct, int position, int len)`
#[no_mangle]
pub extern "system" fn Java_io_s3native_Native_writeDirect<'local>(
    mut unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    h: jlong,
    buffer: JByteBuffer<'local>,
    position: jint,
    len: jint,
) {
    unowned
        .with_env(|env| -> Result<()> {
            let h = handle(h)?;
            if buffer.is_null() {
                return Err(Error::invalid_argument("the ByteBuffer is null").into());
            }
            let addr = env.get_direct_buffer_address(&buffer).map_err(|_| Error::invalid_argument("the ByteBuffer is not direct"))?;
            let capacity = env.get_direct_buffer_capacity(&buffer)?;
            let (off, len) = check_range(position, len, capacity)?;
            if len == 0 {
                return Ok(());
            }
            // SAFETY: the buffer (a local reference of this call) keeps `capacity` bytes at
            // `addr` alive for the whole call; the range is inside it.
            let src = unsafe { std::slice::from_raw_parts(addr.add(off) as *const u8, len) };
            let raw_env = env.get_raw();
            let mut w = lock(h)?;
            w.write_with(len, &|| java_thread_interrupted(raw_env), &mut |from, dst: &mut [MaybeUninit<u8>]| {
                let part = &src[from..from + dst.len()];
                // SAFETY: MaybeUninit<u8> has u8's layout; equal lengths; no overlap.
                unsafe { ptr::copy_nonoverlapping(part.as_ptr(), dst.as_mut_ptr() as *mut u8, part.len()) };
                Ok(())
            })?;
            Ok(())
        })
        .resolve::<ThrowJavaException>()
}

/// `static native String close(long handle)`: the UploadResult as JSON.
#[no_mangle]
pub extern "system" fn Java_io_s3native_Native_close<'local>(
    mut unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    h: jlong,
) -> JObject<'local> {
    unowned
        .with_env(|env| -> Result<JObject<'local>> {
            let h = handle(h)?;
            let raw_env = env.get_raw();
            let result = lock(h)?.close_with(&|| java_thread_interrupted(raw_env))?;
            new_string(env, &result.to_json())
        })
        .resolve::<ThrowJavaException>()
}

/// `static native void abort(long handle)`: aborts at once, also while another thread is
/// blocked in a write or close of the same writer.
#[no_mangle]
pub extern "system" fn Java_io_s3native_Native_abort<'local>(mut unowned: EnvUnowned<'local>, _class: JClass<'local>, h: jlong) {
    unowned
        .with_env(|_env| -> Result<()> {
            let h = handle(h)?;
            match h.writer.try_lock() {
                Ok(mut w) => w.abort()?,
                Err(TryLockError::WouldBlock) => h.abort.abort()?,
                Err(TryLockError::Poisoned(p)) => p.into_inner().abort()?,
            }
            Ok(())
        })
        .resolve::<ThrowJavaException>()
}

/// `static native void free(long handle)`: drop the writer (which aborts an upload that is
/// still open, never completes it). Called exactly once per handle.
#[no_mangle]
pub extern "system" fn Java_io_s3native_Native_free<'local>(mut unowned: EnvUnowned<'local>, _class: JClass<'local>, h: jlong) {
    unowned
        .with_env(|_env| -> Result<()> {
            if h != 0 {
                // SAFETY: `h` came from `open` and the Java side frees it once, unused.
                drop(unsafe { Box::from_raw(h as *mut Handle) });
            }
            Ok(())
        })
        .resolve::<ThrowJavaException>()
}

/// `static native long[] statistics(long handle)`
#[no_mangle]
pub extern "system" fn Java_io_s3native_Native_statistics<'local>(
    mut unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    h: jlong,
) -> JObject<'local> {
    unowned
        .with_env(|env| -> Result<JObject<'local>> {
            let stats = lock(handle(h)?)?.statistics();
            long_array(env, &stats_values(&stats))
        })
        .resolve::<ThrowJavaException>()
}

/// `static native long[] globalStatistics()`
#[no_mangle]
pub extern "system" fn Java_io_s3native_Native_globalStatistics<'local>(
    mut unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
) -> JObject<'local> {
    unowned
        .with_env(|env| -> Result<JObject<'local>> { long_array(env, &stats_values(&crate::global_statistics())) })
        .resolve::<ThrowJavaException>()
}

/// `static native void complete(String resultJson, String[] settings)`
#[no_mangle]
pub extern "system" fn Java_io_s3native_Native_complete<'local>(
    mut unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    json: JString<'local>,
    kv: JObjectArray<'local, JString<'local>>,
) {
    unowned
        .with_env(|env| -> Result<()> {
            let result = parse_result(env, &json)?;
            let settings = settings(env, &kv)?;
            Ok(crate::complete(&result, &settings)?)
        })
        .resolve::<ThrowJavaException>()
}

/// `static native void abortUpload(String resultJson, String[] settings)`
#[no_mangle]
pub extern "system" fn Java_io_s3native_Native_abortUpload<'local>(
    mut unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    json: JString<'local>,
    kv: JObjectArray<'local, JString<'local>>,
) {
    unowned
        .with_env(|env| -> Result<()> {
            let result = parse_result(env, &json)?;
            let settings = settings(env, &kv)?;
            Ok(crate::abort(&result, &settings)?)
        })
        .resolve::<ThrowJavaException>()
}

/// `static native int abortOpenUploads()`
#[no_mangle]
pub extern "system" fn Java_io_s3native_Native_abortOpenUploads<'local>(
    mut unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
) -> jint {
    unowned
        .with_env(|_env| -> Result<jint> { Ok(crate::abort_open_uploads().min(jint::MAX as usize) as jint) })
        .resolve::<ThrowJavaException>()
}

/// `static native String[] parseResult(String json)`:
/// `{bucket, key, uploadId or null, length, completed, etag 1, etag 2, ...}`.
#[no_mangle]
pub extern "system" fn Java_io_s3native_Native_parseResult<'local>(
    mut unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    json: JString<'local>,
) -> JObject<'local> {
    unowned
        .with_env(|env| -> Result<JObject<'local>> {
            let r = parse_result(env, &json)?;
            let mut fields: Vec<Option<String>> = vec![
                Some(r.bucket),
                Some(r.key),
                r.upload_id,
                Some(r.length.to_string()),
                Some(r.completed.to_string()),
            ];
            fields.extend(r.etags.into_iter().map(Some));
            let arr = JObjectArray::<JString>::new(env, fields.len(), JString::null())?;
            for (i, f) in fields.iter().enumerate() {
                if let Some(s) = f {
                    let s = JString::from_str(env, s)?;
                    arr.set_element(env, i, &s)?;
                    env.delete_local_ref(s);
                }
            }
            Ok(arr.into())
        })
        .resolve::<ThrowJavaException>()
}

/// `static native long[] resultStatistics(String json)`
#[no_mangle]
pub extern "system" fn Java_io_s3native_Native_resultStatistics<'local>(
    mut unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    json: JString<'local>,
) -> JObject<'local> {
    unowned
        .with_env(|env| -> Result<JObject<'local>> {
            let r = parse_result(env, &json)?;
            long_array(env, &stats_values(&r.statistics))
        })
        .resolve::<ThrowJavaException>()
}

/// `static native String version()`: the crate version, checked against the jar's.
#[no_mangle]
pub extern "system" fn Java_io_s3native_Native_version<'local>(
    mut unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
) -> JObject<'local> {
    unowned
        .with_env(|env| -> Result<JObject<'local>> { new_string(env, env!("CARGO_PKG_VERSION")) })
        .resolve::<ThrowJavaException>()
}

/// `static native long benchRustUpload(String bucket, String key, String[] settings, long total,
/// int chunk)`: a benchmark hook, the baseline of the JMH throughput benchmark. Uploads `total`
/// bytes through the Rust API alone (`Writer::write` of a `chunk`-byte Rust buffer, no JNI
/// per write) and returns the object's length.
#[no_mangle]
pub extern "system" fn Java_io_s3native_Native_benchRustUpload<'local>(
    mut unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    bucket: JString<'local>,
    key: JString<'local>,
    kv: JObjectArray<'local, JString<'local>>,
    total: jlong,
    chunk: jint,
) -> jlong {
    unowned
        .with_env(|env| -> Result<jlong> {
            let bucket = string(env, &bucket, "bucket")?;
            let key = string(env, &key, "key")?;
            let settings = settings(env, &kv)?;
            if total < 0 || chunk <= 0 {
                return Err(Error::invalid_argument("total must be >= 0 and chunk > 0").into());
            }
            let data: Vec<u8> = (0..chunk as usize).map(|i| (i * 31 % 251) as u8).collect();
            let mut w = Writer::open(&bucket, &key, Mode::Publish, &settings)?;
            let mut left = total as u64;
            while left > 0 {
                let n = left.min(data.len() as u64) as usize;
                w.write(&data[..n])?;
                left -= n as u64;
            }
            Ok(w.close()?.length as jlong)
        })
        .resolve::<ThrowJavaException>()
}

/// `static native void panicForTest()`: proves that a panic becomes a Java exception.
#[no_mangle]
pub extern "system" fn Java_io_s3native_Native_panicForTest<'local>(mut unowned: EnvUnowned<'local>, _class: JClass<'local>) {
    unowned
        .with_env(|_env| -> Result<()> {
            let n = std::hint::black_box(1);
            panic!("deliberate panic {n} for the JNI panic test");
        })
        .resolve::<ThrowJavaException>()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_are_checked_without_overflow() {
        assert!(check_range(0, 0, 0).is_ok());
        assert_eq!(check_range(2, 3, 5).ok(), Some((2, 3)));
        for (off, len) in [(-1, 1), (0, -1), (3, 3), (jint::MAX, jint::MAX), (5, 1)] {
            match check_range(off, len, 5) {
                Err(Failure::Native(e)) => assert_eq!(e.kind(), ErrorKind::InvalidArgument),
                _ => panic!("({off}, {len}) accepted"),
            }
        }
    }

    #[test]
    fn statistics_values_keep_the_java_order() {
        let mut s = Statistics { bytes_written: 11, budget_overcommits: 29, buffer_peak_bytes: 31, ..Default::default() };
        s.requests.create_multipart_upload = 7;
        s.part_queue_wait.count = 14;
        s.part_upload_time.p99_us = 25;
        s.writers_opened = u64::MAX;
        let v = stats_values(&s);
        assert_eq!((v[0], v[6], v[13], v[24], v[28], v[30]), (11, 7, 14, 25, 29, 31));
        assert_eq!(v[25], i64::MAX, "saturates instead of wrapping negative");
    }

    #[test]
    fn panic_messages_of_str_and_string_payloads() {
        assert_eq!(panic_message(Box::new("static")), "static");
        assert_eq!(panic_message(Box::new(format!("formatted {}", 1))), "formatted 1");
        assert_eq!(panic_message(Box::new(42u8)), "panic with a non-string payload");
    }
}
