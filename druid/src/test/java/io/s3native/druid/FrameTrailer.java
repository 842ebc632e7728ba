package io.s3native.druid;

import org.apache.druid.frame.file.FrameFileWriter;

/** The frame file trailer's length, from Druid's writer. */
final class FrameTrailer {
    static final int LENGTH = FrameFileWriter.TRAILER_LENGTH;

    private FrameTrailer() {
    }
}
