package io.s3native;

/**
 * An invalid value of a setting (the native writer's {@code InvalidArgument} naming a key):
 * an {@link IllegalArgumentException} that says which key.
 */
public class InvalidSettingException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    private final String setting;

    public InvalidSettingException(String message, String setting) {
        super(message);
        this.setting = setting;
    }

    /** The setting key at fault, e.g. {@code fs.s3a.native.part.size}. */
    public String getSetting() {
        return setting;
    }
}
