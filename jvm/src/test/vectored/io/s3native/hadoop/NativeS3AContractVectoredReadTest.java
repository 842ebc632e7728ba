package io.s3native.hadoop;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.contract.AbstractContractVectoredReadTest;
import org.apache.hadoop.fs.contract.AbstractFSContract;

/**
 * Hadoop's vectored read contract tests (3.4.x: JUnit 4 Parameterized; 3.5.0: JUnit 5
 * ParameterizedClass; over heap and direct buffers) on {@link NativeS3AFileSystem} reading
 * natively. Only on the lines with FileRange: compiled from src/test/vectored by the 3.4+
 * profiles.
 */
public class NativeS3AContractVectoredReadTest extends AbstractContractVectoredReadTest {
    private static final NativeReadCheck CHECK = new NativeReadCheck();

    public NativeS3AContractVectoredReadTest(String bufferType) {
        super(bufferType);
    }

    @Override
    protected Configuration createConfiguration() {
        return NativeS3AContract.configuration(true, "contract-v");
    }

    @Override
    protected AbstractFSContract createContract(Configuration conf) {
        return new NativeS3AContract(conf);
    }

    @org.junit.After
    @org.junit.jupiter.api.AfterEach
    @Override
    public void teardown() throws Exception {
        CHECK.record(getFileSystem());
        super.teardown();
    }

    @org.junit.AfterClass
    @org.junit.jupiter.api.AfterAll
    public static void readNatively() {
        CHECK.assertNative("NativeS3AContractVectoredReadTest");
    }
}
