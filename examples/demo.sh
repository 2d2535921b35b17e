#!/usr/bin/env sh
# The README's first command: put, read back and search a fictional resource on a throwaway store.
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
store="$tmp/store"

echo "== put (creates the store: a private git repository)"
xbrain put "$here/synthetic-resource.json" --store "$store"
echo "== get"
xbrain get resource_e6030e7a46ceae274d1f608ea3873d83ecbb532113359bbcce333adfce358a56 --store "$store"
echo "== search"
xbrain search "keyboard dialog" --store "$store"
echo "== status"
xbrain status --store "$store"
if command -v git >/dev/null 2>&1; then
  echo "== git log (every change is a commit)"
  git -C "$store" log --format='%h %s'
fi
