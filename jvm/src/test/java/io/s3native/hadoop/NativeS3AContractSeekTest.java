package io.s3native.hadoop;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.contract.AbstractContractSeekTest;
import org.apache.hadoop.fs.contract.AbstractFSContract;

/**
 * Hadoop's own seek contract tests (hadoop-common's test jar: JUnit 4 on 3.3.4 and 3.4.x,
 * JUnit 5 on 3.5.0) on {@link NativeS3AFileSystem} reading natively
 * ({@code fs.s3a.native.fallback=fail}: a stock open raises); the class must show native
 * reads ({@link NativeReadCheck}).
 */
public class NativeS3AContractSeekTest extends AbstractContractSeekTest {
    private static final NativeReadCheck CHECK = new NativeReadCheck();

    @Override
    protected Configuration createConfiguration() {
        return NativeS3AContract.configuration(true, "contract-r");
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
        CHECK.assertNative("NativeS3AContractSeekTest");
    }
}
