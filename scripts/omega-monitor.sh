#!/usr/bin/env bash
# omega-monitor.sh: the poll loop (placeholder until the loop lands).
echo "omega-monitor.sh: the poll loop is not built yet" >&2
while :; do sleep 60 & wait $!; done
