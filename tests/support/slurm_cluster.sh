#!/usr/bin/env bash
# A two-node SLURM cluster on this machine for the `cluster` tests: two network namespaces
# joined by a veth pair (each end named hlm0, addresses 192.0.2.1 and 192.0.2.2 from
# TEST-NET-1, used only inside them), slurmctld and a slurmd in the first, a slurmd in the
# second, auth/none. Needs root, ip, nsenter, slurmctld and slurmd.
#   slurm_cluster.sh up DIR NAME    start; DIR holds slurm.conf, logs, state and PIDs
#   slurm_cluster.sh down DIR NAME  stop the daemons by PID, delete the namespaces
#   slurm_cluster.sh in DIR NAME A|B CMD...   run CMD in node A's or B's namespace with
#                                             SLURM_CONF pointing at the cluster
# NAME (at most 8 characters) makes the namespace names hlm-NAME-a and hlm-NAME-b unique.
set -euo pipefail
action=$1 dir=$2 name=$3
ns_a="hlm-$name-a" ns_b="hlm-$name-b"

stop() {
  for pid_file in "$dir"/*.daemon-pid; do
    [[ -f $pid_file ]] || continue
    pid=$(cat "$pid_file")
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    rm -f "$pid_file"
  done
  # What the daemons started and left behind (slurmstepd, batch scripts, ranks): every process
  # whose environment points at this cluster's slurm.conf.
  for environ in /proc/[0-9]*/environ; do
    if tr '\0' '\n' 2>/dev/null <"$environ" | grep -qxF "SLURM_CONF=$dir/slurm.conf"; then
      pid=${environ#/proc/}
      kill -KILL "${pid%/environ}" 2>/dev/null || true
    fi
  done
  ip link del "hv$name" 2>/dev/null || true  # a veth end never moved into its namespace
  ip netns del "$ns_a" 2>/dev/null || true
  ip netns del "$ns_b" 2>/dev/null || true
}

in_node() {  # in_node A|B CMD...: nsenter --net keeps /sys/fs/cgroup (ip netns exec does not)
  local ns=$ns_a
  [[ $1 == B ]] && ns=$ns_b
  shift
  SLURM_CONF="$dir/slurm.conf" nsenter --net="/var/run/netns/$ns" "$@"
}

start_daemon() {  # start_daemon LABEL A|B CMD...: detached, its PID kept for stop
  local label=$1 node=$2 ns=$ns_a
  [[ $node == B ]] && ns=$ns_b
  shift 2
  # exec all the way down (subshell, nsenter, setsid): the PID kept is the daemon's own.
  (SLURM_CONF="$dir/slurm.conf" exec nsenter --net="/var/run/netns/$ns" setsid "$@" \
    >"$dir/$label.out" 2>&1 </dev/null) &
  echo $! >"$dir/$label.daemon-pid"
}

up() {
  rm -rf "$dir/state" "$dir/spoolnodeA" "$dir/spoolnodeB"  # a fresh cluster: no jobs from before
  mkdir -p "$dir/state" "$dir/spoolnodeA" "$dir/spoolnodeB"
  ip netns add "$ns_a"
  ip netns add "$ns_b"
  ip link add "hv$name" type veth peer name "hw$name"
  ip link set "hv$name" netns "$ns_a"
  ip link set "hw$name" netns "$ns_b"
  ip -n "$ns_a" link set "hv$name" name hlm0
  ip -n "$ns_b" link set "hw$name" name hlm0
  ip -n "$ns_a" addr add 192.0.2.1/24 dev hlm0
  ip -n "$ns_b" addr add 192.0.2.2/24 dev hlm0
  for ns in "$ns_a" "$ns_b"; do
    ip -n "$ns" link set lo up
    ip -n "$ns" link set hlm0 up
  done
  cat >"$dir/slurm.conf" <<CONF
ClusterName=hlmtest
SlurmctldHost=$(hostname -s)(192.0.2.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/none
CredType=cred/none
# A requeued job may start again once its old credential expires: 10 s, not the default 120.
AuthInfo=cred_expire=10
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MailProg=/bin/true
SchedulerParameters=sched_interval=2,bf_interval=1
MinJobAge=600
KillWait=10
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool%n
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.%n.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.%n.log
NodeName=nodeA NodeAddr=192.0.2.1 CPUs=2 RealMemory=2000 State=UNKNOWN
NodeName=nodeB NodeAddr=192.0.2.2 CPUs=2 RealMemory=2000 State=UNKNOWN
PartitionName=debug Nodes=nodeA,nodeB Default=YES MaxTime=INFINITE State=UP
CONF
  start_daemon slurmctld A slurmctld -D -i -f "$dir/slurm.conf"
  start_daemon slurmd-nodeA A slurmd -D -N nodeA -f "$dir/slurm.conf"
  start_daemon slurmd-nodeB B slurmd -D -N nodeB -f "$dir/slurm.conf"
  for _ in $(seq 150); do
    idle=$(in_node A sinfo -h -N -o "%N %t" 2>/dev/null | grep -c " idle" || true)
    [[ $idle == 2 ]] && return 0
    sleep 0.2
  done
  echo "the two nodes did not come up idle in 30 s; see $dir/*.log and $dir/*.out" >&2
  in_node A sinfo -N >&2 || true
  exit 1
}

case "$action" in
  # set -e stays in force inside up (it would not in `up || ...`); any failure stops what started.
  up) trap stop EXIT; up; trap - EXIT ;;
  down) stop ;;
  in) node=$4; shift 4; in_node "$node" "$@" ;;
  *) echo "usage: $0 up|down|in DIR NAME [A|B CMD...]" >&2; exit 2 ;;
esac
