//! One measured run of the Parquet encoder bench (`benches/harness/parquet_bench.py`), the
//! Rust API route: Arrow IPC files are read into memory first (record batches, as an engine
//! holds them), then each becomes one Parquet file on S3 through [`s3native::ParquetWriter`]
//! in Publish mode, `threads` files at a time; prints one line `RESULT {json}`.
//!
//! Arguments (`key=value`):
//! - `bucket=`, `prefix=`: file `i` is `<prefix>/part-<i>.parquet`;
//! - `inputs=`: the Arrow IPC files, comma-separated (spark/make_data.py `--ipc`);
//! - `threads=` (default 1): files written at once, one writer thread each;
//! - `options=`: the Parquet options' JSON ([`s3native::ParquetOptions`]; default `{}`);
//! - `warmup_batches=` (default 32): before the clock starts, that many of the first input's
//!   batches are written to warm-up files `<prefix>/warmup-NNN.parquet`, each at most the
//!   whole input (client, connections, TLS; for the JVM route also its JIT compilation);
//!   `warmup_seconds`, `warmup_cpu_seconds` and `warmup_thread_cpu_seconds` report that part;
//! - `warmup_rows=` (default 0: whole batches): the warm-up writes only each batch's first
//!   rows, so that a warm-up of many batches (the JIT counts batches, not rows) stays short;
//! - every `conf.K=V`: a setting (`fs.s3a.*` keys: endpoint, credentials, budget, ...).
//!
//! Figures, read when the clock stops and, like the Java route's
//! (`jvm/src/test/java/io/s3native/bench/ParquetEncodeWorkload.java`), over the timed part
//! only: wall seconds, process CPU seconds (/proc/self/stat), the peak RSS above the RSS
//! when the clock started (`VmHWM` reset then through /proc/self/clear_refs: what encoding
//! and upload held beyond the loaded input), rows, output bytes (the files' sizes as the
//! writer reports them), the input's Arrow bytes (the bytes of the batches' slices) and
//! `thread_cpu_seconds`, the timed part's CPU per thread name with its trailing digits dropped
//! (`writer-` for the writer threads, the runtime's I/O threads by their names),
//! `minor_faults` and `thread_minor_faults`: the timed part's minor page faults in the process
//! and per thread name (first touches of memory, each a kernel entry on the touching thread), and
//! `write_seconds` / `close_seconds`: wall seconds spent in the writers' `write` calls
//! (batches encoded into the row group held in memory) and in `close` (the last row group's
//! column chunks into part buffers, the upload of the parts still to go, the completion),
//! summed over files.
//!
//! Build: `cargo build --release --example parquet_worker`.

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use arrow_ipc::reader::FileReader;
use s3native::arrow_array::{Array, RecordBatch};
use s3native::{Mode, ParquetOptions, ParquetWriter, Settings};

/// What the whole process has used so far (its threads, ended ones included).
fn process_used() -> Used {
    task_used(std::path::Path::new("/proc/self/stat")).expect("/proc/self/stat").1
}

/// What one thread has used so far, from its `stat` file.
#[derive(Default, Clone, Copy)]
struct Used {
    /// User + system CPU seconds.
    cpu: f64,
    /// Minor page faults (a page touched for the first time, or mapped again).
    minflt: u64,
}

impl std::ops::AddAssign for Used {
    fn add_assign(&mut self, o: Used) {
        (self.cpu, self.minflt) = (self.cpu + o.cpu, self.minflt + o.minflt);
    }
}

impl std::ops::Sub for Used {
    type Output = Used;
    fn sub(self, o: Used) -> Used {
        Used { cpu: self.cpu - o.cpu, minflt: self.minflt.saturating_sub(o.minflt) }
    }
}

/// (name, what it used) of one thread from its `stat` file; None once it has ended.
fn task_used(stat: &std::path::Path) -> Option<(String, Used)> {
    let stat = std::fs::read_to_string(stat).ok()?;
    let (open, close) = (stat.find('(')?, stat.rfind(')')?);
    let name = stat[open + 1..close].trim_end_matches(|c: char| c.is_ascii_digit()).to_string();
    let f: Vec<&str> = stat[close + 2..].split_whitespace().collect();
    // Fields after the name: minflt is the 8th, utime and stime (USER_HZ) the 12th and 13th.
    let cpu = (f[11].parse::<f64>().ok()? + f[12].parse::<f64>().ok()?) / 100.0;
    Some((name, Used { cpu, minflt: f[7].parse().ok()? }))
}

/// What each live thread of this process has used so far, summed by name with its trailing digits dropped.
fn thread_used() -> BTreeMap<String, Used> {
    let mut by = BTreeMap::<String, Used>::new();
    for task in std::fs::read_dir("/proc/self/task").expect("/proc/self/task").flatten() {
        if let Some((name, u)) = task_used(&task.path().join("stat")) {
            *by.entry(name).or_default() += u;
        }
    }
    by
}

/// Each thread name's use from `before` to `now`, names that used under 5 ms of CPU left out.
fn since(before: &BTreeMap<String, Used>, mut now: BTreeMap<String, Used>) -> BTreeMap<String, Used> {
    for (name, u) in now.iter_mut() {
        *u = *u - before.get(name).copied().unwrap_or_default();
    }
    now.retain(|_, u| u.cpu >= 0.005);
    now
}

fn cpu_by_name(by: &BTreeMap<String, Used>) -> BTreeMap<String, f64> {
    by.iter().map(|(k, u)| (k.clone(), u.cpu)).collect()
}

fn status_bytes(field: &str) -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let line = s.lines().find(|l| l.starts_with(field)).unwrap_or_else(|| panic!("{field} in /proc/self/status"));
    line.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() * 1024
}

fn load(path: &str) -> Vec<RecordBatch> {
    let reader = FileReader::try_new(File::open(path).unwrap_or_else(|e| panic!("{path}: {e}")), None)
        .unwrap_or_else(|e| panic!("{path}: {e}"));
    reader.map(|b| b.unwrap_or_else(|e| panic!("{path}: {e}"))).collect()
}

/// What the writers did, summed over files.
#[derive(Default, Clone, Copy)]
struct Done {
    rows: u64,
    bytes: u64,
    /// Wall seconds in `write` calls and in `close`.
    write_seconds: f64,
    close_seconds: f64,
}

impl std::ops::Add for Done {
    type Output = Done;
    fn add(self, o: Done) -> Done {
        Done { rows: self.rows + o.rows, bytes: self.bytes + o.bytes, write_seconds: self.write_seconds + o.write_seconds, close_seconds: self.close_seconds + o.close_seconds }
    }
}

/// One file.
fn write(bucket: &str, key: &str, batches: &[RecordBatch], options: &ParquetOptions, settings: &Settings) -> Done {
    let schema = batches[0].schema();
    let mut w = ParquetWriter::open(bucket, key, Mode::Publish, schema, options, settings)
        .unwrap_or_else(|e| panic!("open s3://{bucket}/{key}: {e}"));
    let started = Instant::now();
    for b in batches {
        w.write(b).unwrap_or_else(|e| panic!("write s3://{bucket}/{key}: {e}"));
    }
    let closing = Instant::now();
    let r = w.close().unwrap_or_else(|e| panic!("close s3://{bucket}/{key}: {e}"));
    Done { rows: r.rows, bytes: r.file_size, write_seconds: (closing - started).as_secs_f64(), close_seconds: closing.elapsed().as_secs_f64() }
}

fn main() {
    let mut a: HashMap<String, String> = HashMap::new();
    let mut conf = BTreeMap::new();
    for arg in std::env::args().skip(1) {
        let (k, v) = arg.split_once('=').unwrap_or_else(|| panic!("arguments are key=value, got '{arg}'"));
        match k.strip_prefix("conf.") {
            Some(c) => conf.insert(c.to_string(), v.to_string()),
            None => a.insert(k.to_string(), v.to_string()),
        };
    }
    let need = |k: &str| a.get(k).cloned().unwrap_or_else(|| panic!("missing argument {k}=..."));
    let num = |k: &str, d: usize| a.get(k).map(|v| v.parse().unwrap_or_else(|_| panic!("{k} is a number"))).unwrap_or(d);
    let (bucket, prefix) = (need("bucket"), need("prefix"));
    let threads = num("threads", 1).max(1);
    let warmup_batches = num("warmup_batches", 32);
    let warmup_rows = num("warmup_rows", 0);
    let options = ParquetOptions::from_json(a.get("options").map(String::as_str).unwrap_or("{}")).expect("options");
    let settings = conf.iter().fold(Settings::new(), |s, (k, v)| s.with(k, v));

    let inputs: Vec<Vec<RecordBatch>> = need("inputs").split(',').map(load).collect();
    assert!(inputs.iter().all(|b| !b.is_empty()), "an input file has no batches");
    let input_bytes: usize = inputs.iter().flatten().map(|b| b.columns().iter().map(|c| c.to_data().get_slice_memory_size().expect("slice size")).sum::<usize>()).sum();
    let (warmup_threads0, warmup_used0, warmup0) = (thread_used(), process_used(), Instant::now());
    let warmup: Vec<RecordBatch> = inputs[0]
        .iter()
        .map(|b| if warmup_rows == 0 { b.clone() } else { b.slice(0, warmup_rows.min(b.num_rows())) })
        .collect();
    let (mut left, mut warmup_files) = (warmup_batches, 0);
    while left > 0 {
        let n = left.min(warmup.len());
        write(&bucket, &format!("{prefix}/warmup-{warmup_files:03}.parquet"), &warmup[..n], &options, &settings);
        (left, warmup_files) = (left - n, warmup_files + 1);
    }
    let (warmup_wall, warmup_cpu) = (warmup0.elapsed().as_secs_f64(), (process_used() - warmup_used0).cpu);
    let warmup_by_thread = since(&warmup_threads0, thread_used());

    std::fs::write("/proc/self/clear_refs", "5").expect("reset VmHWM");
    let rss0 = status_bytes("VmRSS:");
    let used0 = process_used();
    let threads0 = thread_used();
    let t0 = Instant::now();
    let inputs = Arc::new(inputs);
    let next = Arc::new(AtomicUsize::new(0));
    let workers: Vec<_> = (0..threads.min(inputs.len()))
        .map(|t| {
            let (inputs, next, options, settings) = (inputs.clone(), next.clone(), options.clone(), settings.clone());
            let (bucket, prefix) = (bucket.clone(), prefix.clone());
            std::thread::Builder::new().name(format!("writer-{t}")).spawn(move || {
                let mut done = Done::default();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= inputs.len() {
                        // A writer reports its own use: once it has ended, /proc no longer lists it.
                        let own = task_used(std::path::Path::new("/proc/thread-self/stat")).map_or(Used::default(), |(_, u)| u);
                        return (done, own);
                    }
                    done = done + write(&bucket, &format!("{prefix}/part-{i:05}.parquet"), &inputs[i], &options, &settings);
                }
            }).expect("spawn a writer thread")
        })
        .collect();
    let mut writers = Used::default();
    let mut done = Done::default();
    for w in workers {
        let (d, own) = w.join().expect("a writer thread panicked");
        done = done + d;
        writers += own;
    }
    // The threads that outlive the writers (main, the runtime's I/O threads): their growth.
    let mut by_thread = since(&threads0, thread_used());
    by_thread.insert("writer-".to_string(), writers);
    let wall = t0.elapsed().as_secs_f64();
    let used = process_used() - used0;
    let peak = status_bytes("VmHWM:").saturating_sub(rss0);
    println!(
        "RESULT {}",
        serde_json::json!({
            "route": "rust", "seconds": wall, "cpu_seconds": used.cpu, "peak_rss_over_start_bytes": peak,
            "minor_faults": used.minflt, "start_rss_bytes": rss0, "rows": done.rows, "output_bytes": done.bytes, "files": inputs.len(),
            "write_seconds": done.write_seconds, "close_seconds": done.close_seconds,
            "input_arrow_bytes": input_bytes, "threads": threads, "thread_cpu_seconds": cpu_by_name(&by_thread),
            "thread_minor_faults": by_thread.iter().map(|(k, u)| (k.clone(), u.minflt)).collect::<BTreeMap<_, _>>(),
            "warmup_batches": warmup_batches, "warmup_rows": warmup_rows, "warmup_files": warmup_files, "warmup_seconds": warmup_wall,
            "warmup_cpu_seconds": warmup_cpu, "warmup_thread_cpu_seconds": cpu_by_name(&warmup_by_thread),
        })
    );
}
