#!/usr/bin/env bash
# tools/device-resume on this machine, as on the GPU machine: a foundation run over two MIT-BIH
# records copied aside tokenizes and stops where its pretrain would start (job-file launcher);
# it is packed, its dataset folder is deleted (the GPU machine has no ECG data), and
# `device-resume run` must rebuild that folder from the headers and the files' sizes and times
# so that both tokenize stages are reused from the cache, not rerun, then finish the pretrain.
#   device_resume.sh SOURCE_DIR BUILD_DIR PYTHON DATA_DIR     (77: skipped, no MIT-BIH here)
set -euo pipefail
src=$1 build=$2 python=$3 data=$4
[[ -f $data/mitdb/101.dat && -f $data/mitdb/106.dat ]] || {
  echo "skipped: $data/mitdb has no records 101 and 106"
  exit 77
}
cd "$src"
work=$(mktemp -d /tmp/hlm-device-resume.XXXXXX)
runs=.device-runs/test-$$  # inside the checkout, as device-resume requires
trap 'rm -rf "$work" "$runs"' EXIT
mkdir -p "$work/mitdb"
cp -p "$data"/mitdb/10[16].* "$work/mitdb/"
records='["101", "106"]'
"$build/bin/hlm" run workflows/foundation.yaml vars.size=ci --runs-dir "$runs" \
  --launcher job-file "vars.data_dir=$work" \
  "vars.datasets=[{plugin: wfdb, dir: $work/mitdb, records: $records}]" \
  "vars.rhythm_datasets=[{plugin: wfdb, dir: $work/mitdb, records: $records}]" >"$work/first.log" \
  2>&1 || { cat "$work/first.log"; exit 1; }
run=$(ls -d "$runs"/foundation/*)
"$python" tools/device-check pack --build-dir "$build"
"$python" tools/device-resume pack "$run"
ls "$run"/tokenize/tokens.hlmt.xz "$run"/tokenize_rhythm/tokens.hlmt.xz >/dev/null
sizes=$(stat -c '%n %s %Y' "$work"/mitdb/*)
rm -rf "$work/mitdb"
fail() { echo "FAILED: $*"; exit 1; }
code=0
OUT=$work/out "$python" tools/device-resume run "$run" --python "$python" --seconds 300 || code=$?
cat "$work/out/resume.log"
[[ $code == 0 ]] || fail "device-resume run exited $code"
grep -q "tokenize: reused from cache" "$work/out/resume.log" || fail "tokenize was not reused"
grep -q "tokenize_rhythm: reused from cache" "$work/out/resume.log" || fail "rhythm not reused"
grep -q "pretrain done" "$work/out/resume.log" || fail "pretrain did not finish"
[[ -s $work/out/model.pt && -s $work/out/report.md ]] || fail "no weights or report in OUT"
[[ $(stat -c '%n %s %Y' "$work"/mitdb/*) == "$sizes" ]] || fail "stand-ins differ in size or time"
[[ $(du -s "$work/mitdb/101.dat" | cut -f1) -lt 8 ]] || fail "101.dat is not a sparse stand-in"
echo "device-resume: tokenize stages reused, pretrain finished, stand-ins match"
