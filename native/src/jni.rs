//! The JVM boundary: every native method of `io.s3native.Native` (jvm/).
//!
//! This layer checks arguments, owns the native handles, turns [`Error`]s into Java
//! exceptions and keeps panics from crossing into the JVM. It holds no upload logic and no
//! state of its own: every call forwards to the Rust API ([`SharedWriter`],
//! [`complete`](crate::complete), [`abort`](crate::abort), ...), whose rules (states, abort
//! after close) are the same from Rust, C and Java.
//!
//! Handles: `open` returns a `Box<SharedWriter>` as a `jlong`. The Java side (`NativeHandle`)
//! guarantees that `free` is called exactly once and never while another call uses the
//! handle; every other call takes the handle as a borrowed pointer.
//!
//! Data crosses by name: the result and statistics cross as Java `Map<String, Object>`s
//! built from their serde form (field names as in Rust; nested structs as nested maps,
//! numbers as `Long`, lists as `List`), modes, magic layouts and `.pending` etag forms as
//! their serde names (`PUBLISH`, `MAGIC_JOB`, `QUOTED`, ...), settings as key/value pairs.
//!
//! Exceptions: a failing call throws the exception built by the Java factory
//! `Native.exception(int kind, String message, String s3Code, String setting)`, where `kind`
//! is [`ErrorKind`]'s numeric value; the Java side maps kinds to exception classes. Every
//! export runs through [`call`] ([`EnvUnowned::with_env`], which catches panics, resolved
//! with [`ThrowJavaException`]), so a panic becomes a Java `IOException`, never a crashed JVM.
//!
//! Interrupts: blocking calls poll `Thread.currentThread().isInterrupted()` through JNI from
//! the calling thread (the only thread the `interrupted` closures run on); the flag is read,
//! never cleared.

use std::any::Any;
use std::mem::MaybeUninit;
use std::ptr;
use std::sync::OnceLock;

use ::jni::errors::{Error as JniError, ErrorPolicy};
use ::jni::objects::{JByteArray, JByteBuffer, JClass, JObject, JObjectArray, JString};
use ::jni::strings::JNIString;
use ::jni::sys::{jboolean, jbyte, jclass, jint, jlong, jmethodID, jobject, jsize, jvalue};
use ::jni::objects::Global;
use ::jni::{jni_sig, jni_str, Env, EnvUnowned, JavaVM};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use crate::{
    CredentialSource, Credentials, Error, ErrorKind, MagicFile, MagicLayout, Mode, PendingEtags, Settings, SharedCredentials, SharedWriter,
    UploadResult, Writer,
};

/// Call a raw JNI function: `raw!(env_ptr, v1_1, Name, args...)`.
macro_rules! raw {
    ($env:expr, $version:ident, $name:ident $(, $arg:expr)*) => {{
        let env: *mut ::jni::sys::JNIEnv = $env;
        ((**env).$version.$name)(env $(, $arg)*)
    }};
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
        if !env.exception_check() {
            throw(env, &Error::from_panic(payload));
        }
        Ok(T::default())
    }
}

/// Run one native method's body: its errors and panics become Java exceptions.
fn call<'local, T: Default + 'local>(mut unowned: EnvUnowned<'local>, body: impl FnOnce(&mut Env<'local>) -> Result<T>) -> T {
    unowned.with_env(body).resolve::<ThrowJavaException>()
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

/// The reader's methods (`openReader`, `read`, `readAt`, `readRanges`, ...).
#[path = "jni_reader.rs"]
mod reader;

/// The object operations' methods (`objectsOpen`, `objectsHead`, `objectsDeleteMany`, `objectsList`, ...).
#[path = "jni_objects.rs"]
mod objects;
/// The Parquet writer's methods (`io.s3native.parquet.ParquetNative`).
#[path = "jni_parquet.rs"]
mod parquet_writer;

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

fn handle<'a>(h: jlong) -> Result<&'a SharedWriter> {
    if h == 0 {
        return Err(Error::state("the stream is closed").into());
    }
    // SAFETY: the Java side passes only live pointers from `open` (see the module doc).
    Ok(unsafe { &*(h as *const SharedWriter) })
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

/// A serde enum from its name (`"PUBLISH"`, `"MAGIC_JOB"`, ...); `what` names it in errors.
fn by_name<T: DeserializeOwned>(env: &Env<'_>, name: &JString<'_>, what: &str) -> Result<T> {
    let name = string(env, name, what)?;
    serde_json::from_value(Value::String(name.clone()))
        .map_err(|_| Error::invalid_argument(format!("unknown {what} '{name}'")).into())
}

/// `value`'s serde form as Java objects: a struct or map as a `LinkedHashMap<String,
/// Object>`, a list as an `ArrayList`, a number as a `Long` (saturating), a string as a
/// `String`, a bool as a `Boolean`, `None` as null.
fn to_java<'local>(env: &mut Env<'local>, value: &impl Serialize) -> Result<JObject<'local>> {
    let value = serde_json::to_value(value).map_err(|e| Error::new(ErrorKind::Internal, format!("serialising: {e}")))?;
    value_to_java(env, &value)
}

/// The JDK classes and methods [`value_to_java`] builds with, looked up once per process
/// (global class references: the ids stay valid). Looking them up by name on every value
/// cost a `FindClass` and a method lookup per element: about 1 ms of CPU per closed file in
/// NativeS3AFileSystem, whose close converts the result and the stream's statistics.
struct JavaTypes {
    boolean: jclass,
    boolean_value_of: jmethodID,
    long: jclass,
    long_value_of: jmethodID,
    list: jclass,
    list_new: jmethodID,
    list_add: jmethodID,
    map: jclass,
    map_new: jmethodID,
    map_put: jmethodID,
}

// SAFETY: global class references and method ids are valid on every thread.
unsafe impl Send for JavaTypes {}
unsafe impl Sync for JavaTypes {}

static JAVA_TYPES: OnceLock<Option<JavaTypes>> = OnceLock::new();

fn java_types(raw_env: *mut ::jni::sys::JNIEnv) -> std::result::Result<&'static JavaTypes, JniError> {
    // SAFETY: plain JNI calls on the calling thread's env; every local reference is deleted.
    let types = JAVA_TYPES.get_or_init(|| unsafe {
        let class = |name: &std::ffi::CStr| {
            let local = raw!(raw_env, v1_1, FindClass, name.as_ptr());
            if local.is_null() {
                return ptr::null_mut();
            }
            let global = raw!(raw_env, v1_1, NewGlobalRef, local);
            raw!(raw_env, v1_1, DeleteLocalRef, local);
            global
        };
        let (boolean, long, list, map) =
            (class(c"java/lang/Boolean"), class(c"java/lang/Long"), class(c"java/util/ArrayList"), class(c"java/util/LinkedHashMap"));
        if boolean.is_null() || long.is_null() || list.is_null() || map.is_null() {
            raw!(raw_env, v1_1, ExceptionClear);
            return None;
        }
        let types = JavaTypes {
            boolean,
            boolean_value_of: raw!(raw_env, v1_1, GetStaticMethodID, boolean, c"valueOf".as_ptr(), c"(Z)Ljava/lang/Boolean;".as_ptr()),
            long,
            long_value_of: raw!(raw_env, v1_1, GetStaticMethodID, long, c"valueOf".as_ptr(), c"(J)Ljava/lang/Long;".as_ptr()),
            list,
            list_new: raw!(raw_env, v1_1, GetMethodID, list, c"<init>".as_ptr(), c"()V".as_ptr()),
            list_add: raw!(raw_env, v1_1, GetMethodID, list, c"add".as_ptr(), c"(Ljava/lang/Object;)Z".as_ptr()),
            map,
            map_new: raw!(raw_env, v1_1, GetMethodID, map, c"<init>".as_ptr(), c"()V".as_ptr()),
            map_put: raw!(
                raw_env,
                v1_1,
                GetMethodID,
                map,
                c"put".as_ptr(),
                c"(Ljava/lang/Object;Ljava/lang/Object;)Ljava/lang/Object;".as_ptr()
            ),
        };
        let ids = [
            types.boolean_value_of,
            types.long_value_of,
            types.list_new,
            types.list_add,
            types.map_new,
            types.map_put,
        ];
        if ids.iter().any(|id| id.is_null()) {
            raw!(raw_env, v1_1, ExceptionClear);
            return None;
        }
        Some(types)
    });
    types.as_ref().ok_or(JniError::JavaException)
}

/// A local reference returned by a JNI call, or the pending exception as an error.
fn checked<'local>(env: &Env<'local>, o: jobject) -> Result<JObject<'local>> {
    let raw_env = env.get_raw();
    // SAFETY: ExceptionCheck on this thread's env; `o` is a local reference of this frame.
    unsafe {
        if raw!(raw_env, v1_2, ExceptionCheck) {
            if !o.is_null() {
                raw!(raw_env, v1_1, DeleteLocalRef, o);
            }
            return Err(JniError::JavaException.into());
        }
        Ok(JObject::from_raw(env, o))
    }
}

fn value_to_java<'local>(env: &mut Env<'local>, v: &Value) -> Result<JObject<'local>> {
    let raw_env = env.get_raw();
    let t = java_types(raw_env)?;
    // SAFETY (every block below): JNI calls on this thread's env with the cached global
    // classes and their method ids, and argument types matching the methods' signatures.
    Ok(match v {
        Value::Null => JObject::null(),
        Value::Bool(b) => {
            let args = [jvalue { z: *b }];
            checked(env, unsafe { raw!(raw_env, v1_1, CallStaticObjectMethodA, t.boolean, t.boolean_value_of, args.as_ptr()) })?
        }
        Value::Number(n) => {
            let n = match n.as_u64() {
                Some(u) => u.min(i64::MAX as u64) as i64,
                None => n.as_i64().ok_or_else(|| Error::new(ErrorKind::Internal, format!("{n} is not a whole number")))?,
            };
            let args = [jvalue { j: n }];
            checked(env, unsafe { raw!(raw_env, v1_1, CallStaticObjectMethodA, t.long, t.long_value_of, args.as_ptr()) })?
        }
        Value::String(s) => JString::from_str(env, s)?.into(),
        Value::Array(items) => {
            let list = checked(env, unsafe { raw!(raw_env, v1_1, NewObjectA, t.list, t.list_new, ptr::null()) })?;
            for item in items {
                let o = value_to_java(env, item)?;
                let args = [jvalue { l: o.as_raw() }];
                unsafe { raw!(raw_env, v1_1, CallBooleanMethodA, list.as_raw(), t.list_add, args.as_ptr()) };
                env.delete_local_ref(o);
                checked(env, ptr::null_mut())?;
            }
            list
        }
        Value::Object(fields) => {
            let map = checked(env, unsafe { raw!(raw_env, v1_1, NewObjectA, t.map, t.map_new, ptr::null()) })?;
            for (name, field) in fields {
                let k: JObject = JString::from_str(env, name)?.into();
                let o = value_to_java(env, field)?;
                let args = [jvalue { l: k.as_raw() }, jvalue { l: o.as_raw() }];
                let old = checked(env, unsafe { raw!(raw_env, v1_1, CallObjectMethodA, map.as_raw(), t.map_put, args.as_ptr()) });
                env.delete_local_ref(k);
                env.delete_local_ref(o);
                env.delete_local_ref(old?);
            }
            map
        }
    })
}

fn parse_result(env: &Env<'_>, json: &JString<'_>) -> Result<UploadResult> {
    let json = string(env, json, "the UploadResult JSON")?;
    Ok(UploadResult::from_json(&json)?)
}

fn into_handle(writer: Writer) -> jlong {
    Box::into_raw(Box::new(SharedWriter::new(writer))) as jlong
}

/// `settings` with the credentials of a handle from `credentialSource` (0: none).
fn with_credentials(settings: Settings, credentials: jlong) -> Settings {
    if credentials == 0 {
        return settings;
    }
    // SAFETY: the Java side (CredentialSource) passes only live handles from credentialSource.
    let shared = unsafe { &*(credentials as *const SharedCredentials) };
    settings.with_credentials(shared.clone())
}

/// A Java `io.s3native.CredentialsProvider`, asked from the runtime's blocking threads
/// (attached to the JVM for good on first use). Its methods are found by name on the
/// object's own class, so no class loader lookup runs on those threads.
struct JavaCredentials {
    vm: JavaVM,
    provider: Global<JObject<'static>>,
    description: String,
}

/// Detaches a thread [`attach_as_daemon`] attached, when the thread exits (the JVM requires
/// an attached native thread to detach before it ends).
struct DetachOnExit(*mut ::jni::sys::JavaVM);

impl Drop for DetachOnExit {
    fn drop(&mut self) {
        // SAFETY: the JavaVM outlives the library's threads; this thread attached itself.
        unsafe {
            ((**self.0).v1_1.DetachCurrentThread)(self.0);
        }
    }
}

thread_local! {
    static DAEMON_ATTACHMENT: std::cell::RefCell<Option<DetachOnExit>> = const { std::cell::RefCell::new(None) };
}

/// Attach the calling native thread to the JVM as a daemon thread, once: the runtime's
/// threads must never keep the JVM from exiting (jni's own attachment makes non-daemon
/// threads). A thread attached already is left as it is.
fn attach_as_daemon(vm: &JavaVM) {
    let raw = vm.get_raw();
    // SAFETY: plain invocation-interface calls with a valid JavaVM pointer.
    unsafe {
        let mut env: *mut std::ffi::c_void = ptr::null_mut();
        if ((**raw).v1_2.GetEnv)(raw, &mut env, ::jni::sys::JNI_VERSION_1_4) == ::jni::sys::JNI_OK {
            return;
        }
        if ((**raw).v1_4.AttachCurrentThreadAsDaemon)(raw, &mut env, ptr::null_mut()) == ::jni::sys::JNI_OK {
            DAEMON_ATTACHMENT.with(|a| *a.borrow_mut() = Some(DetachOnExit(raw)));
        }
    }
}

impl CredentialSource for JavaCredentials {
    fn fetch(&self) -> crate::Result<Credentials> {
        attach_as_daemon(&self.vm);
        let fetched = self.vm.attach_current_thread(|env| -> Result<Credentials> {
            let c = env
                .call_method(self.provider.as_obj(), jni_str!("getCredentials"), jni_sig!("()Lio/s3native/Credentials;"), &[])?
                .l()?;
            if c.is_null() {
                return Err(Error::new(ErrorKind::Io, "the credentials provider returned null").into());
            }
            let text = |env: &mut Env<'_>, name: &str, getter| -> Result<Option<String>> {
                let o = env.call_method(&c, getter, jni_sig!("()Ljava/lang/String;"), &[])?.l()?;
                let s: JString = env.cast_local::<JString>(o)?;
                if s.is_null() {
                    return Ok(None);
                }
                let out = s.try_to_string(env).map_err(|_| Error::new(ErrorKind::Io, format!("the credentials' {name} is not a string")))?;
                Ok(Some(out).filter(|v| !v.is_empty()))
            };
            let access_key_id = text(env, "access key id", jni_str!("getAccessKeyId"))?;
            let secret_access_key = text(env, "secret access key", jni_str!("getSecretAccessKey"))?;
            let session_token = text(env, "session token", jni_str!("getSessionToken"))?;
            let expiry_ms = env.call_method(&c, jni_str!("getExpirationEpochMillis"), jni_sig!("()J"), &[])?.j()?;
            let (Some(access_key_id), Some(secret_access_key)) = (access_key_id, secret_access_key) else {
                return Err(Error::new(ErrorKind::AccessDenied, "the credentials provider returned no access key id or secret").into());
            };
            Ok(Credentials {
                access_key_id,
                secret_access_key,
                session_token,
                expiry: u64::try_from(expiry_ms).ok().map(|ms| std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms)),
            })
        });
        fetched.map_err(|f| match f {
            Failure::Native(e) => e,
            Failure::Jni(JniError::CaughtJavaException { name, msg, .. }) => {
                Error::new(ErrorKind::Io, format!("{} failed: {name}: {msg}", self.description))
            }
            Failure::Jni(e) => Error::new(ErrorKind::Internal, format!("{} could not be called: {e}", self.description)),
        })
    }

    fn describe(&self) -> String {
        self.description.clone()
    }
}

// ---------------------------------------------------------------------------------------
// Exports: io.s3native.Native

/// `static native long open(String bucket, String key, String mode, String[] settings, long credentials)`;
/// `mode`: [`Mode`]'s name, `PUBLISH`, `DEFERRED` or `CREATE_IF_ABSENT`; `credentials`: a handle from
/// `credentialSource`, or 0 for the settings' keys.
#[no_mangle]
pub extern "system" fn Java_io_s3native_Native_open<'local>(
    unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    bucket: JString<'local>,
    key: JString<'local>,
    mode: JString<'local>,
    kv: JObjectArray<'local, JString<'local>>,
    credentials: jlong,
) -> jlong {
    call(unowned, |env| {
        let bucket = string(env, &bucket, "bucket")?;
        let key = string(env, &key, "key")?;
        let mode: Mode = by_name(env, &mode, "mode")?;
        let settings = with_credentials(settings(env, &kv)?, credentials);
        // Look the interrupt probe up now, outside any blocking call.
        probe(env.get_raw());
        Ok(into_handle(Writer::open(&bucket, &key, mode, &settings)?))
    })
}

/// `static native long openMagic(String bucket, String magicKey, String uri, String layout, String etags, String[] settings, long credentials)`:
/// a writer for a file under an S3A magic path ([`Writer::open_magic`]). `layout` is
/// [`MagicLayout`]'s name (`MAGIC`, `MAGIC_JOB`), `etags` [`PendingEtags`]'s (`UNQUOTED`,
/// `QUOTED`, `OBJECTS`). A key that is not magic under `layout` is an invalid argument.
#[no_mangle]
pub extern "system" fn Java_io_s3native_Native_openMagic<'local>(
    unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    bucket: JString<'local>,
    magic_key: JString<'local>,
    uri: JString<'local>,
    layout: JString<'local>,
    etags: JString<'local>,
    kv: JObjectArray<'local, JString<'local>>,
    credentials: jlong,
) -> jlong {
    call(unowned, |env| {
        let bucket = string(env, &bucket, "bucket")?;
        let magic_key = string(env, &magic_key, "magic key")?;
        let uri = string(env, &uri, "uri")?;
        let layout: MagicLayout = by_name(env, &layout, "magic layout")?;
        let etags: PendingEtags = by_name(env, &etags, ".pending etags form")?;
        let settings = with_credentials(settings(env, &kv)?, credentials);
        let file = MagicFile::for_key(&magic_key, layout, etags)?
            .ok_or_else(|| Error::invalid_argument(format!("'{magic_key}' is not a magic path under {layout:?}")))?;
        probe(env.get_raw());
        Ok(into_handle(Writer::open_magic(&bucket, &file, &uri, &settings)?))
    })
}

/// `static native void write(long handle, byte[] b, int off, int len)`: one copy, straight
/// from the Java array into the part buffer.
#[no_mangle]
pub extern "system" fn Java_io_s3native_Native_write<'local>(
    unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    h: jlong,
    array: JByteArray<'local>,
    off: jint,
    len: jint,
) {
    call(unowned, |env| {
        let w = handle(h)?;
        if array.is_null() {
            return Err(Error::invalid_argument("the byte array is null").into());
        }
        let (off, len) = check_range(off, len, array.len(env)?)?;
        let raw_env = env.get_raw();
        let raw_array = array.as_raw();
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
}

/// `static native void writeDirect(long handle, ByteBuffer direct, int position, int len)`
#[no_mangle]
pub extern "system" fn Java_io_s3native_Native_writeDirect<'local>(
    unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    h: jlong,
    buffer: JByteBuffer<'local>,
    position: jint,
    len: jint,
) {
    call(unowned, |env| {
        let w = handle(h)?;
        if buffer.is_null() {
            return Err(Error::invalid_argument("the ByteBuffer is null").into());
        }
        let addr = env.get_direct_buffer_address(&buffer).map_err(|_| Error::invalid_argument("the ByteBuffer is not direct"))?;
        let capacity = env.get_direct_buffer_capacity(&buffer)?;
        let (off, len) = check_range(position, len, capacity)?;
        // SAFETY: the buffer (a local reference of this call) keeps `capacity` bytes at
        // `addr` alive for the whole call; the range is inside it (an empty range reads
        // nothing).
        let src = if len == 0 { &[][..] } else { unsafe { std::slice::from_raw_parts(addr.add(off) as *const u8, len) } };
        let raw_env = env.get_raw();
        w.write_with(len, &|| java_thread_interrupted(raw_env), &mut |from, dst: &mut [MaybeUninit<u8>]| {
            let part = &src[from..from + dst.len()];
            // SAFETY: MaybeUninit<u8> has u8's layout; equal lengths; no overlap.
            unsafe { ptr::copy_nonoverlapping(part.as_ptr(), dst.as_mut_ptr() as *mut u8, part.len()) };
            Ok(())
        })?;
        Ok(())
    })
}

/// `static native String close(long handle)`: the UploadResult as JSON (a second close
/// returns the same result).
#[no_mangle]
pub extern "system" fn Java_io_s3native_Native_close<'local>(
    unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    h: jlong,
) -> JObject<'local> {
    call(unowned, |env| {
        let raw_env = env.get_raw();
        let result = handle(h)?.close_with(&|| java_thread_interrupted(raw_env))?;
        new_string(env, &result.to_json())
    })
}

/// `static native void abort(long handle)`: [`SharedWriter::abort`], at once, also while
/// another thread is blocked in a write or close of the same writer.
#[no_mangle]
pub extern "system" fn Java_io_s3native_Native_abort<'local>(unowned: EnvUnowned<'local>, _class: JClass<'local>, h: jlong) {
    call(unowned, |_env| Ok(handle(h)?.abort()?))
}

/// `static native void checkOpen(long handle)`: [`SharedWriter::check_open`].
#[no_mangle]
pub extern "system" fn Java_io_s3native_Native_checkOpen<'local>(unowned: EnvUnowned<'local>, _class: JClass<'local>, h: jlong) {
    call(unowned, |_env| Ok(handle(h)?.check_open()?))
}

/// `static native String state(long handle)`: [`WriterState`](crate::WriterState)'s name
/// (`OPEN`, `COMPLETING`, `ABORTED`, `FAILED`, `CLOSED`).
#[no_mangle]
pub extern "system" fn Java_io_s3native_Native_state<'local>(
    unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    h: jlong,
) -> JObject<'local> {
    call(unowned, |env| {
        let state = handle(h)?.state();
        to_java(env, &state)
    })
}

/// `static native void free(long handle)`: drop the writer (which aborts an upload that is
/// still open, never completes it). Called exactly once per handle.
#[no_mangle]
pub extern "system" fn Java_io_s3native_Native_free<'local>(unowned: EnvUnowned<'local>, _class: JClass<'local>, h: jlong) {
    call(unowned, |_env| {
        if h != 0 {
            // SAFETY: `h` came from `open` and the Java side frees it once, unused.
            drop(unsafe { Box::from_raw(h as *mut SharedWriter) });
        }
        Ok(())
    })
}

/// `static native Map<String, Object> statistics(long handle)`: the writer's
/// [`Statistics`](crate::Statistics) by name.
#[no_mangle]
pub extern "system" fn Java_io_s3native_Native_statistics<'local>(
    unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    h: jlong,
) -> JObject<'local> {
    call(unowned, |env| {
        let stats = handle(h)?.statistics();
        to_java(env, &stats)
    })
}

/// `static native Map<String, Object> s3aStatistics(long handle, String resultJson, boolean magic, long hflush, long hsync, boolean aborted)`:
/// a stream's statistics in S3A's names ([`crate::s3a_stats::stream_iostatistics`], Hadoop's
/// IOStatisticsSnapshot form by name), from the closed result `resultJson` when not null, else
/// from the open writer `handle`.
#[no_mangle]
pub extern "system" fn Java_io_s3native_Native_s3aStatistics<'local>(
    unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    h: jlong,
    result_json: JString<'local>,
    magic: jboolean,
    hflush: jlong,
    hsync: jlong,
    aborted: jboolean,
) -> JObject<'local> {
    call(unowned, |env| {
        let stats = if result_json.is_null() { handle(h)?.statistics() } else { parse_result(env, &result_json)?.statistics };
        let facts = crate::s3a_stats::StreamFacts {
            magic,
            hflush: u64::try_from(hflush).unwrap_or(0),
            hsync: u64::try_from(hsync).unwrap_or(0),
            aborted,
        };
        to_java(env, &crate::s3a_stats::stream_iostatistics(&stats, facts))
    })
}

/// `static native Map<String, Object> globalStatistics()`: [`crate::global_statistics`] by name.
#[no_mangle]
pub extern "system" fn Java_io_s3native_Native_globalStatistics<'local>(
    unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
) -> JObject<'local> {
    call(unowned, |env| to_java(env, &crate::global_statistics()))
}

/// `static native void complete(String resultJson, String[] settings, long credentials)`
#[no_mangle]
pub extern "system" fn Java_io_s3native_Native_complete<'local>(
    unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    json: JString<'local>,
    kv: JObjectArray<'local, JString<'local>>,
    credentials: jlong,
) {
    call(unowned, |env| {
        let result = parse_result(env, &json)?;
        let settings = with_credentials(settings(env, &kv)?, credentials);
        Ok(crate::complete(&result, &settings)?)
    })
}

/// `static native void abortUpload(String resultJson, String[] settings, long credentials)`
#[no_mangle]
pub extern "system" fn Java_io_s3native_Native_abortUpload<'local>(
    unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    json: JString<'local>,
    kv: JObjectArray<'local, JString<'local>>,
    credentials: jlong,
) {
    call(unowned, |env| {
        let result = parse_result(env, &json)?;
        let settings = with_credentials(settings(env, &kv)?, credentials);
        Ok(crate::abort(&result, &settings)?)
    })
}

/// `static native int abortOpenUploads()`
#[no_mangle]
pub extern "system" fn Java_io_s3native_Native_abortOpenUploads<'local>(
    unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
) -> jint {
    call(unowned, |_env| Ok(crate::abort_open_uploads().min(jint::MAX as usize) as jint))
}

/// `static native Map<String, Object> parseResult(String json)`: the
/// [`UploadResult`]'s fields by name (statistics nested).
#[no_mangle]
pub extern "system" fn Java_io_s3native_Native_parseResult<'local>(
    unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    json: JString<'local>,
) -> JObject<'local> {
    call(unowned, |env| {
        let r = parse_result(env, &json)?;
        to_java(env, &r)
    })
}

/// `static native Map<String, Object> validate(String bucket, String[] settings)`: [`crate::validate`]'s
/// [`crate::Validation`] by name (`warnings`, a list; `effective`, a map).
#[no_mangle]
pub extern "system" fn Java_io_s3native_Native_validate<'local>(
    unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    bucket: JString<'local>,
    kv: JObjectArray<'local, JString<'local>>,
) -> JObject<'local> {
    call(unowned, |env| {
        let bucket = string(env, &bucket, "bucket")?;
        let settings = settings(env, &kv)?;
        let validation = crate::validate(&bucket, &settings)?;
        to_java(env, &validation)
    })
}

/// `static native long credentialSource(CredentialsProvider provider, String description)`: a
/// [`SharedCredentials`] over the Java provider (see [`JavaCredentials`]); writers opened
/// with the same handle share one client. Free with `freeCredentialSource`.
#[no_mangle]
pub extern "system" fn Java_io_s3native_Native_credentialSource<'local>(
    unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    provider: JObject<'local>,
    description: JString<'local>,
) -> jlong {
    call(unowned, |env| {
        if provider.is_null() {
            return Err(Error::invalid_argument("the credentials provider is null").into());
        }
        let description = string(env, &description, "description")?;
        let source = JavaCredentials { vm: env.get_java_vm()?, provider: env.new_global_ref(&provider)?, description };
        Ok(Box::into_raw(Box::new(SharedCredentials::new(source))) as jlong)
    })
}

/// `static native void freeCredentialSource(long handle)`: drop this handle's share (writers
/// and clients still using the source keep it). Called once per handle.
#[no_mangle]
pub extern "system" fn Java_io_s3native_Native_freeCredentialSource<'local>(unowned: EnvUnowned<'local>, _class: JClass<'local>, h: jlong) {
    call(unowned, |_env| {
        if h != 0 {
            // SAFETY: `h` came from credentialSource and the Java side frees it once.
            drop(unsafe { Box::from_raw(h as *mut SharedCredentials) });
        }
        Ok(())
    })
}

/// `static native String version()`: the crate version, checked against the jar's.
#[no_mangle]
pub extern "system" fn Java_io_s3native_Native_version<'local>(
    unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
) -> JObject<'local> {
    call(unowned, |env| new_string(env, env!("CARGO_PKG_VERSION")))
}

/// Test and benchmark hooks (feature `test-hooks`): not in release builds, and declared only
/// by the test sources' `io.s3native.NativeHooks`, not by the jar.
#[cfg(feature = "test-hooks")]
mod hooks {
    use super::*;

    /// `static native long benchRustUpload(String bucket, String key, String[] settings, long
    /// total, int chunk)`: the baseline of the JMH throughput benchmark. Uploads `total` bytes
    /// through the Rust API alone (`Writer::write` of a `chunk`-byte Rust buffer, no JNI per
    /// write) and returns the object's length.
    #[no_mangle]
    pub extern "system" fn Java_io_s3native_NativeHooks_benchRustUpload<'local>(
        unowned: EnvUnowned<'local>,
        _class: JClass<'local>,
        bucket: JString<'local>,
        key: JString<'local>,
        kv: JObjectArray<'local, JString<'local>>,
        total: jlong,
        chunk: jint,
    ) -> jlong {
        call(unowned, |env| {
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
    }

    /// `static native void panicForTest()`: proves that a panic becomes a Java exception.
    #[no_mangle]
    pub extern "system" fn Java_io_s3native_NativeHooks_panicForTest<'local>(unowned: EnvUnowned<'local>, _class: JClass<'local>) {
        call(unowned, |_env| -> Result<()> {
            let n = std::hint::black_box(1);
            panic!("deliberate panic {n} for the JNI panic test");
        })
    }
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
}
