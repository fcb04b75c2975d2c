#!/bin/sh
echo "going to sleep"
sleep 300 &
echo $! > "$SLEEPY_PID_FILE"
wait
