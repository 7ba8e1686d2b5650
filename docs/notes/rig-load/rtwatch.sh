#!/bin/bash
# rtwatch.sh SECONDS: the largest real-time time used in one period on either CPU, and any
# throttling (needs debugfs: mount -t debugfs none /sys/kernel/debug), every 50 ms.
# print max rt_time per CPU and throttled flags every 50 ms for $1 seconds
end=$(( $(date +%s) + $1 )); max=0
while [ $(date +%s) -lt $end ]; do
  v=$(grep -E "rt_throttled|rt_time" /sys/kernel/debug/sched/debug | awk '{print $3}' | tr '\n' ' ')
  set -- $v
  for x in $2 $4; do m=${x%.*}; [ $m -gt $max ] && max=$m; done
  [ "$1" != 0 -o "$3" != 0 ] && echo "THROTTLED at $(date +%T.%N) $v"
  sleep 0.05
done
echo "max rt_time ${max} ms of 950"
