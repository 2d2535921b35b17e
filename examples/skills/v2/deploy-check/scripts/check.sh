#!/bin/sh
# a smoke check (xbrain stores scripts, never runs them)
curl -fsS "$1/health"
