package io.s3native;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Properties;

/**
 * Loads the native library, once per class loader that loaded this class.
 *
 * <p>Where from, in this order:
 * <ol>
 *   <li>{@code -Ds3native.library.path=FILE_OR_DIR} when set (a file, or a directory holding
 *       {@code libs3native.so}); nothing else is tried then;</li>
 *   <li>the copy packed in the jar, {@code /native/<os>-<arch>/libs3native.so}, extracted to a
 *       temporary file whose name carries the library version;</li>
 *   <li>{@code java.library.path} ({@link System#loadLibrary}).</li>
 * </ol>
 *
 * <p>A JVM binds a given library file to one class loader only, so every load from the jar
 * extracts its own temporary copy (deleted again once loaded), and a file named by
 * {@code s3native.library.path} that another class loader already holds is loaded through a
 * temporary copy too. Two class loaders in one JVM (Spark's child loader, Druid's extension
 * loaders) thus each get a working, independent copy.
 *
 * <p>Failure: one {@link UnsatisfiedLinkError} naming the platform and every path tried (with
 * each path's own error: wrong architecture or glibc, not an ELF file, a temporary directory
 * mounted {@code noexec}, a security manager that forbids loading), remembered and thrown
 * again by every later {@link #load()}. {@link #loadFailure()} returns that message instead.
 * The writer classes turn it into an {@link IOException} ({@code Native.load()}).
 */
public final class NativeLibrary {
    /** System property naming the library file (or its directory) to load. */
    public static final String PATH_PROPERTY = "s3native.library.path";

    private static final String NAME = "s3native";

    private static boolean loaded;
    /** True while this class loader's first {@link #load()} runs (the version check re-enters it). */
    private static boolean loading;
    private static UnsatisfiedLinkError failure;

    private NativeLibrary() {
    }

    /** The platform as named in the jar's resource path, e.g. {@code linux-x86_64}. */
    public static String platform() {
        String os = System.getProperty("os.name", "unknown").toLowerCase(Locale.ROOT);
        if (os.startsWith("linux")) {
            os = "linux";
        } else if (os.startsWith("mac") || os.startsWith("darwin")) {
            os = "darwin";
        } else if (os.startsWith("windows")) {
            os = "windows";
        } else {
            os = os.replaceAll("[^a-z0-9]", "");
        }
        String arch = System.getProperty("os.arch", "unknown").toLowerCase(Locale.ROOT);
        switch (arch) {
            case "amd64":
            case "x86_64":
                arch = "x86_64";
                break;
            case "aarch64":
            case "arm64":
                arch = "aarch64";
                break;
            default:
                arch = arch.replaceAll("[^a-z0-9_]", "");
        }
        return os + "-" + arch;
    }

    /** The jar resource that holds the library for this platform. */
    public static String resourcePath() {
        return "/native/" + platform() + "/" + System.mapLibraryName(NAME);
    }

    /** The version of this jar (and of the library it expects). */
    public static String version() {
        Properties p = new Properties();
        try (InputStream in = NativeLibrary.class.getResourceAsStream("s3native.properties")) {
            if (in != null) {
                p.load(in);
            }
        } catch (IOException e) {
            // fall through to "unknown"
        }
        String v = p.getProperty("version", "unknown");
        return v.startsWith("${") ? "unknown" : v;
    }

    /** True when the library is (or can now be) loaded. */
    public static boolean isAvailable() {
        return loadFailure() == null;
    }

    /**
     * Load the library if not yet done; null when it is loaded, else the message of the load
     * failure (the platform and every path tried, each with its error). Never throws.
     */
    public static String loadFailure() {
        try {
            load();
            return null;
        } catch (UnsatisfiedLinkError e) {
            return e.getMessage();
        }
    }

    /**
     * Load the library if this class loader has not yet. Idempotent; a failure is remembered
     * and thrown again.
     *
     * @throws UnsatisfiedLinkError naming the platform and the paths tried
     */
    public static synchronized void load() {
        if (loaded || loading) {
            // loading: the version check below calls a native method on this thread; the
            // library is bound already.
            return;
        }
        if (failure != null) {
            throw failure;
        }
        List<String> tried = new ArrayList<>();
        loading = true;
        try {
            if (tryLoad(tried)) {
                checkVersion();
                loaded = true;
                addShutdownHook();
                return;
            }
        } catch (UnsatisfiedLinkError e) {
            tried.add(e.getMessage());
        } catch (SecurityException e) {
            tried.add("a security manager forbids it (" + e.getMessage() + ")");
        } finally {
            loading = false;
        }
        loaded = false;
        failure = new UnsatisfiedLinkError("s3native: cannot load the native library for platform " + platform()
                + " (os.name=" + System.getProperty("os.name") + ", os.arch=" + System.getProperty("os.arch")
                + "); tried: " + String.join("; ", tried));
        throw failure;
    }

    /** One hook per loaded copy of the library: abort what is still open when the JVM exits. */
    private static void addShutdownHook() {
        try {
            Runtime.getRuntime().addShutdownHook(new Thread(Native::abortOpenUploadsQuietly, "s3native-abort-open-uploads"));
        } catch (IllegalStateException | SecurityException e) {
            // The JVM is shutting down already, or a security manager forbids hooks: the
            // Cleaner still aborts unreachable streams.
        }
    }

    private static void checkVersion() {
        String expected = version();
        String actual = Native.version();
        if (!"unknown".equals(expected) && !expected.equals(actual)) {
            throw new UnsatisfiedLinkError("s3native: the native library is version " + actual
                    + " but this jar is version " + expected);
        }
    }

    private static boolean tryLoad(List<String> tried) {
        String configured = System.getProperty(PATH_PROPERTY);
        if (configured != null && !configured.isEmpty()) {
            File f = new File(configured);
            if (f.isDirectory()) {
                f = new File(f, System.mapLibraryName(NAME));
            }
            if (!f.isFile()) {
                tried.add("-D" + PATH_PROPERTY + "=" + configured + " (no such file: " + f + ")");
                return false;
            }
            try {
                System.load(f.getAbsolutePath());
                return true;
            } catch (SecurityException e) {
                tried.add("-D" + PATH_PROPERTY + "=" + f + " (a security manager forbids it: " + e.getMessage() + ")");
                return false;
            } catch (UnsatisfiedLinkError e) {
                if (!String.valueOf(e.getMessage()).contains("another classloader")) {
                    tried.add("-D" + PATH_PROPERTY + "=" + f + " (" + e.getMessage() + ")");
                    return false;
                }
            }
            // Held by another class loader: load a private copy.
            try {
                loadCopy(Files.newInputStream(f.toPath()));
                return true;
            } catch (IOException | UnsatisfiedLinkError | SecurityException e) {
                tried.add("-D" + PATH_PROPERTY + "=" + f + " (copy for this class loader: " + e.getMessage() + ")");
                return false;
            }
        }
        tried.add("-D" + PATH_PROPERTY + " (not set)");

        String resource = resourcePath();
        InputStream in = NativeLibrary.class.getResourceAsStream(resource);
        if (in == null) {
            tried.add("jar resource " + resource + " (not in the jar)");
        } else {
            try {
                loadCopy(in);
                return true;
            } catch (IOException | UnsatisfiedLinkError | SecurityException e) {
                // A temporary directory mounted noexec fails here ("failed to map segment").
                tried.add("jar resource " + resource + " (copied to java.io.tmpdir=" + System.getProperty("java.io.tmpdir")
                        + ": " + e.getMessage() + "; if that directory is mounted noexec, set -Djava.io.tmpdir or -D"
                        + PATH_PROPERTY + ")");
            }
        }

        try {
            System.loadLibrary(NAME);
            return true;
        } catch (UnsatisfiedLinkError | SecurityException e) {
            tried.add("java.library.path=" + System.getProperty("java.library.path") + " (" + e.getMessage() + ")");
        }
        return false;
    }

    /** Copy the library to a fresh temporary file, load it, and delete the file. */
    private static void loadCopy(InputStream source) throws IOException {
        String file = System.mapLibraryName(NAME);
        int dot = file.lastIndexOf('.');
        Path tmp = Files.createTempFile(file.substring(0, dot) + "-" + version() + "-", file.substring(dot));
        try (InputStream in = source) {
            Files.copy(in, tmp, StandardCopyOption.REPLACE_EXISTING);
            System.load(tmp.toAbsolutePath().toString());
        } finally {
            // The loaded mapping stays valid on Linux and macOS; on Windows the file is in use.
            if (!deleteQuietly(tmp)) {
                tmp.toFile().deleteOnExit();
            }
        }
    }

    private static boolean deleteQuietly(Path p) {
        try {
            Files.deleteIfExists(p);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

}
