package io.s3native;

import java.io.IOException;

/**
 * A valid setting that the native writer cannot honour (a canned ACL, client-side
 * encryption, ...). The Hadoop layer catches it to write the file through stock S3A instead.
 */
public class UnsupportedSettingException extends IOException {
    private static final long serialVersionUID = 1L;

    private final String setting;

    public UnsupportedSettingException(String message, String setting) {
        super(message);
        this.setting = setting;
    }

    /** The setting key at fault, e.g. {@code fs.s3a.acl.default}; may be null. */
    public String getSetting() {
        return setting;
    }
}
