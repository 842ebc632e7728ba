package io.s3native.hadoop;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.contract.AbstractContractCreateTest;
import org.apache.hadoop.fs.contract.AbstractFSContract;

/** The create/overwrite contract tests against stock S3AFileSystem on the same server, to compare with ours. */
public class StockS3AContractCreateTest extends AbstractContractCreateTest {
    @Override
    protected Configuration createConfiguration() {
        return NativeS3AContract.configuration(false, "contract-s");
    }

    @Override
    protected AbstractFSContract createContract(Configuration conf) {
        return new NativeS3AContract(conf);
    }
}
