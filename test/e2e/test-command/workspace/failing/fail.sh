#!/bin/sh
echo "failing now"
exit 1
