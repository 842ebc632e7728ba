//! The JVM boundary of the reader: the reader methods of `io.s3native.Native`
//! (`S3NativeInputStream` and, through it, `NativeS3AInputStream`).
//!
//! A submodule of [`crate::jni`], with its rules: arguments checked here, errors and panics
//! turned into the exceptions `Native.exception` builds (through `call`), blocking calls
//! interruptible from the calling Java thread, no logic the Rust API ([`Reader`],
//! [`VectoredRead`]) lacks.
//!
//! Handles: `openReader` returns a `Box<JniReader>` as a `jlong`, `readRanges` a
//! `Box<JniVectored>`; the Java side (`NativeHandle`) frees each exactly once
//! (`freeReader`, `freeVectored`), never while another call uses it, and keeps the reader
//! alive while a vectored read of it is open.
//!
//! Threads: stream reads and `unbuffer` take the reader exclusively ([`Reader::read`] and
//! [`Reader::unbuffer`] take `&mut self`); positioned and vectored reads share it, so preads
//! from several threads run at once. Statistics and `stopVectored` go through the reader's
//! [`ReaderControls`], outside that lock: they never wait for a read in progress, and a stop
//! always lands.
//!
//! Copies: one per byte. A direct `ByteBuffer` is filled by the reader itself (no Java-side
//! copy); a `byte[]` by `SetByteArrayRegion` straight from the reader's buffers
//! ([`Reader::read_to`]'s sink), with no native buffer between (a Java array is not pinned
//! across the blocking network wait: each region is copied once its bytes are in). The
//! test hook `NativeHooks.readCopiedBytes` (feature `test-hooks`) counts the copies.

use std::ops::Range;
use std::sync::{Mutex, RwLock};

use ::jni::objects::{JByteArray, JByteBuffer, JClass, JIntArray, JLongArray, JObject, JObjectArray, JString};
use ::jni::sys::{jbyte, jint, jlong, jsize};
use ::jni::{jni_sig, jni_str, Env, EnvUnowned};

use super::{call, check_range, java_thread_interrupted, probe, settings, string, to_java, with_credentials, Failure, Result};
use crate::{Error, ErrorKind, ReadOptions, Reader, ReaderControls, VectoredRead};

/// A reader behind a handle: exclusive for stream reads, shared for positioned and vectored
/// reads; its controls (statistics, stopping vectored reads) outside the lock.
struct JniReader {
    reader: RwLock<Reader>,
    controls: ReaderControls,
}

/// A vectored read behind a handle.
struct JniVectored {
    ranges: Mutex<VectoredRead>,
}

fn reader<'a>(h: jlong) -> Result<&'a JniReader> {
    if h == 0 {
        return Err(Error::state("the stream is closed").into());
    }
    // SAFETY: the Java side passes only live handles from openReader (see the module doc).
    Ok(unsafe { &*(h as *const JniReader) })
}

fn poisoned() -> Failure {
    Error::new(ErrorKind::Internal, "a read panicked earlier on this stream").into()
}

fn position(p: jlong) -> Result<u64> {
    u64::try_from(p).map_err(|_| Error::invalid_argument(format!("negative position {p}")).into())
}

/// A stream read (`pread` false) or a positioned read of `len` bytes at `pos` into the byte
/// array at `off`; -1 at or past the end.
fn read_array(env: &mut Env<'_>, h: jlong, pos: jlong, array: &JByteArray<'_>, off: jint, len: jint, pread: bool) -> Result<jint> {
    let r = reader(h)?;
    let pos = position(pos)?;
    if array.is_null() {
        return Err(Error::invalid_argument("the byte array is null").into());
    }
    let (off, len) = check_range(off, len, array.len(env)?)?;
    if len == 0 {
        return Ok(0);
    }
    let raw_env = env.get_raw();
    let interrupted = || java_thread_interrupted(raw_env);
    let raw_array = array.as_raw();
    // Each slice of the reader's buffers straight into the array's region.
    let mut sink = |at: usize, bytes: &[u8]| -> crate::Result<()> {
        // SAFETY: the reader hands at most `len` bytes in all, at offsets from 0, so
        // off + at + bytes.len() <= off + len, inside the array (checked above).
        let threw = unsafe {
            raw!(raw_env, v1_1, SetByteArrayRegion, raw_array, (off + at) as jsize, bytes.len() as jsize, bytes.as_ptr() as *const jbyte);
            raw!(raw_env, v1_2, ExceptionCheck)
        };
        if threw {
            return Err(Error::new(ErrorKind::Internal, "SetByteArrayRegion threw"));
        }
        crate::reader::count_copy(bytes.len());
        Ok(())
    };
    let n = if pread {
        r.reader.read().map_err(|_| poisoned())?.read_at_to(pos, len, &mut sink, &interrupted)?
    } else {
        r.reader.write().map_err(|_| poisoned())?.read_to(pos, len, &mut sink, &interrupted)?
    };
    Ok(if n == 0 { -1 } else { n as jint })
}

/// A stream or positioned read straight into a direct buffer's memory at `at`.
fn read_direct(env: &mut Env<'_>, h: jlong, pos: jlong, buffer: &JByteBuffer<'_>, at: jint, len: jint, pread: bool) -> Result<jint> {
    let r = reader(h)?;
    let pos = position(pos)?;
    if buffer.is_null() {
        return Err(Error::invalid_argument("the ByteBuffer is null").into());
    }
    let addr = env.get_direct_buffer_address(buffer).map_err(|_| Error::invalid_argument("the ByteBuffer is not direct"))?;
    let capacity = env.get_direct_buffer_capacity(buffer)?;
    let (off, len) = check_range(at, len, capacity)?;
    if len == 0 {
        return Ok(0);
    }
    // SAFETY: the buffer (a local reference of this call) keeps `capacity` bytes at `addr`
    // alive for the whole call; the range is inside it; Java does not touch it meanwhile
    // (the stream's calls on it are serialised by the caller).
    let dst = unsafe { std::slice::from_raw_parts_mut(addr.add(off), len) };
    let raw_env = env.get_raw();
    let interrupted = || java_thread_interrupted(raw_env);
    let n = if pread {
        r.reader.read().map_err(|_| poisoned())?.read_at_with(pos, dst, &interrupted)?
    } else {
        r.reader.write().map_err(|_| poisoned())?.read_with(pos, dst, &interrupted)?
    };
    Ok(if n == 0 { -1 } else { n as jint })
}

/// Copy `bytes` into `buffer` from its position (heap or direct; the position is not moved).
fn deliver(env: &mut Env<'_>, buffer: &JObject<'_>, index: usize, bytes: &[u8]) -> Result<()> {
    if buffer.is_null() {
        return Err(Error::invalid_argument(format!("the buffer of range {index} is null")).into());
    }
    let pos = env.call_method(buffer, jni_str!("position"), jni_sig!("()I"), &[])?.i()? as usize;
    let remaining = env.call_method(buffer, jni_str!("remaining"), jni_sig!("()I"), &[])?.i()? as usize;
    if remaining < bytes.len() {
        return Err(Error::invalid_argument(format!(
            "the buffer of range {index} has room for {remaining} bytes, the range has {}",
            bytes.len()
        ))
        .into());
    }
    let direct = env.call_method(buffer, jni_str!("isDirect"), jni_sig!("()Z"), &[])?.z()?;
    if direct {
        // SAFETY: a live local reference to a direct java.nio.ByteBuffer.
        let addr = unsafe { raw!(env.get_raw(), v1_4, GetDirectBufferAddress, buffer.as_raw()) } as *mut u8;
        if addr.is_null() {
            return Err(Error::invalid_argument(format!("the direct buffer of range {index} has no address")).into());
        }
        // SAFETY: pos + bytes.len() <= limit <= capacity (checked through remaining()).
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), addr.add(pos), bytes.len()) };
        crate::reader::count_copy(bytes.len());
        return Ok(());
    }
    // A heap buffer: its array (a read-only buffer throws ReadOnlyBufferException here).
    let array = env.call_method(buffer, jni_str!("array"), jni_sig!("()[B"), &[])?.l()?;
    let base = env.call_method(buffer, jni_str!("arrayOffset"), jni_sig!("()I"), &[])?.i()? as usize;
    if !bytes.is_empty() {
        // SAFETY: arrayOffset + position + len <= arrayOffset + limit, inside the array.
        unsafe {
            let raw_env = env.get_raw();
            raw!(raw_env, v1_1, SetByteArrayRegion, array.as_raw(), (base + pos) as jsize, bytes.len() as jsize, bytes.as_ptr() as *const jbyte);
            if raw!(raw_env, v1_2, ExceptionCheck) {
                return Err(Failure::Jni(::jni::errors::Error::JavaException));
            }
        }
        crate::reader::count_copy(bytes.len());
    }
    env.delete_local_ref(array);
    Ok(())
}

/// `static native long openReader(String bucket, String key, String[] settings, long credentials, String options)`:
/// [`Reader::open`]. `options`: [`ReadOptions`] as JSON by name (`policy`: a serde name or
/// a Hadoop read-policy list; `length`, `etag`, `split_end`; every field optional, null:
/// none); without length and ETag one HEAD at open. A missing object throws
/// `FileNotFoundException` naming the key.
#[no_mangle]
pub extern "system" fn Java_io_s3native_Native_openReader<'local>(
    unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    bucket: JString<'local>,
    key: JString<'local>,
    kv: JObjectArray<'local, JString<'local>>,
    credentials: jlong,
    options: JString<'local>,
) -> jlong {
    call(unowned, |env| {
        let bucket = string(env, &bucket, "bucket")?;
        let key = string(env, &key, "key")?;
        let settings = with_credentials(settings(env, &kv)?, credentials);
        let options: ReadOptions = if options.is_null() {
            ReadOptions::default()
        } else {
            let json = string(env, &options, "read options")?;
            serde_json::from_str(&json).map_err(|e| Error::invalid_argument(format!("read options {json}: {e}")))?
        };
        let raw_env = probe_env(env);
        let reader = Reader::open_with(&bucket, &key, &settings, options, &|| java_thread_interrupted(raw_env))?;
        let controls = reader.controls();
        Ok(Box::into_raw(Box::new(JniReader { reader: RwLock::new(reader), controls })) as jlong)
    })
}

/// Looks the interrupt probe up (outside any blocking call) and returns the raw env.
fn probe_env(env: &Env<'_>) -> *mut ::jni::sys::JNIEnv {
    let raw = env.get_raw();
    probe(raw);
    raw
}

/// `static native long readerLength(long handle)`
#[no_mangle]
pub extern "system" fn Java_io_s3native_Native_readerLength<'local>(unowned: EnvUnowned<'local>, _class: JClass<'local>, h: jlong) -> jlong {
    call(unowned, |_env| {
        let len = reader(h)?.reader.read().map_err(|_| poisoned())?.length();
        Ok(len.min(i64::MAX as u64) as jlong)
    })
}

/// `static native String readerEtag(long handle)`
#[no_mangle]
pub extern "system" fn Java_io_s3native_Native_readerEtag<'local>(
    unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    h: jlong,
) -> JObject<'local> {
    call(unowned, |env| {
        let etag = reader(h)?.reader.read().map_err(|_| poisoned())?.etag().to_string();
        Ok(JString::from_str(env, &etag)?.into())
    })
}

/// `static native int read(long handle, long position, byte[] b, int off, int len)`: [`Reader::read`].
#[no_mangle]
pub extern "system" fn Java_io_s3native_Native_read<'local>(
    unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    h: jlong,
    pos: jlong,
    array: JByteArray<'local>,
    off: jint,
    len: jint,
) -> jint {
    call(unowned, |env| read_array(env, h, pos, &array, off, len, false))
}

/// `static native int readDirect(long handle, long position, ByteBuffer direct, int bufferPosition, int len)`
#[no_mangle]
pub extern "system" fn Java_io_s3native_Native_readDirect<'local>(
    unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    h: jlong,
    pos: jlong,
    buffer: JByteBuffer<'local>,
    at: jint,
    len: jint,
) -> jint {
    call(unowned, |env| read_direct(env, h, pos, &buffer, at, len, false))
}

/// `static native int readAt(long handle, long position, byte[] b, int off, int len)`: [`Reader::read_at`].
#[no_mangle]
pub extern "system" fn Java_io_s3native_Native_readAt<'local>(
    unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    h: jlong,
    pos: jlong,
    array: JByteArray<'local>,
    off: jint,
    len: jint,
) -> jint {
    call(unowned, |env| read_array(env, h, pos, &array, off, len, true))
}

/// `static native int readAtDirect(long handle, long position, ByteBuffer direct, int bufferPosition, int len)`
#[no_mangle]
pub extern "system" fn Java_io_s3native_Native_readAtDirect<'local>(
    unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    h: jlong,
    pos: jlong,
    buffer: JByteBuffer<'local>,
    at: jint,
    len: jint,
) -> jint {
    call(unowned, |env| read_direct(env, h, pos, &buffer, at, len, true))
}

/// `static native long readRanges(long handle, long[] offsets, int[] lengths)`:
/// [`Reader::read_ranges`] of the ranges `offsets[i] .. offsets[i] + lengths[i]`, `i` in the
/// caller's order (the index each range is delivered with).
#[no_mangle]
pub extern "system" fn Java_io_s3native_Native_readRanges<'local>(
    unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    h: jlong,
    offsets: JLongArray<'local>,
    lengths: JIntArray<'local>,
) -> jlong {
    call(unowned, |env| {
        let r = reader(h)?;
        if offsets.is_null() || lengths.is_null() {
            return Err(Error::invalid_argument("the range offsets or lengths are null").into());
        }
        let n = offsets.len(env)?;
        if lengths.len(env)? != n {
            return Err(Error::invalid_argument(format!("{n} range offsets but {} lengths", lengths.len(env)?)).into());
        }
        let mut offs = vec![0i64; n];
        let mut lens = vec![0i32; n];
        offsets.get_region(env, 0, &mut offs)?;
        lengths.get_region(env, 0, &mut lens)?;
        let ranges = offs
            .iter()
            .zip(&lens)
            .enumerate()
            .map(|(i, (&o, &l))| {
                let (Ok(o), Ok(l)) = (u64::try_from(o), u64::try_from(l)) else {
                    return Err(Error::invalid_argument(format!("range {i} has a negative offset or length ({o}, {l})")));
                };
                Ok(o..o.saturating_add(l))
            })
            .collect::<std::result::Result<Vec<Range<u64>>, Error>>()?;
        // Interruptible: a Java interrupt ends a wait for the budget (nothing is left running).
        let raw_env = probe_env(env);
        let v = r.reader.read().map_err(|_| poisoned())?.read_ranges_with(&ranges, &|| java_thread_interrupted(raw_env))?;
        Ok(Box::into_raw(Box::new(JniVectored { ranges: Mutex::new(v) })) as jlong)
    })
}

/// `static native int vectoredNext(long vectored, ByteBuffer[] buffers, int[] failed)`: waits
/// for the next range ([`VectoredRead::next_range_with`]), copies it into `buffers[index]`
/// from its position, returns `index`; -1 when every range was delivered. A failure throws,
/// with `failed[0]` the index of the range that failed alone (the others are still
/// delivered by later calls), or -1 when the whole read failed.
#[no_mangle]
pub extern "system" fn Java_io_s3native_Native_vectoredNext<'local>(
    unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    v: jlong,
    buffers: JObjectArray<'local, JObject<'local>>,
    failed: JIntArray<'local>,
) -> jint {
    call(unowned, |env| {
        if v == 0 {
            return Err(Error::state("the vectored read is closed").into());
        }
        // SAFETY: a live handle from readRanges (see the module doc).
        let vectored = unsafe { &*(v as *const JniVectored) };
        if buffers.is_null() || failed.is_null() || failed.len(env)? < 1 {
            return Err(Error::invalid_argument("the buffers are null, or the failed index has no room").into());
        }
        let raw_env = probe_env(env);
        let next = vectored.ranges.lock().map_err(|_| poisoned())?.next_range_with(&|| java_thread_interrupted(raw_env));
        let index = match &next {
            Some(Err(e)) => e.range.and_then(|i| jint::try_from(i).ok()).unwrap_or(-1),
            _ => -1,
        };
        failed.set_region(env, 0, &[index])?;
        match next {
            None => Ok(-1),
            Some(Err(e)) => Err(e.error.into()),
            Some(Ok((index, bytes))) => {
                let count = buffers.len(env)?;
                if index >= count {
                    return Err(Error::invalid_argument(format!("range {index} delivered but only {count} buffers given")).into());
                }
                let buffer = buffers.get_element(env, index)?;
                deliver(env, &buffer, index, &bytes)?;
                env.delete_local_ref(buffer);
                Ok(index as jint)
            }
        }
    })
}

/// `static native void freeVectored(long vectored)`: drops the vectored read (GETs not yet
/// done are cancelled). Called once per handle.
#[no_mangle]
pub extern "system" fn Java_io_s3native_Native_freeVectored<'local>(unowned: EnvUnowned<'local>, _class: JClass<'local>, v: jlong) {
    call(unowned, |_env| {
        if v != 0 {
            // SAFETY: `v` came from readRanges and the Java side frees it once, unused.
            drop(unsafe { Box::from_raw(v as *mut JniVectored) });
        }
        Ok(())
    })
}

/// `static native int stopVectored(long handle)`: [`Reader::stop_vectored`] at close (the
/// reader itself lives on until its vectored reads are freed); returns how many it stopped.
/// Never waits for a read in progress on another thread ([`ReaderControls`]), and always stops.
#[no_mangle]
pub extern "system" fn Java_io_s3native_Native_stopVectored<'local>(unowned: EnvUnowned<'local>, _class: JClass<'local>, h: jlong) -> jint {
    call(unowned, |_env| Ok(reader(h)?.controls.stop_vectored("closed").min(i32::MAX as usize) as jint))
}

/// `static native void unbuffer(long handle)`: [`Reader::unbuffer`].
#[no_mangle]
pub extern "system" fn Java_io_s3native_Native_unbuffer<'local>(unowned: EnvUnowned<'local>, _class: JClass<'local>, h: jlong) {
    call(unowned, |_env| {
        reader(h)?.reader.write().map_err(|_| poisoned())?.unbuffer();
        Ok(())
    })
}

/// `static native Map<String, Object> readerStatistics(long handle)`: [`Reader::statistics`] by name.
#[no_mangle]
pub extern "system" fn Java_io_s3native_Native_readerStatistics<'local>(
    unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    h: jlong,
) -> JObject<'local> {
    call(unowned, |env| {
        let stats = reader(h)?.controls.statistics();
        to_java(env, &stats)
    })
}

/// `static native Map<String, Object> readerS3aStatistics(long handle)`: the reader's statistics
/// in S3A's names ([`crate::read_iostatistics`], Hadoop's IOStatisticsSnapshot form by name).
#[no_mangle]
pub extern "system" fn Java_io_s3native_Native_readerS3aStatistics<'local>(
    unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    h: jlong,
) -> JObject<'local> {
    call(unowned, |env| {
        let stats = reader(h)?.controls.statistics();
        to_java(env, &crate::read_iostatistics(&stats))
    })
}

/// `static native void freeReader(long handle)`: drops the reader and its buffers. Called
/// once per handle, after every vectored read of it was freed.
#[no_mangle]
pub extern "system" fn Java_io_s3native_Native_freeReader<'local>(unowned: EnvUnowned<'local>, _class: JClass<'local>, h: jlong) {
    call(unowned, |_env| {
        if h != 0 {
            // SAFETY: `h` came from openReader and the Java side frees it once, unused.
            drop(unsafe { Box::from_raw(h as *mut JniReader) });
        }
        Ok(())
    })
}

/// `static native long readCopiedBytes(boolean intoSlices)` of the tests' `io.s3native.NativeHooks`:
/// the bytes copied out of readers' buffers so far into slices by the reader (`intoSlices`),
/// else straight into Java memory by this layer ([`crate::reader::copied_bytes`]). A test
/// hook (feature `test-hooks`).
#[cfg(feature = "test-hooks")]
#[no_mangle]
pub extern "system" fn Java_io_s3native_NativeHooks_readCopiedBytes<'local>(
    unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    into_slices: ::jni::sys::jboolean,
) -> jlong {
    call(unowned, |_env| {
        let (slices, sinks) = crate::reader::copied_bytes();
        Ok((if into_slices { slices } else { sinks }).min(i64::MAX as u64) as jlong)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_must_not_be_negative() {
        assert_eq!(position(0).ok(), Some(0));
        assert!(matches!(position(-1), Err(Failure::Native(e)) if e.kind() == ErrorKind::InvalidArgument));
    }
}
