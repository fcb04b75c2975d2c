#!/bin/sh
echo "pass $TEST_TARGET"
