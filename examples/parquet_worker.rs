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
//! - every `conf.K=V`: a setting (`fs.s3a.*` keys: endpoint, credentials, budget, ...).
//!
//! Figures, read when the clock stops and, like the Java route's
//! (`jvm/src/test/java/io/s3native/bench/ParquetEncodeWorkload.java`), over the timed part
//! only: wall seconds, process CPU seconds (/proc/self/stat), the peak RSS above the RSS
//! when the clock started (`VmHWM` reset then through /proc/self/clear_refs: what encoding
//! and upload held beyond the loaded input), rows, output bytes (the files' sizes as the
//! writer reports them), the input's Arrow bytes (the bytes of the batches' slices) and
//! `thread_cpu_seconds`, the timed part's CPU per thread name with its trailing digits dropped
//! (`writer-` for the writer threads, the runtime's I/O threads by their names), and
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

fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("/proc/self/stat");
    // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
    let rest = &stat[stat.rfind(')').expect("stat format") + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f[11].parse::<f64>().unwrap() + f[12].parse::<f64>().unwrap();
    ticks / 100.0 // USER_HZ, 100 on Linux
}

/// (name, user + system CPU seconds) of one thread from its `stat` file; None once it has ended.
fn task_cpu(stat: &std::path::Path) -> Option<(String, f64)> {
    let stat = std::fs::read_to_string(stat).ok()?;
    let (open, close) = (stat.find('(')?, stat.rfind(')')?);
    let name = stat[open + 1..close].trim_end_matches(|c: char| c.is_ascii_digit()).to_string();
    let f: Vec<&str> = stat[close + 2..].split_whitespace().collect();
    Some((name, (f[11].parse::<f64>().ok()? + f[12].parse::<f64>().ok()?) / 100.0)) // utime, stime in USER_HZ
}

/// CPU seconds so far of each live thread of this process, summed by name with its trailing digits dropped.
fn thread_cpu() -> BTreeMap<String, f64> {
    let mut by = BTreeMap::new();
    for task in std::fs::read_dir("/proc/self/task").expect("/proc/self/task").flatten() {
        if let Some((name, s)) = task_cpu(&task.path().join("stat")) {
            *by.entry(name).or_insert(0.0) += s;
        }
    }
    by
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
    let options = ParquetOptions::from_json(a.get("options").map(String::as_str).unwrap_or("{}")).expect("options");
    let settings = conf.iter().fold(Settings::new(), |s, (k, v)| s.with(k, v));

    let inputs: Vec<Vec<RecordBatch>> = need("inputs").split(',').map(load).collect();
    assert!(inputs.iter().all(|b| !b.is_empty()), "an input file has no batches");
    let input_bytes: usize = inputs.iter().flatten().map(|b| b.columns().iter().map(|c| c.to_data().get_slice_memory_size().expect("slice size")).sum::<usize>()).sum();
    let (warmup_threads0, warmup_cpu0, warmup0) = (thread_cpu(), cpu_seconds(), Instant::now());
    let (mut left, mut warmup_files) = (warmup_batches, 0);
    while left > 0 {
        let n = left.min(inputs[0].len());
        write(&bucket, &format!("{prefix}/warmup-{warmup_files:03}.parquet"), &inputs[0][..n], &options, &settings);
        (left, warmup_files) = (left - n, warmup_files + 1);
    }
    let (warmup_wall, warmup_cpu) = (warmup0.elapsed().as_secs_f64(), cpu_seconds() - warmup_cpu0);
    let mut warmup_by_thread = thread_cpu();
    for (name, s) in warmup_by_thread.iter_mut() {
        *s -= warmup_threads0.get(name).copied().unwrap_or(0.0);
    }
    warmup_by_thread.retain(|_, v| *v >= 0.005);

    std::fs::write("/proc/self/clear_refs", "5").expect("reset VmHWM");
    let rss0 = status_bytes("VmRSS:");
    let cpu0 = cpu_seconds();
    let threads0 = thread_cpu();
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
                        // A writer reports its own CPU: once it has ended, /proc no longer lists it.
                        let own = task_cpu(std::path::Path::new("/proc/thread-self/stat")).map_or(0.0, |(_, s)| s);
                        return (done, own);
                    }
                    done = done + write(&bucket, &format!("{prefix}/part-{i:05}.parquet"), &inputs[i], &options, &settings);
                }
            }).expect("spawn a writer thread")
        })
        .collect();
    let mut by_thread = BTreeMap::new();
    let mut done = Done::default();
    for w in workers {
        let (d, own) = w.join().expect("a writer thread panicked");
        done = done + d;
        *by_thread.entry("writer-".to_string()).or_insert(0.0) += own;
    }
    // The threads that outlive the writers (main, the runtime's I/O threads): their growth.
    for (name, s) in thread_cpu() {
        *by_thread.entry(name).or_insert(0.0) += s - threads0.get(&name).copied().unwrap_or(0.0);
    }
    by_thread.retain(|_, v| *v >= 0.005);
    let wall = t0.elapsed().as_secs_f64();
    let cpu = cpu_seconds() - cpu0;
    let peak = status_bytes("VmHWM:").saturating_sub(rss0);
    println!(
        "RESULT {}",
        serde_json::json!({
            "route": "rust", "seconds": wall, "cpu_seconds": cpu, "peak_rss_over_start_bytes": peak,
            "start_rss_bytes": rss0, "rows": done.rows, "output_bytes": done.bytes, "files": inputs.len(),
            "write_seconds": done.write_seconds, "close_seconds": done.close_seconds,
            "input_arrow_bytes": input_bytes, "threads": threads, "thread_cpu_seconds": by_thread,
            "warmup_batches": warmup_batches, "warmup_files": warmup_files, "warmup_seconds": warmup_wall,
            "warmup_cpu_seconds": warmup_cpu, "warmup_thread_cpu_seconds": warmup_by_thread,
        })
    );
}
