package io.s3native.hadoop;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.URI;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.CreateFlag;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileAlreadyExistsException;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.impl.OpenFileParameters;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.fs.s3a.S3AFileSystem;
import org.apache.hadoop.fs.s3a.Statistic;
import org.apache.hadoop.fs.statistics.IOStatistics;
import org.apache.hadoop.fs.statistics.IOStatisticsAggregator;
import org.apache.hadoop.fs.store.audit.AuditSpan;
import org.apache.hadoop.util.Progressable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.s3native.CredentialSource;
import io.s3native.InvalidSettingException;
import io.s3native.NativeLibrary;
import io.s3native.S3NativeInputStream;
import io.s3native.S3NativeOutputStream;
import io.s3native.S3NativeOutputStream.MagicLayout;
import io.s3native.S3NativeOutputStream.PendingEtags;
import io.s3native.UnsupportedSettingException;

/**
 * S3A with native writes: {@code fs.s3a.impl=io.s3native.hadoop.NativeS3AFileSystem}.
 *
 * <p>The 7-argument {@code create} and {@code createNonRecursive} write through the native
 * writer when the file's settings allow it; everything else is stock S3A. Magic-committer
 * paths (as the Hadoop line on the classpath recognises them) get S3A's magic protocol: the
 * upload on the final key, never completed, then the marker and {@code .pending}; with S3A's
 * in-memory magic tracker (3.4+) the upload is handed to that tracker instead
 * ({@link InMemoryTracker}).
 *
 * <p>Stock S3A takes the file, with one WARN line per filesystem and reason naming the
 * setting and the bucket, when {@code fs.s3a.native.enabled=false}, client-side encryption is
 * on, the credential provider chain holds the anonymous provider, the native library cannot
 * load (the reason is the
 * load error's message), or the native writer reports a setting it cannot honour (canned
 * ACL, ...). {@code fs.s3a.native.fallback=fail} raises {@link UnsupportedSettingException}
 * instead, at create (initialize never fails for it, so reads and listings keep working). A
 * filesystem whose writes are native logs one INFO line at initialize: {@code s3native:
 * native writes for s3a://bucket (memory budget ..., target ... Gbps, N connections, part size ..., N parts in flight)}.
 *
 * <p>Conditional create (Hadoop 3.5, {@code fs.s3a.create.conditional.enabled}, default true): where S3A
 * would write with {@code If-None-Match: *} (a {@code createNonRecursive} without OVERWRITE in
 * create-performance mode), the native writer does too ({@code CREATE_IF_ABSENT}), on the single PUT
 * and on the complete, and an object already at the path fails close with S3A's
 * {@code RemoteFileChangedException}, as stock S3A 3.5 raises it. 3.3 and 3.4 have no such key.
 *
 * <p>Credentials come from the filesystem's own S3A provider chain ({@code shareCredentials}),
 * asked by the native writer when its cached keys are due (see {@link io.s3native.Credentials}).
 *
 * <p>{@link #getIOStatistics()} is S3A's, with what native streams add on close (see
 * {@link NativeS3AOutputStream}), plus the native totals ({@code s3native.*}).
 */
public class NativeS3AFileSystem extends S3AFileSystem {
    private static final Logger LOG = LoggerFactory.getLogger(NativeS3AFileSystem.class);

    public static final String NATIVE_ENABLED = "fs.s3a.native.enabled";
    /** {@code stock} (default): unsupported settings go to stock S3A; {@code fail}: raise. */
    public static final String NATIVE_FALLBACK = "fs.s3a.native.fallback";
    static final String TRACK_IN_MEMORY = "fs.s3a.committer.magic.track.commits.in.memory.enabled";
    static final String DOWNGRADE_SYNCABLE = "fs.s3a.downgrade.syncable.exceptions";
    static final String CREATE_PERFORMANCE = "fs.s3a.create.performance";

    private NativeSettings settings;
    /** This filesystem's S3A credential chain as the native writer's source; null when all writes fall back or after close. */
    private volatile Credentials credentials;
    private boolean failOnFallback;
    private boolean downgradeSyncable;
    private boolean trackInMemory;
    private boolean createPerformance;
    /** S3A's {@code fs.s3a.create.conditional.enabled} where the line has it (3.5+); false elsewhere. */
    private boolean conditionalCreate;
    private MagicLayout layout;
    private PendingEtags etags;
    private final Set<String> loggedFallbacks = ConcurrentHashMap.newKeySet();
    private final AtomicLong nativeCreates = new AtomicLong();
    private final AtomicLong stockCreates = new AtomicLong();

    @Override
    public void initialize(URI name, Configuration originalConf) throws IOException {
        super.initialize(name, originalConf);
        Configuration conf = getConf(); // per-bucket options already propagated by S3A
        String fallback = conf.getTrimmed(NATIVE_FALLBACK, "stock");
        if (!fallback.equalsIgnoreCase("stock") && !fallback.equalsIgnoreCase("fail")) {
            throw new IllegalArgumentException(NATIVE_FALLBACK + " must be 'stock' or 'fail', not '" + fallback + "'");
        }
        failOnFallback = fallback.equalsIgnoreCase("fail");
        downgradeSyncable = conf.getBoolean(DOWNGRADE_SYNCABLE, true); // S3A's default
        // The key is read where the line has the tracker (3.4+), as S3A does; 3.3 has no such key.
        trackInMemory = conf.getBoolean(TRACK_IN_MEMORY, false) && InMemoryTracker.available(S3AFileSystem.class.getClassLoader());
        createPerformance = Reflect.createPerformance(this, conf);
        conditionalCreate = Reflect.conditionalCreateEnabled(conf);
        ClassLoader loader = S3AFileSystem.class.getClassLoader();
        layout = HadoopLine.magicLayout(loader);
        etags = HadoopLine.pendingEtags(loader);
        if (!strictBoolean(conf, NATIVE_ENABLED, true)) {
            settings = NativeSettings.fallback(NATIVE_ENABLED);
        } else if (isCSEEnabled()) {
            settings = NativeSettings.fallback("fs.s3a.encryption.algorithm (client-side encryption)");
        } else {
            settings = NativeSettings.from(conf);
        }
        checkLibraryAndAnnounce();
        readEnabled = strictBoolean(conf, NATIVE_READ_ENABLED, true);
    }

    @Override
    public FSDataOutputStream create(Path f, FsPermission permission, boolean overwrite, int bufferSize,
            short replication, long blockSize, Progressable progress) throws IOException {
        Path path = makeQualified(f);
        boolean magic = isMagicCommitPath(path);
        String reason = fallbackReason(magic);
        if (reason == null) {
            try {
                FSDataOutputStream out = createNative(path, overwrite, magic, Statistic.INVOCATION_CREATE);
                nativeCreates.incrementAndGet();
                return out;
            } catch (UnsupportedSettingException e) {
                reason = e.getSetting() != null ? e.getSetting() : e.getMessage();
            }
        }
        fallingBack(reason, path);
        return super.create(f, permission, overwrite, bufferSize, replication, blockSize, progress);
    }

    /**
     * Hadoop 3.3.4 checks that the parent is a directory (a HEAD, then a LIST); from the
     * line where S3A creates files through its CreateFileBuilder (3.3.5+: 3.4.x, 3.5.0) the
     * parent is not probed, only the path itself, as in {@code create}.
     */
    @Override
    public FSDataOutputStream createNonRecursive(Path f, FsPermission permission, EnumSet<CreateFlag> flags,
            int bufferSize, short replication, long blockSize, Progressable progress) throws IOException {
        Path path = makeQualified(f);
        boolean magic = isMagicCommitPath(path);
        String reason = fallbackReason(magic);
        if (reason == null) {
            try {
                FSDataOutputStream out = createNative(path, flags.contains(CreateFlag.OVERWRITE), magic,
                        Statistic.INVOCATION_CREATE_NON_RECURSIVE);
                nativeCreates.incrementAndGet();
                return out;
            } catch (UnsupportedSettingException e) {
                reason = e.getSetting() != null ? e.getSetting() : e.getMessage();
            }
        }
        fallingBack(reason, path);
        return super.createNonRecursive(f, permission, flags, bufferSize, replication, blockSize, progress);
    }

    /**
     * Hadoop 3.3.4's createNonRecursive rule, with its probes: the parent must exist (as a
     * directory: a LIST, else as an object: a HEAD) and be a directory.
     */
    private void checkParentIsDirectory(Path path) throws IOException {
        Path parent = path.getParent();
        if (parent == null || parent.isRoot()) {
            return;
        }
        FileStatus status;
        try {
            status = Reflect.innerGetFileStatus(this, parent, "DIRECTORIES");
        } catch (FileNotFoundException e) {
            status = Reflect.innerGetFileStatus(this, parent, "HEAD_ONLY");
        }
        if (!status.isDirectory()) {
            throw new FileAlreadyExistsException("Not a directory: " + parent);
        }
    }

    /** The setting that sends a file (a magic one or not) to stock S3A before the native writer is asked, or null. */
    private String fallbackReason(boolean magic) {
        if (settings.fallback != null) {
            return settings.fallback;
        }
        if (libraryFailure != null) {
            return libraryFailure;
        }
        return null;
    }

    /**
     * A native stream for {@code path}, as S3A's create does it: one audit span for the call
     * ({@code invocation}'s counter, S3A's {@code entryPoint}), in which the probes run and
     * which the stream's close re-activates for the parent-marker delete; the
     * {@code files_created} and {@code committer_magic_files_created} counters at create.
     */
    private FSDataOutputStream createNative(Path path, boolean overwrite, boolean magic, Statistic invocation)
            throws IOException {
        Credentials credentials = this.credentials;
        if (credentials == null) {
            throw new IOException("s3native: FileSystem is closed: " + getUri()); // S3A's word for it
        }
        String key = pathToKey(path);
        S3NativeOutputStream out;
        AuditSpan span = entryPoint(invocation, path);
        Map<String, String> fileSettings = withReferrer(settings.map, span);
        try {
            if (invocation == Statistic.INVOCATION_CREATE_NON_RECURSIVE
                    && HadoopLine.createNonRecursiveProbesParent(S3AFileSystem.class.getClassLoader())) {
                checkParentIsDirectory(path);
            }
            if (magic && trackInMemory) {
                return createInMemoryMagic(path, key, credentials, span, fileSettings);
            }
            if (magic) {
                // As S3A: no HEAD/LIST probes on a magic path.
                out = S3NativeOutputStream.openMagic(getBucket(), key, path.toUri().toString(), layout, etags,
                        fileSettings, credentials.source);
            } else {
                // Opening sends no request, so an unsupported setting is found before any probe.
                S3NativeOutputStream.Mode mode = createsIfAbsent(overwrite, invocation)
                        ? S3NativeOutputStream.Mode.CREATE_IF_ABSENT : S3NativeOutputStream.Mode.PUBLISH;
                out = new S3NativeOutputStream(getBucket(), key, mode, fileSettings, credentials.source);
                try {
                    if (!createPerformance) {
                        probe(path, overwrite);
                    }
                } catch (IOException | RuntimeException e) {
                    out.abort();
                    throw e;
                }
            }
        } finally {
            span.deactivate();
        }
        incrementStatistic(Statistic.FILES_CREATED);
        if (magic) {
            incrementStatistic(Statistic.COMMITTER_MAGIC_FILES_CREATED);
            return magicStream(new NativeS3AOutputStream(out, true, downgradeSyncable, null, nativeStatistics));
        }
        NativeS3AOutputStream.AfterClose afterClose = createPerformance ? null : () -> finishedWrite(path, span);
        return new FSDataOutputStream(new NativeS3AOutputStream(out, false, downgradeSyncable, afterClose,
                nativeStatistics), statistics);
    }

    /**
     * Whether S3A would send this create's write with {@code If-None-Match: *} (its
     * conditional create, {@code fs.s3a.create.conditional.enabled}, Hadoop 3.5): when the
     * key is enabled, create-performance mode is on and the flags lack OVERWRITE. Of the
     * calls that come here only {@code createNonRecursive} can lack it: S3A's
     * {@code create} in performance mode always overwrites, whatever its {@code overwrite}
     * argument says. (Explicit conditional writes, {@code fs.option.create.conditional.overwrite},
     * go through the createFile builder, which is stock S3A's.) Without performance mode
     * the probe refuses an existing file, as on every line.
     */
    private boolean createsIfAbsent(boolean overwrite, Statistic invocation) {
        return conditionalCreate && createPerformance && !overwrite
                && invocation == Statistic.INVOCATION_CREATE_NON_RECURSIVE;
    }

    /**
     * A magic file with S3A's in-memory tracker (see {@link InMemoryTracker}): a deferred
     * native upload to the final key, handed to the tracker at close (in the create's span).
     * The tracker counts {@code committer_magic_files_created} itself.
     */
    private FSDataOutputStream createInMemoryMagic(Path path, String key, Credentials credentials, AuditSpan span,
            Map<String, String> fileSettings) throws IOException {
        InMemoryTracker tracker = InMemoryTracker.create(this, path, key);
        S3NativeOutputStream out = new S3NativeOutputStream(getBucket(), tracker.destKey(),
                S3NativeOutputStream.Mode.DEFERRED, fileSettings, credentials.source);
        incrementStatistic(Statistic.FILES_CREATED);
        NativeS3AOutputStream[] stream = new NativeS3AOutputStream[1];
        NativeS3AOutputStream.AfterClose handOver = () -> {
            span.activate();
            try {
                tracker.aboutToComplete(out.getResult(), stream[0].getIOStatistics());
            } catch (IOException | RuntimeException e) {
                try {
                    S3NativeOutputStream.abort(out.getResult(), fileSettings, credentials.source);
                } catch (IOException abortFailure) {
                    e.addSuppressed(abortFailure);
                }
                throw e;
            } finally {
                span.deactivate();
            }
        };
        stream[0] = new NativeS3AOutputStream(out, true, downgradeSyncable, handOver, nativeStatistics);
        return magicStream(stream[0]);
    }

    /**
     * {@code base} plus {@value #AUDIT_REFERRER}, the {@code Referer} header S3A's auditor
     * adds to the requests of {@code span}, when it adds one; otherwise {@code base} itself.
     */
    private static Map<String, String> withReferrer(Map<String, String> base, AuditSpan span) {
        String referrer = AuditReferrer.of(span);
        if (referrer == null) {
            return base;
        }
        Map<String, String> m = new TreeMap<>(base);
        m.put(AUDIT_REFERRER, referrer);
        return m;
    }

    /** The per-file setting naming the {@code Referer} header of each native request. */
    static final String AUDIT_REFERRER = "fs.s3a.native.audit.referrer";

    /**
     * The {@code Referer} header S3A's {@code LoggingAuditor} (the default auditor) adds to
     * each request made in a span when {@code fs.s3a.audit.referrer.enabled} (default true):
     * {@code https://audit.example.org/hadoop/1/<op>/<span id>/?op=..&p1=..&pr=..&ps=..&id=..&t0=..&fs=..&ts=..}
     * (Hadoop's "S3A Auditing" document). S3A exposes no API for it, so it is read by
     * reflection, the same on 3.3.4, 3.4.x and 3.5.0: the span of {@code entryPoint} is
     * {@code ActiveAuditManagerS3A$WrappingAuditSpan}, whose field {@code span} is the
     * auditor's {@code LoggingAuditor$LoggingAuditSpan}; its field {@code referrer} is the
     * span's {@code HttpReferrerAuditHeader}, whose public {@code buildHttpReferrer()} is the
     * value S3A sends, and the auditor's field {@code headerEnabled} says whether it sends it.
     * Another auditor (or a layout that changed) sends no header: null, logged at debug.
     */
    static final class AuditReferrer {
        private static final String WRAPPING = "org.apache.hadoop.fs.s3a.audit.impl.ActiveAuditManagerS3A$WrappingAuditSpan";
        private static final String LOGGING = "org.apache.hadoop.fs.s3a.audit.impl.LoggingAuditor$LoggingAuditSpan";

        private AuditReferrer() {
        }

        static String of(AuditSpan span) {
            try {
                Object inner = span;
                if (inner.getClass().getName().equals(WRAPPING)) {
                    inner = field(inner.getClass(), "span").get(inner);
                }
                if (inner == null || !inner.getClass().getName().equals(LOGGING)) {
                    LOG.debug("s3native: audit span {} is not S3A's logging auditor's: no Referer header", inner);
                    return null;
                }
                Object auditor = field(inner.getClass(), "this$0").get(inner);
                if (!field(auditor.getClass(), "headerEnabled").getBoolean(auditor)) {
                    return null;
                }
                Object header = field(inner.getClass(), "referrer").get(inner);
                if (header == null) {
                    return null;
                }
                Object value = header.getClass().getMethod("buildHttpReferrer").invoke(header);
                return value instanceof String ? (String) value : null;
            } catch (ReflectiveOperationException | RuntimeException e) {
                LOG.debug("s3native: cannot read S3A's audit referrer from {}: {}", span, e.toString());
                return null;
            }
        }

        private static Field field(Class<?> c, String name) throws NoSuchFieldException {
            for (Class<?> k = c; k != null; k = k.getSuperclass()) {
                try {
                    Field f = k.getDeclaredField(name);
                    f.setAccessible(true);
                    return f;
                } catch (NoSuchFieldException e) {
                    // try the superclass
                }
            }
            throw new NoSuchFieldException(c.getName() + "." + name);
        }
    }

    /**
     * A magic stream, its upload already initiated at create (as S3A's): the filesystem's
     * {@code object_multipart_initiated} counts it now, as S3A's does (Hadoop's
     * ITestCommitOperationCost reads it right after create).
     */
    private FSDataOutputStream magicStream(NativeS3AOutputStream stream) {
        long initiated = stream.initiatesAtCreate();
        if (initiated > 0) {
            incrementStatistic(Statistic.OBJECT_MULTIPART_UPLOAD_INITIATED, initiated);
        }
        return new FSDataOutputStream(stream, statistics);
    }

    /** S3A's create checks (in the create's span): a directory at the path, or a file when overwrite is false, fails. */
    private void probe(Path path, boolean overwrite) throws IOException {
        FileStatus status;
        try {
            status = Reflect.innerGetFileStatus(this, path, overwrite);
        } catch (FileNotFoundException e) {
            return;
        }
        if (status.isDirectory()) {
            throw new FileAlreadyExistsException(path + " is a directory");
        }
        if (!overwrite) {
            throw new FileAlreadyExistsException(path + " already exists");
        }
    }

    /**
     * After a successful plain write, in the create's audit span (as S3A's stream does it):
     * parent directory markers as S3A's marker policy says. Not called in create-performance
     * mode, where S3A keeps them.
     */
    private void finishedWrite(Path path, AuditSpan span) throws IOException {
        span.activate();
        try {
            Reflect.deleteParentMarkersIfPolicySays(this, path);
        } finally {
            span.deactivate();
        }
    }

    private void fallingBack(String setting, Path path) throws IOException {
        stockCreates.incrementAndGet();
        if (failOnFallback) {
            throw new UnsupportedSettingException("s3native cannot write " + path + " natively because of " + setting
                    + " and " + NATIVE_FALLBACK + "=fail", setting);
        }
        if (loggedFallbacks.add(setting)) {
            LOG.warn("s3native: writing through stock S3A because of {} (bucket {})", setting, getBucket());
        } else {
            LOG.debug("s3native: {} written through stock S3A because of {}", path, setting);
        }
    }

    @Override
    public void close() throws IOException {
        try {
            super.close();
        } finally {
            Credentials c = credentials;
            credentials = null;
            if (c != null) {
                c.close(); // a create still opening keeps the native source until it is done
            }
        }
    }

    /**
     * The filesystem's own S3A credential provider chain ({@code shareCredentials}, public on
     * Hadoop 3.3.4, 3.4.x and 3.5.0: the list S3A built for this filesystem after per-bucket
     * options, with delegation tokens when those are bound), registered as the native
     * writer's credential source. The share is released on close.
     */
    private static final class Credentials implements AutoCloseable {
        final CredentialSource source;
        private final AutoCloseable share;

        private Credentials(CredentialSource source, AutoCloseable share) {
            this.source = source;
            this.share = share;
        }

        static Credentials share(NativeS3AFileSystem fs) throws IOException {
            AutoCloseable list = fs.shareCredentials("s3native");
            try {
                return new Credentials(CredentialSource.fromAwsSdk(list, "S3A's credential chain for s3a://" + fs.getBucket()), list);
            } catch (IOException | RuntimeException e) {
                closeQuietly(list);
                throw e;
            }
        }

        @Override
        public void close() {
            source.close();
            closeQuietly(share);
        }

        private static void closeQuietly(AutoCloseable c) {
            try {
                c.close();
            } catch (Exception e) {
                LOG.debug("releasing the shared S3A credentials", e);
            }
        }
    }

    // ---- reads: open and openFile -----------------------------------------------------------

    /** {@code true} (default): open and openFile read through the native reader when the file's settings allow it. */
    public static final String NATIVE_READ_ENABLED = "fs.s3a.native.read.enabled";
    /** Hadoop's openFile options ({@code Options.OpenFileOptions}, 3.3.5+) and 3.3.4's S3A ones. */
    static final String OPT_READ_POLICY = "fs.option.openfile.read.policy";
    static final String OPT_LENGTH = "fs.option.openfile.length";
    static final String OPT_SPLIT_END = "fs.option.openfile.split.end";
    static final String S3A_FADVISE = "fs.s3a.experimental.input.fadvise";
    /** The openFile keys the native open understands (as S3A does, or as hints without effect here). */
    private static final Set<String> OPEN_KEYS = Set.of(OPT_READ_POLICY, OPT_LENGTH, "fs.option.openfile.split.start",
            OPT_SPLIT_END, "fs.option.openfile.buffer.size", "fs.option.openfile.footer.cache",
            S3A_FADVISE, "fs.s3a.readahead.range", "fs.s3a.input.async.drain.threshold");

    private boolean readEnabled;
    private final AtomicLong nativeOpens = new AtomicLong();
    private final AtomicLong stockOpens = new AtomicLong();
    private final AtomicLong nativeBytesRead = new AtomicLong();

    /**
     * Opens {@code f} through the native reader (one HEAD for the length and ETag, as S3A's
     * open does; a missing object is a FileNotFoundException here), else through stock S3A
     * (see {@link #readFallbackReason()}).
     */
    @Override
    public FSDataInputStream open(Path f, int bufferSize) throws IOException {
        Path path = makeQualified(f);
        String reason = readFallbackReason();
        if (reason == null) {
            try {
                return openNative(path, null, -1, -1, null, -1);
            } catch (UnsupportedSettingException e) {
                reason = e.getSetting() != null ? e.getSetting() : e.getMessage();
            }
        }
        fallingBackRead(reason, path);
        return super.open(f, bufferSize);
    }

    /**
     * openFile: the read policy ({@code fs.option.openfile.read.policy}, or 3.3.4's
     * {@code fs.s3a.experimental.input.fadvise}; the first word the native reader knows, as
     * S3A maps them: ReadPolicy.parse_list), the length ({@code fs.option.openfile.length})
     * the file status (length and ETag as S3A holds them: no HEAD at open) and the split end
     * ({@code fs.option.openfile.split.end}: the native read-ahead stops there; a hint, reads
     * past it work) go to the native reader. The split start and buffer size are accepted and
     * have no effect. A mandatory key the native
     * open does not know goes to stock S3A, which rejects what it does not know either
     * (IllegalArgumentException, at the call). Open failures complete the future
     * exceptionally, as S3A's do.
     */
    @Override
    public CompletableFuture<FSDataInputStream> openFileWithOptions(Path rawPath, OpenFileParameters parameters)
            throws IOException {
        Path path = makeQualified(rawPath);
        String reason = readFallbackReason();
        for (String k : parameters.getMandatoryKeys()) {
            if (!OPEN_KEYS.contains(k)) {
                // S3A's answer for a mandatory key it does not know (the same set of keys)
                throw new IllegalArgumentException("Unknown mandatory key for " + path + " \"" + k + "\"");
            }
        }
        if (reason == null) {
            FileStatus status = parameters.getStatus();
            if (status != null && !status.getPath().getName().equals(path.getName())) {
                throw new IllegalArgumentException("Filename mismatch between file being opened " + path
                        + " and supplied filestatus " + status.getPath());
            }
            if (status != null && status.isDirectory()) {
                // As S3A: thrown by build() itself, not carried in the future
                throw new FileNotFoundException("Can't open " + path + " because it is a directory");
            }
            Configuration options = parameters.getOptions();
            String policy = options.getTrimmed(OPT_READ_POLICY, options.getTrimmed(S3A_FADVISE));
            CompletableFuture<FSDataInputStream> result = new CompletableFuture<>();
            try {
                // The length of a status is the object's: no HEAD. Its ETag, where it has one (quoted
                // or not: the native reader takes both forms), pins every GET; a status without one
                // (Spark's) leaves the native reader to pin the ETag of the first GET's answer.
                // Without a status, the length option goes to the native reader as declared: it
                // uses it as the S3A input stream of the settings does (fs.s3a.input.stream.type
                // by the line's rule, the core's StreamType): classic trusts it, analytics HEADs.
                String etag = status instanceof org.apache.hadoop.fs.EtagSource
                        ? ((org.apache.hadoop.fs.EtagSource) status).getEtag() : null;
                if (etag != null && etag.isEmpty()) {
                    etag = null;
                }
                long length = status != null ? status.getLen() : -1;
                long declared = status != null ? -1 : declaredLength(options);
                result.complete(openNative(path, policy, length, declared, etag, splitEnd(options)));
                return result;
            } catch (UnsupportedSettingException e) {
                reason = e.getSetting() != null ? e.getSetting() : e.getMessage();
            } catch (IOException | RuntimeException e) {
                result.completeExceptionally(e);
                return result;
            }
        }
        fallingBackRead(reason, path);
        return super.openFileWithOptions(rawPath, parameters);
    }

    /**
     * {@code fs.option.openfile.length}, or -1 (the native reader HEADs) when unset, negative or
     * not a whole number.
     */
    private static long declaredLength(Configuration options) {
        try {
            return Math.max(-1, options.getLong(OPT_LENGTH, -1));
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /** {@code fs.option.openfile.split.end}, or -1 when unset, negative or not a number (as S3A: an unusable hint is none). */
    private static long splitEnd(Configuration options) {
        try {
            return Math.max(-1, options.getLong(OPT_SPLIT_END, -1));
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    private FSDataInputStream openNative(Path path, String policy, long length, long declaredLength, String etag, long splitEnd)
            throws IOException {
        Credentials credentials = this.credentials;
        if (credentials == null) {
            throw new IOException("s3native: FileSystem is closed: " + getUri());
        }
        String key = pathToKey(path);
        if (key.isEmpty()) {
            throw new FileNotFoundException("Can't open " + path + " because it is a directory");
        }
        AuditSpan span = entryPoint(Statistic.INVOCATION_OPEN, path);
        S3NativeInputStream in;
        try {
            in = S3NativeInputStream.open(getBucket(), key, withReferrer(settings.map, span), credentials.source, policy,
                    length, declaredLength, etag, splitEnd);
        } finally {
            span.deactivate();
        }
        nativeOpens.incrementAndGet();
        IOStatistics s3a = super.getIOStatistics();
        return new FSDataInputStream(NativeS3AInputStream.create(in, statistics,
                s3a instanceof IOStatisticsAggregator ? (IOStatisticsAggregator) s3a : null, nativeBytesRead, s3aCounters));
    }

    /** Why reads of this filesystem go to stock S3A before the native reader is asked, or null. */
    private String readFallbackReason() {
        if (!readEnabled) {
            return NATIVE_READ_ENABLED;
        }
        return fallbackReason(false);
    }

    private void fallingBackRead(String setting, Path path) throws IOException {
        stockOpens.incrementAndGet();
        if (failOnFallback) {
            throw new UnsupportedSettingException("s3native cannot read " + path + " natively because of " + setting
                    + " and " + NATIVE_FALLBACK + "=fail", setting);
        }
        if (loggedFallbacks.add("read: " + setting)) {
            LOG.warn("s3native: reading through stock S3A because of {} (bucket {})", setting, getBucket());
        } else {
            LOG.debug("s3native: {} read through stock S3A because of {}", path, setting);
        }
    }

    /** Files opened natively by this instance (for tests and metrics). */
    public long getNativeOpenCount() {
        return nativeOpens.get();
    }

    /** Bytes the native streams of this instance handed to callers (added as each stream closes). */
    public long getNativeBytesRead() {
        return nativeBytesRead.get();
    }

    /** Files this instance opened through stock S3A (fallback). */
    public long getStockOpenCount() {
        return stockOpens.get();
    }

    /** Files created natively by this instance (for tests and metrics). */
    public long getNativeCreateCount() {
        return nativeCreates.get();
    }

    /** Files this instance sent to stock S3A (fallback). */
    public long getStockCreateCount() {
        return stockCreates.get();
    }

    /** The setting that keeps every write of this filesystem on stock S3A, or null. */
    public String getFallbackSetting() {
        return settings.fallback;
    }

    // ---- the native library, the INFO line, statistics ---------------------------------------

    /** Why the native library cannot load, as a fallback reason; null when it loaded (or was not needed). */
    private String libraryFailure;
    /** Where native streams put their statistics; set by initialize. */
    private NativeS3AOutputStream.FileSystemStatistics nativeStatistics;
    /** S3AInstrumentation's counters, for the native streams (set by initialize; null without instrumentation). */
    private NativeS3AOutputStream.FileSystemStatistics.Instrumentation s3aCounters;

    /**
     * End of initialize: when writes would be native, load the library (once per class loader);
     * if it cannot load, every write falls back naming the load error; else log the one INFO
     * line with the figures the native writer will use.
     */
    private void checkLibraryAndAnnounce() throws IOException {
        s3aCounters = instrumentationCounters();
        nativeStatistics = new NativeS3AOutputStream.FileSystemStatistics(super.getIOStatistics(), s3aCounters);
        if (settings.fallback != null) {
            return;
        }
        String failure = NativeLibrary.loadFailure();
        if (failure != null) {
            libraryFailure = "the native library (" + failure + ")";
            return;
        }
        // The settings as the native writer reads them: a bad value fails here, naming its key,
        // not at the first write; one the native writer cannot honour falls back from here on.
        S3NativeOutputStream.SettingsCheck check;
        try {
            check = S3NativeOutputStream.checkSettings(getBucket(), settings.map);
            for (String warning : check.warnings()) {
                LOG.warn("s3native: {}", warning);
            }
        } catch (UnsupportedSettingException e) {
            settings = NativeSettings.fallback(e.getSetting() != null ? e.getSetting() : e.getMessage());
            return;
        } catch (InvalidSettingException e) {
            if (e.getSetting().contains(".native.")) {
                throw e; // s3native's own key: a typo fails here, naming it
            }
            // An S3A key the native writer reads more strictly than S3A: stock S3A writes (one WARN).
            settings = NativeSettings.fallback(e.getSetting() + " (" + e.getMessage() + ")");
            return;
        }
        credentials = Credentials.share(this);
        LOG.info("s3native: native writes for s3a://{} ({})", getBucket(), writeSettingsSummary(check));
    }

    /**
     * {@code memory budget 1 GiB, target 5 Gbps, 13 connections, part size 8 MiB, 13 parts in
     * flight}: the native writer's effective values (its defaults, S3A's rounding of
     * {@code fs.s3a.multipart.size}, and the process's budget, target and connections once
     * fixed), as {@link S3NativeOutputStream#checkSettings} reports them.
     */
    static String writeSettingsSummary(S3NativeOutputStream.SettingsCheck check) {
        return "memory budget " + size(check.number("memory_budget")) + ", target "
                + java.math.BigDecimal.valueOf(check.number("target_throughput_mbps"), 3).stripTrailingZeros().toPlainString()
                + " Gbps, " + check.number("connections") + " connections, part size " + size(check.number("part_size"))
                + ", " + check.number("parts_in_flight") + " parts in flight";
    }

    private static String size(long b) {
        String[] units = {"GiB", "MiB", "KiB"};
        long[] sizes = {1L << 30, 1L << 20, 1L << 10};
        for (int i = 0; i < units.length; i++) {
            if (b >= sizes[i] && b % sizes[i] == 0) {
                return (b / sizes[i]) + " " + units[i];
            }
        }
        return b + " bytes";
    }

    /**
     * S3AInstrumentation's counters, for the native streams' merge: S3A counts its requests
     * and a stream's close through {@code incrementCounter} (its metrics, which Hadoop's cost
     * tests read, and its store), not only into the store. On 3.4+ (the {@code __magic_job-}
     * layout's lines) S3A's merge also adds the store's {@code committer_magic_marker_put}
     * to the metric, and its stream statistics carry the requests' durations; 3.3.4's do
     * not (checked against stock S3A on each line by RequestCostTest).
     */
    private NativeS3AOutputStream.FileSystemStatistics.Instrumentation instrumentationCounters() {
        final org.apache.hadoop.fs.s3a.S3AInstrumentation instrumentation = getInstrumentation();
        if (instrumentation == null) {
            return null;
        }
        final boolean magicMarkerMetric = HadoopLine.magicLayout(getClass().getClassLoader()) == MagicLayout.MAGIC_JOB;
        return new NativeS3AOutputStream.FileSystemStatistics.Instrumentation() {
            @Override
            public void increment(String name, long value) {
                Statistic statistic = Statistic.fromSymbol(name);
                if (statistic != null && value != 0) {
                    instrumentation.incrementCounter(statistic, value);
                }
            }

            @Override
            public void incrementMetric(String name, long value) {
                Object metric = instrumentation.lookupMetric(name);
                if (metric instanceof org.apache.hadoop.metrics2.lib.MutableCounterLong && value > 0) {
                    ((org.apache.hadoop.metrics2.lib.MutableCounterLong) metric).incr(value);
                }
            }

            @Override
            public boolean mergeCountsMagicMarkerMetric() {
                return magicMarkerMetric;
            }

            @Override
            public boolean streamCountsRequests() {
                return magicMarkerMetric; // the same lines: 3.4+
            }
        };
    }

    /**
     * S3A's IOStatistics of this filesystem and the native totals ({@code s3native.*}). S3A
     * itself casts this to its IOStatisticsStore only inside initialize (the CSE gauge, 3.3.4
     * to 3.5.0), before {@code nativeStatistics} is set, so it gets its own store there.
     */
    @Override
    public IOStatistics getIOStatistics() {
        IOStatistics s3a = super.getIOStatistics();
        return nativeStatistics == null ? s3a : nativeStatistics.view(s3a);
    }

    /**
     * {@code key} as a boolean ({@code true} or {@code false}, any case), {@code def} when
     * unset; anything else fails initialize naming the key (Hadoop's getBoolean would take a
     * typo such as {@code flase} for the default).
     */
    private static boolean strictBoolean(Configuration conf, String key, boolean def) {
        String v = conf.getTrimmed(key);
        if (v == null || v.isEmpty()) {
            return def;
        }
        if (v.equalsIgnoreCase("true") || v.equalsIgnoreCase("false")) {
            return Boolean.parseBoolean(v);
        }
        throw new IllegalArgumentException(key + " must be 'true' or 'false', not '" + v + "'");
    }

    private static boolean hasConstant(String name) {
        try {
            org.apache.hadoop.fs.s3a.Constants.class.getField(name);
            return true;
        } catch (NoSuchFieldException e) {
            return false;
        }
    }

    /** Reflection on S3AFileSystem members that are not public or differ between Hadoop lines. */
    static final class Reflect {
        private Reflect() {
        }

        /**
         * S3A's create-performance mode (no probes, parent markers kept): on Hadoop 3.4+ the
         * {@code create} flag of {@code fs.s3a.performance.flags} ({@code create}, {@code *})
         * or {@code fs.s3a.create.performance}, as S3A's {@code getPerformanceFlags()} says;
         * {@code fs.s3a.create.performance} where the line has it but no flags (3.3.5+); never
         * on 3.3.4.
         */
        static boolean createPerformance(S3AFileSystem fs, Configuration conf) {
            try {
                Object flags = S3AFileSystem.class.getMethod("getPerformanceFlags").invoke(fs);
                @SuppressWarnings({"unchecked", "rawtypes"})
                Enum<?> create = Enum.valueOf((Class) Class.forName("org.apache.hadoop.fs.s3a.api.PerformanceFlagEnum",
                        false, S3AFileSystem.class.getClassLoader()), "Create");
                boolean enabled = (Boolean) flags.getClass().getMethod("enabled", Enum.class).invoke(flags, create);
                return enabled || conf.getBoolean(CREATE_PERFORMANCE, false);
            } catch (NoSuchMethodException | ClassNotFoundException e) {
                return hasConstant("FS_S3A_CREATE_PERFORMANCE") && conf.getBoolean(CREATE_PERFORMANCE, false);
            } catch (InvocationTargetException | IllegalAccessException e) {
                throw new IllegalStateException("s3native: cannot read S3A's performance flags", e);
            }
        }

        /**
         * S3A's {@code fs.s3a.create.conditional.enabled} with S3A's default, read through S3A's
         * own constants ({@code FS_S3A_CONDITIONAL_CREATE_ENABLED}, its default), so only a line
         * that has conditional create (3.5+) can enable it; false on 3.3 and 3.4.
         */
        static boolean conditionalCreateEnabled(Configuration conf) {
            try {
                Class<?> constants = org.apache.hadoop.fs.s3a.Constants.class;
                String key = (String) constants.getField("FS_S3A_CONDITIONAL_CREATE_ENABLED").get(null);
                boolean byDefault = constants.getField("DEFAULT_FS_S3A_CONDITIONAL_CREATE_ENABLED").getBoolean(null);
                return conf.getBoolean(key, byDefault);
            } catch (NoSuchFieldException e) {
                return false;
            } catch (IllegalAccessException e) {
                throw new IllegalStateException("s3native: cannot read S3A's conditional create constants", e);
            }
        }

        /** S3A's create probe: directories only when overwriting, else file and directory. */
        static FileStatus innerGetFileStatus(S3AFileSystem fs, Path path, boolean overwrite) throws IOException {
            return innerGetFileStatus(fs, path, overwrite ? "DIRECTORIES" : "ALL");
        }

        /** S3A's getFileStatus with the probes of {@code StatusProbeEnum.<probes>} (ALL, DIRECTORIES, HEAD_ONLY). */
        static FileStatus innerGetFileStatus(S3AFileSystem fs, Path path, String probes) throws IOException {
            try {
                Class<?> probeEnum = Class.forName("org.apache.hadoop.fs.s3a.impl.StatusProbeEnum", false,
                        S3AFileSystem.class.getClassLoader());
                Object set = probeEnum.getField(probes).get(null);
                Method m = S3AFileSystem.class.getDeclaredMethod("innerGetFileStatus", Path.class, boolean.class, Set.class);
                m.setAccessible(true);
                return (FileStatus) m.invoke(fs, path, false, set);
            } catch (InvocationTargetException e) {
                throw rethrow(e);
            } catch (ReflectiveOperationException | RuntimeException e) {
                LOG.debug("innerGetFileStatus unavailable, using getFileStatus", e);
                return fs.getFileStatus(path);
            }
        }

        /**
         * Hadoop 3.3/3.4 with {@code fs.s3a.directory.marker.retention=delete} (or authoritative
         * paths) delete the parent markers after a write; 3.5 always keeps them.
         */
        static void deleteParentMarkersIfPolicySays(S3AFileSystem fs, Path path) throws IOException {
            Method policyGetter;
            try {
                policyGetter = S3AFileSystem.class.getMethod("getDirectoryMarkerPolicy");
            } catch (NoSuchMethodException e) {
                return; // this line always keeps directory markers
            }
            Path parent = path.getParent();
            if (parent == null) {
                return;
            }
            try {
                Object policy = policyGetter.invoke(fs);
                Method keep = policy.getClass().getMethod("keepDirectoryMarkers", Path.class);
                keep.setAccessible(true);
                if ((Boolean) keep.invoke(policy, path)) {
                    return;
                }
                for (Method m : S3AFileSystem.class.getDeclaredMethods()) {
                    if (m.getName().equals("deleteUnnecessaryFakeDirectories")) {
                        m.setAccessible(true);
                        Object[] args = new Object[m.getParameterCount()];
                        args[0] = parent; // 3.3 has a second argument, the (null) bulk operation state
                        m.invoke(fs, args);
                        return;
                    }
                }
                LOG.warn("s3native: cannot delete the directory markers above {}: no deleteUnnecessaryFakeDirectories", path);
            } catch (InvocationTargetException e) {
                throw rethrow(e);
            } catch (ReflectiveOperationException e) {
                throw new IOException("s3native: cannot apply the directory marker policy after writing " + path, e);
            }
        }

        /** The IOException a reflective call raised (a RuntimeException or Error is thrown as it is). */
        static IOException rethrow(InvocationTargetException e) {
            Throwable t = e.getCause();
            if (t instanceof IOException) {
                return (IOException) t;
            }
            if (t instanceof RuntimeException) {
                throw (RuntimeException) t;
            }
            if (t instanceof Error) {
                throw (Error) t;
            }
            return new IOException(t);
        }
    }
}
