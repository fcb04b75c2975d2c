#!/bin/bash
echo "$# arguments: $*"
