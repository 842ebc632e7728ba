package io.s3native;

import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.Map;

/**
 * The second JVM of the cross-process tests:
 * <pre>
 *   complete RESULT_FILE ENDPOINT    complete the deferred upload in RESULT_FILE (JSON)
 *   abort    RESULT_FILE ENDPOINT    abort it
 *   hold     BUCKET KEY ENDPOINT     open a stream, write 6 MiB (one part uploads), print
 *                                    "READY", then wait to be killed
 *   exit     BUCKET KEY ENDPOINT     the same, then System.exit(0) with the stream open
 *   load                             load the library; print "LOADED" or the error message
 *   vectored-interrupt BUCKET KEY ENDPOINT
 *                                    with a 16 MiB budget, hold 10 MiB of it by a writer
 *                                    (KEY-w, its first part slowed by the caller), then
 *                                    readRanges all of KEY (12 MiB: it waits for the
 *                                    budget) and interrupt that wait after 1.5 s; print
 *                                    "INTERRUPTED <flag set>" or "NOT INTERRUPTED"
 * </pre>
 */
public final class ChildMain {
    private ChildMain() {
    }

    public static void main(String[] args) throws Exception {
        switch (args[0]) {
            case "complete": {
                UploadResult r = UploadResult.fromJson(Files.readString(Paths.get(args[1])));
                S3NativeOutputStream.complete(r, S3Test.settings(args[2]));
                System.out.println("COMPLETED " + r.getKey());
                break;
            }
            case "abort": {
                UploadResult r = UploadResult.fromJson(Files.readString(Paths.get(args[1])));
                S3NativeOutputStream.abort(r, S3Test.settings(args[2]));
                System.out.println("ABORTED " + r.getKey());
                break;
            }
            case "hold":
            case "exit": {
                Map<String, String> settings = S3Test.settings(args[3]);
                S3NativeOutputStream out = new S3NativeOutputStream(args[1], args[2], S3NativeOutputStream.Mode.PUBLISH, settings);
                out.write(S3Test.data(S3Test.PART + 1024 * 1024, 7));
                // Wait until part 1 is on the server: an upload exists.
                while (out.getStatistics().getPartsUploaded() < 1) {
                    Thread.sleep(20);
                }
                System.out.println("READY");
                System.out.flush();
                if (args[0].equals("exit")) {
                    System.exit(0); // the stream is still open: the shutdown hook aborts it
                }
                Thread.sleep(600_000);
                out.close();
                break;
            }
            case "vectored-interrupt": {
                Map<String, String> settings = new java.util.HashMap<>(S3Test.settings(args[3]));
                settings.put("fs.s3a.native.memory.budget", "16M");
                settings.put("fs.s3a.native.parts.in.flight", "1");
                S3NativeOutputStream out = new S3NativeOutputStream(args[1], args[2] + "-w", S3NativeOutputStream.Mode.PUBLISH,
                        settings);
                out.write(S3Test.data(S3Test.PART + 1024 * 1024, 7)); // part 1 uploads (slowly), part 2 fills
                S3NativeInputStream in = S3NativeInputStream.open(args[1], args[2], settings, null,
                        S3NativeInputStream.ReadPolicy.RANDOM, -1, null);
                Thread waiting = Thread.currentThread();
                Thread interrupter = new Thread(() -> {
                    try {
                        Thread.sleep(1500);
                    } catch (InterruptedException e) {
                        return;
                    }
                    waiting.interrupt();
                });
                interrupter.start();
                try {
                    in.readRanges(new long[] {0}, new int[] {(int) in.getLength()}).close();
                    System.out.println("NOT INTERRUPTED");
                } catch (java.io.InterruptedIOException e) {
                    System.out.println("INTERRUPTED " + Thread.currentThread().isInterrupted());
                }
                System.out.flush();
                System.exit(0); // the writer is still open: the shutdown hook aborts its upload
                break;
            }
            case "load": {
                try {
                    NativeLibrary.load();
                    System.out.println("LOADED");
                } catch (UnsatisfiedLinkError e) {
                    System.out.println(e.getMessage());
                }
                break;
            }
            default:
                throw new IllegalArgumentException("unknown command " + args[0]);
        }
    }
}
