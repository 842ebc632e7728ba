//! The JVM boundary of the object operations ([`Objects`], [`Listing`]): the `objects*`
//! methods of `io.s3native.Native`, used by `io.s3native.S3NativeObjects`.
//!
//! A submodule of [`crate::jni`], with its rules: arguments checked here, errors and panics
//! turned into the exceptions `Native.exception` builds (through `call`), blocking calls
//! interruptible from the calling Java thread, no logic the Rust API lacks.
//!
//! Handles: `objectsOpen` returns a `Box<Objects>` as a `jlong`, `objectsList` a
//! `Box<Mutex<Listing>>`; the Java side (`NativeHandle`) frees each exactly once
//! (`objectsFree`, `listingFree`), never while another call uses it. Objects and listings
//! cross by name: [`ObjectInfo`] and [`DeleteOutcome`] as maps of their field names.

use std::sync::Mutex;

use ::jni::objects::{JClass, JObject, JObjectArray, JString};
use ::jni::sys::jlong;
use ::jni::{Env, EnvUnowned};

use super::{call, java_thread_interrupted, probe, settings, string, to_java, with_credentials, Failure, Result};
use crate::{Error, ErrorKind, Listing, Objects};

fn objects<'a>(h: jlong) -> Result<&'a Objects> {
    if h == 0 {
        return Err(Error::state("the object operations are closed").into());
    }
    // SAFETY: the Java side passes only live handles from objectsOpen (see the module doc).
    Ok(unsafe { &*(h as *const Objects) })
}

fn listing<'a>(h: jlong) -> Result<&'a Mutex<Listing>> {
    if h == 0 {
        return Err(Error::state("the listing is closed").into());
    }
    // SAFETY: the Java side passes only live handles from objectsList (see the module doc).
    Ok(unsafe { &*(h as *const Mutex<Listing>) })
}

/// Looks the interrupt probe up (outside any blocking call) and returns the raw env.
fn probe_env(env: &Env<'_>) -> *mut ::jni::sys::JNIEnv {
    let raw = env.get_raw();
    probe(raw);
    raw
}

fn poisoned() -> Failure {
    Error::new(ErrorKind::Internal, "a listing call panicked earlier").into()
}

/// `static native long objectsOpen(String bucket, String[] settings, long credentials)`: [`Objects::open`].
#[no_mangle]
pub extern "system" fn Java_io_s3native_Native_objectsOpen<'local>(
    unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    bucket: JString<'local>,
    kv: JObjectArray<'local, JString<'local>>,
    credentials: jlong,
) -> jlong {
    call(unowned, |env| {
        let bucket = string(env, &bucket, "bucket")?;
        let settings = with_credentials(settings(env, &kv)?, credentials);
        probe(env.get_raw());
        Ok(Box::into_raw(Box::new(Objects::open(&bucket, &settings)?)) as jlong)
    })
}

/// `static native Map<String, Object> objectsHead(long handle, String key)`: [`Objects::head`]
/// by name (`name`, `size`, `etag`), null when there is no object.
#[no_mangle]
pub extern "system" fn Java_io_s3native_Native_objectsHead<'local>(
    unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    h: jlong,
    key: JString<'local>,
) -> JObject<'local> {
    call(unowned, |env| {
        let o = objects(h)?;
        let key = string(env, &key, "key")?;
        let raw_env = probe_env(env);
        match o.head(&key, &|| java_thread_interrupted(raw_env))? {
            Some(info) => to_java(env, &info),
            None => Ok(JObject::null()),
        }
    })
}

/// `static native void objectsDelete(long handle, String key)`: [`Objects::delete`].
#[no_mangle]
pub extern "system" fn Java_io_s3native_Native_objectsDelete<'local>(
    unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    h: jlong,
    key: JString<'local>,
) {
    call(unowned, |env| {
        let o = objects(h)?;
        let key = string(env, &key, "key")?;
        let raw_env = probe_env(env);
        Ok(o.delete(&key, &|| java_thread_interrupted(raw_env))?)
    })
}

/// `static native Map<String, Object> objectsDeleteMany(long handle, String[] keys)`:
/// [`Objects::delete_many`]; keys that failed throw ([`crate::DeleteOutcome::into_result`]:
/// the message names them and their S3 codes), else the outcome by name.
#[no_mangle]
pub extern "system" fn Java_io_s3native_Native_objectsDeleteMany<'local>(
    unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    h: jlong,
    keys: JObjectArray<'local, JString<'local>>,
) -> JObject<'local> {
    call(unowned, |env| {
        let o = objects(h)?;
        if keys.is_null() {
            return Err(Error::invalid_argument("the keys are null").into());
        }
        let n = keys.len(env)?;
        let mut names = Vec::with_capacity(n);
        for i in 0..n {
            let k = keys.get_element(env, i)?;
            names.push(string(env, &k, &format!("key {i}"))?);
            env.delete_local_ref(k);
        }
        let raw_env = probe_env(env);
        let outcome = o.delete_many(&names, &|| java_thread_interrupted(raw_env))?.into_result()?;
        to_java(env, &outcome)
    })
}

/// `static native Map<String, Object> objectsDeleteRecursively(long handle, String dir)`:
/// [`Objects::delete_recursively`], failed keys thrown as for `objectsDeleteMany`.
#[no_mangle]
pub extern "system" fn Java_io_s3native_Native_objectsDeleteRecursively<'local>(
    unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    h: jlong,
    dir: JString<'local>,
) -> JObject<'local> {
    call(unowned, |env| {
        let o = objects(h)?;
        let dir = string(env, &dir, "directory")?;
        let raw_env = probe_env(env);
        let outcome = o.delete_recursively(&dir, &|| java_thread_interrupted(raw_env))?.into_result()?;
        to_java(env, &outcome)
    })
}

/// `static native long objectsList(long handle, String dir)`: [`Objects::list`] (no request yet).
#[no_mangle]
pub extern "system" fn Java_io_s3native_Native_objectsList<'local>(
    unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    h: jlong,
    dir: JString<'local>,
) -> jlong {
    call(unowned, |env| {
        let o = objects(h)?;
        let dir = string(env, &dir, "directory")?;
        Ok(Box::into_raw(Box::new(Mutex::new(o.list(&dir)?))) as jlong)
    })
}

/// `static native List<Map<String, Object>> listingNext(long listing)`: [`Listing::next_page`]
/// by name; null when the listing is done.
#[no_mangle]
pub extern "system" fn Java_io_s3native_Native_listingNext<'local>(
    unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    l: jlong,
) -> JObject<'local> {
    call(unowned, |env| {
        let l = listing(l)?;
        let raw_env = probe_env(env);
        let page = l.lock().map_err(|_| poisoned())?.next_page(&|| java_thread_interrupted(raw_env))?;
        match page {
            Some(page) => to_java(env, &page),
            None => Ok(JObject::null()),
        }
    })
}

/// `static native void listingFree(long listing)`: called once per handle.
#[no_mangle]
pub extern "system" fn Java_io_s3native_Native_listingFree<'local>(unowned: EnvUnowned<'local>, _class: JClass<'local>, l: jlong) {
    call(unowned, |_env| {
        if l != 0 {
            // SAFETY: `l` came from objectsList and the Java side frees it once, unused.
            drop(unsafe { Box::from_raw(l as *mut Mutex<Listing>) });
        }
        Ok(())
    })
}

/// `static native Map<String, Object> objectsStatistics(long handle)`: [`Objects::statistics`] by name.
#[no_mangle]
pub extern "system" fn Java_io_s3native_Native_objectsStatistics<'local>(
    unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    h: jlong,
) -> JObject<'local> {
    call(unowned, |env| {
        let stats = objects(h)?.statistics();
        to_java(env, &stats)
    })
}

/// `static native void objectsFree(long handle)`: called once per handle (its listings stay usable).
#[no_mangle]
pub extern "system" fn Java_io_s3native_Native_objectsFree<'local>(unowned: EnvUnowned<'local>, _class: JClass<'local>, h: jlong) {
    call(unowned, |_env| {
        if h != 0 {
            // SAFETY: `h` came from objectsOpen and the Java side frees it once, unused.
            drop(unsafe { Box::from_raw(h as *mut Objects) });
        }
        Ok(())
    })
}
