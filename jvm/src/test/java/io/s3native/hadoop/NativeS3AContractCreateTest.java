package io.s3native.hadoop;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.contract.AbstractContractCreateTest;
import org.apache.hadoop.fs.contract.AbstractFSContract;

/**
 * Hadoop's own create/overwrite contract tests (hadoop-common's test jar: JUnit 4 on 3.3.4
 * and 3.4.1, JUnit 5 on 3.5.0) against {@link NativeS3AFileSystem} on the local server.
 * {@link StockS3AContractCreateTest} runs the same tests against stock S3AFileSystem.
 *
 * <p>Results on moto 5.1.22, the same for ours and for stock S3A on 3.3.4, 3.4.1 and 3.5.0:
 * 14 pass, none fails, 2 are skipped by the contract itself because S3A declares
 * {@code create-visibility-delayed} and {@code is-blobstore} (an object appears on close):
 * testCreatedFileIsImmediatelyVisible and testCreatedFileIsVisibleOnFlush.
 * testCreateFileUnderFile and testCreateUnderFileSubdir pass although S3A, like us, does not
 * check the parents on create (the contract accepts a create under a file that succeeds).
 * The tests' {@code create(...)} calls go native ({@code fs.s3a.native.fallback=fail} here);
 * their builder variants ({@code createFile(path).build()}) are stock S3A by design.
 */
public class NativeS3AContractCreateTest extends AbstractContractCreateTest {
    @Override
    protected Configuration createConfiguration() {
        return NativeS3AContract.configuration(true, "contract-n");
    }

    @Override
    protected AbstractFSContract createContract(Configuration conf) {
        return new NativeS3AContract(conf);
    }
}
