#!/usr/bin/env bash
# Checks that a libs3native.so loads on the manylinux2014 baseline (x86_64, glibc 2.17): an
# x86-64 ELF whose versioned symbols need at most GLIBC_2.17, GLIBCXX_3.4.19, CXXABI_1.3.7 and
# GCC_4.8.0 (objdump -T), with no strong undefined symbol left unversioned, and whose NEEDED
# libraries are only glibc's own (objdump -p). No machine here has an old glibc, so this is
# the check. Prints what it found in one line; exits 1 when the library would not load there. Usage: scripts/glibc-check.sh <lib.so>
set -euo pipefail
lib="${1:?usage: $0 <libs3native.so>}"
[ -f "$lib" ] || { echo "glibc-check: no $lib" >&2; exit 1; }

declare -A limit=([GLIBC]=2.17 [GLIBCXX]=3.4.19 [CXXABI]=1.3.7 [GCC]=4.8.0)
NEEDED_OK='^(libc\.so\.6|libm\.so\.6|libpthread\.so\.0|libdl\.so\.2|librt\.so\.1|ld-linux-x86-64\.so\.2)$'

# a <= b in version order
le() { [ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | tail -n 1)" = "$2" ]; }

problems=()
format=$(objdump -f "$lib" | sed -n 's/.*file format //p')
[ "$format" = elf64-x86-64 ] || problems+=("format $format, not elf64-x86-64")

# The versions of the symbols it needs: the version column of objdump -T's undefined
# symbols, "(GLIBC_2.14)" (binutils 2.35+) or "GLIBC_2.14".
versions=$(objdump -T "$lib" | awk '$0 ~ /[*]UND[*]/' \
    | grep -oE '[ (](GLIBC|GLIBCXX|CXXABI|GCC)_[^ )]*' | tr -d ' (' | sort -u || true)
found=()
for family in GLIBC GLIBCXX CXXABI GCC; do
    vs=$(grep -E "^${family}_" <<<"$versions" | sed "s/^${family}_//" || true)
    [ -n "$vs" ] || { found+=("no ${family}_"); continue; }
    max=""
    for v in $vs; do
        if [[ $v =~ ^[0-9]+(\.[0-9]+)*$ ]]; then
            if [ -z "$max" ] || ! le "$v" "$max"; then max=$v; fi
        else
            problems+=("needs ${family}_$v")  # e.g. GLIBC_PRIVATE
        fi
    done
    [ -n "$max" ] || continue
    found+=("highest ${family}_$max")
    le "$max" "${limit[$family]}" || problems+=("${family}_$max above ${family}_${limit[$family]}")
done

# A strong undefined symbol with no version is one no glibc library promises (weak ones, like
# std's getrandom and statx, are looked up at run time and may be missing).
unversioned=$(objdump -T "$lib" | awk '$0 ~ /[*]UND[*]/ && $2 != "w" && $0 !~ /[ (](GLIBC|GLIBCXX|CXXABI|GCC)_/ {print $NF}' \
    | grep -vE '^(__gmon_start__|_ITM_.*)$' || true)
[ -z "$unversioned" ] || problems+=("unversioned undefined symbols: $(tr '\n' ' ' <<<"$unversioned" | sed 's/ $//')")

needed=$(objdump -p "$lib" | awk '$1 == "NEEDED" {print $2}')
extra=$(grep -vE "$NEEDED_OK" <<<"$needed" || true)
[ -z "$extra" ] || problems+=("NEEDED beyond glibc: $(tr '\n' ' ' <<<"$extra" | sed 's/ $//')")

line="glibc-check: $lib: $format, ${found[*]/%/,} NEEDED $(tr '\n' ' ' <<<"${needed:-none}" | sed 's/ $//')"
if [ ${#problems[@]} -gt 0 ]; then
    echo "$line: FAILS manylinux2014 (glibc 2.17): $(printf '%s; ' "${problems[@]}" | sed 's/; $//')" >&2
    exit 1
fi
echo "$line: loads on glibc 2.17+"
