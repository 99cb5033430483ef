#!/usr/bin/env bash
# Starts Debian's Prometheus on loopback, scraping every hlm run under a runs folder through
# the target files hlm writes there, with this folder's prometheus.yml. Prints the URL, then
# runs Prometheus in the foreground (Ctrl-C stops it).
#
#   tools/monitoring/serve.sh [--runs DIR] [--port N] [--interval SECONDS] [--data DIR]
#
#   --runs      the runs folder of `hlm run` (default: runs); its targets/ is watched
#   --port      Prometheus's port on 127.0.0.1 (default 9090)
#   --interval  scrape, rule and target-file refresh interval (default: prometheus.yml's)
#   --data      Prometheus's storage (default: <runs>/_prometheus)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
runs="runs"
port=9090
interval=""
data=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --port) port="$2"; shift 2 ;;
    --interval) interval="$2"; shift 2 ;;
    --data) data="$2"; shift 2 ;;
    -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "serve.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
prometheus="$(command -v prometheus || true)"
if [[ -z "$prometheus" ]]; then
  echo "serve.sh: prometheus is not installed: apt-get install prometheus" >&2
  exit 1
fi
if [[ ! "$port" =~ ^[0-9]+$ ]]; then
  echo "serve.sh: --port '$port' is not a port number" >&2
  exit 2
fi
if [[ -n "$interval" && ! "$interval" =~ ^[0-9]+$ ]]; then
  echo "serve.sh: --interval '$interval' is not a whole number of seconds" >&2
  exit 2
fi
mkdir -p "$runs/targets"
runs="$(cd "$runs" && pwd)"
data="${data:-$runs/_prometheus}"
mkdir -p "$data"

# The shipped config with the targets glob made absolute (and the intervals, if asked).
config="$data/prometheus.yml"
escaped="$(printf '%s' "$runs" | sed -e 's/[\\&|]/\\&/g')"  # safe as sed's replacement
sed -e "s|'[^']*runs/targets/\*\.json'|'$escaped/targets/*.json'|" "$here/prometheus.yml" > "$config"
if [[ -n "$interval" ]]; then
  sed -i -e "s/\(scrape_interval\|evaluation_interval\|refresh_interval\): [0-9]*s/\1: ${interval}s/" \
    "$config"
fi
grep -qF "'$runs/targets/*.json'" "$config" || {
  echo "serve.sh: $here/prometheus.yml has no runs/targets/*.json glob to point at $runs" >&2
  exit 1
}

echo "Prometheus: http://127.0.0.1:$port (targets: $runs/targets/*.json, storage: $data)"
exec "$prometheus" --config.file="$config" --storage.tsdb.path="$data" \
  --web.listen-address="127.0.0.1:$port" --log.level=warn
