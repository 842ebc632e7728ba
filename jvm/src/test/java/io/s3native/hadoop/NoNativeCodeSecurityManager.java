package io.s3native.hadoop;

import java.security.Permission;

/**
 * A security manager that forbids loading s3native's library and allows everything else, for
 * a child JVM started with {@code -Djava.security.manager=io.s3native.hadoop.NoNativeCodeSecurityManager}
 * (Java 17 still honours it, with a deprecation warning): a site policy that does not grant
 * {@code loadLibrary} to the jar (the JDK's own libraries, which a policy grants to the
 * platform, still load).
 */
@SuppressWarnings("removal")
public final class NoNativeCodeSecurityManager extends SecurityManager {
    static final String MESSAGE = "s3native test policy: native code is not allowed";

    @Override
    public void checkPermission(Permission perm) {
        if (perm instanceof RuntimePermission && perm.getName().startsWith("loadLibrary.")
                && perm.getName().contains("s3native")) {
            throw new SecurityException(MESSAGE + " (" + perm.getName() + ")");
        }
    }

    @Override
    public void checkPermission(Permission perm, Object context) {
        checkPermission(perm);
    }
}
