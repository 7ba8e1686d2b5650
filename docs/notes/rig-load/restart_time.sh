#!/bin/bash
# restart_time.sh LEADER_PID AGENT: SIGKILL the agent of a booted rig board (LEADER_PID: the
# host PID of that board's systemd) and time until its unit is active again with a new main PID.
# The polling (nsenter, systemctl) runs at SCHED_OTHER too: its own lag is in the figure.
L=$1; A=${2:-strategy}; U=foosball-agent@$A.service
sc() { nsenter --target=$L --all -- systemctl "$@"; }
old=$(sc show -p MainPID --value $U)
hostpid=$(pgrep -f "foosball agent run $A " | head -1)
t0=$(date +%s.%N); kill -9 $hostpid
for i in $(seq 300); do
  st=$(sc is-active $U); pid=$(sc show -p MainPID --value $U)
  if [ "$st" = active ] && [ "$pid" != "$old" ] && [ "$pid" != 0 ]; then break; fi
  sleep 0.05
done
echo "$A back ($st, pid $pid, was $old) after $(echo "$(date +%s.%N) - $t0" | bc) s"
