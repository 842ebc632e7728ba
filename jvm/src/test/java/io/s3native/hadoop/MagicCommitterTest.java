package io.s3native.hadoop;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.s3a.commit.files.SinglePendingCommit;
import org.apache.hadoop.fs.s3a.commit.files.SuccessData;
import org.apache.hadoop.fs.s3a.commit.magic.MagicS3GuardCommitter;
import org.apache.hadoop.mapreduce.JobContext;
import org.apache.hadoop.mapreduce.JobID;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.apache.hadoop.mapreduce.TaskType;
import org.apache.hadoop.mapreduce.task.JobContextImpl;
import org.apache.hadoop.mapreduce.task.TaskAttemptContextImpl;
import org.junit.jupiter.api.Test;

/** The magic committer's job life cycle with Hadoop's own MagicS3GuardCommitter over files we write natively. */
class MagicCommitterTest {
    private static final String MARKER_XATTR = "header.x-hadoop-s3a-magic-data-length";

    private final String bucket;
    private final Configuration conf;
    /** -Ds3native.test.stock=true: the same life cycle on stock S3A, to compare. */
    private static final boolean STOCK = Boolean.getBoolean("s3native.test.stock");
    private final org.apache.hadoop.fs.FileSystem fs;

    MagicCommitterTest() throws Exception {
        bucket = HadoopS3.newBucket("magic");
        conf = HadoopS3.conf(!STOCK);
        String uuid = UUID.randomUUID().toString();
        conf.set("fs.s3a.committer.uuid", uuid);
        conf.set("fs.s3a.committer.name", "magic");
        conf.set("mapreduce.job.id", "job_202405310001_0007");
        fs = HadoopS3.fs(bucket, conf);
    }

    private TaskAttemptContext task(JobID job, int task) {
        return new TaskAttemptContextImpl(conf, new TaskAttemptID(job.getJtIdentifier(), job.getId(), TaskType.MAP, task, 0));
    }

    /** Write {@code data} through our filesystem, check the marker and the .pending with Hadoop's classes. */
    private void write(Path file, byte[] data) throws Exception {
        try (FSDataOutputStream out = fs.create(file, true)) {
            assertTrue(out.hasCapability("fs.s3a.capability.magic.output.stream"), "magic stream for " + file);
            out.write(data);
        }
        byte[] len = fs.getXAttr(file, MARKER_XATTR);
        assertEquals(Long.toString(data.length), new String(len, StandardCharsets.UTF_8), "marker length of " + file);
        assertEquals(0, fs.getFileStatus(file).getLen(), "the marker is empty");
        Path pending = new Path(file.getParent(), file.getName() + ".pending");
        SinglePendingCommit commit = SinglePendingCommit.serializer().load(fs, pending);
        commit.validate();
        assertEquals(data.length, commit.getLength());
        assertEquals(bucket, commit.getBucket());
        assertEquals(Math.max(1, (data.length + 5 * 1024 * 1024 - 1) / (5 * 1024 * 1024)), commit.getPartCount(), "parts of " + file);
    }

    @Test
    void jobLifeCycleCommitsEveryFile() throws Exception {
        Path dest = new Path("s3a://" + bucket + "/out/table");
        JobID jobId = JobID.forName("job_202405310001_0007");
        JobContext job = new JobContextImpl(conf, jobId);
        TaskAttemptContext t0 = task(jobId, 0);
        TaskAttemptContext t1 = task(jobId, 1);
        MagicS3GuardCommitter jobCommitter = new MagicS3GuardCommitter(dest, t0);
        jobCommitter.setupJob(job);

        Map<String, byte[]> expected = new LinkedHashMap<>();
        MagicS3GuardCommitter c0 = new MagicS3GuardCommitter(dest, t0);
        c0.setupTask(t0);
        byte[] empty = new byte[0];
        byte[] big = HadoopS3.data(12 * 1024 * 1024 + 17, 1); // 3 parts of 5 MiB
        write(new Path(c0.getWorkPath(), "part-00000-empty"), empty);
        write(new Path(c0.getWorkPath(), "part-00000-big"), big);
        expected.put("out/table/part-00000-empty", empty);
        expected.put("out/table/part-00000-big", big);
        c0.commitTask(t0);

        MagicS3GuardCommitter c1 = new MagicS3GuardCommitter(dest, t1);
        c1.setupTask(t1);
        byte[] small = "year=2024 row\n".getBytes(StandardCharsets.UTF_8);
        String partition = "year=2024";
        write(new Path(c1.getWorkPath(), partition + "/part-00001.csv"), small);
        expected.put("out/table/" + partition + "/part-00001.csv", small);
        c1.commitTask(t1);
        if (!STOCK) {
            assertEquals(3, ((NativeS3AFileSystem) fs).getNativeCreateCount(), "every task file went native");
        }

        assertTrue(HadoopS3.keys(bucket, "out/table/part").isEmpty(), "nothing visible before job commit");
        jobCommitter.commitJob(job);

        for (Map.Entry<String, byte[]> e : expected.entrySet()) {
            assertArrayEquals(e.getValue(), HadoopS3.read(fs, new Path("s3a://" + bucket + "/" + e.getKey())), e.getKey());
        }
        SuccessData success = SuccessData.load(fs, new Path(dest, "_SUCCESS"));
        assertEquals("magic", success.getCommitter());
        List<String> names = new ArrayList<>(success.getFilenames());
        for (String key : expected.keySet()) {
            assertTrue(names.contains("/" + key), key + " listed in _SUCCESS " + names);
        }
        for (FileStatus st : fs.listStatus(dest)) {
            assertFalse(st.getPath().getName().startsWith("__magic"), "magic directory left: " + st.getPath());
        }
        assertEquals(List.of(), HadoopS3.uploads(bucket, "out/"), "uploads left");
    }

    @Test
    void abortTaskAndJobLeaveNothing() throws Exception {
        Path dest = new Path("s3a://" + bucket + "/aborted/table");
        JobID jobId = JobID.forName("job_202405310001_0008");
        JobContext job = new JobContextImpl(conf, jobId);
        TaskAttemptContext t0 = task(jobId, 0);
        TaskAttemptContext t1 = task(jobId, 1);
        MagicS3GuardCommitter jobCommitter = new MagicS3GuardCommitter(dest, t0);
        jobCommitter.setupJob(job);

        MagicS3GuardCommitter c0 = new MagicS3GuardCommitter(dest, t0);
        c0.setupTask(t0);
        write(new Path(c0.getWorkPath(), "part-0"), HadoopS3.data(6 * 1024 * 1024, 2));
        c0.abortTask(t0);

        MagicS3GuardCommitter c1 = new MagicS3GuardCommitter(dest, t1);
        c1.setupTask(t1);
        write(new Path(c1.getWorkPath(), "year=1/part-1"), HadoopS3.data(1000, 3));
        c1.commitTask(t1);
        jobCommitter.abortJob(job, org.apache.hadoop.mapreduce.JobStatus.State.FAILED);

        assertEquals(List.of(), HadoopS3.uploads(bucket, "aborted/"), "uploads left");
        List<String> left = HadoopS3.keys(bucket, "aborted/");
        left.removeIf(k -> k.endsWith("/")); // directory markers
        assertEquals(List.of(), left, "objects left");
    }

    /**
     * S3A's in-memory magic tracker (3.4+): files written natively, their pending commits
     * kept in S3A's tracker (no marker, no .pending), found by Hadoop's own task commit and
     * completed by its job commit.
     */
    @Test
    void jobLifeCycleWithTheInMemoryTracker() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(InMemoryTracker.available(getClass().getClassLoader()),
                "this Hadoop line has no in-memory magic tracker");
        Configuration tracked = new Configuration(conf);
        tracked.setBoolean("fs.s3a.committer.magic.track.commits.in.memory.enabled", true);
        tracked.set("fs.s3a.native.fallback", "fail");
        org.apache.hadoop.fs.FileSystem memFs = HadoopS3.fs(bucket, tracked);
        Path dest = new Path("s3a://" + bucket + "/memory/table");
        JobID jobId = JobID.forName("job_202405310001_0009");
        JobContext job = new JobContextImpl(tracked, jobId);
        TaskAttemptContext t0 = new TaskAttemptContextImpl(tracked,
                new TaskAttemptID(jobId.getJtIdentifier(), jobId.getId(), TaskType.MAP, 0, 0));
        MagicS3GuardCommitter jobCommitter = new MagicS3GuardCommitter(dest, t0);
        jobCommitter.setupJob(job);
        MagicS3GuardCommitter c0 = new MagicS3GuardCommitter(dest, t0);
        c0.setupTask(t0);
        Map<String, byte[]> expected = new LinkedHashMap<>();
        expected.put("memory/table/part-00000-empty", new byte[0]);
        expected.put("memory/table/part-00000-big", HadoopS3.data(11 * 1024 * 1024 + 5, 4)); // 3 parts
        expected.put("memory/table/year=2024/part-00000.csv", "row\n".getBytes(StandardCharsets.UTF_8));
        for (Map.Entry<String, byte[]> e : expected.entrySet()) {
            Path file = new Path(c0.getWorkPath(), e.getKey().substring("memory/table/".length()));
            try (FSDataOutputStream out = memFs.create(file, true)) {
                assertTrue(out.hasCapability("fs.s3a.capability.magic.output.stream"), "magic stream for " + file);
                out.write(e.getValue());
            }
        }
        if (!STOCK) {
            assertEquals(3, ((NativeS3AFileSystem) memFs).getNativeCreateCount(), "every task file went native");
        }
        assertTrue(HadoopS3.keys(bucket, "memory/").stream().noneMatch(k -> k.endsWith(".pending")),
                "no .pending with the in-memory tracker");
        c0.commitTask(t0);
        assertTrue(HadoopS3.keys(bucket, "memory/table/part").isEmpty(), "nothing visible before job commit");
        jobCommitter.commitJob(job);
        for (Map.Entry<String, byte[]> e : expected.entrySet()) {
            assertArrayEquals(e.getValue(), HadoopS3.read(memFs, new Path("s3a://" + bucket + "/" + e.getKey())), e.getKey());
        }
        assertEquals(List.of(), HadoopS3.uploads(bucket, "memory/"), "uploads left");
        memFs.close();
    }
}
